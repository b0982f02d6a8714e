"""Held-out evaluation of a candidate contract against its parent: `rsi eval CANDIDATE --against PARENT`.

Both contracts attempt the same tasks with the same seeds (rsi.run.jobs.task_seed: a (task, attempt)
draws the same seed on every side) and the same attempts per task, in one evaluation run stored like
any other run (`runs/rsi.sqlite`, portfolio `eval:<candidate>-vs-<parent>`, scheduler `eval-paired`),
planned as fixed jobs (job 0 = parent, job 1 = candidate, then the control and the best-of-n side when
asked for, in that order) and
executed and recorded by the orchestrator, the one path `rsi run` takes (rsi/run/planned.py): real
attempt function, executor, sandbox, retries and attempt folders, so every attempt has a trajectory
and a verifier verdict:

- **heldout tasks** of the suite (never trained on: the export refuses them) -> the **lift**, the
  paired difference of solve rates (per task: any attempt passed) with Newcombe's 95% interval,
  exactly `rsi.promotion.decision.paired_lift`;
- **previously covered train tasks** (tasks the parent's configuration solved in stored runs, or the
  coverage of `covered_runs`) -> the **retention**, the share of them the candidate still solves;
- **portfolio-covered train tasks** (what any configuration of `transfer_runs` solved: the union
  coverage of the search) -> the **transfer**, the share of them the one deployed configuration now
  solves. Union coverage is what the portfolio reached; transfer is what ships;
- with `control` (the frozen generation-0 contract), a third side on the heldout tasks -> the lift
  **against generation 0**, the number that says whether generations compound;
- with `tasks` (an explicit slice of TRAIN tasks; heldout keys are refused), the lift is measured on that
  slice instead of the heldout split: a validation slice for choosing a training recipe on train data
  only (bench/recipe_sweep.py), so heldout tasks never choose anything;
- with `best_of_n` (needs `transfer_runs`), a fourth side (job 3; job 2 without a control) -> the
  **cost-matched best-of-n**: the transfer runs spent A counted attempts on the T train tasks they
  tried and covered U of them with many configurations (union coverage); the parent's configuration
  gets the same budget on the same T tasks as best-of-n, n = max(1, round(A / T)) attempts per task
  (half rounds up): a sampling parent keeps its own sampling; a greedy parent with n > 1 runs at
  temperature 0.8, top_p 0.95 (n greedy attempts would repeat one answer), and with n = 1 runs greedy,
  as it ships (one sample would only be a worse single answer). B = the tasks with any pass.
  Train tasks only: heldout tasks are never part of it. So union coverage U/T is read beside what one
  configuration reaches with the same attempts (B/T) and beside what ships (transfer), never as what
  ships.

Every side is served in one number format, the parent's `[evaluation] dtype` (float32 in the shipped
contract: greedy text in bfloat16 depends on the other rows of a batch, so two evaluations of one contract
would disagree; docs/models.md). It is resolved when the evaluation is planned and stored with the plan.

The gate is the parent's `[evaluation.gate]`: promote only if the lift's CI lower bound is above
`min_lift` and retention >= `retention_min`. `decide_adapter` is pure; `apply_decision` writes the
outcome: the parent's next revision (rsi.training.candidate.promote_adapter) or a `rejected` status
with the numbers, both recorded in the adapter's status.json.

Resume: the run row stores the plan (configurations, tasks, seeds); `EvalSpec.resume` re-runs only the
planned attempts that have no counted outcome (the orchestrator's resume: stored jobs finish their
missing attempts, jobs not yet stored are proposed), so a killed evaluation loses and repeats nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rsi.atomic import write_json_atomic
from rsi.contracts.schema import EvalDtype
from rsi.errors import ExecutorError, RsiError, StoreError, UserInputError
from rsi.progress import Tracker
from rsi.promotion.decision import LiftSummary
from rsi.run.kinds import EVAL_SCHEDULER, EvalPlan, EvalSection
from rsi.run.planned import PlannedJob, PlannedRun, PlannedScheduler
from rsi.run.setup import OpenedRun
from rsi.run.spec import ResolvedRun, RunOutcome, RunSpec
from rsi.sandbox.select import SandboxName
from rsi.training.stage import EMPTY_IS_NONE, RevisionWritten, none_as_empty
from rsi.workspace import Workspace

if TYPE_CHECKING:
    from rsi.executors import AttemptFn
    from rsi.store import Store

EVAL_FILE = "eval.json"
SCHEDULER = EVAL_SCHEDULER
RETRY_BACKOFF_S = 1.0  # first retry of an infrastructure error; doubles per retry (the orchestrator's policy)


class EvalSpec(BaseModel):
    """One `rsi eval` (flags map onto these fields)."""

    model_config = ConfigDict(extra="forbid")
    candidate: str
    parent: str
    suite: str | None = Field(default=None, description="Default: the parent's evaluation.suite.")
    attempts_per_task: int | None = Field(default=None, ge=1, description="Default: the parent's evaluation.attempts_per_task.")
    seed: int | None = Field(default=None, description="Default: the parent's evaluation.seed.")
    limit_heldout: int | None = Field(default=None, ge=1, description="Only the first N heldout tasks (by key).")
    limit_covered: int | None = Field(default=None, ge=0, description="At most N previously covered train tasks.")
    covered_runs: list[str] = Field(default_factory=list, description="Coverage of these runs instead of the parent's own.")
    workers: int | None = Field(default=None, ge=1)
    sandbox: SandboxName = "auto"
    max_error_retries: int = Field(default=2, ge=0, le=10)
    resume: str | None = Field(default=None, description="Resume this evaluation run id.")
    ci_method: Literal["newcombe", "bootstrap"] = "newcombe"
    control: str | None = Field(default=None, description="The frozen generation-0 contract ref: a third side on heldout.")
    transfer_runs: list[str] = Field(default_factory=list,
                                     description="Runs whose union coverage (any configuration) measures transfer.")
    tasks: list[str] = Field(default_factory=list, description=(
        "Measure the lift on exactly these TRAIN tasks instead of the heldout split: a validation slice of the "
        "train split, for choosing a training recipe (bench/recipe_sweep.py). Heldout keys are refused."))
    best_of_n: bool = Field(default=False, description=(
        "Job 3: the parent's configuration as best-of-n (a greedy one sampled when n > 1) on the train tasks the transfer runs tried, with "
        "about the attempts they spent: the cost-matched baseline beside union coverage. Needs transfer_runs."))
    dtype: EvalDtype | None = Field(default=None, description=(
        "Number format every side is served in ('serving': each contract's own [serving] dtype). Default: the "
        "parent's [evaluation] dtype. Resolved when the evaluation is planned and stored with it, so a resumed "
        "evaluation serves its remaining attempts as it served the first ones."))


class GateSummary(BaseModel):
    """The parent's `[evaluation.gate]` the decision applied."""

    enabled: bool
    min_lift: float = Field(description="The lift's CI lower bound must lie above this.")
    retention_min: float
    max_token_ratio: float | None = Field(default=None, description="Price bound: candidate / parent tokens per task.")
    min_lift_per_1k_tokens: float | None = Field(default=None, description="Price bound: lift per extra 1k tokens/task.")


