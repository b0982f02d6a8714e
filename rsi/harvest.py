"""Harvest: many distinct passing solutions per train task (expert iteration / rejection sampling).

Coverage search stops trying a task once it passes, so a run yields about one solution per covered
task. `rsi harvest RUN --per-task N --budget-attempts M` samples the source runs' TRAIN tasks again
until each has up to N distinct passing solutions (distinct by `normalize_code`, the export's
dedup key), under its own attempt budget:

- a covered task is sampled with the configurations that passed it (fewest harvest tries first,
  then the best pass rate) and then with every sampling configuration, covered tasks before uncovered
  ones (they yield far more passes per attempt); an uncovered one with the `UNCOVERED_CONFIGS` configurations with the
  best train pass rates in the source runs; a greedy configuration (temperature 0) is never asked
  twice for the same task, since its retry is the same answer;
- heldout tasks are never harvested: targets come from the train split only, and a train task whose
  content hash equals a heldout task's is left out too (`harvest_targets` and `check_train_only`);
- the harvest is its own run (the `harvest` kind of rsi/run/kinds.py, stored under the scheduler
  `harvest` with a typed `HarvestPlan`), so its attempts are recorded as its own jobs; the kind does
  not count as coverage search, so the store's reads over all runs (coverage, statistics, the
  scheduler history) leave harvest runs out;
- it runs through the orchestrator like `rsi run` (same executor, sandbox, recording, retries and
  crash safety), with the harvest plan as the session's scheduler (the `opener` and
  `scheduler_for` hooks of `rsi.run.orchestrator.Orchestrator`);
- it resumes (`rsi harvest --resume HARVEST_RUN`, and a generation's harvest step re-entered after a
  crash): the run row stores the source runs, `per_task` and the budget; a resume plans from the same
  source runs, reopens the stored run (its configurations and tasks as recorded), and hands it to the
  orchestrator's resume, so the attempts already recorded count against the budget and are never run
  again (the open jobs finish only their missing keys), and `HarvestScheduler` reads the distinct
  passing solutions already recorded before it plans, so a task already at `per_task` is not asked again.

`rsi trajectories export SOURCE_RUN HARVEST_RUN --max-per-task N` then exports the pooled solutions.
The planning core (`harvest_targets`, `choose_job`) is pure; `HarvestScheduler` reads each new
passing trajectory of the harvest once to learn its code key.

Its layer: a harvest reads stored runs through the promotion layer (`load_run_attempts`) and solutions
through the trajectories layer (`final_code_of`, `normalize_code`), and runs through the orchestrator
(rsi/run/), so it sits above promotion and trajectories, beside rsi/evaluation/, and below the
generation cycle that calls it (docs/architecture.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rsi.errors import RsiError, StoreError, UserInputError
from rsi.scheduler import JobProposal, ScheduleRequest

if TYPE_CHECKING:
    from rsi.display import Display
    from rsi.executors import AttemptFn
    from rsi.run.setup import OpenedRun
    from rsi.run.spec import RunOutcome
    from rsi.run.stop import StopRequest
    from rsi.store import Store
    from rsi.workspace import Workspace

UNCOVERED_CONFIGS = 2  # an uncovered task is tried with this many of the best configurations


@dataclass(frozen=True)
class HarvestSpec:
    """One `rsi harvest`: which runs' tasks, how many distinct solutions per task, under which budget."""

    source_runs: tuple[str, ...]
    per_task: int = 4
    budget_attempts: int = 100
    job_size: int = 8
    workers: int | None = None
    seed: int = 0
    sandbox: str = "auto"
    resume: str | None = None  # a harvest run id: its stored source runs, per_task, budget and seed win

    def __post_init__(self) -> None:
        if self.per_task < 1 or self.budget_attempts < 1 or self.job_size < 1:
            raise UserInputError("--per-task, --budget-attempts and --job-size must be at least 1")
        if not self.source_runs and not self.resume:
            raise UserInputError("name the source run(s) to harvest, or --resume a harvest run")


@dataclass(frozen=True)
class SourceAttempt:
    """One counted attempt of a source run (or of the harvest itself), as planning sees it."""

    config_hash: str
    task_key: str
    passed: bool
    code_key: str = ""  # normalized-code key of a passing attempt's solution ("" unknown)


@dataclass
class TaskNeed:
    """A train task to harvest: the distinct solutions known so far and the configurations to ask."""

    key: str
    configs: tuple[str, ...]
    codes: set[str] = field(default_factory=set)


