"""The agent harness: substrates (stateful REPL, text), tools, per-turn routing, trajectories.

Public entry point: `rsi.harness.attempt.run_attempt` (one configuration on one task -> an
`AttemptOutcome` and a trajectory file). Everything else here serves it.
"""
