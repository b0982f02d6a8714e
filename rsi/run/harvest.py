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
- the harvest is its own run (scheduler `harvest`, HARVEST_SCHEDULER in rsi/store/store.py), so its
  attempts are recorded as its own jobs; the store's reads over all runs (coverage, statistics, the
  scheduler history) leave harvest runs out, so a harvest never counts as coverage search;
- it runs through the orchestrator like `rsi run` (same executor, sandbox, recording, retries and
  crash safety), with the harvest plan as the session's scheduler (the `opener` and
  `scheduler_for` hooks of `rsi.run.orchestrator.Orchestrator`). A harvest is not resumable yet.

`rsi trajectories export SOURCE_RUN HARVEST_RUN --max-per-task N` then exports the pooled solutions.
The planning core (`harvest_targets`, `choose_job`) is pure; `HarvestScheduler` reads each new
passing trajectory of the harvest once to learn its code key.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rsi.errors import RsiError, UserInputError
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

    def __post_init__(self) -> None:
        if self.per_task < 1 or self.budget_attempts < 1 or self.job_size < 1:
            raise UserInputError("--per-task, --budget-attempts and --job-size must be at least 1")


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
    from rsi.harness.trajectory import read_trajectory
    from rsi.trajectories.render import final_code_of
    from rsi.trajectories.select import normalize_code

    if not trajectory_path:
        return ""
    path = Path(trajectory_path)
    if not path.is_absolute():
        path = runs_dir / path
    try:
        code = final_code_of(read_trajectory(path))
    except RsiError:
        return ""
    from rsi.config import sha256_text

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


def open_harvest_run(store: Store, workspace: Workspace, spec: HarvestSpec, plan: HarvestPlan) -> OpenedRun:
    """Record the harvest as its own run (scheduler `harvest`) with its configurations and tasks."""
    from rsi.run.setup import OpenedRun
    from rsi.run.spec import ResolvedRun, RunSpec
    from rsi.store import new_run_id
    from rsi.store.store import HARVEST_SCHEDULER
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
    store.record_configurations(plan.configs)
    store.record_tasks(tasks)
    run_id = new_run_id()
    store.create_run(
        run_id=run_id, portfolio=resolved.portfolio, suite=plan.suite, split="train",
        budget={"attempts": spec.budget_attempts, "tokens": None, "minutes": None}, seed=spec.seed,
        scheduler=HARVEST_SCHEDULER,
        args={"resolved": resolved.model_dump(mode="json"), "configs": [c.config_hash for c in plan.configs],
              "tasks": [t.key for t in tasks],
              "harvest": {"source_runs": list(spec.source_runs), "per_task": spec.per_task,
                          "known_solutions": {k: len(n.codes) for k, n in sorted(plan.needs.items())}}},
    )
    return OpenedRun(run_id, resolved, plan.configs, tasks)


def run_harvest(
    workspace: Workspace, spec: HarvestSpec, display: Display | None = None, attempt_fn: AttemptFn | None = None,
    stop: StopRequest | None = None,
) -> RunOutcome:
    """Plan the harvest from the source runs and execute it through the orchestrator (module docstring)."""
    from rsi.run.orchestrator import Orchestrator
    from rsi.run.spec import RunSpec
    from rsi.store import open_store

    store = open_store(workspace.db_url)
    try:
        plan = plan_harvest(store, workspace, spec)
    finally:
        store.close()
    if not plan.needs:
        raise UserInputError(f"nothing to harvest: every train task of {', '.join(spec.source_runs)} already has "
                             f"{spec.per_task} distinct solutions, or the runs tried no train task")
    run_spec = RunSpec(budget_attempts=spec.budget_attempts, job_size=spec.job_size, workers=spec.workers,
                       sandbox=spec.sandbox, seed=spec.seed, report=False)  # type: ignore[arg-type]

    def scheduler_for(opened: OpenedRun, run_store: Store) -> HarvestScheduler:
        return HarvestScheduler(plan.needs, spec.per_task, plan.source, plan.greedy, run_store, opened.run_id,
                                workspace.runs_dir)

    orchestrator = Orchestrator(run_spec, workspace, display, attempt_fn, stop=stop,
                                opener=lambda store_: open_harvest_run(store_, workspace, spec, plan),
                                scheduler_for=scheduler_for)
    return orchestrator.run()
