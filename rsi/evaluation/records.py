"""The typed records of an evaluation: what `rsi eval` is asked (`EvalSpec`), and what it measured and
decided (`EvalOutcome`, written to runs/<eval id>/eval.json, read back by `load_eval_outcome`, by generations
and by the ledger). Their JSON is the stored format: a field is added with a default, never renamed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rsi.contracts.records import EMPTY_IS_NONE, RevisionWritten, none_as_empty
from rsi.contracts.schema import EvalDtype
from rsi.promotion import price
from rsi.promotion.decision import LiftEstimate, LiftSummary
from rsi.sandbox.select import SandboxName

EVAL_FILE = "eval.json"


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
    cost_matched_n: int | None = Field(default=None, ge=1, le=64, description=(
        "The cost-matched alternative on heldout: the parent's configuration as best-of-n with this many attempts per "
        "heldout task (a greedy one sampled when n > 1), scored like the sides (any attempt passed), its lift against "
        "the parent beside the candidate's. Choose n so the parent spends the candidate's tokens per task "
        "(`cost_matched_per_task`; `rsi eval --cost-matched-from EVAL_ID` derives it). None: no such side."))
    cost_matched_basis: str = Field(default="", description="How cost_matched_n was derived, in words (shown).")
    dtype: EvalDtype | None = Field(default=None, description=(
        "Number format every side is served in ('serving': each contract's own [serving] dtype). Default: the "
        "parent's [evaluation] dtype. Resolved when the evaluation is planned and stored with it, so a resumed "
        "evaluation serves its remaining attempts as it served the first ones."))
    split: Literal["heldout", "test"] = Field(default="heldout", description=(
        "The split the lift is measured on: heldout (the gate's), or the sealed test split (a final evaluation: read "
        "once per candidate, promotes nothing; docs/tasks.md)."))
    second_look: bool = Field(default=False, description=(
        "Allow a candidate's second look at the sealed test split; every figure from it is marked."))
    why: str = Field(default="", description="Why this evaluation reads the split (the look ledger's `why`).")
    command: str = Field(default="", description="The command that asked (the look ledger's; default: the CLI's).")


class GateSummary(BaseModel):
    """The parent's `[evaluation.gate]` the decision applied."""

    enabled: bool
    min_lift: float = Field(description="The lift's CI lower bound must lie above this.")
    retention_min: float = Field(description="Heldout retention (against the parent, and the control) must reach this.")
    max_token_ratio: float | None = Field(default=None, description="Price bound: candidate / parent tokens per heldout "
                                          "task, completion and prompt tokens each (rsi.promotion.price).")
    min_lift_per_1k_tokens: float | None = Field(default=None, description="Price bound: the lift's CI lower end per "
                                                 "extra 1k prompt + completion tokens per heldout task.")


class SideCost(BaseModel):
    """What one side solved and spent on the heldout tasks: the price beside the pass rate.

    Per heldout task: completion tokens are every completion the side's attempts asked for (all candidates,
    repair turns), prompt tokens every prompt they sent, check seconds the wall time of the public checks run
    on their candidates, seconds the attempts' whole wall time (model, checks and verifier). Records made before
    prompt tokens and check seconds were kept hold 0 for them (shown as unmeasured, never gated)."""

    tasks: int = Field(description="Heldout tasks with a counted attempt on this side.")
    pass_rate: float
    completion_tokens_per_task: float
    seconds_per_task: float
    prompt_tokens_per_task: float = 0.0
    check_seconds_per_task: float = 0.0
    k_needed: float | None = Field(default=None, description=(
        "Candidates needed: over the heldout tasks this side solved with a checked submission, the mean position "
        "of the submitted candidate among those the harness sampled (1: the first; what an adapter can lower at "
        "the same pass rate). None where the harness checks no candidates."))


class SideCache(BaseModel):
    """What the response cache (rsi.models.cache) served one side of an evaluation: replies served and made,
    the tokens the served replies did not spend, and which runs first made them. A side asked exactly before
    (generation 0, the parent: their requests do not change between generations) is served whole."""

    hits: int = 0
    misses: int = 0
    tokens_not_spent: int = 0
    made_by: list[str] = Field(default_factory=list, description="The runs that first made the replies served.")

    @property
    def share(self) -> float | None:
        """Served / cacheable replies (None: nothing was cacheable, e.g. bfloat16 or a remote backend)."""
        asked = self.hits + self.misses
        return self.hits / asked if asked else None

    def as_text(self) -> str:
        share = self.share
        if share is None:
            return "not cacheable"
        made = f", made by {', '.join(self.made_by[:3])}" + (" ..." if len(self.made_by) > 3 else "") if self.made_by else ""
        return f"{self.hits}/{self.hits + self.misses} replies from the cache ({share:.0%}{made})"