class SideCost(BaseModel):
    """What one side solved and spent on the heldout tasks: the price beside the pass rate.

    Completion tokens are every completion the side's attempts asked for (all candidates, repair turns);
    seconds are attempt wall time (model, checks and verifier), per heldout task."""

    tasks: int = Field(description="Heldout tasks with a counted attempt on this side.")
    pass_rate: float
    completion_tokens_per_task: float
    seconds_per_task: float
    k_needed: float | None = Field(default=None, description=(
        "Candidates needed: over the heldout tasks this side solved with a checked submission, the mean position "
        "of the submitted candidate among those the harness sampled (1: the first; what an adapter can lower at "
        "the same pass rate). None where the harness checks no candidates."))


def price_text(costs: dict[str, SideCost], against: str = "parent") -> str:
    """'at 9.8x the parent's completion tokens per heldout task (812 vs 83)' ('' without both sides)."""
    cand, base = costs.get("candidate"), costs.get(against)
    if cand is None or base is None or not base.completion_tokens_per_task:
        return ""
    ratio = cand.completion_tokens_per_task / base.completion_tokens_per_task
    return (f"at {ratio:.1f}x the {against}'s completion tokens per heldout task "
            f"({cand.completion_tokens_per_task:.0f} vs {base.completion_tokens_per_task:.0f})")


class EvalDecision(BaseModel):
    promote: bool
    reason: str
    gate: GateSummary


class ContractSide(BaseModel):
    """One side of an evaluation: the contract revision and the configuration its attempts ran under."""

    name: str
    revision: int
    ref: str = Field(description="NAME@rN")
    content_hash: str
    config_hash: str


