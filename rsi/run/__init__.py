"""`rsi run`: the run spec, the orchestrator (`run_portfolio`), the attempt function, summaries and plots.

    from rsi.run import RunSpec, run_portfolio
    outcome = run_portfolio(RunSpec(portfolio="default", budget_attempts=12), workspace, display)
"""

from rsi.run.orchestrator import run_portfolio
from rsi.run.spec import RunOutcome, RunProgress, RunSpec

__all__ = ["RunOutcome", "RunProgress", "RunSpec", "run_portfolio"]
