"""Executors: where attempts run (this process's threads, or a SLURM cluster). See base.py; the names
are in registry.py."""

from __future__ import annotations

from rsi.executors.base import AttemptFn, AttemptResult, AttemptSpec, Executor, call_safely, error_result
from rsi.executors.registry import EXECUTORS, make_executor

__all__ = [
    "EXECUTORS",
    "AttemptFn",
    "AttemptResult",
    "AttemptSpec",
    "Executor",
    "call_safely",
    "error_result",
    "make_executor",
]
