"""`rsi run`: the run spec, the orchestrator (`run_portfolio`), the attempt function, summaries and plots.

    from rsi.run import RunSpec, run_portfolio
    outcome = run_portfolio(RunSpec(portfolio="default", budget_attempts=12), workspace, display)

Names are resolved lazily, so importing a light module of the package (`rsi.run.spec`,
`rsi.run.layout`) does not load the orchestrator and everything it runs.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RunOutcome", "RunSpec", "run_portfolio"]


def __getattr__(name: str) -> Any:
    if name == "run_portfolio":
        from rsi.run.orchestrator import run_portfolio

        return run_portfolio
    if name in ("RunOutcome", "RunSpec"):
        from rsi.run import spec

        return getattr(spec, name)
    raise AttributeError(f"module 'rsi.run' has no attribute {name!r}")
