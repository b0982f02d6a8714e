"""The coverage store's tables (SQLModel). Shape only; reads and writes live in queries.py / write.py.

    runs            one row per `rsi run` (id, portfolio, suite, budget, seed, args, status)
    jobs            chronological units of a run: one configuration, planned tasks, attempts per task
    configurations  content-addressed resolved configurations (hash -> full JSON, lineage)
    tasks           task identity per suite (split, content hash); task_tags: one row per tag
    attempts        every attempt outcome, errors included; `idem_key` makes recording idempotent
    attempt_stats   per (run, configuration, task) aggregate of `attempts`, kept in the same
                    transaction as each batch; the coverage queries read it instead of scanning attempts
    looks           the look ledger: one row per evaluation that read the verdicts of a heldout or sealed
                    test split (which candidate, which command, why, how many tasks, when; rsi/store/looks.py)
    schema_version  the schema's version (see migrate.py)

Changing a table here is a schema change: add a migration in migrate.py (its docstring says how).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict
from sqlalchemy import JSON, Column, Index, UniqueConstraint
from sqlmodel import Field, SQLModel

from rsi.store.types import UtcDateTime, utc_now


class SchemaVersionRow(SQLModel, table=True):
    __tablename__ = "schema_version"
    id: int = Field(default=1, primary_key=True)
    version: int
    updated: datetime = Field(default_factory=utc_now, sa_type=UtcDateTime)


class RunRow(SQLModel, table=True):
    __tablename__ = "runs"
    id: str = Field(primary_key=True, description="Sortable id: <UTC timestamp>-<random hex>.")
    created: datetime = Field(default_factory=utc_now, sa_type=UtcDateTime, index=True)
    finished: datetime | None = Field(default=None, sa_type=UtcDateTime)
    portfolio: str = Field(description="Portfolio name the configurations came from.")
    suite: str = Field(index=True, description="Task suite the run targets.")
    split: str = Field(default="train", description="Split whose coverage is the goal.")
    budget: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    status: str = Field(default="running", description="running | done | stopped | failed")
    seed: int = 0
    scheduler: str = Field(default="", description="Scheduler name that planned the jobs.")
    args: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


class JobDetails(BaseModel):
    """What a job row's `details` JSON holds: the scheduler's reason and name (`run/session.py` writes them).
    `extra="allow"` keeps any other key a scheduler or an older release wrote, so every stored row reads."""

    model_config = ConfigDict(extra="allow")
    reason: str = ""
    scheduler: str = ""

    def extras(self) -> dict[str, Any]:
        """The keys beyond the declared ones, as stored."""
        return dict(self.model_extra or {})


class JobRow(SQLModel, table=True):
    __tablename__ = "jobs"
    run_id: str = Field(foreign_key="runs.id", primary_key=True)
    job_index: int = Field(primary_key=True, description="Chronological index within the run, from 0.")
    configuration_hash: str = Field(foreign_key="configurations.config_hash", index=True)
    planned_tasks: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    attempts_per_task: int = 1
    status: str = Field(default="running", description="running | done | failed | cancelled")
    created: datetime = Field(default_factory=utc_now, sa_type=UtcDateTime)
    finished: datetime | None = Field(default=None, sa_type=UtcDateTime)
    details: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))

    @property
    def job_details(self) -> JobDetails:
        """`details` read through its typed model (the column stays JSON: no schema change)."""
        return JobDetails.model_validate(self.details or {})


class ConfigurationRow(SQLModel, table=True):
    __tablename__ = "configurations"
    config_hash: str = Field(primary_key=True)
    name: str = Field(description="Portfolio variant name (or contract name).")
    contract_ref: str = ""
    parents: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    resolved: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created: datetime = Field(default_factory=utc_now, sa_type=UtcDateTime)


class TaskRow(SQLModel, table=True):
    __tablename__ = "tasks"
    __table_args__ = (Index("ix_tasks_suite_split", "suite", "split"),)
    key: str = Field(primary_key=True, description="<suite>/<task id>")
    suite: str
    task_id: str
    split: str = "train"
    tags: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    content_hash: str = ""
    updated: datetime = Field(default_factory=utc_now, sa_type=UtcDateTime)


class TaskTagRow(SQLModel, table=True):
    __tablename__ = "task_tags"
    task_key: str = Field(foreign_key="tasks.key", primary_key=True)
    tag: str = Field(primary_key=True, index=True)


class AttemptRow(SQLModel, table=True):
    __tablename__ = "attempts"
    __table_args__ = (
        UniqueConstraint("idem_key", name="uq_attempts_idem_key"),
        Index("ix_attempts_run_job", "run_id", "job_index"),
        # Coverage seeks (task, passed) once per task: cost grows with tasks, not attempts.
        Index("ix_attempts_task_passed", "task_key", "passed", "run_id"),
        Index("ix_attempts_config_task", "configuration_hash", "task_key"),
    )
    id: int | None = Field(default=None, primary_key=True)
    idem_key: str = Field(description="<run>|<job index>|<task key>|<attempt index>: one row per planned attempt.")
    run_id: str = Field(foreign_key="runs.id")
    job_index: int
    configuration_hash: str = Field(foreign_key="configurations.config_hash")
    task_key: str = Field(foreign_key="tasks.key")
    task_hash: str = Field(default="", description="Task content hash when the attempt ran.")
    seed: int = 0
    attempt_index: int = 0
    verdict: str = Field(description="passed | failed | error | timeout (rsi.verdict.Verdict)")
    counted: bool = Field(description="False for error: infrastructure, never coverage nor failure.")
    passed: bool
    reason: str = ""
    error_class: str = ""
    tokens: int = 0
    cache_hits: int = Field(default=0, description="Replies served from the response cache (rsi.models.cache).")
    cache_misses: int = Field(default=0, description="Cacheable replies the model made (and the cache kept).")
    tokens_not_spent: int = Field(default=0, description="Of `tokens`, those of replies served from the cache.")
    wall_s: float = 0.0
    trajectory_path: str = ""
    final_code_hash: str = ""
    started: datetime | None = Field(default=None, sa_type=UtcDateTime)
    finished: datetime | None = Field(default=None, sa_type=UtcDateTime)
    error_retries: int = Field(default=0, description="Earlier error outcomes this row replaced.")
    recorded: datetime = Field(default_factory=utc_now, sa_type=UtcDateTime)


class AttemptStatsRow(SQLModel, table=True):
    __tablename__ = "attempt_stats"
    run_id: str = Field(foreign_key="runs.id", primary_key=True)
    configuration_hash: str = Field(foreign_key="configurations.config_hash", primary_key=True, index=True)
    task_key: str = Field(foreign_key="tasks.key", primary_key=True, index=True)
    attempts: int = Field(default=0, description="Counted attempts (verdict is not error).")
    passes: int = 0
    errors: int = Field(default=0, description="Error outcomes seen, replaced ones included.")
    tokens: int = Field(default=0, description="Tokens of counted attempts.")
    wall_s: float = 0.0
    first_pass_job: int | None = Field(default=None, description="Lowest job index with a pass in this run.")


class LookRow(SQLModel, table=True):
    """One look at a split's verdicts: an evaluation that measured a candidate on heldout (or sealed test) tasks.
    A split read many times stops being evidence (docs/promotion.md "Looks"); these rows count the reads."""

    __tablename__ = "looks"
    __table_args__ = (
        UniqueConstraint("eval_id", "split", name="uq_looks_eval_split"),
        Index("ix_looks_suite_split", "suite", "split"),
        Index("ix_looks_candidate", "suite", "split", "candidate_hash"),
    )
    id: int | None = Field(default=None, primary_key=True)
    eval_id: str = Field(description="The evaluation run whose verdicts were read (one look per run and split).")
    suite: str
    split: str = Field(description="heldout | test")
    candidate_ref: str = Field(default="", description="NAME@rN of the candidate contract.")
    candidate_hash: str = Field(description="The candidate contract's content hash: its identity across refs.")
    parent_ref: str = ""
    tasks: int = Field(default=0, description="Tasks of the split whose verdicts were read.")
    command: str = Field(default="", description="The command line that read them.")
    why: str = Field(default="", description="Why: rsi eval, a generation's gate, an ablation, ...")
    second_look: bool = Field(default=False, description="A repeated look at the sealed split by the same candidate.")
    created: datetime = Field(default_factory=utc_now, sa_type=UtcDateTime)


class HasPlanArgs(Protocol):
    """A run row, or anything carrying its stored plan as `args` (summaries are built from fakes too)."""

    @property
    def args(self) -> dict[str, Any]: ...


def planned_keys(run: HasPlanArgs) -> tuple[list[str], list[str]]:
    """The (configuration hashes, task keys) a stored run planned: `RunPlan.configs` and `.tasks`, which
    every kind and version stores under the same keys. Lenient for reports and summaries: what a row
    lacks reads as [] (they fall back to what ran), where `read_plan` would refuse it."""
    args = run.args or {}
    return [str(h) for h in args.get("configs") or []], [str(k) for k in args.get("tasks") or []]
