"""rsi.progress: the tracker's arithmetic (rate, ETA) and the three renderings, on a fake clock."""

from __future__ import annotations

import io

from rich.console import Console

from rsi.progress import (
    NullProgress,
    PlainProgress,
    RichProgress,
    Tracker,
    make_progress,
    progress_kind,
    progress_text,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_tracker_times_each_stage_and_computes_rate_and_eta() -> None:
    clock = Clock()
    seen = []

    class Keep:
        def update(self, progress, message=None):
            seen.append((progress, message))

        def close(self):
            seen.append(("closed", None))

    tracker = Tracker("train", Keep(), clock=clock)
    clock.now = 110.0
    tracker.stage("epoch 1", total=40)
    clock.now = 130.0
    p = tracker.advance(10, loss=1.25, tokens=5000)
    assert (p.done, p.total, p.elapsed_s, p.stage_elapsed_s) == (10, 40, 30.0, 20.0)
    assert p.rate_per_s == 0.5 and p.eta_s == 60.0 and p.fields == {"loss": 1.25, "tokens": 5000}
    p = tracker.advance(20, loss=0.75)
    assert p.fields == {"loss": 0.75, "tokens": 5000}  # fields update by name
    clock.now = 140.0
    p = tracker.stage("evaluate", total=None, unit="tasks")
    assert (p.done, p.stage_elapsed_s, p.rate_per_s, p.eta_s, p.fields) == (0, 0.0, None, None, {})
    tracker.say("adapter registered")
    tracker.close()
    assert seen[-2][1] == "adapter registered" and seen[-1][0] == "closed"
    # snapshots are copies: a later advance does not rewrite what a display already holds
    assert seen[1][0].done == 10


def test_plain_lines_are_throttled_but_keep_messages_stage_changes_and_the_end() -> None:
    clock = Clock()
    out = io.StringIO()
    tracker = Tracker("eval", PlainProgress(out, every_s=30, clock=clock), clock=clock)
    tracker.stage("candidate on heldout", total=100, unit="attempts")
    for done in range(1, 101):
        clock.now += 1
        tracker.advance(done, passes=done // 3)
        if done == 50:
            tracker.say("halfway")
    lines = out.getvalue().splitlines()
    texts = [line.split(" ", 1)[1] for line in lines]
    assert texts[0].startswith("eval: candidate on heldout | 0/100 attempts")
    assert "eval: halfway" in texts
    assert texts[-1].startswith("eval: candidate on heldout | 100/100 attempts") and "passes 33" in texts[-1]
    # 100 advances over 100 s: the start, one line per 30 s, the message and the end, not 100 lines
    assert 5 <= len(lines) <= 7
    assert all(line[:4].isdigit() and line[19] == "Z" for line in lines)  # UTC timestamps


def test_rich_view_renders_the_stage_bar_and_numbers() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=120, color_system=None)
    display = RichProgress(console=console)
    tracker = Tracker("train", display)
    tracker.stage("epoch 2", total=8)
    tracker.advance(4, loss=0.5)
    tracker.say("checkpoint written")
    tracker.close()
    text = buffer.getvalue()
    assert "epoch 2" in text and "4/8 steps" in text and "loss" in text and "checkpoint written" in text


def test_choosing_a_rendering() -> None:
    assert progress_kind(json_output=True, tty=True) == "none"
    assert progress_kind(json_output=False, tty=True) == "rich"
    assert progress_kind(json_output=False, tty=False) == "plain"
    assert isinstance(make_progress("none"), NullProgress) and isinstance(make_progress("plain"), PlainProgress)
    assert progress_text(Tracker("harvest").stage("tasks", total=3)).startswith("harvest: tasks | 0/3 steps")