def check_train_only(keys: Iterable[str], split_of: dict[str, str]) -> None:
    """Raise if any harvest target is not a train task (the heldout split is never harvested)."""
    wrong = sorted(k for k in keys if split_of.get(k) != "train")
    if wrong:
        raise UserInputError(f"refusing to harvest {len(wrong)} non-train task(s): {', '.join(wrong[:5])}",
                             hint="heldout tasks gate promotion and are never harvested")


def harvest_targets(
    attempts: Sequence[SourceAttempt], train_keys: Sequence[str], configs: Sequence[str], per_task: int,
    greedy: Iterable[str] = (),
) -> dict[str, TaskNeed]:
    """Per train task with fewer than `per_task` distinct solutions: the configurations to sample it with.

    A covered task goes to the configurations that passed it and then to every sampling one: a greedy
    passer answers the same again, so a task only greedy configurations solved would otherwise get no
    second solution, although a sampling configuration of the same portfolio often finds one."""
    tried: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    by_task: dict[str, set[str]] = {}
    codes: dict[str, set[str]] = {}
    for a in attempts:
        tried[a.config_hash] += 1
        if a.passed:
            passed[a.config_hash] += 1
            by_task.setdefault(a.task_key, set()).add(a.config_hash)
            if a.code_key:
                codes.setdefault(a.task_key, set()).add(a.code_key)

    def rank(config: str) -> tuple[float, str]:  # best train pass rate first
        return (-(passed[config] / tried[config]) if tried[config] else 0.0, config)

    ranked = tuple(sorted(configs, key=rank))
    best, greedy_set = ranked[:UNCOVERED_CONFIGS], set(greedy)
    needs = {}
    for key in sorted(train_keys):
        found = codes.get(key, set())
        if len(found) >= per_task:
            continue
        passers = tuple(sorted(by_task.get(key, set()) & set(configs), key=rank))
        samplers = tuple(c for c in ranked if c not in passers and c not in greedy_set) if passers else ()
        needs[key] = TaskNeed(key, passers + samplers if passers else best, set(found))
    return needs


def choose_job(
    needs: dict[str, TaskNeed], per_task: int, tries: Counter[tuple[str, str]], greedy: set[str],
    allowed: set[str], job_size: int, budget_attempts: int | None,
) -> JobProposal | None:
    """The next harvest job: one configuration on the open tasks it is the next choice for. Pure."""
    chosen: dict[str, list[str]] = {}
    for key, need in sorted(needs.items()):
        if key not in allowed or len(need.codes) >= per_task:
            continue
        usable = [c for c in need.configs if not (c in greedy and tries[(c, key)] >= 1)]
        if not usable:
            continue
        config = min(usable, key=lambda c: (tries[(c, key)], need.configs.index(c)))
        chosen.setdefault(config, []).append(key)
    if not chosen:
        return None
    config, keys = max(chosen.items(), key=lambda item: (len(item[1]), item[0]))
    # Covered tasks first (a known solvable task yields far more passes per attempt than an uncovered one),
    # then the tasks with fewest solutions.
    keys.sort(key=lambda k: (not needs[k].codes, len(needs[k].codes), k))
    size = min(job_size, budget_attempts) if budget_attempts is not None else job_size
    picked = tuple(keys[:size])
    return JobProposal(config, picked, 1, reason=f"harvest: {len(picked)} task(s) short of {per_task} distinct solutions")


class HarvestScheduler:
    """The harvest plan as a run scheduler: learns each new passing solution of this run, then `choose_job`."""

    name = "harvest"

    def __init__(self, needs: dict[str, TaskNeed], per_task: int, source: Sequence[SourceAttempt], greedy: set[str],
                 store: Store, run_id: str, runs_dir: Path) -> None:
        self.needs, self.per_task, self.greedy = needs, per_task, greedy
        self.store, self.run_id, self.runs_dir = store, run_id, runs_dir
        self.source_tries = Counter((a.config_hash, a.task_key) for a in source)
        self.read: set[str] = set()  # idempotency keys of this run's passing attempts already read

    def propose(self, request: ScheduleRequest) -> JobProposal | None:
        self._learn_new_solutions()
        tries = self.source_tries + Counter((fact[0], fact[1]) for fact in request.history)
        allowed = {t.key for t in request.tasks}
        return choose_job(self.needs, self.per_task, tries, self.greedy, allowed, request.job_size,
                          request.budget.attempts)

    def _learn_new_solutions(self) -> None:
        for row in self.store.list_attempts(self.run_id):
            if row.passed and row.idem_key not in self.read and row.task_key in self.needs:
                self.read.add(row.idem_key)
                code = code_key_of(row.trajectory_path, self.runs_dir)
                if code:
                    self.needs[row.task_key].codes.add(code)


