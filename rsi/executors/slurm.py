"""The SLURM executor: each batch becomes one submitit job array, one array task per attempt.

The login node only schedules and records: workers run the pickled attempt function and return
a picklable `AttemptResult`; they never open the database, so a shared filesystem never sees
concurrent SQLite writers (only the orchestrator writes).

Pitfalls handled (see INFRA.md):
- job ids restart at 1 when SLURM's state is wiped, so every batch gets a folder of its own;
- without accounting a finished or cancelled job reads UNKNOWN forever and `job.result()` hangs,
  so waits are bounded: an attempt without a result past its deadline is an infrastructure error;
- the worker's Python is this process's interpreter (`sys.executable`), i.e. the project venv, so
  the pickled function can import `rsi`.

submitit is imported lazily so `rsi --help` never pays for it.
"""

from __future__ import annotations

import contextlib
import math
import secrets
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rsi.errors import ExecutorError
from rsi.executors.base import AttemptFn, AttemptResult, AttemptSpec, batches, call_safely, error_result

# States after which no result will ever appear (the job did not run our code to the end).
FAILED_STATES = {
    "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL", "DEADLINE", "PREEMPTED",
    "REVOKED", "SPECIAL_EXIT",
}


class SlurmOptions(BaseModel):
    """Per-attempt resources and polling for the SLURM executor (flags or a run file)."""

    model_config = ConfigDict(extra="forbid")
    partition: str = Field(default="", description="SLURM partition ('' = the cluster default).")
    cpus_per_attempt: int = Field(default=1, ge=1, description="CPUs per array task.")
    mem_gb: float = Field(default=4.0, gt=0, description="Memory per array task, in GB.")
    time_min: int | None = Field(default=None, ge=1, description="Time limit per attempt; default from the attempt timeout.")
    array_parallelism: int = Field(default=64, ge=1, description="Array tasks running at once.")
    poll_s: float = Field(default=1.0, gt=0, description="How often results and job states are checked.")
    queue_grace_s: float = Field(default=600.0, ge=0, description="Extra wait for queueing before giving up on a job.")
    failed_grace_s: float = Field(default=5.0, ge=0, description="Wait for a result file after a failed state.")
    extra: dict[str, Any] = Field(default_factory=dict, description="More submitit slurm_* parameters.")