class RetentionSummary(BaseModel):
    """Of the covered train tasks the parent solves in this evaluation, how many the candidate still solves."""

    covered: int
    still_solved: int = Field(description="Covered train tasks the candidate solves (whether or not the parent does).")
    retention: float = Field(description="kept / parent_resolved (1.0 when the parent solved none); records "
                             "without `kept` (before it existed) hold still_solved / covered.")
    parent_resolved: int = Field(description="How many of them the parent solved again in this evaluation.")
    kept: int | None = Field(default=None, description="Of the parent_resolved tasks, how many the candidate "
                             "solves too (None in records made before it existed).")


class TransferSummary(BaseModel):
    """Of the train tasks the portfolio covered (any configuration), how many the deployed one solves."""

    portfolio_covered: int = Field(description="Union coverage of the transfer runs, on the train split.")
    candidate_solved: int
    parent_solved: int
    transfer: float = Field(description="candidate_solved / portfolio_covered (0.0 when nothing was covered).")
    parent_transfer: float = Field(description="parent_solved / portfolio_covered: the transfer before training.")


class CostMatchedSummary(BaseModel):
    """Union coverage of the portfolio beside a best-of-n of the parent under the same attempt budget, and
    beside what ships: the same train tasks, about the same attempts, one configuration instead of many."""

    job_index: int = Field(description="The evaluation run's job of the best-of-n side (3, or 2 without a control).")
    tasks: int = Field(description="T: train tasks the transfer runs tried (any counted attempt).")
    search_attempts: int = Field(description="A: the transfer runs' counted attempts on those tasks.")
    union_covered: int = Field(description="U: of them, tasks any configuration of the transfer runs passed.")
    per_task: int = Field(description="n = max(1, round(A / T)), half up: best-of-n attempts per task.")
    sampling: str = Field(description="How the best-of-n side sampled (the parent's own, or the greedy override).")
    attempts: int = Field(description="Counted best-of-n attempts spent (n x T planned).")
    solved: int = Field(description="B: tasks with any passing best-of-n attempt.")
    union_rate: float = Field(description="U / T")
    best_of_n_rate: float = Field(description="B / T")
    transfer_tasks: int = Field(description="Covered tasks the transfer side measured (U, or fewer with limit_covered).")
    parent_solved: int = Field(description="Of those, what the parent solves with its own decoding (what ships now).")
    candidate_solved: int = Field(description="Of those, what the candidate solves (what would ship).")


class AppliedDecision(BaseModel):
    """What `apply_decision` wrote: the parent's new revision, or the rejection and why."""

    state: Literal["promoted", "rejected"]
    revision: RevisionWritten | None = Field(default=None, description="The parent revision promoted into.")
    reason: str = Field(default="", description="Why the gate rejected the adapter.")


class EvalOutcome(BaseModel):
    """What an evaluation measured and decided (also written to runs/<eval id>/eval.json)."""

    eval_id: str
    suite: str
    candidate: ContractSide
    parent: ContractSide
    control: ContractSide | None = Field(default=None, description="The generation-0 control side, if any.")
    adapter_id: str = ""
    dtype: str = Field(default="serving", description="Number format the sides were asked to be served in (EvalSpec.dtype).")
    served: dict[str, int] = Field(default_factory=dict, description=(
        "Counted attempts by the number format their trajectory says the model was loaded in ('' where the backend "
        "cannot say): what `dtype` asked for, as it happened (RSI_DTYPE overrides it)."))
    seeds: dict[str, int] = Field(default_factory=dict)
    heldout_tasks: list[str]
    covered_tasks: list[str] = Field(description="Train tasks the parent had covered (retention).")
    transfer_tasks: list[str] = Field(default_factory=list, description="Train tasks the portfolio had covered (transfer).")
    lift: LiftSummary
    lift_vs_control: LiftSummary | None = Field(default=None, description="Candidate against the generation-0 control.")
    retention: RetentionSummary
    transfer: TransferSummary | None = None
    cost_matched: CostMatchedSummary | None = Field(default=None, description="With best_of_n: the cost-matched baseline.")
    costs: dict[str, SideCost] = Field(default_factory=dict, description="Per side (parent, candidate, control): pass "
                                       "rate, completion tokens and seconds per heldout task.")
    per_task: dict[str, dict[str, bool]] = Field(description="task -> {'candidate': solved, 'parent': solved[, 'control']}.")
    decision: EvalDecision
    errors: int = 0
    attempts: int = 0
    tokens: int = 0
    wall_s: float = 0.0
    applied: Annotated[AppliedDecision | None, EMPTY_IS_NONE, none_as_empty(exclude_defaults=True)] = Field(
        default=None, description="What apply_decision wrote (JSON: {} before).")

    @property
    def promote(self) -> bool:
        return self.decision.promote


