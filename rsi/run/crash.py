"""The crash-test hook: `RSI_TEST_CRASH_AT=<point>:<n>` SIGKILLs this process the n-th time it passes
`<point>` (run_created, job_planned, attempt_recorded, job_finished), so crash tests can kill a real
`rsi run` deterministically at the boundaries between writes. Never set by a normal run."""

from __future__ import annotations

import os
import signal

_counts: dict[str, int] = {}


def crash_point(name: str) -> None:
    """SIGKILL ourselves here if RSI_TEST_CRASH_AT says so."""
    wanted = os.environ.get("RSI_TEST_CRASH_AT")
    if not wanted:
        return
    point, _, count = wanted.partition(":")
    if point != name:
        return
    _counts[name] = _counts.get(name, 0) + 1
    if _counts[name] == int(count or 1):
        os.kill(os.getpid(), signal.SIGKILL)