def price_text(costs: dict[str, SideCost], against: str = "parent") -> str:
    """'at 9.8x the parent's completion tokens (812 vs 83), 1.2x its prompt tokens (410 vs 342) and 0.31 vs 0.00
    check seconds per heldout task' ('' without both sides): rsi.promotion.price.price_text."""
    return price.price_text(costs.get("candidate"), costs.get(against), against)


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
    """Of the tasks the other side (the parent, or the generation-0 control) solves in this evaluation, how many
    the candidate still solves. `split` says which tasks: `heldout` is the gate's retention (tasks no side trained
    on), `train` the in-sample figure over the covered train tasks (the adapter's own training data, so it nearly
    always holds; shown, never gated). Over zero tasks there is no retention: `retention` is None ("no tasks")."""

    covered: int = Field(description="Tasks the figure is over: heldout tasks both sides attempted with equal "
                         "attempts, or (train) the covered train tasks.")
    still_solved: int = Field(description="Of them, the tasks the candidate solves (whether or not the other side does).")
    retention: float | None = Field(description="kept / parent_resolved; None when the other side solved none (no "
                                    "tasks). Records without `kept` (before it existed) hold still_solved / covered.")
    parent_resolved: int = Field(description="How many of them the other side solved in this evaluation.")
    kept: int | None = Field(default=None, description="Of the parent_resolved tasks, how many the candidate "
                             "solves too (None in records made before it existed).")
    split: Literal["heldout", "train"] = Field(default="train", description="heldout: the gate's retention; train: "
                                               "in-sample (records made before heldout retention existed: train).")
    against: str = Field(default="parent", description="The side whose solved tasks are counted: parent or control.")

    @model_validator(mode="before")
    @classmethod
    def _no_retention_over_zero_tasks(cls, data: object) -> object:
        # records written before said 1.0 over zero tasks; read back, they say what they measured: nothing
        if isinstance(data, dict) and data.get("kept") is not None and data.get("parent_resolved") == 0:
            return {**data, "retention": None}
        return data

    def as_text(self) -> str:
        """'0.906 (29/32)', or 'no tasks'."""
        if self.retention is None:
            return "no tasks"
        kept = self.kept if self.kept is not None else self.still_solved
        total = self.parent_resolved if self.kept is not None else self.covered
        return f"{self.retention:.3f} ({kept}/{total})"


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


class HeldoutCostMatchedSummary(BaseModel):
    """The parent spending about the candidate's tokens per heldout task another way: best-of-n of its own
    configuration on the same heldout tasks, any attempt passing by the hidden verifier (an oracle choice among
    the n, so an upper bound on what that spend buys a deployable parent). Its lift against the parent is the
    spend the candidate's lift is read beside."""

    job_index: int = Field(description="The evaluation run's job of this side (the last one).")
    per_task: int = Field(description="n: attempts per heldout task.")
    basis: str = Field(description="How n was derived (from which measured token ratio, or given).")
    sampling: str = Field(description="How the side sampled (the parent's own, or the greedy parent sampled).")
    tasks: int = Field(description="Heldout tasks with a counted attempt on this side.")
    attempts: int = Field(description="Counted attempts spent (n x tasks planned).")
    pass_rate: float = Field(description="Share of the heldout tasks with any passing attempt.")
    completion_tokens_per_task: float = Field(description="Its completion tokens per heldout task, as spent.")
    lift: LiftSummary = Field(description="This side minus the parent on the heldout tasks (paired).")


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
    covered_tasks: list[str] = Field(description="Train tasks the parent had covered (in-sample retention).")
    transfer_tasks: list[str] = Field(default_factory=list, description="Train tasks the portfolio had covered (transfer).")
    lift: LiftSummary
    lift_vs_control: LiftSummary | None = Field(default=None, description="Candidate against the generation-0 control.")
    retention: RetentionSummary = Field(description="The gate's retention: of the heldout tasks the parent solved, "
                                        "the share the candidate still solves (split 'heldout').")
    retention_vs_control: RetentionSummary | None = Field(default=None, description=(
        "With a control: of the heldout tasks generation 0 solved, the share the candidate still solves (gated too)."))
    retention_in_sample: RetentionSummary | None = Field(default=None, description=(
        "In-sample, not gated: of the covered train tasks (the adapter's training data) the parent solved, the share "
        "the candidate solves."))
    unpaired_attempts: int = Field(default=0, description=(
        "Counted attempts left out of a comparison because its other side has no counted outcome for the same task "
        "and attempt (an infrastructure error), summed over the comparisons: both sides of a comparison count "
        "equal attempts per task."))
    transfer: TransferSummary | None = None
    cost_matched: CostMatchedSummary | None = Field(default=None, description="With best_of_n: the cost-matched baseline.")
    cost_matched_heldout: HeldoutCostMatchedSummary | None = Field(
        default=None, description="With cost_matched_n: the parent as best-of-n on the heldout tasks (the spend).")
    cache: dict[str, SideCache] = Field(default_factory=dict, description="Per side: what the response cache served "
                                        "(a side whose requests were asked before is read, not recomputed).")
    costs: dict[str, SideCost] = Field(default_factory=dict, description="Per side (parent, candidate, control): pass "
                                       "rate, completion tokens and seconds per heldout task.")
    per_task: dict[str, dict[str, bool]] = Field(description="task -> {'candidate': solved, 'parent': solved[, 'control']}.")
    decision: EvalDecision
    errors: int = 0
    attempts: int = 0
    tokens: int = 0
    wall_s: float = 0.0
    split: str = Field(default="heldout", description="The split whose verdicts the lift read: heldout, or test "
                       "(sealed; then `heldout_tasks` holds the test tasks).")
    looks: int | None = Field(default=None, description="Looks the split had, this one included (the look ledger; "
                              "None: a train slice, or a record from before the ledger).")
    candidate_looks: int | None = Field(default=None, description="Of them, this candidate's (by content hash).")
    second_look: bool = Field(default=False, description="A repeated look at the sealed split by the same candidate: "
                              "every figure of this outcome is marked so.")
    applied: Annotated[AppliedDecision | None, EMPTY_IS_NONE, none_as_empty(exclude_defaults=True)] = Field(
        default=None, description="What apply_decision wrote (JSON: {} before).")

    @model_validator(mode="before")
    @classmethod
    def _retention_was_in_sample(cls, data: object) -> object:
        return upgrade_retention(data)

    @property
    def promote(self) -> bool:
        return self.decision.promote