@dataclass(frozen=True)
class RetentionEstimate:
    """What the candidate kept of what the parent can do. The denominator is the covered tasks the parent solves
    in the same evaluation, not all covered tasks: a portfolio covers tasks only a sampled or otherwise
    different configuration solved, and a candidate that merely matches the deployed parent must not read as
    having lost them (that share is transfer, reported on its own)."""

    covered: int
    still_solved: int
    parent_resolved: int
    kept: int

    @property
    def retention(self) -> float:
        return self.kept / self.parent_resolved if self.parent_resolved else 1.0

    def summary(self) -> RetentionSummary:
        return RetentionSummary(covered=self.covered, still_solved=self.still_solved,
                                retention=round(self.retention, 4), parent_resolved=self.parent_resolved,
                                kept=self.kept)


# -- pure parts ---------------------------------------------------------------------------------


def retention_of(covered: list[str], candidate: dict[str, bool], parent: dict[str, bool]) -> RetentionEstimate:
    return RetentionEstimate(
        covered=len(covered),
        still_solved=sum(1 for t in covered if candidate.get(t, False)),
        parent_resolved=sum(1 for t in covered if parent.get(t, False)),
        kept=sum(1 for t in covered if parent.get(t, False) and candidate.get(t, False)),
    )


def transfer_of(portfolio_covered: list[str], candidate: dict[str, bool], parent: dict[str, bool]) -> TransferSummary:
    """Share of the portfolio's covered train tasks the deployed configuration solves (pure)."""
    n = len(portfolio_covered)
    cand = sum(1 for t in portfolio_covered if candidate.get(t, False))
    par = sum(1 for t in portfolio_covered if parent.get(t, False))
    return TransferSummary(portfolio_covered=n, candidate_solved=cand, parent_solved=par,
                           transfer=round(cand / n, 4) if n else 0.0, parent_transfer=round(par / n, 4) if n else 0.0)


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


def cost_matched_of(plan: BestOfNPlan, solved: dict[str, bool], spent: int, transfer: TransferSummary,
                    sampling: str, job_index: int) -> CostMatchedSummary:
    """The best-of-n side's numbers beside union coverage and the deployed configuration's transfer (pure)."""
    t = len(plan.tasks)
    b = sum(1 for k in plan.tasks if solved.get(k, False))
    return CostMatchedSummary(
        **plan.summary_fields(), job_index=job_index, sampling=sampling, attempts=spent, solved=b,
        union_rate=round(len(plan.covered) / t, 4) if t else 0.0, best_of_n_rate=round(b / t, 4) if t else 0.0,
        transfer_tasks=transfer.portfolio_covered, parent_solved=transfer.parent_solved,
        candidate_solved=transfer.candidate_solved)


def price_problems(lift: Any, costs: dict[str, SideCost], gate: Any) -> list[str]:
    """Where the candidate's price breaks the gate's bounds (pure; no bound set: none)."""
    cand, parent = costs.get("candidate"), costs.get("parent")
    if cand is None or parent is None or not parent.completion_tokens_per_task:
        return []
    problems = []
    ratio = cand.completion_tokens_per_task / parent.completion_tokens_per_task
    if gate.max_token_ratio is not None and ratio > gate.max_token_ratio:
        problems.append(f"price {ratio:.2f}x the parent's completion tokens per task is above max_token_ratio "
                        f"{gate.max_token_ratio}")
    extra_k = (cand.completion_tokens_per_task - parent.completion_tokens_per_task) / 1000
    if gate.min_lift_per_1k_tokens is not None and extra_k > 0 and lift.lift / extra_k < gate.min_lift_per_1k_tokens:
        problems.append(f"lift per extra 1k completion tokens per task {lift.lift / extra_k:+.3f} is below "
                        f"min_lift_per_1k_tokens {gate.min_lift_per_1k_tokens}")
    return problems


