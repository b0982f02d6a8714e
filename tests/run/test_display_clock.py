"""The live display's clock ticks between snapshots (a model load or a long attempt must not freeze it)."""

from __future__ import annotations

import io

from rich.console import Console

import rsi.display as display_module
from rsi.display import RichDisplay, RunProgress


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def rendered(display: RichDisplay) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=160).print(display._render())
    return buffer.getvalue()


def test_elapsed_time_ticks_before_the_first_snapshot_and_between_snapshots(monkeypatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr(display_module.time, "monotonic", clock)
    display = RichDisplay(console=Console(file=io.StringIO(), force_terminal=True, width=160))
    try:
        clock.now += 75  # the model loads: no snapshot yet
        assert "starting" in rendered(display) and "1m15s" in rendered(display)
        display.update(RunProgress(run_id="r1", budget_attempts=10, tasks=4, elapsed_s=80.0, budget_s=600.0))
        assert "1m20s" in rendered(display)
        clock.now += 42  # a long attempt: the runner sends nothing for 42 s
        out = rendered(display)
        assert "2m02s" in out  # 80 s + 42 s
        assert "7m58s" in out  # the time budget's eta counts down too: 600 - 80 - 42
    finally:
        display.close()