class SlurmExecutor:
    """Submits each `start` as one submitit job array and collects results as their pickles appear.
    Arrays of several jobs may be in flight at once; each attempt keeps its own array's deadline."""

    name = "slurm"

    def __init__(self, fn: AttemptFn, folder: Path, options: SlurmOptions | None = None) -> None:
        self.fn = fn
        self.folder = Path(folder)
        self.options = options or SlurmOptions()
        self._pending: dict[Any, tuple[AttemptSpec, float]] = {}  # submitit job -> spec, deadline (monotonic)
        self._failed_since: dict[Any, float] = {}
        self._last_state_check = 0.0

    @property
    def slots(self) -> int:
        return self.options.array_parallelism

    def resize(self, workers: int) -> int:
        return self.slots  # array parallelism is the cluster's to keep: not followed

    def _batch_folder(self) -> Path:
        # Unique per batch: an old result in a reused `%j` folder must never be read back.
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        folder = self.folder / f"batch-{stamp}-{secrets.token_hex(4)}"
        folder.mkdir(parents=True, exist_ok=False)
        return folder

    def _time_min(self, specs: Sequence[AttemptSpec]) -> int:
        if self.options.time_min is not None:
            return self.options.time_min
        longest_s = max(spec.timeout_s for spec in specs)
        return max(1, math.ceil((longest_s + 60.0) / 60.0))

    def submit(self, specs: Sequence[AttemptSpec]) -> Iterator[AttemptResult]:
        return (result for batch in self.submit_batches(specs) for result in batch)

    def submit_batches(self, specs: Sequence[AttemptSpec]) -> Iterator[list[AttemptResult]]:
        return batches(self, list(specs), poll_s=max(self.options.poll_s, 0.5))

    def start(self, specs: Sequence[AttemptSpec]) -> None:
        specs = list(specs)
        if not specs:
            return
        try:
            import submitit  # lazy: heavy, and only a cluster needs it
        except ImportError as error:  # pragma: no cover - submitit is a declared dependency
            raise ExecutorError("the slurm executor needs submitit", hint="pip install submitit") from error
        opts = self.options
        time_min = self._time_min(specs)
        executor = submitit.AutoExecutor(folder=self._batch_folder(), cluster="slurm")
        params: dict[str, Any] = {
            "name": "rsi-attempt",
            "timeout_min": time_min,
            "cpus_per_task": opts.cpus_per_attempt,
            "mem_gb": opts.mem_gb,
            "slurm_array_parallelism": opts.array_parallelism,
        }
        if opts.partition:
            params["slurm_partition"] = opts.partition
        params.update({k if k.startswith("slurm_") else f"slurm_{k}": v for k, v in opts.extra.items()})
        try:
            executor.update_parameters(**params)
            with executor.batch():
                jobs = [executor.submit(call_safely, self.fn, spec) for spec in specs]
        except Exception as error:
            raise ExecutorError(f"slurm: could not submit {len(specs)} attempts: {error}",
                                hint="check `sinfo` and the partition/resources asked for") from error
        # Written down so that a resumed orchestrator can cancel arrays a killed one left behind.
        array_ids = sorted({str(job.job_id).split("_")[0] for job in jobs})
        (executor.folder / "array_ids").write_text("\n".join(array_ids) + "\n")
        deadline_s = time.monotonic() + time_min * 60.0 + opts.queue_grace_s
        for job, spec in zip(jobs, specs, strict=True):
            self._pending[job] = (spec, deadline_s)

    def in_flight(self) -> int:
        return len(self._pending)

    def drop_queued(self) -> int:
        return 0  # queued array tasks cannot be told from started ones cheaply; `cancel` ends both

    def collect(self, timeout_s: float) -> list[AttemptResult]:
        end = time.monotonic() + max(0.0, timeout_s)
        while True:
            batch = self._poll()
            left = end - time.monotonic()
            if batch or not self._pending or left <= 0:
                return batch
            time.sleep(min(self.options.poll_s, 0.5, left))

    def _poll(self) -> list[AttemptResult]:
        """One look at every pending attempt: results written, jobs failed, deadlines passed."""
        opts, pending = self.options, self._pending
        batch: list[AttemptResult] = []
        for job, (spec, _) in list(pending.items()):
            if job.paths.result_pickle.exists():
                pending.pop(job)
                batch.append(self._read_result(job, spec))
        now = time.monotonic()
        if pending and now - self._last_state_check >= max(opts.poll_s, 2.0):
            self._last_state_check = now
            watcher = next(iter(pending)).watcher
            watcher.update()  # one sacct call for every registered job
            for job, (spec, _) in list(pending.items()):
                state = str(watcher.get_state(job.job_id, mode="cache")).upper().split(" ")[0]
                if state in FAILED_STATES:
                    first = self._failed_since.setdefault(job, now)
                    if now - first >= opts.failed_grace_s and not job.paths.result_pickle.exists():
                        pending.pop(job)
                        batch.append(self._failed_result(job, spec, state))
        for job, (spec, deadline_s) in list(pending.items()):
            if time.monotonic() > deadline_s:
                pending.pop(job)
                self._cancel_job(job)
                batch.append(error_result(spec, f"slurm job {job.job_id} gave no result before its "
                                                f"deadline (state {job.state}); cancelled"))
        for job in [j for j in self._failed_since if j not in pending]:
            del self._failed_since[job]
        return batch

    def _read_result(self, job: Any, spec: AttemptSpec) -> AttemptResult:
        try:
            result = job.result()
        except Exception as error:  # the worker died before call_safely could answer
            return error_result(spec, f"slurm job {job.job_id}: {type(error).__name__}: {str(error)[-800:]}")
        if not isinstance(result, AttemptResult):
            return error_result(spec, f"slurm job {job.job_id} returned {type(result).__name__}")
        return result.model_copy(update={"key": spec.key})

    def _failed_result(self, job: Any, spec: AttemptSpec, state: str) -> AttemptResult:
        detail = ""
        try:
            stderr = job.stderr()
            detail = (stderr or "")[-600:]
        except Exception:
            pass
        return error_result(spec, f"slurm job {job.job_id} ended {state} without a result. {detail}".strip())

    @staticmethod
    def _cancel_job(job: Any) -> None:
        with contextlib.suppress(Exception):  # best effort: the job may already be gone
            job.cancel(check=False)

    def cancel_stale(self) -> list[str]:
        """Cancel job arrays of earlier batches under this folder (left by a killed orchestrator)."""
        import subprocess

        cancelled = []
        for ids_file in sorted(self.folder.glob("batch-*/array_ids")):
            done_marker = ids_file.with_name("cancelled")
            if done_marker.exists():
                continue
            ids = ids_file.read_text().split()
            if ids:
                with contextlib.suppress(OSError, subprocess.SubprocessError):
                    subprocess.run(["scancel", *ids], capture_output=True, timeout=30)
                cancelled.extend(ids)
            done_marker.write_text("")
        return cancelled

    def cancel(self) -> None:
        for job in self._pending:
            self._cancel_job(job)
        self._pending.clear()
        self._failed_since.clear()

    def close(self) -> None:
        self.cancel()
