"""The executor interface: run a batch of planned attempts, yield each result as it finishes.

An executor only runs attempts; it never plans, never writes the database, and never lets an
attempt's failure escape: whatever the attempt function raises becomes an `AttemptResult` with
verdict `error` (infrastructure), which the orchestrator retries and never counts as a task failure.

Attempt functions are plain callables `AttemptSpec -> AttemptResult`. The SLURM executor pickles
them (with submitit), so they must be module-level functions or picklable objects, and everything
they take and return is picklable pydantic.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from rsi.config import Configuration
from rsi.verdict import Verdict


class AttemptSpec(BaseModel):
    """One planned attempt: a configuration on a task, under an idempotency key."""

    model_config = ConfigDict(frozen=True)
    key: str = Field(description="Idempotency key: <run>|<job index>|<task key>|<attempt index>.")
    run_id: str
    job_index: int = Field(ge=0)
    task_key: str = Field(description="<suite>/<task id>.")
    task_dir: str = Field(description="Task folder, loaded by the worker (it may be on another host).")
    attempt_index: int = Field(default=0, ge=0, description="Index of this attempt on its task within the job.")
    seed: int = 0
    config: Configuration
    out_dir: str = Field(description="Folder for this attempt's trajectory and final files.")
    timeout_s: float = Field(default=600.0, gt=0, description="Wall time after which the executor gives up on it.")
    try_index: int = Field(default=0, ge=0, description="Earlier infrastructure errors of this key (retries).")


class AttemptResult(BaseModel):
    """What an executor hands back for one AttemptSpec (picklable: it crosses SLURM)."""

    key: str
    verdict: Verdict
    reason: str = ""
    error_class: str = Field(default="", description="Exception class for infrastructure errors.")
    tokens: int = Field(default=0, ge=0, description="Prompt + completion tokens the attempt spent.")
    completion_tokens: int = Field(default=0, ge=0, description="The completion tokens among them (what the model wrote).")
    cache_hits: int = Field(default=0, ge=0, description="Replies served from the response cache (rsi.models.cache).")
    cache_misses: int = Field(default=0, ge=0, description="Cacheable replies the model made (and the cache kept).")
    tokens_not_spent: int = Field(default=0, ge=0, description="Of `tokens`, those the cache's replies did not spend.")
    wall_s: float = Field(default=0.0, ge=0.0)
    trajectory_path: str = ""
    final_code_hash: str = ""
    started: datetime | None = None
    finished: datetime | None = None
    host: str = Field(default="", description="Where it ran (worker hostname).")


AttemptFn = Callable[[AttemptSpec], AttemptResult]


def error_result(spec: AttemptSpec, error: BaseException | str, started: datetime | None = None) -> AttemptResult:
    """An infrastructure error for `spec`: never a task failure."""
    if isinstance(error, BaseException):
        error_class = type(error).__name__
        reason = f"infrastructure: {error_class}: {error}"
    else:
        error_class = "ExecutorError"
        reason = f"infrastructure: {error}"
    now = datetime.now(UTC)
    return AttemptResult(
        key=spec.key,
        verdict=Verdict.ERROR,
        reason=reason[:2000],
        error_class=error_class,
        started=started or now,
        finished=now,
    )


def call_safely(fn: AttemptFn, spec: AttemptSpec) -> AttemptResult:
    """Run `fn(spec)`; any exception becomes an error result. The key is always the spec's."""
    started = datetime.now(UTC)
    t0 = time.monotonic()
    try:
        result = fn(spec)
    except Exception as error:  # an attempt's failure never escapes the executor
        result = error_result(spec, error, started)
        result = result.model_copy(update={"reason": result.reason + "\n" + traceback.format_exc(limit=5)[-1500:]})
    if not isinstance(result, AttemptResult):
        return error_result(spec, f"attempt function returned {type(result).__name__}, not AttemptResult", started)
    update: dict[str, object] = {"key": spec.key}
    if result.started is None:
        update["started"] = started
    if result.finished is None:
        update["finished"] = datetime.now(UTC)
    if not result.wall_s:
        update["wall_s"] = time.monotonic() - t0
    return result.model_copy(update=update)


@runtime_checkable
class Executor(Protocol):
    """Runs attempts. `start` adds attempts beside those in flight; `collect` hands back the ones
    that finished, in completion order. `submit_batches` is the one-batch form of the same thing.

    The orchestrator keeps about `slots` attempts in flight so no worker idles between jobs; an
    executor queues what it cannot start yet.
    """

    name: str

    @property
    def slots(self) -> int:
        """Attempts it runs at once (local threads, SLURM array parallelism)."""
        ...

    def resize(self, workers: int) -> int:
        """Run `workers` attempts at once from now on (a run's worker count follows the load); attempts
        already running are never stopped. Returns the count in effect (an executor that cannot change
        it keeps its own)."""
        ...

    def start(self, specs: Sequence[AttemptSpec]) -> None:
        """Start (or queue) every spec, beside the attempts already in flight."""
        ...

    def collect(self, timeout_s: float) -> list[AttemptResult]:
        """Results that finished since the last call, together (one per spec, errors included);
        waits up to `timeout_s` for the first one, and returns [] if none came."""
        ...

    def in_flight(self) -> int:
        """Attempts started or queued whose result has not been collected (cancelled ones excluded)."""
        ...

    def drop_queued(self) -> int:
        """Drop the queued attempts that have not started (no result comes for them); returns how many.
        A graceful stop lets the started ones finish."""
        ...

    def submit(self, specs: Sequence[AttemptSpec]) -> Iterator[AttemptResult]:
        """Start every spec and yield one result per spec as each finishes (errors included)."""
        ...

    def submit_batches(self, specs: Sequence[AttemptSpec]) -> Iterator[list[AttemptResult]]:
        """Like `submit`, but yields together the results that finished together (never empty lists),
        so a caller can record them in one transaction instead of one each."""
        ...

    def cancel_stale(self) -> list[str]:
        """Cancel work a killed earlier orchestrator left running (cluster job arrays); their ids."""
        ...

    def cancel(self) -> None:
        """Drop every attempt in flight: no result is yielded for them (a cluster job is cancelled)."""
        ...

    def close(self) -> None:
        """Release workers. Idempotent."""
        ...


def batches(executor: Executor, specs: Sequence[AttemptSpec], poll_s: float = 0.5) -> Iterator[list[AttemptResult]]:
    """`submit_batches` on top of start/collect: start `specs`, yield results until none is in flight.
    Leaving the loop early cancels what is still in flight."""
    executor.start(specs)
    try:
        while executor.in_flight():
            batch = executor.collect(poll_s)
            if batch:
                yield batch
    finally:
        if executor.in_flight():
            executor.cancel()
