"""`rsi run`: the run spec, the orchestrator (`run_portfolio`), the attempt function, summaries and plots.

    from rsi.run import RunSpec, run_portfolio
    outcome = run_portfolio(RunSpec(portfolio="default", budget_attempts=12), workspace, display)

Names are resolved lazily: `rsi.display` imports `rsi.run.spec`, and the orchestrator imports
`rsi.display`, so importing the orchestrator here eagerly would be circular.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RunOutcome", "RunProgress", "RunSpec", "run_portfolio"]


def __getattr__(name: str) -> Any:
    if name == "run_portfolio":
        from rsi.run.orchestrator import run_portfolio

        return run_portfolio
    if name in ("RunOutcome", "RunProgress", "RunSpec"):
        from rsi.run import spec

        return getattr(spec, name)
    raise AttributeError(f"module 'rsi.run' has no attribute {name!r}")