def decide_adapter(lift: Any, retention: RetentionEstimate, gate: Any,
                   costs: dict[str, SideCost] | None = None) -> EvalDecision:
    """Promote only if the lift's CI is above `min_lift`, retention >= `retention_min` and the price is inside
    the gate's bounds, where it sets any (pure)."""
    gate_summary = GateSummary(enabled=gate.enabled, min_lift=gate.min_lift, retention_min=gate.retention_min,
                               max_token_ratio=gate.max_token_ratio, min_lift_per_1k_tokens=gate.min_lift_per_1k_tokens)
    if lift.tasks == 0:
        return EvalDecision(promote=False, reason="no heldout task was evaluated by both contracts", gate=gate_summary)
    if not gate.enabled:
        ok = lift.lift > 0
        return EvalDecision(promote=ok, reason=("gate disabled: lift " + f"{lift.lift:+.3f}" +
                                                (" > 0" if ok else " is not positive")), gate=gate_summary)
    problems = []
    if not lift.ci.low > gate.min_lift:
        problems.append(f"lift {lift.lift:+.3f} CI95 [{lift.ci.low:.3f}, {lift.ci.high:.3f}] does not lie above "
                        f"min_lift {gate.min_lift}")
    if retention.retention < gate.retention_min:
        problems.append(f"retention {retention.retention:.3f} ({retention.kept}/{retention.parent_resolved}) "
                        f"is below retention_min {gate.retention_min}")
    problems += price_problems(lift, costs or {}, gate)
    if problems:
        return EvalDecision(promote=False, reason="; ".join(problems), gate=gate_summary)
    return EvalDecision(
        promote=True,
        reason=(f"lift {lift.lift:+.3f} CI95 [{lift.ci.low:.3f}, {lift.ci.high:.3f}] above {gate.min_lift}, "
                f"retention {retention.retention:.3f} >= {gate.retention_min}"),
        gate=gate_summary,
    )


# -- the evaluation run -------------------------------------------------------------------------


def _contract_info(loaded: Any, config: Any) -> ContractSide:
    return ContractSide(name=loaded.name, revision=loaded.revision, ref=loaded.ref, content_hash=loaded.content_hash,
                        config_hash=config.config_hash)


def _parent_covered(store: Any, suite: str, parent_hash: str, runs: list[str]) -> set[str]:
    if runs:
        return set(store.covered_tasks(suite, "train", runs))
    return {fact[1] for fact in store.attempt_history(suite, "train") if fact[0] == parent_hash and fact[2]}


# The sides of an evaluation. The run's jobs are the sides present, in this order (job i = the i-th side
# present): parent 0, candidate 1, control 2, best-of-n 3 (job 2 when there is no control); see _Plan.side_of.
PARENT, CANDIDATE, CONTROL, BEST_OF_N = 0, 1, 2, 3
SIDES = {PARENT: "parent", CANDIDATE: "candidate", CONTROL: "control", BEST_OF_N: "best-of-n"}


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

    def task_keys(self, side: int) -> list[str]:
        """The control side is there for the heldout comparison only; best-of-n for the train tasks tried."""
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


def _sampling_text(config: Any, overrides: dict[str, float]) -> str:
    sampling = config.spec.harness.sampling
    text = f"temperature {sampling.temperature}, top_p {sampling.top_p}"
    return f"{text}: the greedy parent, sampled" if overrides else f"{text}: the parent's own"


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
    return resumed, {**section.model_dump(), "configs": list(stored.configs)}


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
    return _Plan(new_run_id(), suite, seed, per_task, configs, heldout, covered, transfer, best)


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
    """The tasks the lift is measured on: the heldout split, or the explicit train slice `spec.tasks`."""
    if not spec.tasks:
        return sorted(k for k, t in by_key.items() if t.spec.split == "heldout")[: spec.limit_heldout]
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
    if stored["configs"] != [configs[j].config_hash for j in sorted(configs)]:
        # an unpinned ref (a bare NAME) may resolve to a newer revision than the one evaluated so far
        raise UserInputError(
            f"evaluation {run_id}: {spec.candidate} / {spec.parent} no longer resolve to the configurations "
            "it started with", hint="evaluate pinned revisions (NAME@rN), or start a new evaluation")
    plan = _Plan(run_id, suite, seed, per_task, configs, list(stored["heldout"]), list(stored["covered"]),
                 list(stored.get("transfer", [])), best)
    missing = [k for k in plan.all_task_keys() if k not in by_key]
    if missing:
        raise UserInputError(f"evaluation {run_id}: tasks {', '.join(missing[:5])} left suite {suite!r}")
    return plan


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
                              best_of_n=asdict(plan.best_of_n) if plan.best_of_n is not None else None)
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


