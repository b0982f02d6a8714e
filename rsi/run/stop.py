"""A graceful stop of a run, asked for by a signal (Ctrl-C, or SIGTERM from cron or SLURM).

The CLI installs `stop_on_signals`; the orchestrator only polls `StopRequest.requested` between
results, so a stop never lands in the middle of a store write. The first signal asks for a stop
(no new jobs; started attempts get a bounded grace to finish and be recorded; the run is marked
`stopped`, resumable); a second Ctrl-C raises KeyboardInterrupt at once.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType


class StopRequest:
    """Set once by a signal handler (or a test); read by the orchestrator's loop."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.signum: int | None = None

    def request(self, signum: int = signal.SIGINT) -> None:
        if self.signum is None:
            self.signum = signum
        self._event.set()

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    @property
    def exit_code(self) -> int:
        """128 + the signal number: 130 for SIGINT, 143 for SIGTERM (the shell's convention)."""
        return 128 + (self.signum or signal.SIGINT)

    def describe(self) -> str:
        return signal.Signals(self.signum).name if self.signum else "a stop request"


@contextlib.contextmanager
def stop_on_signals(stop: StopRequest, signums: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> Iterator[StopRequest]:
    """Turn the first SIGINT/SIGTERM into `stop.request`; a second SIGINT interrupts at once.
    Outside the main thread (a test runner's thread) signals cannot be caught: nothing is installed."""

    def handler(signum: int, frame: FrameType | None) -> None:
        if stop.requested and signum == signal.SIGINT:
            raise KeyboardInterrupt
        stop.request(signum)

    previous: dict[int, object] = {}
    try:
        for signum in signums:
            previous[signum] = signal.signal(signum, handler)
    except ValueError:  # not the main thread
        pass
    try:
        yield stop
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)  # type: ignore[arg-type]
