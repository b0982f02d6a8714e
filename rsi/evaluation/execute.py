"""Running an evaluation: its plan as a planned run of the orchestrator, then measuring what it solved.

The attempts are executed and recorded by the orchestrator, the one path `rsi run` takes
(rsi/run/planned.py): real attempt function, executor, sandbox, retries and attempt folders, so every
attempt has a trajectory and a verifier verdict. `_EvalRun.open` is the orchestrator's `opener`: it records
the run through the one opener of every kind of run, or reopens it.

Resume: the run row stores the plan (configurations, tasks, seeds); `EvalSpec.resume` re-runs only the
planned attempts that have no counted outcome (the orchestrator's resume: stored jobs finish their
missing attempts, jobs not yet stored are proposed), so a killed evaluation loses and repeats nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from rsi.atomic import write_json_atomic
from rsi.errors import ExecutorError, RsiError, StoreError, UserInputError
from rsi.evaluation.looks import check_sealed, record_eval_look
from rsi.evaluation.measure import _measure, _Solved, submitted_depth
from rsi.evaluation.plan import (
    CANDIDATE,
    SCHEDULER,
    SIDES,
    _check_resumable,
    _new_plan,
    _Plan,
    _resolve_sides,
    _resumed_plan,
    _Sides,
)
from rsi.evaluation.records import EVAL_FILE, EvalOutcome, EvalSpec, SideCache
from rsi.progress import Tracker
from rsi.promotion.price import AttemptCost, trajectory_cost
from rsi.run.kinds import EvalPlan, EvalSection
from rsi.run.planned import PlannedRun, PlannedScheduler
from rsi.run.setup import OpenedRun
from rsi.run.spec import ResolvedRun, RunOutcome, RunSpec
from rsi.workspace import Workspace

if TYPE_CHECKING:
    from rsi.executors import AttemptFn
    from rsi.store import Store

RETRY_BACKOFF_S = 1.0  # first retry of an infrastructure error; doubles per retry (the orchestrator's policy)


@dataclass
class _EvalRun:
    """The evaluation as a planned run of the orchestrator (rsi/run/planned.py): the run it records or
    reopens (`open`, the orchestrator's `opener`) and the jobs it proposes."""

    workspace: Workspace
    spec: EvalSpec
    sides: _Sides
    plan: _Plan
    tasks: list[Any]  # rsi.tasks.spec.Task, the union of the sides' tasks, by key
    on_created: Callable[[str], None] | None = None
    to_run: int = 0  # attempts this session runs (set when the run is opened)

    def resolved(self) -> ResolvedRun:
        c, p, plan = self.sides.candidate, self.sides.parent, self.plan
        return ResolvedRun(
            portfolio=f"eval:{c.name}@r{c.revision}-vs-{p.name}@r{p.revision}", suite=plan.suite, split="all",
            budget_attempts=plan.attempts, budget_tokens=None, budget_minutes=None, attempts_per_task=plan.per_task,
            job_size=max(len(job.task_keys) for job in plan.jobs()), scheduler=SCHEDULER, seed=plan.seed,
            limit_tasks=None, max_error_retries=self.spec.max_error_retries, retry_backoff_s=RETRY_BACKOFF_S,
            seeding="paired",
        )

    def stored(self) -> EvalPlan:
        """The plan the run row stores (rsi/run/kinds.py)."""
        plan = self.plan
        section = EvalSection(spec=self.spec.model_dump(mode="json"), heldout=plan.heldout, covered=plan.covered,
                              transfer=plan.transfer,
                              best_of_n=asdict(plan.best_of_n) if plan.best_of_n is not None else None,
                              heldout_best_of_n=(asdict(plan.heldout_best_of_n) if plan.heldout_best_of_n is not None
                                                 else None))
        return EvalPlan(resolved=self.resolved(), configs=[plan.configs[j].config_hash for j in sorted(plan.configs)],
                        tasks=plan.all_task_keys(), eval=section)

    def open(self, store: Store) -> OpenedRun:
        """Record the run through the one opener (configurations, tasks, then the run row with the plan), or
        reopen it to resume: a `PlannedRun` of the sides' jobs."""
        plan = self.plan
        planned = PlannedRun(self.workspace, plan.run_id, self.stored(), plan.jobs(), self.tasks, bool(self.spec.resume))
        opened = planned.open(store)
        self.to_run = plan.attempts - _settled(store, plan.run_id, self.spec.max_error_retries)
        if self.on_created is not None:
            self.on_created(plan.run_id)
        return opened

    def scheduler(self, opened: OpenedRun, store: Store) -> PlannedScheduler:
        return PlannedScheduler(SCHEDULER, self.plan.jobs())


def _settled(store: Store, run_id: str, max_error_retries: int) -> int:
    """Planned attempts a session will not run again: counted, or out of error retries."""
    rows = store.list_attempts(run_id)
    return sum(1 for r in rows if r.counted or r.error_retries + 1 > max_error_retries)



def _solved(workspace: Workspace, plan: _Plan) -> _Solved:
    """What each side solved and spent, from the run's counted attempts."""
    from rsi.store import open_store

    store = open_store(workspace.db_url)
    try:
        rows = store.list_attempts(plan.run_id)
    finally:
        store.close()
    solved = _Solved({j: {} for j in SIDES}, {j: 0 for j in SIDES}, 0, {})
    for row in rows:
        if not row.counted:
            continue
        served, cost, depth, made_by = _attempt_facts(workspace, row.trajectory_path)
        solved.served[served] = solved.served.get(served, 0) + 1
        j = plan.side_of(row.job_index)
        cache = solved.cache.setdefault(j, SideCache())
        cache.hits += row.cache_hits
        cache.misses += row.cache_misses
        cache.tokens_not_spent += row.tokens_not_spent
        cache.made_by.extend(run for run in made_by if run not in cache.made_by)
        solved.outcomes.setdefault(j, {}).setdefault(row.task_key, {})[row.attempt_index] = bool(row.passed)
        if row.passed and depth is not None:  # the shallowest passing attempt of the task counts
            depths = solved.depth.setdefault(j, {})
            depths[row.task_key] = min(depth, depths.get(row.task_key, depth))
        spent_tokens, spent_s = solved.completion.setdefault(j, {}), solved.seconds.setdefault(j, {})
        spent_tokens[row.task_key] = spent_tokens.get(row.task_key, 0) + cost.completion_tokens
        prompt, checks = solved.prompt.setdefault(j, {}), solved.checks.setdefault(j, {})
        prompt[row.task_key] = prompt.get(row.task_key, 0) + cost.prompt_tokens
        checks[row.task_key] = checks.get(row.task_key, 0.0) + cost.check_s
        spent_s[row.task_key] = spent_s.get(row.task_key, 0.0) + (row.wall_s or 0.0)
        solved.spent[j] = solved.spent.get(j, 0) + 1
        solved.tokens += row.tokens or 0
        side = solved.by_side.setdefault(j, {})
        side[row.task_key] = side.get(row.task_key, False) or bool(row.passed)
    return solved


def _attempt_facts(workspace: Workspace, trajectory_path: str) -> tuple[str, AttemptCost, int | None, list[str]]:
    """The number format one attempt's trajectory records ("" when it does not say or is not there), what it
    spent (prompt and completion tokens of every candidate and repair turn, public check seconds), the
    submitted candidate's position among those checked (None: no candidate was checked), and the runs that
    first made the replies the response cache served it."""
    from rsi.harness.trajectory import read_trajectory, stored_trajectory_path

    path = stored_trajectory_path(trajectory_path, workspace.runs_dir)
    if path is None:
        return "", AttemptCost(), None, []
    try:
        trajectory = read_trajectory(path)
    except UserInputError:
        return "", AttemptCost(), None, []
    made_by = list(dict.fromkeys(s.metrics.cached_from for s in trajectory.steps
                                 if s.metrics is not None and s.metrics.cached_from))
    return trajectory.model.dtype, trajectory_cost(trajectory), submitted_depth(trajectory), made_by



def _prepare(workspace: Workspace, spec: EvalSpec, on_created: Callable[[str], None] | None,
             note: Callable[[str], None]) -> _EvalRun:
    """Resolve the sides and plan the run (a new plan from stored coverage, or the stored plan to resume)."""
    from rsi.store import open_store
    from rsi.tasks.load import load_suite

    store = open_store(workspace.db_url)
    try:
        stored: dict[str, Any] = {}
        if spec.resume:
            spec, stored = _resumed_plan(store, spec)
        sides = _resolve_sides(workspace, spec)
        spec = sides.spec  # with the number format resolved (stored with the plan)
        evaluation = sides.parent.spec.evaluation
        suite = spec.suite or evaluation.suite
        per_task = spec.attempts_per_task or evaluation.attempts_per_task
        seed = spec.seed if spec.seed is not None else evaluation.seed
        by_key = {t.key: t for t in load_suite(workspace, suite)}
        if spec.resume:
            plan = _check_resumable(spec.resume, spec, sides, stored, by_key, suite, seed, per_task)
        else:
            check_sealed(store, spec, suite, sides.candidate.content_hash, sides.candidate.ref)  # before any attempt
            plan = _new_plan(store, sides, by_key, suite, seed, per_task)
    finally:
        store.close()
    if spec.resume:
        note(f"resuming evaluation {plan.run_id}")
    else:
        control = f" and the generation-0 control {sides.control.ref}" if sides.control is not None else ""
        note(f"evaluation {plan.run_id}: {sides.candidate.ref} vs {sides.parent.ref}{control} on {len(plan.heldout)} "
             f"{'chosen train' if spec.tasks else spec.split} + {len(plan.task_keys(CANDIDATE)) - len(plan.heldout)} "
             f"covered train tasks of {suite}, "
             f"{per_task} attempt(s) each, seed {seed}, served in {_dtype_text(spec)}")
        if plan.best_of_n is not None:
            b = plan.best_of_n
            note(f"best-of-n: {sides.parent.ref} x {b.per_task} on the {len(b.tasks)} train tasks the transfer runs "
                 f"tried with {b.search_attempts} attempts")
        if plan.heldout_best_of_n is not None:
            h = plan.heldout_best_of_n
            note(f"cost-matched: {sides.parent.ref} x {h.per_task} on the {len(plan.heldout)} heldout tasks ({h.basis})")
    tasks = [by_key[k] for k in plan.all_task_keys()]
    return _EvalRun(workspace, spec, sides, plan, tasks, on_created)


def _dtype_text(spec: EvalSpec) -> str:
    return "each contract's own [serving] dtype" if spec.dtype in (None, "serving") else str(spec.dtype)


def _execute(run: _EvalRun, attempt_fn: AttemptFn | None, tracker: Tracker, note: Callable[[str], None]) -> RunOutcome:
    """Run the planned attempts through the orchestrator (the one path that executes and records attempts)."""
    from rsi.run.orchestrator import Orchestrator
    from rsi.run.planned import TrackerDisplay

    run_id, spec = run.plan.run_id, run.spec
    run_spec = RunSpec(workers=spec.workers, sandbox=spec.sandbox, max_error_retries=spec.max_error_retries,
                       retry_backoff_s=RETRY_BACKOFF_S, seed=run.plan.seed, report=False,
                       resume=run_id if spec.resume else None)
    display = TrackerDisplay(tracker, lambda: run.to_run, lambda j: SIDES[run.plan.side_of(j)], note)
    orchestrator = Orchestrator(run_spec, run.workspace, display, attempt_fn, opener=run.open,
                                scheduler_for=run.scheduler)
    try:
        return orchestrator.run()
    except (StoreError, UserInputError):
        raise
    except Exception as error:
        message = error.message if isinstance(error, RsiError) else str(error)
        raise ExecutorError(f"evaluation {run_id} failed: {message}",
                            hint=f"resume with `rsi eval --resume {run_id}`") from error


def evaluate(
    workspace: Workspace,
    spec: EvalSpec,
    on_note: Callable[[str], None] | None = None,
    on_created: Callable[[str], None] | None = None,
    attempt_fn: AttemptFn | None = None,
    tracker: Tracker | None = None,
) -> EvalOutcome:
    """Run (or resume) the paired evaluation and decide; writes nothing to git (see apply_decision).
    The attempts run and are recorded by the orchestrator, like `rsi run`'s; `on_created` gets the run
    id once the run is recorded. `tracker` (rsi.progress) gets the attempts as a stage with a total,
    for a live view or log lines."""
    note = on_note or (lambda _m: None)
    started = time.monotonic()
    run = _prepare(workspace, spec, on_created, note)
    ran = _execute(run, attempt_fn, tracker or Tracker("eval"), note)
    solved = _solved(workspace, run.plan)
    outcome = _measure(run.sides, run.plan, solved, run.spec)
    outcome = outcome.model_copy(update={"errors": ran.errors, "attempts": solved.attempts, "tokens": solved.tokens,
                                         "served": solved.served, "wall_s": time.monotonic() - started})
    outcome = record_eval_look(workspace, run.spec, outcome)  # the verdicts are read: one look in the ledger
    write_json_atomic(workspace.run_dir(run.plan.run_id) / EVAL_FILE, outcome.model_dump(mode="json"))
    return outcome

