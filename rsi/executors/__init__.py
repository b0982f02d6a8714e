"""Executors: where attempts run (this process's threads, or a SLURM cluster). See base.py."""

from __future__ import annotations

from pathlib import Path

from rsi.errors import UserInputError
from rsi.executors.base import AttemptFn, AttemptResult, AttemptSpec, Executor, call_safely, error_result

__all__ = [
    "AttemptFn",
    "AttemptResult",
    "AttemptSpec",
    "Executor",
    "call_safely",
    "error_result",
    "make_executor",
]

EXECUTORS = ("local", "slurm")


def make_executor(name: str, fn: AttemptFn, folder: Path, workers: int | None = None, slurm=None) -> Executor:
    """The executor called `name`: `local` (threads here) or `slurm` (job arrays, results in `folder`)."""
    if name == "local":
        from rsi.executors.local import LocalExecutor

        return LocalExecutor(fn, workers=workers)
    if name == "slurm":
        from rsi.executors.slurm import SlurmExecutor, SlurmOptions

        options = slurm if slurm is not None else SlurmOptions()
        if workers is not None:
            options = options.model_copy(update={"array_parallelism": workers})
        return SlurmExecutor(fn, folder, options)
    raise UserInputError(f"unknown executor {name!r}", hint=f"use one of: {', '.join(EXECUTORS)}")
