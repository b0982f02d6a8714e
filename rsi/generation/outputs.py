"""Typed outputs of a generation's steps (what each step hands to the next, and to the ledger).

state.json keeps each step's outputs as a JSON object (a resume and `rsi lineage` read them back);
these models are the one description of those objects. A step records its id as soon as it has one
(`run_id`, `eval_id`: what a resume needs) and the rest when it ends, so every field but the ids is
optional: a partly written record still reads. `GenerationState.outputs(TrainOutput)` returns the
train step's record.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rsi.contracts.records import RevisionWritten
from rsi.evaluation import EvalDecision, RetentionSummary, SideCache, SideCost, TransferSummary
from rsi.evaluation.records import upgrade_retention
from rsi.promotion.decision import LiftSummary
from rsi.trajectories.tool_growth import ToolGrowth


class StepOutput(BaseModel):
    """Base of every step's record; STEP names the step whose outputs it describes."""

    STEP: ClassVar[str] = ""
    # Records written by older versions may carry keys this version no longer names: keep them.
    model_config = ConfigDict(extra="allow")


class RunOutput(StepOutput):
    STEP = "run"
    run_id: str = ""
    suite: str = ""
    covered: int | None = None
    tasks: int | None = None
    attempts: int | None = None
    passes: int | None = None
    errors: int | None = None
    tokens: int | None = None
    stop_reason: str = ""
    cumulative_covered: int | None = None
    cumulative_tasks: int | None = None


class PromoteOutput(StepOutput):
    STEP = "promote"
    status: str = ""
    revision: int | None = None
    tag: str | None = None
    reason: str = ""
    hint: str = ""
    candidate: str = ""
    selection_run_id: str = Field(default="", description="The paired selection's run (select_tasks > 0): the "
                                  "evidence the harness was chosen on.")
    harness_sets: dict[str, Any] = Field(
        default_factory=dict, description="status 'deferred': the dotted-key sets of the harness the train evidence "
        "ranks first; the train step writes them into the candidate contract beside the adapter.")


class ProposeOutput(StepOutput):
    STEP = "propose"
    portfolio: str = ""
    path: str = ""
    base: str = ""
    rebased_onto: str = ""
    commit: str = ""
    kept: list[str] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list)
    new: list[str] = Field(default_factory=list)


class HarvestOutput(StepOutput):
    STEP = "harvest"
    run_id: str = ""
    source_runs: list[str] = Field(default_factory=list, description="The runs whose train tasks were harvested.")
    attempts: int | None = None
    passes: int | None = None
    errors: int | None = None
    tokens: int | None = None


class LibraryGrowth(BaseModel):
    """The experience library revision a generation grew (`GenerationSpec.experience`; rsi/trajectories/experience.py)."""

    revision: str = ""
    parent: str = ""
    written: bool = Field(default=False, description="False: nothing new, or an earlier try wrote it (reused).")
    entries: int = 0
    tasks: int = 0
    added_entries: int = 0
    tasks_new: int = 0
    content_sha256: str = ""
    sources: list[str] = Field(default_factory=list)
    refused: dict[str, int] = Field(default_factory=dict)


class ExportOutput(StepOutput):
    STEP = "export"
    experience: LibraryGrowth | None = Field(default=None, description="With `experience`: the library grown from "
                                             "the exported runs before the export; it rides into the candidate contract.")
    tools: ToolGrowth | None = Field(default=None, description="With `tools`: the helpers the exported runs' passing "
                                     "train attempts saved, validated; the revision rides into the candidate contract.")
    dataset: str = ""
    dataset_sha256: str = ""
    examples: int | None = None
    source_runs: list[str] = Field(default_factory=list)
    rendering: str = "found"


class TrainOutput(StepOutput):
    STEP = "train"
    adapter_id: str = ""
    parent_ref: str = ""
    candidate_ref: str = ""
    init_adapter: str = ""  # the adapter it continued ("": a fresh LoRA)
    steps: int | None = None
    first_loss: float | None = None
    final_loss: float | None = None
    tokens_per_s: float | None = None
    wall_s: float | None = None
    resumed_from_step: int = 0
    specialists: dict[str, str] = Field(default_factory=dict, description="Several specialists from one generation "
                                        "(`specialists_by`): each part's name -> its adapter id; {}: one adapter.")
    specialists_by: str = ""  # the partition rule that made them ("": one adapter)


class EvaluateOutput(StepOutput):
    STEP = "evaluate"
    eval_id: str = ""
    lift: LiftSummary | None = None
    lift_vs_control: LiftSummary | None = None
    retention: RetentionSummary | None = Field(default=None, description="The gate's: heldout, against the parent.")
    retention_vs_control: RetentionSummary | None = None
    retention_in_sample: RetentionSummary | None = Field(default=None, description="Covered train tasks; not gated.")
    transfer: TransferSummary | None = None
    decision: EvalDecision | None = None
    costs: dict[str, SideCost] = Field(default_factory=dict, description="Per side: pass rate, completion tokens and "
                                       "seconds per heldout task.")
    cache: dict[str, SideCache] = Field(default_factory=dict, description="Per side: what the response cache served.")
    attempts: int | None = None
    tokens: int | None = None
    wall_s: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _retention_was_in_sample(cls, data: Any) -> Any:
        return upgrade_retention(data)


class PromoteAdapterOutput(StepOutput):
    STEP = "promote_adapter"
    state: str = Field(default="", description="promoted or rejected")
    revision: RevisionWritten | None = Field(default=None, description="The revision written, when promoted.")
    reason: str = Field(default="", description="Why it was rejected.")


def _no_coverage() -> list[int | None]:
    return [None, None]


class GenerationSummary(BaseModel):
    """What a finished generation did, in one record (state.json's `summary`; `rsi nightly`'s summary line).

    Its JSON is the object state.json has always held, key for key; every field has a default, so a
    summary written by an older version (fewer keys) reads, and keys this version does not name stay."""

    model_config = ConfigDict(extra="allow")
    contract: str = ""
    revision_start: int | None = Field(default=None, description="The contract's revision the generation started from.")
    revision_end: int | None = Field(default=None, description="Its revision when the generation ended.")
    portfolio: str | None = None
    run_id: str | None = None
    coverage: list[int | None] = Field(default_factory=_no_coverage, description="[covered, tasks] of the run.")
    cumulative_coverage: list[int | None] = Field(default_factory=_no_coverage,
                                                  description="[covered, tasks] across the store's runs.")
    harness: str | None = Field(default=None, description="The promote step's status (None: no promotion).")
    successor: str | None = Field(default=None, description="The portfolio the propose step wrote.")
    dataset_sha256: str | None = None
    examples: int | None = None
    harvest_run_id: str | None = None
    adapter_id: str | None = None
    candidate_ref: str | None = None
    eval_id: str | None = None
    lift: LiftSummary | None = None
    lift_vs_control: LiftSummary | None = None
    retention: RetentionSummary | None = Field(default=None, description="The gate's: heldout, against the parent.")
    retention_vs_control: RetentionSummary | None = None
    retention_in_sample: RetentionSummary | None = Field(default=None, description="Covered train tasks; not gated.")
    transfer: TransferSummary | None = None
    costs: dict[str, SideCost] = Field(default_factory=dict)
    adapter: str = Field(default="none", description="The adapter's fate: promoted, rejected or none.")

    @model_validator(mode="before")
    @classmethod
    def _retention_was_in_sample(cls, data: Any) -> Any:
        return upgrade_retention(data)


Output = TypeVar("Output", bound=StepOutput)
