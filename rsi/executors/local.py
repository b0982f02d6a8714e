"""The local executor: up to N attempts at once in threads of this process.

Threads, not processes, because an attempt spends its time waiting on the model and on sandbox
subprocesses, and because the embedded model is loaded once per process and shared by every
thread through its batching loop (more threads in flight means fuller batches).

Attempts are started as slots free up, whichever batch they came in, so a caller can add the next
job's attempts while the previous job's last ones still run. Each attempt runs in a daemon thread:
an attempt that outlives its `timeout_s` (plus a grace period; time it waited for the model apart,
rsi/model_waits.py), or one dropped by `cancel`, is
abandoned without holding up the process's exit (a thread cannot be killed). An abandoned thread
keeps its slot until it really ends, so abandoned work never oversubscribes the machine.
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence

from rsi.errors import ExecutorError
from rsi.executors.base import AttemptFn, AttemptResult, AttemptSpec, batches, call_safely, error_result
from rsi.model_waits import forget, waited

GRACE_S = 30.0
# After a result arrives, wait this long for others so they are recorded in one transaction:
# nothing against attempts that take seconds, a large saving when many finish together.
GATHER_S = 0.005


def default_workers() -> int:
    """Sized to the machine: attempts mostly wait, so two per core, at least 2, at most 32."""
    return max(2, min(32, 2 * (os.cpu_count() or 1)))


class LocalExecutor:
    """Runs attempt functions in threads, at most `workers` at once; results in completion order."""

    name = "local"

    def __init__(
        self, fn: AttemptFn, workers: int | None = None, grace_s: float = GRACE_S, gather_s: float = GATHER_S
    ) -> None:
        if workers is not None and workers < 1:
            raise ExecutorError(f"local executor: workers must be at least 1, got {workers}")
        self.fn = fn
        self.workers = workers or default_workers()
        self.grace_s = grace_s
        self.gather_s = gather_s
        self._lock = threading.Lock()
        self._queued: deque[AttemptSpec] = deque()
        self._running: dict[int, tuple[AttemptSpec, float]] = {}  # ticket -> spec, start (monotonic)
        self._threads: dict[int, int] = {}  # ticket -> the ident of the thread running it
        self._busy = 0  # threads alive, abandoned ones included
        self._done: queue.Queue[tuple[int, AttemptResult]] = queue.Queue()
        self._tickets = itertools.count()

    @property
    def slots(self) -> int:
        return self.workers

    def resize(self, workers: int) -> int:
        with self._lock:
            self.workers = max(1, workers)
        self._launch()  # more room starts queued attempts now; less lets running ones finish
        return self.workers

    def start(self, specs: Sequence[AttemptSpec]) -> None:
        with self._lock:
            self._queued.extend(specs)
        self._launch()

    def _launch(self) -> None:
        with self._lock:
            while self._queued and self._busy < self.workers:
                spec = self._queued.popleft()
                ticket = next(self._tickets)
                self._running[ticket] = (spec, time.monotonic())
                self._busy += 1
                threading.Thread(target=self._work, args=(ticket, spec), name=f"rsi-attempt-{ticket}",
                                 daemon=True).start()

    def _work(self, ticket: int, spec: AttemptSpec) -> None:
        forget()  # this thread's model waits count from this attempt on
        with self._lock:
            self._threads[ticket] = threading.get_ident()
        try:
            result = call_safely(self.fn, spec)
        except BaseException as error:  # call_safely catches Exception; this is e.g. SystemExit in a thread
            result = error_result(spec, error)
        with self._lock:
            self._busy -= 1
        self._done.put((ticket, result))
        self._launch()  # the freed slot takes the next queued attempt at once, not at the next collect

    def _accept(self, ticket: int, result: AttemptResult) -> AttemptResult | None:
        """The result of a live ticket; None for one cancelled or abandoned meanwhile."""
        with self._lock:
            live = self._running.pop(ticket, None)
            self._threads.pop(ticket, None)
        return result if live is not None else None

    def _abandon_overdue(self) -> list[AttemptResult]:
        """Attempts running past their time limit and grace, not counting time their thread spent waiting for
        the model (that is ours: rsi/model_waits.py); abandoned as errors."""
        now = time.monotonic()
        with self._lock:
            overdue = [(t, spec, began) for t, (spec, began) in self._running.items()
                       if now - began - self._model_wait(t) > spec.timeout_s + self.grace_s]
            for ticket, _, _ in overdue:
                del self._running[ticket]
                self._threads.pop(ticket, None)
        return [error_result(spec, f"attempt still running {now - began:.0f}s after start; abandoned")
                for _, spec, began in overdue]

    def _model_wait(self, ticket: int) -> float:
        ident = self._threads.get(ticket)
        return waited(ident) if ident is not None else 0.0

    def _take(self, wait_s: float) -> list[AttemptResult]:
        try:
            ticket, result = self._done.get(timeout=max(0.0, wait_s)) if wait_s > 0 else self._done.get_nowait()
        except queue.Empty:
            return []
        accepted = self._accept(ticket, result)
        return [accepted] if accepted is not None else []

    def collect(self, timeout_s: float) -> list[AttemptResult]:
        self._launch()
        end = time.monotonic() + max(0.0, timeout_s)
        batch = self._abandon_overdue()
        while not batch and self.in_flight():
            left = end - time.monotonic()
            if left <= 0:
                break
            batch = self._take(min(left, 0.5)) + self._abandon_overdue()
        if batch and self.gather_s > 0:
            gather_end = time.monotonic() + self.gather_s
            while self._running and (left := gather_end - time.monotonic()) > 0:
                more = self._take(left)
                if not more and self._done.empty():
                    break
                batch += more
        return batch

    def in_flight(self) -> int:
        with self._lock:
            return len(self._queued) + len(self._running)

    def drop_queued(self) -> int:
        with self._lock:
            dropped = len(self._queued)
            self._queued.clear()
        return dropped

    def submit(self, specs: Sequence[AttemptSpec]) -> Iterator[AttemptResult]:
        return (result for batch in self.submit_batches(specs) for result in batch)

    def submit_batches(self, specs: Sequence[AttemptSpec]) -> Iterator[list[AttemptResult]]:
        return batches(self, list(specs))

    def cancel_stale(self) -> list[str]:
        return []  # threads die with the process that ran them: a killed run leaves nothing behind

    def cancel(self) -> None:
        with self._lock:
            self._queued.clear()
            self._running.clear()

    def close(self) -> None:
        # Threads are daemons that end with their attempt; nothing else holds resources.
        self.cancel()
