"""Plain values crossing the store's boundary: what the orchestrator writes and what queries return.

Pure data (no SQL). `TaskInfo` / `ConfigInfo` let callers without loaded `Task` / `Configuration`
objects (simulators, tests, benchmarks) record identities too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rsi.verdict import Verdict


class AttemptRecord(BaseModel):
    """One attempt outcome to record. Its identity within a job is (task_key, attempt_index)."""

    model_config = ConfigDict(frozen=True)
    task_key: str = Field(description="<suite>/<task id>")
    attempt_index: int = Field(default=0, ge=0, description="Index among the job's attempts at this task.")
    verdict: Verdict
    seed: int = 0
    reason: str = ""
    error_class: str = Field(default="", description="Exception class name for error verdicts.")
    tokens: int = Field(default=0, ge=0)
    cache_hits: int = Field(default=0, ge=0, description="Replies served from the response cache.")
    cache_misses: int = Field(default=0, ge=0, description="Cacheable replies the model made (and the cache kept).")
    tokens_not_spent: int = Field(default=0, ge=0, description="Of `tokens`, those of the cache's replies.")
    wall_s: float = Field(default=0.0, ge=0)
    trajectory_path: str = ""
    final_code_hash: str = ""
    task_hash: str = Field(default="", description="Task content hash at attempt time.")
    started: datetime | None = None
    finished: datetime | None = None

    @field_validator("started", "finished")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("timestamps must be timezone-aware (UTC)")
        return value.astimezone(UTC) if value is not None else None


@dataclass(frozen=True)
class TaskInfo:
    """A task's identity as the store keeps it."""

    suite: str
    task_id: str
    split: str = "train"
    tags: tuple[str, ...] = ()
    content_hash: str = ""

    @property
    def key(self) -> str:
        return f"{self.suite}/{self.task_id}"


@dataclass(frozen=True)
class ConfigInfo:
    """A configuration's identity as the store keeps it."""

    config_hash: str
    name: str
    contract_ref: str = ""
    parents: tuple[str, ...] = ()
    resolved: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RecordOutcome:
    """What one `record_attempts` batch did."""

    inserted: int = 0
    replaced: int = 0  # error rows overwritten by a retry of the same planned attempt
    ignored: int = 0  # already recorded with a non-error verdict: a resumed run never counts twice


@dataclass(frozen=True)
class CoverageResult:
    suite: str
    split: str | None
    task_keys: frozenset[str]
    covered: frozenset[str]

    @property
    def fraction(self) -> float:
        return len(self.covered) / len(self.task_keys) if self.task_keys else 0.0

    @property
    def uncovered(self) -> frozenset[str]:
        return self.task_keys - self.covered


@dataclass(frozen=True)
class TaskStats:
    task_key: str
    split: str
    tags: tuple[str, ...]
    attempts: int
    passes: int
    errors: int
    first_pass_run: str | None
    first_pass_job: int | None


@dataclass(frozen=True)
class ConfigurationStats:
    config_hash: str
    name: str
    attempts: int
    passes: int
    errors: int
    tasks_solved: int
    tokens: int
    wall_s: float

    @property
    def pass_rate(self) -> float:
        return self.passes / self.attempts if self.attempts else 0.0


@dataclass(frozen=True)
class ConfigTagStats:
    config_hash: str
    tag: str
    attempts: int
    passes: int
    tasks_solved: int


@dataclass(frozen=True)
class MissingAttempt:
    task_key: str
    attempt_index: int