@dataclass
class _Solved:
    """Per side, task -> any counted attempt passed; the counted attempts per side; their tokens."""

    by_side: dict[int, dict[str, bool]]
    spent: dict[int, int]
    tokens: int
    served: dict[str, int]  # number format -> counted attempts (from their trajectories)
    completion: dict[int, dict[str, int]] = field(default_factory=dict)  # side -> task -> completion tokens
    seconds: dict[int, dict[str, float]] = field(default_factory=dict)  # side -> task -> attempt wall seconds
    depth: dict[int, dict[str, int]] = field(default_factory=dict)  # side -> solved task -> submitted candidate's position

    @property
    def attempts(self) -> int:
        return sum(self.spent.values())


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
        served, completion, depth = _attempt_facts(workspace, row.trajectory_path)
        solved.served[served] = solved.served.get(served, 0) + 1
        j = plan.side_of(row.job_index)
        if row.passed and depth is not None:  # the shallowest passing attempt of the task counts
            depths = solved.depth.setdefault(j, {})
            depths[row.task_key] = min(depth, depths.get(row.task_key, depth))
        spent_tokens, spent_s = solved.completion.setdefault(j, {}), solved.seconds.setdefault(j, {})
        spent_tokens[row.task_key] = spent_tokens.get(row.task_key, 0) + completion
        spent_s[row.task_key] = spent_s.get(row.task_key, 0.0) + (row.wall_s or 0.0)
        solved.spent[j] = solved.spent.get(j, 0) + 1
        solved.tokens += row.tokens or 0
        side = solved.by_side.setdefault(j, {})
        side[row.task_key] = side.get(row.task_key, False) or bool(row.passed)
    return solved


def _attempt_facts(workspace: Workspace, trajectory_path: str) -> tuple[str, int, int | None]:
    """The number format one attempt's trajectory records ("" when it does not say or is not there), its
    completion tokens (every candidate and repair turn), and the submitted candidate's position among those
    checked (None: no candidate was checked)."""
    from rsi.harness.trajectory import read_trajectory, stored_trajectory_path

    path = stored_trajectory_path(trajectory_path, workspace.runs_dir)
    if path is None:
        return "", 0, None
    try:
        trajectory = read_trajectory(path)
    except UserInputError:
        return "", 0, None
    return trajectory.model.dtype, trajectory.final_metrics.completion_tokens, submitted_depth(trajectory)


def submitted_depth(trajectory: Any) -> int | None:
    """The position (1-based, in the order sampled) of the candidate the harness submitted, among the candidates
    its public checks ran on (all of them when none is marked submitted); None when none was checked (pure)."""
    checks = [step.check for step in trajectory.steps if step.check is not None]
    chosen = [check.candidate for check in checks if check.selected]
    return chosen[-1] if chosen else (max(check.candidate for check in checks) if checks else None)


def side_costs(plan: Any, ran: _Solved) -> dict[str, SideCost]:
    """Each side's pass rate and price on the heldout tasks (pure)."""
    costs = {}
    for j in (PARENT, CANDIDATE, CONTROL):
        tasks = [k for k in plan.heldout if k in ran.by_side.get(j, {})]
        if not tasks:
            continue
        tokens, seconds = ran.completion.get(j, {}), ran.seconds.get(j, {})
        depths = [d for k, d in ran.depth.get(j, {}).items() if k in tasks]
        costs[SIDES[j]] = SideCost(
            tasks=len(tasks), pass_rate=round(sum(ran.by_side[j][k] for k in tasks) / len(tasks), 4),
            completion_tokens_per_task=round(sum(tokens.get(k, 0) for k in tasks) / len(tasks), 1),
            seconds_per_task=round(sum(seconds.get(k, 0.0) for k in tasks) / len(tasks), 2),
            k_needed=round(sum(depths) / len(depths), 2) if depths else None)
    return costs


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
            plan = _new_plan(store, sides, by_key, suite, seed, per_task)
    finally:
        store.close()
    if spec.resume:
        note(f"resuming evaluation {plan.run_id}")
    else:
        control = f" and the generation-0 control {sides.control.ref}" if sides.control is not None else ""
        note(f"evaluation {plan.run_id}: {sides.candidate.ref} vs {sides.parent.ref}{control} on {len(plan.heldout)} "
             f"{'chosen train' if spec.tasks else 'heldout'} + {len(plan.task_keys(CANDIDATE)) - len(plan.heldout)} "
             f"covered train tasks of {suite}, "
             f"{per_task} attempt(s) each, seed {seed}, served in {_dtype_text(spec)}")
        if plan.best_of_n is not None:
            b = plan.best_of_n
            note(f"best-of-n: {sides.parent.ref} x {b.per_task} on the {len(b.tasks)} train tasks the transfer runs "
                 f"tried with {b.search_attempts} attempts")
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
    write_json_atomic(workspace.run_dir(run.plan.run_id) / EVAL_FILE, outcome.model_dump(mode="json"))
    return outcome


