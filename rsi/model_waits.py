"""Seconds each thread has spent waiting for our model, for watchdogs that must not count it.

An attempt's agent time excludes the time it waits for the model (rsi/harness/clock.py); the local
executor's watchdog, which abandons an attempt thread still running long past its time limit, must
exclude it too, or a slow model on a shared machine turns live attempts into "abandoned" errors (the
issue 37 benchmark's after-phase, once `model_s` stopped cutting slow calls). The harness marks each wait
(`waiting()`); the watchdog reads a thread's total, the wait in progress included (`waited`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_total: dict[int, float] = {}  # thread ident -> seconds of finished waits
_since: dict[int, float] = {}  # thread ident -> monotonic start of the wait in progress


@contextmanager
def waiting() -> Iterator[None]:
    """This thread waits for the model inside the block."""
    ident, began = threading.get_ident(), time.monotonic()
    with _lock:
        _since[ident] = began
    try:
        yield
    finally:
        with _lock:
            _since.pop(ident, None)
            _total[ident] = _total.get(ident, 0.0) + time.monotonic() - began


def waited(ident: int) -> float:
    """Seconds thread `ident` has waited for the model since its last `forget`, the current wait included."""
    with _lock:
        since = _since.get(ident)
        return _total.get(ident, 0.0) + (time.monotonic() - since if since is not None else 0.0)


def forget(ident: int | None = None) -> None:
    """Start thread `ident`'s count again (a worker thread taking a new attempt; default: this thread)."""
    ident = threading.get_ident() if ident is None else ident
    with _lock:
        _total.pop(ident, None)
        _since.pop(ident, None)
