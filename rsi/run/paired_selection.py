"""Paired selection: the shortlisted configurations each attempt the SAME train tasks, so their pass rates
compare (`GenerationSpec.select_tasks`).

Coverage search sends each configuration mostly to tasks no other has covered yet, so the tasks behind two
configurations' rates differ: a configuration tried late meets only the hard tasks left, and one tried
early the easy ones. Ranking on that evidence confounds the configuration with its tasks. A paired
selection removes the confound where it matters, for the few configurations the run ranks first and the
parent's own: one planned run (rsi/run/planned.py, the orchestrator's path) in which each of them
attempts the same seeded draw of train tasks, with paired seeds (every job draws the same seed for a
task), stored under its own scheduler name. Heldout tasks are never drawn: promotion decides on this run.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rsi.config import Configuration
    from rsi.run.planned import PlannedRun
    from rsi.tasks.spec import Task
    from rsi.workspace import Workspace

from rsi.run.kinds import SELECTION_SCHEDULER


def draw_train_tasks(tasks: Sequence[Task], n: int, seed: int) -> list[Task]:
    """A seeded draw of `n` train tasks (all of them when there are fewer), in key order (pure)."""
    train = sorted((t for t in tasks if t.spec.split == "train"), key=lambda t: t.key)
    drawn = random.Random(seed).sample(train, min(n, len(train)))
    return sorted(drawn, key=lambda t: t.key)


def selection_run(workspace: Workspace, configs: Sequence[Configuration], tasks: Sequence[Task], run_id: str,
                  seed: int, resume: bool) -> PlannedRun:
    """The plan: job i = configuration i on every drawn task, once, paired seeds."""
    from rsi.run.kinds import SelectionPlan, SelectionSection
    from rsi.run.planned import PlannedJob, PlannedRun
    from rsi.run.spec import ResolvedRun

    keys = tuple(t.key for t in tasks)
    jobs = [PlannedJob(config.name, config, keys, 1) for config in configs]
    suite = keys[0].rpartition("/")[0] if keys else ""
    resolved = ResolvedRun(
        portfolio=f"select:{','.join(c.name for c in configs)}"[:200], suite=suite, split="train",
        budget_attempts=max(1, sum(job.attempts for job in jobs)), budget_tokens=None, budget_minutes=None,
        attempts_per_task=1, job_size=max(1, len(keys)), scheduler=SELECTION_SCHEDULER, seed=seed, limit_tasks=None,
        max_error_retries=2, retry_backoff_s=1.0, seeding="paired",
    )
    hashes = list(dict.fromkeys(c.config_hash for c in configs))
    plan = SelectionPlan(resolved=resolved, configs=hashes, tasks=list(keys),
                         selection=SelectionSection(configs=[c.config_hash for c in configs], tasks=list(keys)))
    return PlannedRun(workspace, run_id, plan, jobs, list(tasks), resume)


def run_paired_selection(
    workspace: Workspace, configs: Sequence[Configuration], tasks: Sequence[Task], *, seed: int, workers: int | None,
    sandbox: str, resume_id: str | None = None, on_created: Callable[[str], None] | None = None,
) -> str:
    """Run (or resume) the paired selection through the orchestrator; the run id."""
    from rsi.errors import ExecutorError
    from rsi.run.orchestrator import Orchestrator
    from rsi.run.spec import RunSpec
    from rsi.store import new_run_id

    for task in tasks:
        if task.spec.split != "train":
            raise ExecutorError(f"paired selection refused {task.key}: it is a {task.spec.split} task")
    run = selection_run(workspace, configs, tasks, resume_id or new_run_id(), seed, resume_id is not None)
    if on_created is not None:
        on_created(run.run_id)
    spec = RunSpec(workers=workers, sandbox=sandbox, seed=seed, report=False, resume=resume_id)
    outcome = Orchestrator(spec, workspace, opener=run.open, scheduler_for=run.scheduler).run()
    if outcome.status != "done":
        raise ExecutorError(f"paired selection {run.run_id} ended {outcome.status}: {outcome.stop_reason}",
                            hint="resume the generation: the selection continues where it stopped")
    return run.run_id
