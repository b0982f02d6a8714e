"""A job whose attempts are in flight: its planned attempt specs and which keys still await an outcome.

Several jobs can be in flight at once (the next one is planned while the last one's attempts
finish). A key leaves `open_keys` when it gets a counted outcome or runs out of error retries; a
job is finished when no key is open. `build_specs` turns a job's missing attempts into the
executor's `AttemptSpec`s (pure): their folders (rsi/run/layout.py), seeds and time limits.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rsi.config import Configuration
from rsi.errors import StoreError
from rsi.executors import AttemptSpec
from rsi.run.layout import RunLayout

if TYPE_CHECKING:
    from rsi.store import JobRow, MissingAttempt
    from rsi.tasks.spec import Task


def attempt_seed(seed: int, job_index: int, task_key: str, attempt_index: int) -> int:
    digest = hashlib.sha256(f"{seed}|{job_index}|{task_key}|{attempt_index}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1  # 31 bits: fits a signed 32-bit column (PostgreSQL INTEGER)


def task_seed(seed: int, task_key: str, attempt_index: int) -> int:
    """The seed of a paired run (`rsi eval`): every job draws the same one for a (task, attempt), so the
    sides of a comparison differ in their configuration only."""
    digest = hashlib.sha256(f"{seed}|{task_key}|{attempt_index}".encode()).hexdigest()
    return int(digest[:8], 16)


def seed_for(seeding: str, seed: int, job_index: int, task_key: str, attempt_index: int) -> int:
    """An attempt's seed under the run's seeding (`ResolvedRun.seeding`)."""
    if seeding == "paired":
        return task_seed(seed, task_key, attempt_index)
    return attempt_seed(seed, job_index, task_key, attempt_index)


def attempt_timeout_s(task: Task, config: Configuration) -> float:
    """The executor's hard limit for one attempt: the agent's time, the verifier's, and a minute of setup."""
    agent_s = min(task.spec.agent_timeout_s, config.spec.harness.timeouts.agent_s)
    return float(agent_s) + task.spec.verifier_timeout_s + 60.0


def build_specs(
    run_id: str, layout: RunLayout, seed: int, job: JobRow, config: Configuration, tasks: Mapping[str, Task],
    missing: Sequence[MissingAttempt], earlier_errors: Mapping[tuple[str, int], int], seeding: str = "per-job",
) -> list[AttemptSpec]:
    """The attempt specs of a job's `missing` attempts (each with its earlier error count as try index)."""
    specs = []
    for m in missing:
        task = tasks.get(m.task_key)
        if task is None:
            raise StoreError(f"run {run_id} job {job.job_index} plans {m.task_key}, not in the run")
        specs.append(
            AttemptSpec(
                key=f"{run_id}|{job.job_index}|{m.task_key}|{m.attempt_index}",
                run_id=run_id, job_index=job.job_index, task_key=m.task_key, task_dir=str(task.root),
                attempt_index=m.attempt_index,
                seed=seed_for(seeding, seed, job.job_index, m.task_key, m.attempt_index),
                config=config,
                out_dir=str(layout.attempt_dir(job.job_index, m.task_key, m.attempt_index)),
                timeout_s=attempt_timeout_s(task, config),
                try_index=earlier_errors.get((m.task_key, m.attempt_index), 0),
            )
        )
    return specs


@dataclass
class JobInFlight:
    """One job of the run whose attempts have not all ended."""

    row: JobRow
    config: Configuration
    specs: list[AttemptSpec]  # what this session runs (missing attempts at start)
    open_keys: dict[str, str] = field(default_factory=dict)  # key -> task: running, queued or awaiting a retry
    retries: list[tuple[float, AttemptSpec]] = field(default_factory=list)  # (due, spec) waiting out a backoff
    counted: int = 0  # counted outcomes this session
    run_counted_at_start: int = 0  # the session's counted outcomes (every job) when this job started
    planned: int = 0  # attempts planned in the job (display)
    done: int = 0  # counted outcomes, earlier sessions included (display)
    passed: int = 0

    @property
    def index(self) -> int:
        return self.row.job_index

    @property
    def finished(self) -> bool:
        return not self.open_keys

    @property
    def task_keys(self) -> set[str]:
        """Tasks of this job whose attempt may still pass: not to be planned again while in flight."""
        return set(self.open_keys.values())
