"""Displays render RunProgress snapshots: plain one-line records, and the rich live panel."""

from __future__ import annotations

import io

from rich.console import Console

from rsi.display import NullDisplay, PlainDisplay, RichDisplay, format_duration, progress_line
from rsi.run.spec import RunEvent, RunProgress


def progress(**fields) -> RunProgress:
    base = dict(run_id="r1", portfolio="p", suite="s", budget_attempts=10, tasks=5)
    return RunProgress(**{**base, **fields})


def test_plain_display_writes_one_line_per_event() -> None:
    stream = io.StringIO()
    display = PlainDisplay(stream)
    display.update(progress(), None)  # snapshots without events print nothing
    display.update(progress(), RunEvent(kind="run_started", message="go"))
    display.update(progress(attempts=4, job_index=1, job_config="c", job_planned=4, job_done=2, job_passed=1,
                            covered=3, elapsed_s=8.0, tokens=80),
                   RunEvent(kind="attempt", message="s/t#0 passed"))
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].endswith("run=r1 run_started: go")
    assert "attempts 4/10" in lines[1] and "covered 3/5" in lines[1] and "job pass 50%" in lines[1]
    assert "10 tok/s" in lines[1] and "eta 0m12s" in lines[1]  # 6 attempts left at 2 s each


def test_rich_display_shows_the_numbers_and_events() -> None:
    buffer = io.StringIO()
    display = RichDisplay(console=Console(file=buffer, force_terminal=True, width=120))
    display.update(progress(), RunEvent(kind="job_started", message="job 0: baseline"))
    display.update(progress(attempts=3, covered=2, job_index=0, job_config="baseline", job_planned=4, job_done=3,
                            job_passed=1))
    display.close()
    out = buffer.getvalue()
    assert "job 0: baseline" in out and "3/10" in out and "2/5" in out and "#0 baseline" in out


def test_eta_is_capped_by_the_time_budget() -> None:
    assert progress(attempts=1, elapsed_s=10.0).eta_s == 90.0
    assert progress(attempts=1, elapsed_s=10.0, budget_s=40.0).eta_s == 30.0
    assert progress(budget_s=40.0).eta_s == 40.0


def test_helpers() -> None:
    assert format_duration(None) == "?" and format_duration(3725) == "1h02m" and format_duration(65) == "1m05s"
    assert progress_line(progress()).startswith("idle |")
    NullDisplay().update(progress(), RunEvent(kind="note", message="x"))
