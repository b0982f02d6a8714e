"""Threads of this process that may be inside torch's C++ code, and an exit that does not kill one there.

Why it matters: while the interpreter shuts down, Python 3.13 and older end a daemon thread that
takes the GIL back with `pthread_exit`. glibc unwinds that thread's stack, and the unwinding meets a
C++ `noexcept` frame (pybind11's `gil_scoped_release` destructor, which torch's bindings put around
every op), so the C++ runtime calls `std::terminate`: "terminate called without an active
exception", SIGABRT, exit -6 instead of the exit code the process chose (pytorch/pytorch#38228,
python/cpython#87135; Python 3.14 parks such threads instead). The embedded model's serving thread
takes the GIL back after every op of a decoding step, so exiting while it decodes aborted `rsi run`
on Ctrl-C; a thread loading the model is in the same position.

So the code that calls into torch from a thread other than the main one runs inside
`native_section()`, and the process's exit calls `settle()`: no new section may start, the ones
running are waited for (a decoding step ends in well under a second; a model load can take longer),
and so are the threads that ran one: freeing a tensor gives the GIL up and takes it back too, so a
thread still unwinding its frames aborts the exit the same way (seen 2 in 6 exits before it was waited for).
Whoever exits with a section still running must not let the interpreter shut down: `rsi`'s entry
point then ends the process with `os._exit` (its results are already recorded). `settle` also runs
at exit (`atexit`, before the interpreter starts ending threads) for any other process that loaded
a model, with a longer bound, best effort.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import threading
import time
from collections.abc import Callable, Iterator

from rsi.errors import ModelError

__all__ = ["ATEXIT_WAIT_S", "NativeWork", "ProcessExiting", "busy", "exiting", "native_section", "settle"]

ATEXIT_WAIT_S = 60.0


class ProcessExiting(ModelError):
    """The process is exiting: no new model work may start (see the module docstring)."""


class NativeWork:
    """The sections running now, and whether the process is exiting (one per process: `PROCESS`)."""

    def __init__(self, on_first_use: Callable[[NativeWork], None] | None = None) -> None:
        self._cond = threading.Condition()
        self._busy: dict[int, str] = {}  # section token -> what runs there
        # Threads that ever ran a section. Between two sections such a thread still holds tensors in its
        # frames; if it frees one while the interpreter shuts down (a tensor's deallocation gives the GIL up
        # and takes it back) it aborts the process just the same, so `settle` also waits for them to end.
        self._threads: set[threading.Thread] = set()
        self._tokens = itertools.count()
        self._exiting = False
        self._on_first_use = on_first_use

    @contextlib.contextmanager
    def section(self, what: str) -> Iterator[None]:
        """Run the block as native work that `settle` waits for; raises `ProcessExiting` once exiting."""
        with self._cond:
            if self._exiting:
                raise ProcessExiting(f"{what}: the process is exiting")
            token = next(self._tokens)
            self._busy[token] = what
            if threading.current_thread() is not threading.main_thread():
                self._threads.add(threading.current_thread())
            first, self._on_first_use = self._on_first_use, None
        if first is not None:
            first(self)
        try:
            yield
        finally:
            with self._cond:
                del self._busy[token]
                self._cond.notify_all()

    def busy(self) -> list[str]:
        """What runs in sections now."""
        with self._cond:
            return list(self._busy.values())

    @property
    def exiting(self) -> bool:
        return self._exiting

    def settle(self, timeout_s: float, join_threads: bool = True) -> bool:
        """Refuse new sections, wait up to `timeout_s` for the running ones and (with `join_threads`) for
        every thread that ran one to end; True when none is left."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        with self._cond:
            self._exiting = True
            while self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            threads = list(self._threads) if join_threads else []
        for thread in threads:  # a thread refused a new section ends soon: its frames free their tensors
            thread.join(max(0.0, deadline - time.monotonic()))
        return not any(thread.is_alive() for thread in threads)


def _settle_at_exit(work: NativeWork) -> None:
    # Registered on first use, so a process that never touches torch pays nothing. atexit runs before
    # the interpreter starts ending daemon threads, so the sections can still finish then.
    # Sections only: a model left open keeps an idle worker thread alive, and waiting for it would hold up
    # the exit of every such process (a test session) for the whole bound.
    atexit.register(work.settle, ATEXIT_WAIT_S, False)


PROCESS = NativeWork(on_first_use=_settle_at_exit)


def native_section(what: str) -> contextlib.AbstractContextManager[None]:
    """`PROCESS.section(what)`: code that calls into torch off the main thread runs in one."""
    return PROCESS.section(what)


def busy() -> list[str]:
    return PROCESS.busy()


def exiting() -> bool:
    return PROCESS.exiting


def settle(timeout_s: float) -> bool:
    """`PROCESS.settle`: the process's exit calls it (rsi.cli.app); True when no section is left running."""
    return PROCESS.settle(timeout_s)