def code_key_of(trajectory_path: str, runs_dir: Path) -> str:
    """The normalized-code key of a trajectory's final solution ("" when there is none to read)."""
    from rsi.harness.trajectory import read_trajectory, stored_trajectory_path
    from rsi.trajectories.render import final_code_of
    from rsi.trajectories.select import normalize_code

    path = stored_trajectory_path(trajectory_path, runs_dir)
    if path is None:
        return ""
    try:
        code = final_code_of(read_trajectory(path))
    except RsiError:
        return ""
    from rsi.contracts.hashing import sha256_text

    return sha256_text(normalize_code(code))[:16] if code else ""


@dataclass
class HarvestPlan:
    """What `plan_harvest` read from the store: targets, the configurations and what the source tried."""

    suite: str
    needs: dict[str, TaskNeed]
    configs: list[Any]  # rsi.config.Configuration
    source: list[SourceAttempt]
    greedy: set[str]


def plan_harvest(store: Store, workspace: Workspace, spec: HarvestSpec) -> HarvestPlan:
    """Read the source runs and decide what to harvest (train tasks only)."""
    from rsi.promotion.stored import load_run_attempts

    stored = load_run_attempts(store, spec.source_runs, workspace.runs_dir)
    infos = store.list_tasks(stored.suite)
    split_of = {info.key: info.split for info in infos}
    heldout_hashes = set(stored.heldout_hashes)
    train_keys = [i.key for i in infos if i.split == "train" and i.content_hash not in heldout_hashes
                  and i.key in {a.task_key for a in stored.attempts}]
    source = [
        SourceAttempt(a.config_hash, a.task_key, a.passed,
                      code_key_of(a.trajectory_path, workspace.runs_dir) if a.passed else "")
        for a in stored.attempts if a.verdict.counts_as_attempt and split_of.get(a.task_key) == "train"
    ]
    configs = [c for h, c in sorted(stored.configurations.items()) if h in {a.config_hash for a in stored.attempts}]
    greedy = {c.config_hash for c in configs if c.spec.harness.sampling.temperature == 0}
    needs = harvest_targets(source, train_keys, [c.config_hash for c in configs], spec.per_task, greedy)
    check_train_only(needs, split_of)
    return HarvestPlan(stored.suite, needs, configs, source, greedy)


def open_harvest_run(store: Store, workspace: Workspace, spec: HarvestSpec, plan: HarvestPlan,
                     on_created: Callable[[str], None] | None = None) -> OpenedRun:
    """Record the harvest as its own run (scheduler `harvest`) with its configurations and tasks;
    `on_created` gets the run id as soon as the run row exists (a caller that must resume it records it)."""
    from rsi.run.kinds import HARVEST_SCHEDULER, HarvestSection
    from rsi.run.kinds import HarvestPlan as StoredHarvest
    from rsi.run.setup import record_run
    from rsi.run.spec import ResolvedRun, RunSpec
    from rsi.store import new_run_id
    from rsi.tasks.load import load_suite

    by_key = {t.key: t for t in load_suite(workspace, plan.suite)}
    tasks = [by_key[k] for k in sorted(plan.needs) if k in by_key]
    check_train_only((t.key for t in tasks), {t.key: t.spec.split for t in tasks})
    defaults = RunSpec()
    resolved = ResolvedRun(
        portfolio=f"harvest of {', '.join(spec.source_runs)}", suite=plan.suite, split="train",
        budget_attempts=spec.budget_attempts, budget_tokens=None, budget_minutes=None, attempts_per_task=1,
        job_size=spec.job_size, scheduler=HARVEST_SCHEDULER, seed=spec.seed, limit_tasks=None,
        max_error_retries=defaults.max_error_retries, retry_backoff_s=defaults.retry_backoff_s,
    )
    section = HarvestSection(source_runs=list(spec.source_runs), per_task=spec.per_task,
                             known_solutions={k: len(n.codes) for k, n in sorted(plan.needs.items())})
    stored = StoredHarvest(resolved=resolved, configs=[c.config_hash for c in plan.configs],
                         tasks=[t.key for t in tasks], harvest=section)
    opened = record_run(store, new_run_id(), stored, plan.configs, tasks)
    if on_created is not None:
        on_created(opened.run_id)
    return opened


