"""`rsi run`: the run spec, the orchestrator (`run_portfolio`), the attempt function, summaries and plots."""
