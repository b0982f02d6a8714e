"""A run's worker count follows the load while it lasts (issue 37 item 3; the follower itself:
tests/models/test_load_follow.py)."""

from __future__ import annotations

import pytest

from rsi.models.embedded import tuning


def test_a_run_resizes_its_executor_when_the_load_moves(mini_ws, monkeypatch: pytest.MonkeyPatch) -> None:
    """An embedded-model run without --workers starts at 16 on an idle machine; another job overloads
    the machine mid-run, and the run goes down to two per core, saying so."""
    from rsi.executors.local import LocalExecutor
    from rsi.executors.noop import NoopAttempt
    from rsi.run.orchestrator import run_portfolio
    from rsi.run.spec import RunSpec

    monkeypatch.setattr(tuning, "current_load", lambda *a, **k: 0.0)  # idle when the run starts
    monkeypatch.setattr(tuning, "cores", lambda: 2)
    monkeypatch.setattr(tuning, "FOLLOW_SAMPLE_S", 0.02)
    monkeypatch.setattr(tuning, "FOLLOW_WINDOW_S", 0.2)
    monkeypatch.setattr(tuning, "FOLLOW_SETTLE_S", 0.2)
    monkeypatch.setattr(tuning, "_runnable", lambda *a: 9)  # then another job: 9 runnable tasks on 2 cores
    sizes: list[int] = []
    resize = LocalExecutor.resize
    monkeypatch.setattr(LocalExecutor, "resize", lambda self, n: sizes.append(n) or resize(self, n))

    class Notes:
        def __init__(self) -> None:
            self.lines: list[str] = []

        def update(self, progress, event=None) -> None:
            if event is not None and event.kind in ("run_started", "note"):
                self.lines.append(event.message)

    notes = Notes()
    run_portfolio(RunSpec(portfolio="mini", budget_attempts=40, limit_tasks=20, job_size=4, report=False), mini_ws,
                  notes, attempt_fn=NoopAttempt(pass_rate=0.0, sleep_s=0.5))
    assert "(16 at once" in notes.lines[0]
    assert sizes == [4], (sizes, notes.lines)
    assert any(line.startswith("workers now 4: load 9.0 on 2 cores (overloaded)") for line in notes.lines), notes.lines
