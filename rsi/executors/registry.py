"""The one registry of executors: name -> factory, and `make_executor`. `RunSpec.executor` validates
against it (`ExecutorName`), so adding an executor is one entry here.

A factory takes the attempt function, the run's folder for executor files (SLURM's job arrays), the
worker count (None: the executor's default) and the run's SLURM options (ignored by others).
Light on purpose: the executors are imported by their factories (submitit only for SLURM).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator

from rsi.errors import UserInputError
from rsi.executors.base import AttemptFn, Executor
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


def make_executor(name: str, fn: AttemptFn, folder: Path, workers: int | None = None, slurm: Any = None) -> Executor:
    """The executor called `name` (see EXECUTORS): `local` (threads here), `slurm` (job arrays, results in `folder`)."""
    factory = EXECUTORS.get(name)
    if factory is None:
        raise UserInputError(f"unknown executor {name!r}", hint=f"use one of: {', '.join(EXECUTORS)}")
    return factory(fn, folder, workers, slurm)
