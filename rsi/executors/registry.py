"""The one registry of executors: name -> factory, and `make_executor`. `RunSpec.executor` validates
against it (`ExecutorName`), so adding an executor is one entry here.

A factory takes the attempt function, the run's folder for executor files (SLURM's job arrays), the
worker count (None: the executor's default) and the run's SLURM options (ignored by others).
An executor may also run one long job, a training (`rsi train --executor NAME`): that capability is
its `TRAINING_RUNNERS` entry, and `TrainStageSpec.executor` validates against both (`TrainingExecutorName`).
TRAINING_RUNNERS is `rsi.plugins.TRAINING_RUNNERS` (entry point group `rsi.training_runners`), typed
here: each runner is a module-level `TrainingRunner` where it is implemented (SLURM's in
rsi/training/slurm.py, above this layer), named by one line of pyproject.toml.
Light on purpose: the executors are imported by their factories (submitit only for SLURM).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

from pydantic import AfterValidator

from rsi import plugins
from rsi.errors import UserInputError
from rsi.executors.base import AttemptFn, Executor
from rsi.plugins import PluginRegistry
from rsi.registry import name_check

if TYPE_CHECKING:
    from rsi.executors.slurm import SlurmOptions

ExecutorFactory = Callable[[AttemptFn, Path, "int | None", "SlurmOptions | None"], Executor]


def _local(fn: AttemptFn, folder: Path, workers: int | None, slurm: SlurmOptions | None) -> Executor:
    from rsi.executors.local import LocalExecutor

    return LocalExecutor(fn, workers=workers)


def _slurm(fn: AttemptFn, folder: Path, workers: int | None, slurm: SlurmOptions | None) -> Executor:
    from rsi.executors.slurm import SlurmExecutor, SlurmOptions

    options = slurm if slurm is not None else SlurmOptions()
    if workers is not None:
        options = options.model_copy(update={"array_parallelism": workers})
    return SlurmExecutor(fn, folder, options)


EXECUTORS: dict[str, ExecutorFactory] = {
    "local": _local,
    "slurm": _slurm,
}


executor_name = name_check(EXECUTORS, "executor")
ExecutorName = Annotated[str, AfterValidator(executor_name)]


# -- the training capability -------------------------------------------------------------------------
TrainingJob = Callable[[Any, Any], Any]  # a recipe's `train(request, progress)` (rsi.training.methods)


@dataclass(frozen=True)
class TrainingRunner:
    """How an executor runs one training job: `run(job, request, progress, folder, options, note)` returns
    what `job(request, progress)` returned. `folder` holds the executor's files, `options` its resources
    (`TrainStageSpec.slurm`), `note` hears of the job's states. `in_process`: the job runs in this
    process (with `progress`), so it may use what only this process has (GRPO's sandbox and model)."""

    run: Callable[[TrainingJob, Any, Any, Path, dict[str, Any], Callable[[str], None]], Any]
    in_process: bool


def _train_here(job: TrainingJob, request: Any, progress: Any, folder: Path, options: dict[str, Any],
                note: Callable[[str], None]) -> Any:
    return job(request, progress)


LOCAL_TRAINING = TrainingRunner(_train_here, in_process=True)

TRAINING_RUNNERS = cast("PluginRegistry[TrainingRunner]", plugins.TRAINING_RUNNERS)


def training_executor_name(name: str) -> str:
    """`name` if it is a registered executor that runs training jobs, else ValueError (a validator)."""
    executor_name(name)
    if name not in TRAINING_RUNNERS:
        raise ValueError(f"executor {name!r} runs attempts only, not a training; ones that train: "
                         f"{', '.join(TRAINING_RUNNERS)}")
    return name


TrainingExecutorName = Annotated[str, AfterValidator(training_executor_name)]


def make_executor(name: str, fn: AttemptFn, folder: Path, workers: int | None = None, slurm: Any = None) -> Executor:
    """The executor called `name` (see EXECUTORS): `local` (threads here), `slurm` (job arrays, results in `folder`)."""
    factory = EXECUTORS.get(name)
    if factory is None:
        raise UserInputError(f"unknown executor {name!r}", hint=f"use one of: {', '.join(EXECUTORS)}")
    return factory(fn, folder, workers, slurm)
