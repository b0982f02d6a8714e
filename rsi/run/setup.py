"""Opening a run: a new one (configurations, tasks, then the run row) or a stored one to resume.

`record_run` is the one opener of a new run of every kind (rsi/run/kinds.py: `rsi run` through
`open_new_run`, `rsi harvest`, and the planned runs through `PlannedRun.open`): it writes identities
first and the run row that names them last, its `args` the kind's typed plan, so a crash in between
leaves nothing to resume; after the run row, everything a resume needs is in the store.
`open_stored_run` reads the stored plan back (`stored_plan`: the resolved configurations as they
were, not today's portfolio file): a resume runs what was planned. Every resume, of any kind of run,
reopens the run through `reopen_stored_run`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rsi.config import Configuration
from rsi.errors import StoreError, UserInputError
from rsi.run.kinds import RUN_KINDS, RunPlan, SearchPlan, kind_of_scheduler, read_core, scheduler_of
from rsi.run.spec import ResolvedRun, RunSpec, resolve_budgets
from rsi.workspace import Workspace

if TYPE_CHECKING:
    from rsi.store.rows import RunRow
    from rsi.tasks.spec import Task

STATE_FILE = "state.json"


@dataclass(frozen=True)
class OpenedRun:
    """A run ready to execute: its id, its resolved plan, its configurations and tasks."""

    run_id: str
    resolved: ResolvedRun
    configs: list[Configuration]
    tasks: list[Task]
    elapsed_before_s: float = 0.0  # wall time of earlier sessions (a resume)


def resolve_run(spec: RunSpec, configs: Sequence[Configuration]) -> ResolvedRun:
    """Fill the spec's unset fields from the first configuration's `[evaluation]` (its attempts budget
    only when the spec gives no budget at all: `resolve_budgets`)."""
    evaluation = configs[0].spec.evaluation
    hcp = configs[0].spec.hcp
    return ResolvedRun(
        portfolio=spec.portfolio,
        suite=spec.suite or evaluation.suite,
        split=spec.split or evaluation.split,
        **resolve_budgets(spec, evaluation.attempts_budget, f"{hcp.name} r{hcp.revision}"),
        attempts_per_task=spec.attempts_per_task or evaluation.attempts_per_task,
        job_size=spec.job_size,
        scheduler=spec.scheduler,
        seed=spec.seed if spec.seed is not None else evaluation.seed,
        limit_tasks=spec.limit_tasks,
        difficulty=list(spec.difficulty) if spec.difficulty else None,
        max_error_retries=spec.max_error_retries,
        retry_backoff_s=spec.retry_backoff_s,
        target_coverage=spec.target_coverage,
        retire=spec.retire,
    )


def select_tasks(tasks: Sequence[Task], split: str, limit: int | None, difficulty: Sequence[str] | None = None) -> list[Task]:
    """The run's tasks: the split asked for (train and heldout for 'all': the sealed test split is never a run's
    target), of the difficulties asked for, sorted by key, the first `limit`."""
    chosen = sorted(
        (t for t in tasks if (split == "all" and t.spec.split != "test" or t.spec.split == split)
         and (not difficulty or t.spec.difficulty in difficulty)),
        key=lambda t: t.key,
    )
    return chosen[:limit] if limit else chosen


def read_state(run_dir: Path) -> dict[str, Any]:
    """The run folder's state file ({} when absent or unreadable: it only carries elapsed time)."""
    try:
        data = json.loads((run_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def open_new_run(store: Any, workspace: Workspace, spec: RunSpec) -> OpenedRun:
    """Resolve the spec against the portfolio and suite, and record the run (see the module doc)."""
    from rsi.portfolio import load_portfolio
    from rsi.store import new_run_id
    from rsi.tasks.load import load_suite

    configs = list(load_portfolio(workspace, spec.portfolio))
    if not configs:
        raise UserInputError(f"portfolio {spec.portfolio!r} holds no configurations")
    resolved = resolve_run(spec, configs)
    tasks = select_tasks(load_suite(workspace, resolved.suite), resolved.split, resolved.limit_tasks,
                         resolved.difficulty)
    if not tasks:
        which = f"{'/'.join(resolved.difficulty)} " if resolved.difficulty else ""
        raise UserInputError(f"suite {resolved.suite!r} has no {which}{resolved.split} tasks")
    plan = SearchPlan(spec=spec.model_dump(mode="json"), resolved=resolved, configs=[c.config_hash for c in configs],
                      tasks=[t.key for t in tasks])
    return record_run(store, new_run_id(), plan, configs, tasks)


def record_run(store: Any, run_id: str, plan: RunPlan, configs: list[Configuration], tasks: list[Task]) -> OpenedRun:
    """The one opener of a new run, of every kind (rsi/run/kinds.py): identities first, then the run row
    that names them, its `args` the plan's JSON (a crash in between leaves no run)."""
    r = plan.resolved
    refuse_sealed(plan, tasks)
    store.record_configurations(configs)
    store.record_tasks(tasks)
    store.create_run(
        run_id=run_id, portfolio=r.portfolio, suite=r.suite, split=r.split,
        budget={"attempts": r.budget_attempts, "tokens": r.budget_tokens, "minutes": r.budget_minutes},
        seed=r.seed, scheduler=scheduler_of(plan), args=plan.model_dump(mode="json"),
    )
    return OpenedRun(run_id, r, configs, tasks)


def refuse_sealed(plan: RunPlan, tasks: Sequence[Task]) -> None:
    """A task of a sealed test split is never a run's target (search, harvest, rollouts, selection, or an
    evaluation of the heldout split): only a final evaluation reads it (its plan's eval spec says split
    'test'; docs/tasks.md "The sealed test split")."""
    sealed = [t.key for t in tasks if t.spec.split == "test"]
    if not sealed:
        return
    section = getattr(plan, "eval", None)
    if section is not None and section.spec.get("split") == "test":
        return
    raise UserInputError(f"{sealed[0]} is a sealed test task ({len(sealed)} in the plan): a run never targets the "
                         "test split", hint="only a final evaluation reads it: `rsi eval CANDIDATE --against PARENT "
                         "--final`")


def resume_command(scheduler: str, run_id: str) -> str:
    """The command that resumes a stopped run stored under `scheduler` (its kind's, rsi/run/kinds.py)."""
    return kind_of_scheduler(scheduler).resume_command(run_id)


def open_stored_run(store: Any, workspace: Workspace, run_id: str) -> OpenedRun:
    """Read a stored `rsi run` plan back and mark the run running again (`--resume`)."""
    try:
        run = store.get_run(run_id)
    except StoreError as error:
        raise UserInputError(error.message, hint="`rsi runs` lists runs") from error
    kind = kind_of_scheduler(run.scheduler)
    if kind is not RUN_KINDS["search"]:  # its plan is rebuilt by the command that writes it
        command = kind.resume_command(run_id)
        raise UserInputError(f"run {run_id} {kind.described}",
                             hint=f"resume it with {command if '`' in command else f'`{command}`'}")
    return reopen_stored_run(store, workspace, run_id, stored_plan(store, workspace, run))


@dataclass(frozen=True)
class StoredPlan:
    """What a resumed run executes: its resolved plan, configurations and tasks."""

    resolved: ResolvedRun
    configs: list[Configuration]
    tasks: list[Task]


def stored_plan(store: Any, workspace: Workspace, run: RunRow) -> StoredPlan:
    """The plan a run row recorded (`read_core`: `rsi run` and `rsi harvest` resume with it): the resolved
    configurations as they were, not today's portfolio file, so a resume runs what was planned. The
    errors name the run's kind and the command that writes it ("run", "harvest")."""
    from rsi.tasks.load import load_suite

    run_id, kind, core = run.id, kind_of_scheduler(run.scheduler).noun, read_core(run)
    resolved, hashes = core.resolved, core.configs
    rows = {row.config_hash: row for row in store.list_configurations(hashes)}
    missing = [h for h in hashes if h not in rows]
    if missing:
        raise StoreError(f"{kind} {run_id}: configurations {missing} are missing from the store")
    configs = [Configuration.model_validate(rows[h].resolved) for h in hashes]
    by_key = {t.key: t for t in load_suite(workspace, resolved.suite)}
    gone = [k for k in core.tasks if k not in by_key]
    if gone:
        raise UserInputError(
            f"{kind} {run_id}: tasks {', '.join(gone[:5])} are no longer in suite {resolved.suite!r}",
            hint=f"restore them, or start a new {kind}",
        )
    return StoredPlan(resolved, configs, [by_key[k] for k in core.tasks])


def reopen_stored_run(store: Any, workspace: Workspace, run_id: str, plan: StoredPlan) -> OpenedRun:
    """Mark a stored run running again and open it with `plan`, counting the wall time of its earlier
    sessions. Every resume goes through here: `rsi run` and `rsi harvest` with the plan their run row
    recorded (`stored_plan`), a planned run (`rsi eval`, GRPO's rollouts) with the plan it rebuilt."""
    store.reopen_run(run_id)
    elapsed = float(read_state(workspace.run_dir(run_id)).get("elapsed_s", 0.0))
    return OpenedRun(run_id, plan.resolved, plan.configs, plan.tasks, elapsed)