def _measure(sides: _Sides, plan: _Plan, ran: _Solved, spec: EvalSpec) -> EvalOutcome:
    """The numbers and the decision, from what each side solved (pure)."""
    from rsi.promotion.decision import GatePolicy, paired_lift

    solved = ran.by_side

    gate = GatePolicy.from_contract(sides.parent.spec, spec.ci_method)

    def lift_against(other: int) -> Any:
        cand, base = solved[CANDIDATE], solved[other]
        return paired_lift({k: cand[k] for k in plan.heldout if k in cand}, {k: base[k] for k in plan.heldout if k in base},
                           spec.ci_method, gate.resamples, gate.seed)

    lift_estimate = lift_against(PARENT)
    retention = retention_of(plan.covered, solved[CANDIDATE], solved[PARENT])
    has_control = CONTROL in plan.configs
    candidate = sides.candidate
    adapter = next((s.sha256 for s in candidate.spec.specialists if s.name == candidate.spec.routing.specialist), "")
    sides_of_task = [j for j in (PARENT, CANDIDATE, CONTROL) if j in plan.configs]  # best-of-n: its own summary
    transfer = transfer_of(plan.transfer, solved[CANDIDATE], solved[PARENT]) if spec.transfer_runs else None
    costs = side_costs(plan, ran)
    cost_matched = None
    if plan.best_of_n is not None and transfer is not None:
        cost_matched = cost_matched_of(plan.best_of_n, solved[BEST_OF_N], ran.spent.get(BEST_OF_N, 0), transfer,
                                       _sampling_text(plan.configs[BEST_OF_N], plan.best_of_n.overrides),
                                       plan.job_index_of(BEST_OF_N))
    return EvalOutcome(
        eval_id=plan.run_id, suite=plan.suite,
        candidate=_contract_info(candidate, plan.configs[CANDIDATE]), parent=_contract_info(sides.parent, plan.configs[PARENT]),
        control=_contract_info(sides.control, plan.configs[CONTROL]) if has_control and sides.control else None,
        adapter_id=adapter, dtype=spec.dtype or "serving", seeds={"seed": plan.seed, "attempts_per_task": plan.per_task},
        heldout_tasks=plan.heldout, covered_tasks=plan.covered, transfer_tasks=plan.transfer,
        lift=lift_estimate.summary(),
        # without a separate control, the parent is generation 0 (or no control was asked for)
        lift_vs_control=lift_against(CONTROL).summary() if has_control else (lift_estimate.summary() if spec.control else None),
        retention=retention.summary(),
        transfer=transfer, cost_matched=cost_matched, costs=costs,
        per_task={k: {SIDES[j]: solved[j].get(k, False) for j in sides_of_task if k in plan.task_keys(j)}
                  for k in plan.task_keys(CANDIDATE)},
        decision=decide_adapter(lift_estimate, retention, gate, costs),
    )


def eval_lines(outcome: EvalOutcome) -> list[str]:
    """What `rsi eval` prints: what ships (the deployed configuration) beside what the search reached."""
    lift, retention = outcome.lift, outcome.retention
    price = price_text(outcome.costs)
    # The price rides on the first line: a lift bought with ten times the tokens says so where it is read first.
    lines = [f"evaluation {outcome.eval_id}: {outcome.candidate.ref} vs {outcome.parent.ref}{_served_text(outcome)}: "
             f"lift {lift.lift:+.3f}" + (f" {price}" if price else ""),
             f"  heldout: candidate {lift.candidate_rate:.3f} vs parent {lift.parent_rate:.3f} on {lift.tasks} tasks; "
             f"lift {lift.as_text()} ({lift.method})"]
    for name, cost in outcome.costs.items():
        depth = f"; {cost.k_needed:.2f} candidates needed per solved task" if cost.k_needed is not None else ""
        lines.append(f"  {name}: pass rate {cost.pass_rate:.3f}, {cost.completion_tokens_per_task:.0f} completion "
                     f"tokens and {cost.seconds_per_task:.1f} s per heldout task ({cost.tasks} tasks){depth}")
    if outcome.lift_vs_control is not None:
        versus = outcome.control.ref if outcome.control else outcome.parent.ref
        c = outcome.lift_vs_control
        lines.append(f"  vs generation 0 ({versus}): candidate {c.candidate_rate:.3f} vs {c.parent_rate:.3f}; "
                     f"lift {c.as_text()}")
    lines.append(f"  retention: of {retention.covered} covered train tasks the parent solved {retention.parent_resolved}, "
                 f"the candidate {retention.kept} of those ({retention.retention:.3f}) and {retention.still_solved} "
                 "in all")
    if outcome.transfer is not None:
        t = outcome.transfer
        lines.append(f"  transfer: the deployed configuration solves {t.candidate_solved}/{t.portfolio_covered} of the "
                     f"train tasks the portfolio covered ({t.transfer:.3f}; parent {t.parent_transfer:.3f}) - union "
                     f"coverage is what the search reached, transfer is what ships")
    if outcome.cost_matched is not None:
        lines.append(cost_matched_line(outcome.cost_matched))
    return lines


