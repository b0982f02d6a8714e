"""Planning an evaluation run: the sides (contracts resolved to configurations) and the tasks each attempts.

The run's jobs are the sides present, in order: job 0 = parent, job 1 = candidate, then the control and the
best-of-n side when asked for (`_Plan.side_of`). The heldout tasks (or the explicit train slice `EvalSpec.tasks`)
carry the lift; the parent's previously covered train tasks the retention; the transfer runs' union coverage
the transfer; the best-of-n side gets the transfer runs' attempt budget on the train tasks they tried
(`plan_best_of_n`, pure).

Every side is served in one number format, the parent's `[evaluation] dtype` (float32 in the shipped
contract: greedy text in bfloat16 depends on the other rows of a batch, so two evaluations of one contract
would disagree; docs/models.md). It is resolved when the evaluation is planned and stored with the plan.

A new plan reads stored coverage and writes nothing; a resumed one is the plan the run row stored
(`_resumed_plan`), checked against what its refs resolve to now (`_check_resumable`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rsi.errors import RsiError, UserInputError
from rsi.evaluation.records import EvalSpec
from rsi.run.kinds import EVAL_SCHEDULER, EvalPlan
from rsi.run.planned import PlannedJob
from rsi.workspace import Workspace

SCHEDULER = EVAL_SCHEDULER

# The sides of an evaluation. The run's jobs are the sides present, in this order (job i = the i-th side
# present): parent 0, candidate 1, control 2, best-of-n 3 (job 2 when there is no control), then the cost-matched
# heldout side 4 (always the last job, so the others keep their job indices); see _Plan.side_of.
PARENT, CANDIDATE, CONTROL, BEST_OF_N, COST_MATCHED = 0, 1, 2, 3, 4
SIDES = {PARENT: "parent", CANDIDATE: "candidate", CONTROL: "control", BEST_OF_N: "best-of-n",
         COST_MATCHED: "cost-matched"}


# A greedy configuration repeats one answer n times: best-of-n of it, n > 1, samples (a common best-of-n setting).
BEST_OF_N_SAMPLING = {"harness.sampling.temperature": 0.8, "harness.sampling.top_p": 0.95}


@dataclass(frozen=True)
class BestOfNPlan:
    """Job 3: the parent as best-of-n on the tasks the transfer runs tried, with about their attempts."""

    tasks: list[str]  # T, sorted
    search_attempts: int  # A
    covered: list[str]  # U, sorted
    per_task: int  # n
    overrides: dict[str, float]  # sampling overrides of the parent's configuration ({} if it samples)

    def summary_fields(self) -> dict[str, Any]:
        return {"tasks": len(self.tasks), "search_attempts": self.search_attempts,
                "union_covered": len(self.covered), "per_task": self.per_task}


def best_of_n_per_task(search_attempts: int, tasks: int) -> int:
    """n = max(1, round(A / T)), half up (integer arithmetic: no float or banker's rounding surprise)."""
    return max(1, (2 * search_attempts + tasks) // (2 * tasks)) if tasks > 0 else 1


def best_of_n_overrides(temperature: float, per_task: int) -> dict[str, float]:
    """A greedy parent is sampled (BEST_OF_N_SAMPLING) when it gets more than one attempt a task; with one,
    its greedy answer is its best single answer. A sampling parent keeps its own sampling."""
    return dict(BEST_OF_N_SAMPLING) if temperature == 0 and per_task > 1 else {}


def plan_best_of_n(tried: dict[str, int], covered: set[str], split_of: dict[str, str], temperature: float) -> BestOfNPlan:
    """The cost-matched side from what the transfer runs spent: `tried` = train task -> counted attempts,
    `covered` = their union coverage, `split_of` = each task's split in the suite (pure)."""
    tasks = sorted(k for k, n in tried.items() if n > 0)
    not_train = [k for k in tasks if split_of.get(k) != "train"]
    if not_train:  # heldout tasks are never attempted for anything but the lift
        raise RsiError(f"best-of-n: tasks {', '.join(not_train[:5])} are not train tasks of the suite")
    attempts = sum(tried[k] for k in tasks)
    per_task = best_of_n_per_task(attempts, len(tasks))
    return BestOfNPlan(tasks, attempts, sorted(covered & set(tasks)), per_task, best_of_n_overrides(temperature, per_task))


@dataclass(frozen=True)
class HeldoutBestOfNPlan:
    """Job 4: the parent as best-of-n on the heldout tasks, spending about the candidate's tokens per task."""

    per_task: int  # n
    overrides: dict[str, float]  # sampling overrides of the parent's configuration ({} if it samples, or n = 1)
    basis: str  # how n was derived, in words (stored and shown beside the figures)


def cost_matched_per_task(candidate_tokens: float, parent_tokens: float, parent_attempts: int = 1) -> int:
    """n for the heldout cost-matched side: the parent's attempts per task scaled by the candidate's token ratio,
    n = max(1, round(a x C / P)) half up, where C and P are the candidate's and the parent's completion tokens per
    heldout task over a attempts each (pure). A parent that spent nothing gets its own attempts."""
    if parent_tokens <= 0:
        return max(1, parent_attempts)
    return min(MAX_COST_MATCHED_N, max(1, int(parent_attempts * candidate_tokens / parent_tokens + 0.5)))


MAX_COST_MATCHED_N = 64  # EvalSpec.cost_matched_n's bound: a candidate dearer than that is matched at 64 (the basis says)


def cost_matched_basis(eval_id: str, candidate_tokens: float, parent_tokens: float, parent_attempts: int) -> str:
    """The words that say how `cost_matched_per_task` derived n from a measured evaluation (pure)."""
    n = cost_matched_per_task(candidate_tokens, parent_tokens, parent_attempts)
    capped = f", capped at {MAX_COST_MATCHED_N}" if n == MAX_COST_MATCHED_N else ""
    return (f"n = round({parent_attempts} x {candidate_tokens:.1f} / {parent_tokens:.1f}) = {n}{capped}: the candidate's "
            f"over the parent's completion tokens per heldout task in evaluation {eval_id}")


def cost_matched_from(outcome: Any) -> tuple[int, str]:
    """n and its basis from a measured evaluation (an EvalOutcome of the same candidate and parent): the candidate's
    completion tokens per heldout task over the parent's, times the parent's attempts per task."""
    cand, parent = outcome.costs.get("candidate"), outcome.costs.get("parent")
    if cand is None or parent is None:
        raise UserInputError(f"evaluation {outcome.eval_id} has no token costs for both sides to match",
                             hint="give --cost-matched-n N instead")
    attempts = int(outcome.seeds.get("attempts_per_task", 1))
    c, p = cand.completion_tokens_per_task, parent.completion_tokens_per_task
    return cost_matched_per_task(c, p, attempts), cost_matched_basis(outcome.eval_id, c, p, attempts)


def plan_heldout_best_of_n(per_task: int, basis: str, temperature: float) -> HeldoutBestOfNPlan:
    """The heldout cost-matched side: n attempts a task, a greedy parent sampled when n > 1 (pure)."""
    return HeldoutBestOfNPlan(per_task, best_of_n_overrides(temperature, per_task), basis or f"n = {per_task}, given")


@dataclass
class _Plan:
    """What an evaluation run attempts: its sides (job index -> configuration) and its task lists."""

    run_id: str
    suite: str
    seed: int
    per_task: int
    configs: dict[int, Any]
    heldout: list[str]
    covered: list[str]
    transfer: list[str]
    best_of_n: BestOfNPlan | None = None
    heldout_best_of_n: HeldoutBestOfNPlan | None = None

    def task_keys(self, side: int) -> list[str]:
        """The control and cost-matched sides are there for the heldout comparison only; best-of-n for the train
        tasks tried."""
        if side == COST_MATCHED:
            return list(self.heldout)
        if side == BEST_OF_N:
            return list(self.best_of_n.tasks) if self.best_of_n is not None else []
        extra = [] if side == CONTROL else sorted((set(self.covered) | set(self.transfer)) - set(self.heldout))
        return self.heldout + extra

    def jobs(self) -> list[PlannedJob]:
        """The run's jobs in order: job 0 = parent, 1 = candidate, 2 = control (when there is one)."""
        return [PlannedJob(SIDES[j], self.configs[j], tuple(self.task_keys(j)), self.attempts_per_task(j))
                for j in sorted(self.configs)]

    def side_of(self, job_index: int) -> int:
        """The side the run's job `job_index` ran (PlannedScheduler proposes the plan's jobs in order)."""
        return sorted(self.configs)[job_index]

    def job_index_of(self, side: int) -> int:
        return sorted(self.configs).index(side)

    def attempts_per_task(self, side: int) -> int:
        if side == COST_MATCHED and self.heldout_best_of_n is not None:
            return self.heldout_best_of_n.per_task
        return self.best_of_n.per_task if side == BEST_OF_N and self.best_of_n is not None else self.per_task

    def all_task_keys(self) -> list[str]:
        """Every task some side attempts (the run's tasks)."""
        return sorted({k for j in self.configs for k in self.task_keys(j)})

    def unique_configs(self) -> list[Any]:
        """The sides' configurations, one per hash (a best-of-n side without overrides is the parent's own)."""
        return list({self.configs[j].config_hash: self.configs[j] for j in sorted(self.configs)}.values())

    @property
    def attempts(self) -> int:
        return sum(job.attempts for job in self.jobs())


@dataclass
class _Sides:
    spec: EvalSpec
    candidate: Any
    parent: Any
    control: Any | None
    configs: dict[int, Any]


def _resolve_sides(workspace: Workspace, spec: EvalSpec) -> _Sides:
    from rsi.config import configuration_from_contract
    from rsi.contracts.refs import resolve_ref

    candidate, parent = resolve_ref(workspace, spec.candidate), resolve_ref(workspace, spec.parent)
    spec = spec.model_copy(update={"dtype": spec.dtype or parent.spec.evaluation.dtype})
    served = _served_as(spec)
    configs = {PARENT: configuration_from_contract(parent, overrides=served),
               CANDIDATE: configuration_from_contract(candidate, overrides=served)}
    if configs[CANDIDATE].config_hash == configs[PARENT].config_hash:
        raise UserInputError(f"{spec.candidate} and {spec.parent} are the same configuration; nothing to compare")
    control = resolve_ref(workspace, spec.control) if spec.control else None
    if control is not None:
        control_config = configuration_from_contract(control, overrides=served)
        # Generation 1's parent is generation 0 itself: its lift against the control is its lift.
        if control_config.config_hash == configs[PARENT].config_hash:
            control = None
        else:
            configs[CONTROL] = control_config
    if spec.best_of_n and not spec.transfer_runs:  # its configuration is added with its plan (_with_best_of_n)
        raise UserInputError("best-of-n needs the transfer runs whose attempt budget it matches",
                             hint="add --transfer-run RUN_ID (the coverage search of the generation)")
    return _Sides(spec, candidate, parent, control, configs)


def _served_as(spec: EvalSpec) -> dict[str, Any]:
    """The override that serves a side in the evaluation's number format (none for 'serving'). `[serving]` is
    not part of a configuration's hash, so the sides keep their identity and their stored coverage."""
    return {} if spec.dtype in (None, "serving") else {"serving.dtype": spec.dtype}


def _with_cost_matched(sides: _Sides, configs: dict[int, Any], held: HeldoutBestOfNPlan | None) -> dict[int, Any]:
    """`configs` and, with a heldout cost-matched plan, its side: the parent's configuration with its overrides."""
    if held is None:
        return configs
    return {**configs, COST_MATCHED: _best_of_n_config(sides.parent, sides.configs[PARENT], held.overrides,
                                                       _served_as(sides.spec))}


def _with_best_of_n(sides: _Sides, overrides: dict[str, float]) -> dict[int, Any]:
    """The sides' configurations and the best-of-n side's: the parent's with the plan's sampling overrides."""
    return {**sides.configs, BEST_OF_N: _best_of_n_config(sides.parent, sides.configs[PARENT], overrides,
                                                          _served_as(sides.spec))}


def _best_of_n_config(parent: Any, parent_config: Any, overrides: dict[str, float], served: dict[str, Any]) -> Any:
    """The parent's configuration as best-of-n runs it (itself without overrides)."""
    from rsi.config import configuration_from_contract

    if not overrides:
        return parent_config
    return configuration_from_contract(parent, name=f"{parent_config.name}-best-of-n", overrides={**overrides, **served},
                                       parents=[parent_config.config_hash])



def _parent_covered(store: Any, suite: str, parent_hash: str, runs: list[str]) -> set[str]:
    if runs:
        return set(store.covered_tasks(suite, "train", runs))
    return {fact[1] for fact in store.attempt_history(suite, "train") if fact[0] == parent_hash and fact[2]}



def _resumed_plan(store: Any, spec: EvalSpec) -> tuple[EvalSpec, dict[str, Any]]:
    """The spec and plan an evaluation run stored (`read_plan`: an old row's untyped args too)."""
    from rsi.run.kinds import read_plan

    run = store.get_run(spec.resume)
    if run.scheduler != SCHEDULER:
        raise UserInputError(f"run {spec.resume} is not an evaluation run")
    stored = read_plan(run)
    assert isinstance(stored, EvalPlan)  # the kind of an eval-paired row
    section = stored.eval
    resumed = EvalSpec.model_validate({**section.spec, "resume": spec.resume,
                                       "workers": spec.workers or section.spec.get("workers")})
    # a plan without the heldout cost-matched side reads as it did before that side existed
    unused = {"heldout_best_of_n"} if section.heldout_best_of_n is None else set()
    return resumed, {**section.model_dump(exclude=unused), "configs": list(stored.configs)}


def _new_plan(store: Any, sides: _Sides, by_key: dict[str, Any], suite: str, seed: int, per_task: int) -> _Plan:
    """Which tasks each side attempts (reads stored coverage; writes nothing)."""
    from rsi.store import new_run_id

    spec = sides.spec
    heldout = _lift_tasks(spec, by_key, suite)
    if not heldout:
        raise UserInputError(f"suite {suite!r} has no heldout tasks to evaluate on")
    covered_all = sorted(_parent_covered(store, suite, sides.configs[PARENT].config_hash, spec.covered_runs) & set(by_key))
    covered = covered_all if spec.limit_covered is None else covered_all[: spec.limit_covered]
    transfer_all = sorted(set(store.covered_tasks(suite, "train", spec.transfer_runs)) & set(by_key)) if spec.transfer_runs else []
    transfer = transfer_all if spec.limit_covered is None else transfer_all[: spec.limit_covered]
    best = _best_of_n_plan(store, sides, by_key, suite) if spec.best_of_n else None
    configs = _with_best_of_n(sides, best.overrides) if best is not None else sides.configs
    held = (plan_heldout_best_of_n(spec.cost_matched_n, spec.cost_matched_basis,
                                   sides.configs[PARENT].spec.harness.sampling.temperature)
            if spec.cost_matched_n else None)
    return _Plan(new_run_id(), suite, seed, per_task, _with_cost_matched(sides, configs, held), heldout, covered,
                 transfer, best, held)


def _best_of_n_plan(store: Any, sides: _Sides, by_key: dict[str, Any], suite: str) -> BestOfNPlan:
    """What the transfer runs spent on train tasks (counted attempts per task, union coverage), planned as
    the best-of-n side."""
    runs = sides.spec.transfer_runs
    tried = {s.task_key: s.attempts for s in store.task_stats(suite, "train", runs) if s.task_key in by_key}
    covered = set(store.covered_tasks(suite, "train", runs))
    split_of = {k: t.spec.split for k, t in by_key.items()}
    best = plan_best_of_n(tried, covered, split_of, sides.configs[PARENT].spec.harness.sampling.temperature)
    if not best.tasks:
        raise UserInputError(f"best-of-n: the transfer runs {', '.join(runs)} tried no train task of {suite!r}")
    return best


def _lift_tasks(spec: EvalSpec, by_key: dict[str, Any], suite: str) -> list[str]:
    """The tasks the lift is measured on: the heldout split (or, for a final evaluation, the sealed test split),
    or the explicit train slice `spec.tasks`."""
    if spec.split == "test" and spec.tasks:
        raise UserInputError("tasks: an explicit train slice and the sealed test split are two different evaluations")
    if not spec.tasks:
        chosen = sorted(k for k, t in by_key.items() if t.spec.split == spec.split)[: spec.limit_heldout]
        if spec.split == "test" and not chosen:
            raise UserInputError(f"suite {suite!r} declares no sealed test split (no task.toml says split = \"test\")")
        return chosen
    unknown = [k for k in spec.tasks if k not in by_key]
    if unknown:
        raise UserInputError(f"tasks: {', '.join(unknown[:5])} not in suite {suite!r}")
    heldout = [k for k in spec.tasks if by_key[k].spec.split != "train"]
    if heldout:
        # a slice that chooses something (a recipe, a checkpoint) must never see the heldout split
        raise UserInputError(f"tasks: {', '.join(heldout[:5])} are not train tasks; an explicit slice is train-only")
    return sorted(set(spec.tasks))


def _check_resumable(run_id: str, spec: EvalSpec, sides: _Sides, stored: dict[str, Any], by_key: dict[str, Any],
                     suite: str, seed: int, per_task: int) -> _Plan:
    best = BestOfNPlan(**stored["best_of_n"]) if stored.get("best_of_n") else None
    configs = _with_best_of_n(sides, best.overrides) if best is not None else sides.configs
    held = HeldoutBestOfNPlan(**stored["heldout_best_of_n"]) if stored.get("heldout_best_of_n") else None
    configs = _with_cost_matched(sides, configs, held)
    if stored["configs"] != [configs[j].config_hash for j in sorted(configs)]:
        # an unpinned ref (a bare NAME) may resolve to a newer revision than the one evaluated so far
        raise UserInputError(
            f"evaluation {run_id}: {spec.candidate} / {spec.parent} no longer resolve to the configurations "
            "it started with", hint="evaluate pinned revisions (NAME@rN), or start a new evaluation")
    plan = _Plan(run_id, suite, seed, per_task, configs, list(stored["heldout"]), list(stored["covered"]),
                 list(stored.get("transfer", [])), best, held)
    missing = [k for k in plan.all_task_keys() if k not in by_key]
    if missing:
        raise UserInputError(f"evaluation {run_id}: tasks {', '.join(missing[:5])} left suite {suite!r}")
    return plan

