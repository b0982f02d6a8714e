"""Runs whose jobs are fixed in advance (`rsi eval`, GRPO's rollouts), on the `rsi run` path.

A planned run hands the orchestrator (rsi/run/orchestrator.py) a list of jobs instead of a
scheduler that searches: `PlannedScheduler` proposes job i of the plan as the run's job i, and
nothing after the last. Everything else is the orchestrator's: attempt specs, time limits, the
attempt folders, retries, recording, the run lock, and resume. On resume the session finishes the
stored jobs' attempts without a counted outcome, and the scheduler proposes only the planned jobs
not yet stored, so a killed planned run loses and repeats nothing.

`PlannedRun` is the whole plan as the orchestrator's `opener` and `scheduler_for` hooks: it records
the run through the one opener (`record_run` in rsi/run/setup.py: configurations, tasks, then the run
row with the caller's typed plan, rsi/run/kinds.py) or reopens it to resume (`rsi eval`, GRPO's
rollouts and the paired selection use it).

`TrackerDisplay` shows such a run through a `rsi.progress.Tracker` (one stage of attempts with its
total), the way `rsi train` and `rsi generation` show themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rsi.scheduler import JobProposal, ScheduleRequest

if TYPE_CHECKING:
    from rsi.config import Configuration
    from rsi.display import RunEvent, RunProgress
    from rsi.progress import Tracker
    from rsi.run.kinds import RunPlan
    from rsi.run.setup import OpenedRun
    from rsi.run.spec import ResolvedRun
    from rsi.store import Store
    from rsi.tasks.spec import Task
    from rsi.workspace import Workspace


@dataclass(frozen=True)
class PlannedJob:
    """One job of a planned run: a configuration on fixed tasks, a fixed number of attempts each."""

    label: str  # what the job is to the caller ("parent", "candidate", ...): shown and stored as its reason
    config: Configuration
    task_keys: tuple[str, ...]
    attempts_per_task: int

    @property
    def attempts(self) -> int:
        return len(self.task_keys) * self.attempts_per_task


class PlannedScheduler:
    """Proposes the plan's job i as the run's job i (tasks in flight or not), then nothing. Pure."""

    def __init__(self, name: str, jobs: Sequence[PlannedJob]) -> None:
        self.name, self.jobs = name, list(jobs)

    def propose(self, request: ScheduleRequest) -> JobProposal | None:
        if request.job_index >= len(self.jobs):
            return None
        job = self.jobs[request.job_index]
        return JobProposal(job.config.config_hash, job.task_keys, job.attempts_per_task,
                           reason=f"planned: {job.label}")


@dataclass
class PlannedRun:
    """A run of fixed jobs, recorded or (with `resume`) reopened: the orchestrator's `opener` (`open`)
    and `scheduler_for` (`scheduler`). `plan` is what the run row stores (its kind's plan model; its
    resolved run names the scheduler the run is stored under)."""

    workspace: Workspace
    run_id: str
    plan: RunPlan
    jobs: list[PlannedJob]
    tasks: list[Task]  # every task a job names, once
    resume: bool = False

    @property
    def resolved(self) -> ResolvedRun:
        return self.plan.resolved

    def configs(self) -> list[Configuration]:
        """The jobs' configurations, once each, in plan order."""
        by_hash: dict[str, Configuration] = {}
        for job in self.jobs:
            by_hash.setdefault(job.config.config_hash, job.config)
        return list(by_hash.values())

    def open(self, store: Store) -> OpenedRun:
        """Record the run (`record_run`: identities first, the run row that names them last), or reopen it."""
        from rsi.run.setup import StoredPlan, record_run, reopen_stored_run

        if self.resume:
            plan = StoredPlan(self.resolved, self.configs(), self.tasks)
            return reopen_stored_run(store, self.workspace, self.run_id, plan)
        return record_run(store, self.run_id, self.plan, self.configs(), self.tasks)

    def scheduler(self, opened: OpenedRun, store: Store) -> PlannedScheduler:
        return PlannedScheduler(self.resolved.scheduler, self.jobs)


class TrackerDisplay:
    """A run `Display` that reports the session's attempts to a Tracker, and its events as notes.

    `total` is the attempts this session is to run; the stage starts at the first snapshot, whose
    counts (attempts recorded by earlier sessions of a resumed run) are the stage's zero."""

    def __init__(self, tracker: Tracker, total: Callable[[], int], label_of: Callable[[int], str],
                 note: Callable[[str], None]) -> None:
        self.tracker, self.total, self.label_of, self.note = tracker, total, label_of, note
        self.base: tuple[int, int, int] | None = None

    def update(self, progress: RunProgress, event: RunEvent | None = None) -> None:
        if self.base is None:
            self.base = (progress.attempts, progress.passes, progress.errors)
            self.tracker.stage("attempts", total=self.total(), unit="attempts")
        if event is None:
            return
        if event.kind in ("retry", "job_started", "note"):
            self.note(event.message)
        if event.kind == "attempt":  # its snapshot carries its job's fields
            label = self.label_of(progress.job_index) if progress.job_index is not None else ""
            self.note(f"{label} {event.message}" if label else event.message)
            attempts, passes, errors = self.base
            self.tracker.advance(progress.attempts - attempts, passed=progress.passes - passes,
                                 errors=progress.errors - errors)

    def close(self) -> None:
        return None