def stored_harvest_spec(store: Store, spec: HarvestSpec) -> HarvestSpec:
    """The spec the harvest `spec.resume` was started with (source runs, per_task, budget, job size, seed,
    from its run row), with this call's execution settings (workers, sandbox)."""
    from rsi.run.kinds import HARVEST_SCHEDULER, read_plan
    from rsi.run.kinds import HarvestPlan as StoredHarvest
    from rsi.run.setup import resume_command

    run_id = spec.resume or ""
    try:
        run = store.get_run(run_id)
    except StoreError as error:
        raise UserInputError(error.message, hint="`rsi runs` lists runs") from error
    if run.scheduler != HARVEST_SCHEDULER:
        raise UserInputError(f"run {run_id} is not a harvest (scheduler {run.scheduler!r})",
                             hint=f"resume it with {resume_command(run.scheduler, run_id)}")
    stored = read_plan(run)  # an old row's untyped args too (rsi/run/kinds.py)
    assert isinstance(stored, StoredHarvest)  # the kind of a harvest row
    resolved = stored.resolved
    if resolved.budget_attempts is None:  # a harvest always records its attempts budget
        raise StoreError(f"run {run_id} was not written by `rsi harvest` (its args lack 'budget_attempts')")
    return HarvestSpec(source_runs=tuple(stored.harvest.source_runs), per_task=stored.harvest.per_task,
                       budget_attempts=resolved.budget_attempts, job_size=resolved.job_size, seed=resolved.seed,
                       workers=spec.workers, sandbox=spec.sandbox, resume=run_id)


def resolve_harvest_spec(workspace: Workspace, spec: HarvestSpec) -> HarvestSpec:
    """`spec` itself, or for a resume the spec its harvest was started with (`stored_harvest_spec`)."""
    from rsi.store import open_store

    if not spec.resume:
        return spec
    store = open_store(workspace.db_url)
    try:
        return stored_harvest_spec(store, spec)
    finally:
        store.close()


def reopen_harvest_run(store: Store, workspace: Workspace, run_id: str) -> OpenedRun:
    """Reopen a stored harvest with its configurations and tasks as recorded (not as the source runs read
    today): a resume runs what was planned. Marks the run running again."""
    from rsi.run.setup import reopen_stored_run, stored_plan

    plan = stored_plan(store, workspace, store.get_run(run_id))
    check_train_only((t.key for t in plan.tasks), {t.key: t.spec.split for t in plan.tasks})
    return reopen_stored_run(store, workspace, run_id, plan)


def run_harvest(
    workspace: Workspace, spec: HarvestSpec, display: Display | None = None, attempt_fn: AttemptFn | None = None,
    stop: StopRequest | None = None, on_created: Callable[[str], None] | None = None,
) -> RunOutcome:
    """Plan the harvest from the source runs and execute it through the orchestrator, or resume the harvest
    `spec.resume` (module docstring). `on_created` gets a new harvest's run id once its run row exists."""
    from rsi.run.orchestrator import Orchestrator
    from rsi.run.spec import RunSpec
    from rsi.store import open_store

    store = open_store(workspace.db_url)
    try:
        if spec.resume:
            spec = stored_harvest_spec(store, spec)
        plan = plan_harvest(store, workspace, spec)
    finally:
        store.close()
    if not plan.needs and not spec.resume:  # a resume still closes its open jobs and records its end
        raise UserInputError(f"nothing to harvest: every train task of {', '.join(spec.source_runs)} already has "
                             f"{spec.per_task} distinct solutions, or the runs tried no train task")
    run_spec = RunSpec(budget_attempts=spec.budget_attempts, job_size=spec.job_size, workers=spec.workers,
                       sandbox=spec.sandbox, seed=spec.seed, report=False, resume=spec.resume)  # type: ignore[arg-type]

    def scheduler_for(opened: OpenedRun, run_store: Store) -> HarvestScheduler:
        # A resumed session learns the solutions its earlier sessions recorded at its first proposal.
        return HarvestScheduler(plan.needs, spec.per_task, plan.source, plan.greedy, run_store, opened.run_id,
                                workspace.runs_dir)

    def opener(store_: Store) -> OpenedRun:
        if spec.resume:
            return reopen_harvest_run(store_, workspace, spec.resume)
        return open_harvest_run(store_, workspace, spec, plan, on_created)

    orchestrator = Orchestrator(run_spec, workspace, display, attempt_fn, stop=stop, opener=opener,
                                scheduler_for=scheduler_for)
    return orchestrator.run()