def upgrade_retention(data: object) -> object:
    """A record written when `retention` was the in-sample figure (no `split`): that figure moves to
    `retention_in_sample`, and `retention` becomes the heldout one, read from the lift's paired table
    (both / (both + parent only): exactly what heldout retention is). Used by every record that stores them."""
    if not isinstance(data, dict):
        return data
    old = data.get("retention")
    if not isinstance(old, dict) or "split" in old:
        return data
    upgraded = {**data, "retention_in_sample": data.get("retention_in_sample") or {**old, "split": "train"}}
    lift = data.get("lift")
    table = lift.get("table") if isinstance(lift, dict) else lift.table.model_dump() if isinstance(lift, LiftSummary) else None
    if isinstance(table, dict) and table:
        both, cand_only, parent_only = table["both"], table["candidate_only"], table["parent_only"]
        upgraded["retention"] = RetentionEstimate(
            covered=sum(table.values()), still_solved=both + cand_only, parent_resolved=both + parent_only, kept=both,
            split="heldout").summary().model_dump()
    else:
        upgraded["retention"] = None
    return upgraded


@dataclass(frozen=True)
class RetentionEstimate:
    """What the candidate kept of what the other side can do. The denominator is the tasks the other side solves
    in the same evaluation, not all tasks: on covered train tasks a portfolio covers tasks only a sampled or
    otherwise different configuration solved, and a candidate that merely matches the deployed parent must not
    read as having lost them (that share is transfer, reported on its own). No tasks solved: no retention (None)."""

    covered: int
    still_solved: int
    parent_resolved: int
    kept: int
    split: Literal["heldout", "train"] = "train"
    against: str = "parent"

    @property
    def retention(self) -> float | None:
        return self.kept / self.parent_resolved if self.parent_resolved else None

    def summary(self) -> RetentionSummary:
        retention = self.retention
        return RetentionSummary(covered=self.covered, still_solved=self.still_solved,
                                retention=round(retention, 4) if retention is not None else None,
                                parent_resolved=self.parent_resolved, kept=self.kept, split=self.split,
                                against=self.against)

    def as_text(self) -> str:
        return self.summary().as_text()


def heldout_retention(lift: LiftEstimate, against: str = "parent") -> RetentionEstimate:
    """The gate's retention from a paired heldout comparison: of the heldout tasks the other side solved
    (both + other only), those the candidate solves too (both)."""
    return RetentionEstimate(covered=lift.tasks, still_solved=lift.both + lift.candidate_only,
                             parent_resolved=lift.both + lift.parent_only, kept=lift.both, split="heldout",
                             against=against)
