"""The scheduler's records: what it is asked (`ScheduleRequest`) and what it answers (`JobProposal`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol


@dataclass(frozen=True)
class ConfigOption:
    """A configuration the scheduler may pick."""

    config_hash: str
    name: str = ""
    # Tries per task after which another try is pointless: 1 for a greedy configuration, whose
    # retry is (nearly) the same attempt again. None = no limit (sampled configurations).
    max_tries_per_task: int | None = None
    # What one attempt costs in the budget that binds (seconds under a time budget, tokens under a
    # token budget), measured so far; None = unknown, or attempts are the only currency.
    cost: float | None = None


@dataclass(frozen=True)
class TaskOption:
    """A task the scheduler may target."""

    key: str
    split: str = "train"
    tags: tuple[str, ...] = ()


class AttemptFact(NamedTuple):
    """One counted attempt (verdict passed, failed or timeout; errors are left out by the caller)."""

    config_hash: str
    task_key: str
    passed: bool


@dataclass(frozen=True)
class Budget:
    """What is left to spend; None means unlimited."""

    attempts: int | None = None
    tokens: int | None = None
    wall_s: float | None = None


@dataclass(frozen=True)
class ScheduleRequest:
    configs: Sequence[ConfigOption]
    tasks: Sequence[TaskOption]
    history: Sequence[AttemptFact | tuple[str, str, bool]] = ()
    budget: Budget = field(default_factory=Budget)
    seed: int = 0
    job_index: int = 0
    job_size: int = 8
    attempts_per_task: int = 1
    split: str | None = "train"
    include_covered: bool = False
    tokens_per_attempt: float | None = None
    wall_s_per_attempt: float | None = None
    # (config hash, task key) of attempts planned in jobs still running (no counted outcome yet). The
    # default counts a configuration with one as examined, so that overlapping jobs do not probe it again
    # while its first probe runs. Empty: no job is running (the simulator, a run without overlap).
    in_flight: Sequence[tuple[str, str]] = ()


@dataclass(frozen=True)
class JobProposal:
    config_hash: str
    task_keys: tuple[str, ...]
    attempts_per_task: int
    reason: str = ""

    @property
    def attempts(self) -> int:
        return len(self.task_keys) * self.attempts_per_task


class Scheduler(Protocol):
    name: str

    def propose(self, request: ScheduleRequest) -> JobProposal | None: ...
