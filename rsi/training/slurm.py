"""Run a training recipe as a SLURM job (submitit): a GPU job on a cluster, same recipe as on the CPU.

`submit_training(job, request, options, folder)` submits a recipe's `train(request, None)` (the
`slurm` executor's training capability, `SLURM_TRAINING`: its entry in TRAINING_RUNNERS) with the resources
`options` asks for (GPUs, CPUs, memory, time, partition), waits for it while reporting its state, and
returns the job's outcome. The dataset folder, the base model folder
and the output folder must be on a filesystem the compute node shares (the workspace normally is).
submitit is imported lazily. Each submission gets its own folder: SLURM job ids restart when a
cluster's state is wiped, and a folder keyed only by the id could hand back an old result.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rsi.errors import ExecutorError, TrainingError
from rsi.executors.registry import TrainingJob, TrainingRunner


class SlurmTrainOptions(BaseModel):
    """Resources of one training job (`rsi train --executor slurm` flags)."""

    model_config = ConfigDict(extra="forbid")
    partition: str = Field(default="", description="SLURM partition ('' = the cluster default).")
    gpus: int = Field(default=1, ge=0, description="GPUs for the job (0 trains on the node's CPUs).")
    cpus: int = Field(default=4, ge=1, description="CPUs per task.")
    mem_gb: float = Field(default=32.0, gt=0, description="Memory, in GB.")
    time_min: int = Field(default=120, ge=1, description="Time limit, in minutes.")
    poll_s: float = Field(default=2.0, gt=0, description="How often the job state is checked.")
    extra: dict[str, Any] = Field(default_factory=dict, description="More submitit slurm_* parameters.")


def submit_training(
    job_fn: Callable[[Any, Any], BaseModel],
    request: Any,
    options: SlurmTrainOptions,
    folder: Path,
    on_state: Callable[[str, str], None] | None = None,
) -> BaseModel:
    """Submit `job_fn(request, None)` (both picklable; the request a pydantic model with `device` and
    `threads`), wait, return its outcome; `on_state(job_id, state)` is called whenever the state changes."""
    try:
        import submitit
    except ImportError as error:  # pragma: no cover - a declared dependency
        raise ExecutorError("training on SLURM needs submitit", hint="pip install submitit") from error
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    job_folder = Path(folder) / f"train-{stamp}-{secrets.token_hex(4)}"
    executor = submitit.AutoExecutor(folder=job_folder, cluster="slurm")
    parameters: dict[str, Any] = {
        "timeout_min": options.time_min,
        "mem_gb": options.mem_gb,
        "cpus_per_task": options.cpus,
        "tasks_per_node": 1,
        "nodes": 1,
        "name": "rsi-train",
    }
    if options.gpus:
        parameters["gpus_per_node"] = options.gpus
    if options.partition:
        parameters["slurm_partition"] = options.partition
    parameters.update({k if k.startswith("slurm_") else f"slurm_{k}": v for k, v in options.extra.items()})
    executor.update_parameters(**parameters)
    if not options.gpus:
        request = request.model_copy(update={"device": "cpu", "threads": request.threads or options.cpus})
    try:
        job = executor.submit(_job_entry, job_fn, request)
    except Exception as error:
        raise ExecutorError(f"submitting the training job failed: {error}", hint="is SLURM reachable (sinfo)?") from error
    last = ""
    deadline = time.monotonic() + options.time_min * 60 + 600  # the time limit, plus queueing slack
    while not job.done():
        state = str(job.state)
        if state != last and on_state is not None:
            on_state(str(job.job_id), state)
        last = state
        if time.monotonic() > deadline:
            job.cancel(check=False)
            raise ExecutorError(f"training job {job.job_id} did not finish within {options.time_min} min (+10 min)")
        time.sleep(options.poll_s)
    if on_state is not None:
        # `job.state` is submitit's cached sacct answer (refreshed at most every minute, and slurmdbd lags):
        # a short job can be done while it still says PENDING, so the final state is asked afresh.
        state = str(job.watcher.get_state(job.job_id, mode="force"))
        on_state(str(job.job_id), settled_state(state, job.paths.result_pickle.exists()))
    try:
        outcome = job.result()
    except Exception as error:
        message = str(error).strip().splitlines()
        raise TrainingError(
            f"training job {job.job_id} failed: {message[-1] if message else type(error).__name__}",
            hint=f"its log: {job.paths.stderr}",
        ) from error
    if not isinstance(outcome, BaseModel):
        raise TrainingError(f"training job {job.job_id} returned {type(outcome).__name__}, not a training outcome")
    return outcome


_UNSETTLED = frozenset({"READY", "PENDING", "RUNNING", "UNKNOWN", "REQUEUED", "COMPLETING", "PREEMPTED"})


def settled_state(state: str, result_written: bool) -> str:
    """The state to report once the wait is over: accounting that has not caught up with a job whose
    result file exists is reported as FINISHED (submitit's word for it), never as still pending."""
    if result_written and state.upper().split(" ")[0] in _UNSETTLED:
        return "FINISHED"
    return state


def _job_entry(job_fn: Callable[[Any, Any], BaseModel], request: BaseModel) -> BaseModel:
    """What the node runs: the recipe's loop, no progress callback (the job's log is its record)."""
    import os

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    return job_fn(request, None)


def train_on_slurm(job: TrainingJob, request: Any, progress: Any, folder: Path, options: dict[str, Any],
                   note: Callable[[str], None]) -> Any:
    """`job(request, None)` as a SLURM job with the resources `options` asks for (SlurmTrainOptions); the
    job's states reach `note`. `progress` stays here: the job runs on another machine."""
    return submit_training(job, request, SlurmTrainOptions.model_validate(options), folder,
                           on_state=lambda job_id, state: note(f"slurm job {job_id}: {state}"))


SLURM_TRAINING = TrainingRunner(train_on_slurm, in_process=False)
