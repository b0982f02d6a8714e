"""The crash-test hook, one for every layer: `RSI_TEST_CRASH_AT=<point>[:<n>]` SIGKILLs this process the
n-th time (default: the first) it passes `crash_point("<point>")`.

Crash tests use it to kill a real `rsi run`, `rsi eval` or `rsi generation` deterministically at the
boundaries between writes, then resume and check that nothing was lost or repeated. Points in use:
`run_created`, `job_planned`, `attempt_recorded`, `job_finished` (rsi/run/), and the generation's
`gen:<step>:started`, `gen:<step>:done`, `gen:train:step<k>`, `train:part:<name>:step<k>` (a specialist's training,
rsi/training/specialists.py), `harness:check` (before a candidate's
public checks run, rsi/harness/checks.py), and `experience:written` / `tools:written` (right after a library
revision is written, rsi/experience/). A point may contain colons: only a
trailing `:<integer>` is read as the count. Never set by a normal run.
"""

from __future__ import annotations

import os
import signal
import threading

ENV_CRASH = "RSI_TEST_CRASH_AT"

_counts: dict[str, int] = {}
_lock = threading.Lock()  # points are passed from the orchestrator's thread and from workers'


def parse_crash_at(value: str) -> tuple[str, int] | None:
    """(point, n) from the variable's value; None when unset or empty (pure)."""
    value = value.strip()
    if not value:
        return None
    point, sep, count = value.rpartition(":")
    if sep and point and (count.isdigit() or not count):
        return point, max(1, int(count or 1))
    return value, 1


def crash_point(name: str) -> None:
    """SIGKILL this process here if RSI_TEST_CRASH_AT names this point and its count is reached."""
    wanted = parse_crash_at(os.environ.get(ENV_CRASH, ""))
    if wanted is None or wanted[0] != name:
        return
    with _lock:
        _counts[name] = _counts.get(name, 0) + 1
        reached = _counts[name] == wanted[1]
    if reached:
        os.kill(os.getpid(), signal.SIGKILL)
