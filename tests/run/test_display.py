"""Displays render RunProgress snapshots: plain one-line records, and the rich live panel."""

from __future__ import annotations

import io

from rich.console import Console

from rsi.display import (
    NullDisplay,
    PlainDisplay,
    RichDisplay,
    RunEvent,
    RunProgress,
    format_duration,
    progress_line,
)


def progress(**fields) -> RunProgress:
    base = dict(run_id="r1", portfolio="p", suite="s", budget_attempts=10, tasks=5)
    return RunProgress(**{**base, **fields})


def test_plain_display_writes_one_line_per_event() -> None:
    stream = io.StringIO()
    display = PlainDisplay(stream)
    display.update(progress(), None)  # snapshots without events print nothing
    display.update(progress(), RunEvent(kind="run_started", message="go"))
    display.update(progress(attempts=4, job_index=1, job_config="c", job_planned=4, job_done=2, job_passed=1,
                            covered=3, elapsed_s=8.0, tokens=80, rate_per_min=30.0, completion_tokens_per_s=12.5,
                            rate_window_s=120.0),
                   RunEvent(kind="attempt", message="s/t#0 passed"))
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].endswith("run=r1 run_started: go")
    assert "attempts 4/10" in lines[1] and "covered 3/5" in lines[1] and "job pass 50%" in lines[1]
    # 6 attempts left at 30 a minute (2 s each), over the last 2 minutes; completion tokens only
    assert "12.5 completion tok/s" in lines[1] and "eta 0m12s (at 30.0/min over the last 2 min)" in lines[1]


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
    assert progress(attempts=1, elapsed_s=10.0, rate_per_min=6.0).eta_s == 90.0
    capped = progress(attempts=1, elapsed_s=10.0, budget_s=40.0, rate_per_min=6.0)
    assert capped.eta_s == 30.0 and capped.eta_basis == "time budget"
    assert progress(budget_s=40.0).eta_s == 40.0


def test_eta_waits_for_a_rate_and_never_uses_the_mean_since_the_start() -> None:
    """A run that spent its first minutes loading the model has a low mean rate since its start: the
    ETA rests on the recent rate only, and says which (or that there is none yet)."""
    early = progress(attempts=2, elapsed_s=300.0)  # no window rate yet: no ETA, not 4 minutes a attempt
    assert early.eta_s is None and early.eta_basis == "no rate yet" and early.completion_rate_text == "-"
    steady = progress(attempts=2, elapsed_s=300.0, rate_per_min=8.0, rate_window_s=60.0)
    assert steady.eta_s == 60.0 and steady.eta_basis == "at 8.0/min over the last 60 s"
    unlimited = progress(attempts=2, budget_attempts=None, rate_per_min=8.0, budget_s=600.0, elapsed_s=100.0)
    assert unlimited.eta_s == 500.0 and unlimited.attempts_text == "2"  # time budget only


def test_recent_rate_spans_a_sliding_window_from_the_first_result() -> None:
    from rsi.run.totals import RATE_MIN_S, RecentRate

    rate = RecentRate(window_s=100.0)
    assert rate.rates(0.0) is None
    rate.add(50.0, 40)  # the first result opens the window (model loading before it is not a rate)
    for t in range(51, 61):
        rate.add(float(t), 40)
    assert rate.rates(50.0 + RATE_MIN_S / 2) is None  # too short a window to say
    per_min, tokens_per_s = rate.rates(70.0)
    assert per_min == 10 * 60 / 20 and tokens_per_s == 10 * 40 / 20
    per_min, _ = rate.rates(260.0)  # every result has left the 100 s window
    assert per_min == 0.0


def test_helpers() -> None:
    assert format_duration(None) == "?" and format_duration(3725) == "1h02m" and format_duration(65) == "1m05s"
    assert progress_line(progress()).startswith("idle |")
    NullDisplay().update(progress(), RunEvent(kind="note", message="x"))
