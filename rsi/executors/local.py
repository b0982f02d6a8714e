"""The local executor: N attempts at once in threads of this process.

Threads, not processes, because an attempt spends its time waiting on the model and on sandbox
subprocesses, and because the embedded model is loaded once per process and shared by every
thread through its batching loop (more threads in flight means fuller batches). An attempt that
outlives its `timeout_s` (plus a grace period) is reported as an infrastructure error and
abandoned: a thread cannot be killed, but the run does not wait on it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from rsi.errors import ExecutorError
from rsi.executors.base import AttemptFn, AttemptResult, AttemptSpec, call_safely, error_result

GRACE_S = 30.0
# After a result arrives, wait this long for others so they are recorded in one transaction:
# nothing against attempts that take seconds, a large saving when many finish together.
GATHER_S = 0.005


def default_workers() -> int:
    """Sized to the machine: attempts mostly wait, so two per core, at least 2, at most 32."""
    return max(2, min(32, 2 * (os.cpu_count() or 1)))


class LocalExecutor:
    """Runs attempt functions in a thread pool; yields results in completion order."""

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
        self._pool: ThreadPoolExecutor | None = None
        self._cancelled = threading.Event()

    def _ensure_pool(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="rsi-attempt")
        return self._pool

    def submit(self, specs: Sequence[AttemptSpec]) -> Iterator[AttemptResult]:
        return (result for batch in self.submit_batches(specs) for result in batch)

    def submit_batches(self, specs: Sequence[AttemptSpec]) -> Iterator[list[AttemptResult]]:
        self._cancelled.clear()
        return self._run(list(specs))

    def _run(self, specs: list[AttemptSpec]) -> Iterator[list[AttemptResult]]:
        pool = self._ensure_pool()
        started_at: dict[str, float] = {}
        lock = threading.Lock()

        def timed(spec: AttemptSpec) -> AttemptResult:
            with lock:
                started_at[spec.key] = time.monotonic()
            return call_safely(self.fn, spec)

        futures: dict[Future[AttemptResult], AttemptSpec] = {pool.submit(timed, spec): spec for spec in specs}
        try:
            while futures and not self._cancelled.is_set():
                done, pending = wait(list(futures), timeout=0.5, return_when=FIRST_COMPLETED)
                if done and pending and self.gather_s > 0:
                    more, _ = wait(pending, timeout=self.gather_s, return_when=ALL_COMPLETED)
                    done = done | more
                batch: list[AttemptResult] = []
                for future in done:
                    spec = futures.pop(future)
                    try:
                        batch.append(future.result())
                    except Exception as error:  # call_safely catches attempt errors; this is the pool's own
                        batch.append(error_result(spec, error))
                now = time.monotonic()
                for future, spec in list(futures.items()):
                    with lock:
                        began = started_at.get(spec.key)
                    if began is not None and now - began > spec.timeout_s + self.grace_s:
                        futures.pop(future)
                        batch.append(error_result(spec, f"attempt still running {now - began:.0f}s after start; abandoned"))
                if batch:
                    yield batch
        finally:
            for future in futures:
                future.cancel()

    def cancel(self) -> None:
        self._cancelled.set()

    def close(self) -> None:
        self._cancelled.set()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