def _served_text(outcome: EvalOutcome) -> str:
    """How the sides were served: the format asked for, and a warning where the trajectories say otherwise."""
    if outcome.dtype == "serving":
        return ""
    other = {fmt: n for fmt, n in outcome.served.items() if fmt and fmt != outcome.dtype}
    if not other:
        return f" (served in {outcome.dtype})"
    found = ", ".join(f"{n} attempts in {fmt}" for fmt, n in sorted(other.items()))
    return f" (asked for {outcome.dtype}, but {found}: is RSI_DTYPE set?)"


def cost_matched_line(c: CostMatchedSummary) -> str:
    """One line: the portfolio's union coverage, best-of-n of the deployed (parent) configuration on the same
    tasks with about the same attempts, and what ships (each configuration's own decoding) on the covered tasks."""
    return (f"  cost-matched: union coverage {c.union_covered}/{c.tasks} train tasks with {c.search_attempts} attempts "
            f"(the portfolio) vs best-of-{c.per_task} of the deployed configuration {c.solved}/{c.tasks} with "
            f"{c.attempts} attempts ({c.sampling}) vs what ships on the {c.transfer_tasks} covered tasks: parent "
            f"{c.parent_solved}/{c.transfer_tasks}, candidate {c.candidate_solved}/{c.transfer_tasks}")


def load_eval_outcome(workspace: Workspace, eval_id: str) -> EvalOutcome:
    path = workspace.run_dir(eval_id) / EVAL_FILE
    if not path.is_file():
        raise UserInputError(f"no evaluation {eval_id} ({path} is missing)")
    return EvalOutcome.model_validate(json.loads(path.read_text(encoding="utf-8")))


def apply_decision(workspace: Workspace, outcome: EvalOutcome) -> EvalOutcome:
    """Promote the adapter into the parent (gate passed) or record it as rejected; idempotent."""
    from rsi.training.candidate import promote_adapter
    from rsi.training.registry import find_adapter, update_status

    record = None
    if outcome.adapter_id:
        try:
            record = find_adapter(workspace, outcome.adapter_id)
        except UserInputError:
            record = None
    numbers = {"eval_id": outcome.eval_id, "lift": outcome.lift.model_dump(mode="json"),
               "retention": outcome.retention.model_dump(mode="json"),
               "decision": outcome.decision.model_dump(mode="json"), "candidate": outcome.candidate.model_dump(mode="json"),
               "parent": outcome.parent.model_dump(mode="json"), "at": datetime.now(UTC).isoformat(timespec="seconds")}
    applied: AppliedDecision
    if outcome.promote:
        lift, retention = outcome.lift, outcome.retention
        trailers = {
            "Eval-Lift": f"{lift.lift:+.4f} CI95 [{lift.lift_ci95[0]:.3f}, {lift.lift_ci95[1]:.3f}] "
                         f"{lift.method} on {lift.tasks} heldout tasks",
            "Eval-Retention": f"{retention.retention:.4f} ({retention.kept}/{retention.parent_resolved} of the covered "
                              "train tasks the parent solved)",
            "Eval-Gate": f"min_lift={outcome.decision.gate.min_lift} retention_min={outcome.decision.gate.retention_min}",
        }
        cand, parent = outcome.costs.get("candidate"), outcome.costs.get("parent")
        if cand is not None and parent is not None:
            trailers["Eval-Cost"] = (f"{cand.completion_tokens_per_task:.1f} completion tokens/task vs parent "
                                     f"{parent.completion_tokens_per_task:.1f}; {cand.seconds_per_task:.2f} s/task vs "
                                     f"{parent.seconds_per_task:.2f}")
        body = f"gate passed: {outcome.decision.reason}"
        written = promote_adapter(workspace, outcome.parent.name, outcome.candidate.ref, outcome.eval_id,
                                  trailers, body)
        applied = AppliedDecision(state="promoted", revision=RevisionWritten.model_validate(written.summary()))
        if record is not None:
            update_status(record, state="promoted", evaluation=numbers, promotion=written.summary())
    else:
        applied = AppliedDecision(state="rejected", reason=outcome.decision.reason)
        if record is not None:
            update_status(record, state="rejected", evaluation=numbers)
    updated = outcome.model_copy(update={"applied": applied})
    write_json_atomic(workspace.run_dir(outcome.eval_id) / EVAL_FILE, updated.model_dump(mode="json"))
    return updated
