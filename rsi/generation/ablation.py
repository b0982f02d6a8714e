"""Ablation of a generation: which carrier of experience did what (`rsi ablate`, shown by `rsi lineage`).

    ablate_generation(workspace, AblationSpec(generation="g0003"))

A generation's candidate contract carries up to three kinds of experience: worked examples retrieved from the
experience library (`harness.exemplars` > 0), a validated tool library (`harness.tool_library`), and the adapter
(the `sft` specialist it routes to). For each one it carries, an ablated contract is the candidate's runtime with
that carrier alone removed (exemplars 0; no tool library; the parent's specialists and routing instead of the
adapter), written as a revision of `hcp/<contract>-ablation.toml` (trailer `Ablation-Of: <candidate ref> <carrier>`,
found again on a rerun). One paired heldout evaluation per carrier, candidate against ablated, gives what the
carrier adds on top of the others, with its paired 95% interval and the price of each side; beside the
generation's lift against generation 0, that decomposes it (the parts need not add up: carriers interact).

The harness (the whole `[harness]` table and its system prompt: sampling, checks and selection, repair turns,
prompts, and with them exemplars and the tool library) is a carrier too, measured in two arms, each one paired
heldout evaluation on the same tasks and seeds:

- arm `without`: the candidate against the candidate with its parent's harness (weights kept);
- arm `alone`: the parent with the candidate's harness (the parent's weights kept) against the parent, plus a
  last side, the parent as best-of-n spending about the candidate's completion tokens per heldout task (n from
  the generation's own evaluation: `rsi.evaluation.cost_matched_from`).

From their pass rates `lift_shares` splits the candidate's lift over its parent, r(C) - r(P), into harness,
weights, interaction and, beside them, the spend (module function's docstring has the exact definitions).

The record, runs/generations/<id>/ablation.json, is rewritten atomically as each evaluation is created and as
each ends, so a killed ablation resumes its evaluations (`rsi eval`'s own resume) and writes no revision twice.
Nothing is promoted: an ablation measures, it never changes the contract.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rsi.errors import UserInputError
from rsi.evaluation import HeldoutCostMatchedSummary, SideCost
from rsi.promotion.decision import LiftSummary
from rsi.sandbox.select import SandboxName
from rsi.workspace import Workspace

ABLATION_FILE = "ablation.json"
ABLATION_TRAILER = "Ablation-Of"
CARRIERS = ("exemplars", "tools", "adapter", "harness")
Arm = Literal["without", "alone"]


class AblationSpec(BaseModel):
    """One `rsi ablate` (flags map onto these fields)."""

    model_config = ConfigDict(extra="forbid")
    generation: str | None = Field(default=None, description="Generation id; default: the latest with a candidate.")
    carriers: list[str] = Field(default_factory=lambda: list(CARRIERS), description="Carriers to remove, one each.")
    limit_heldout: int | None = Field(default=None, ge=1, description="Only the first N heldout tasks.")
    workers: int | None = Field(default=None, ge=1)
    sandbox: SandboxName = "auto"


class AblationRow(BaseModel):
    """What one carrier adds, on heldout: arm 'without', the candidate against the candidate without it; arm 'alone'
    (the harness), the parent with the carrier against the parent."""

    carrier: str
    ablated_ref: str = Field(description="The derived contract: the candidate without the carrier (arm 'without'), or "
                             "the parent with the carrier alone (arm 'alone').")
    arm: Arm = "without"
    eval_id: str = ""
    lift: LiftSummary | None = Field(default=None, description="'without': candidate minus ablated (what the carrier "
                                     "adds on top of the others); 'alone': ablated minus parent (what it adds alone).")
    costs: dict[str, SideCost] = Field(default_factory=dict, description="The evaluation's 'candidate' and 'parent' "
                                       "sides ('without': candidate and ablated; 'alone': ablated and parent).")
    spend: HeldoutCostMatchedSummary | None = Field(default=None, description="Arm 'alone': the parent as best-of-n "
                                                    "at about the candidate's tokens per heldout task.")


class LiftShares(BaseModel):
    """The candidate's heldout lift over its parent split by carrier, from pass rates on the same heldout tasks
    (`lift_shares`). harness + weights + interaction = total; spend is read beside the harness share."""

    tasks: int = Field(description="Heldout tasks every arm was measured on.")
    parent_rate: float
    candidate_rate: float
    total: float = Field(description="r(candidate) - r(parent).")
    harness: float = Field(description="r(parent weights + candidate harness) - r(parent).")
    weights: float = Field(description="r(candidate weights + parent harness) - r(parent).")
    interaction: float = Field(description="total - harness - weights: what the two do only together.")
    spend: float | None = Field(default=None, description="r(parent as best-of-n at the candidate's tokens per task) "
                                "- r(parent); None when not measured.")
    harness_beyond_spend: float | None = Field(default=None, description="harness - spend: what the harness buys that "
                                               "spending its tokens on best-of-n does not (<= 0: spend explains it).")


def lift_shares(parent: float, candidate: float, harness_alone: float, weights_alone: float, spend_alone: float | None,
                tasks: int) -> LiftShares:
    """The shares of the lift from heldout pass rates r (pure): the parent P, the candidate C, P with C's harness,
    C with P's harness (= P with C's weights), and P as cost-matched best-of-n.

        total       = r(C) - r(P)
        harness     = r(P + C's harness) - r(P)
        weights     = r(P + C's weights) - r(P)          (C with P's harness)
        interaction = total - harness - weights
        spend       = r(P best-of-n at C's tokens/task) - r(P)
        harness_beyond_spend = harness - spend
    """
    total, harness, weights = candidate - parent, harness_alone - parent, weights_alone - parent
    spend = None if spend_alone is None else spend_alone - parent
    return LiftShares(tasks=tasks, parent_rate=parent, candidate_rate=candidate, total=round(total, 4),
                      harness=round(harness, 4), weights=round(weights, 4),
                      interaction=round(total - harness - weights, 4), spend=None if spend is None else round(spend, 4),
                      harness_beyond_spend=None if spend is None else round(harness - spend, 4))


class AblationRecord(BaseModel):
    generation: str
    candidate_ref: str
    lift_vs_control: LiftSummary | None = Field(default=None, description="The generation's own lift against "
                                                "generation 0 (what the rows decompose).")
    carried: list[str] = Field(description="The carriers the candidate carries.")
    rows: list[AblationRow] = Field(default_factory=list)
    parent_ref: str = Field(default="", description="The candidate's parent (arm 'alone' is measured against it).")
    spend_n: int | None = Field(default=None, description="n of the cost-matched side (None: not measured).")
    spend_basis: str = Field(default="", description="How spend_n was derived (or why there is none).")
    shares: LiftShares | None = Field(default=None, description="The lift split into harness, weights, interaction "
                                      "and spend, once both harness arms are measured.")


def ablation_path(workspace: Workspace, generation: str) -> Path:
    from rsi.generation.state import generations_dir

    return generations_dir(workspace) / generation / ABLATION_FILE


def read_ablation(workspace: Workspace, generation: str) -> AblationRecord | None:
    path = ablation_path(workspace, generation)
    return AblationRecord.model_validate_json(path.read_text(encoding="utf-8")) if path.is_file() else None


def carriers_of(spec: Any, parent: Any = None) -> list[str]:
    """The carriers a contract spec carries, in CARRIERS order (pure). The harness counts only against a `parent`
    (a loaded contract, or a spec) whose harness differs; `spec` may be a loaded contract too (its prompt counts)."""
    from rsi.training.candidate import SPECIALIST_NAME

    loaded, spec = spec, getattr(spec, "spec", spec)
    harness = spec.harness
    found = {"exemplars": harness.exemplars > 0 and bool(harness.experience), "tools": bool(harness.tool_library),
             "adapter": any(s.name == SPECIALIST_NAME for s in spec.specialists),
             "harness": parent is not None and _harness_of(loaded) != _harness_of(parent)}
    return [name for name in CARRIERS if found[name]]


def _harness_of(contract: Any) -> tuple[Any, str]:
    """What the harness carrier is: the [harness] table and the system prompt the agent reads."""
    spec = getattr(contract, "spec", contract)
    return spec.harness.model_dump(mode="json", exclude={"version", "system_prompt_file", "system_prompt"}), getattr(
        contract, "system_prompt", spec.harness.system_prompt)


def with_harness_of(weights: Any, harness: Any) -> tuple[Any, str]:
    """`weights`' runtime (specialists, routing and all but the harness) with `harness`'s [harness] table and
    system prompt (both loaded contracts; pure)."""
    return weights.spec.model_copy(update={"harness": harness.spec.harness}), harness.system_prompt


def without(carrier: str, candidate: Any, parent: Any) -> tuple[Any, str]:
    """The candidate's runtime (spec, prompt) with `carrier` removed; the parent's specialists and routing stand in
    for the adapter."""
    from rsi.contracts.load import override_contract

    if carrier == "adapter":
        return candidate.spec.model_copy(update={"specialists": parent.spec.specialists,
                                                 "routing": parent.spec.routing}), candidate.system_prompt
    if carrier == "harness":
        return with_harness_of(candidate, parent)
    sets: dict[str, Any] = {"harness.exemplars": 0} if carrier == "exemplars" else {"harness.tool_library": ""}
    spec, prompt, problems = override_contract(candidate, sets)
    if spec is None or problems:
        raise UserInputError(f"{candidate.ref}: cannot remove {carrier}: {problems[:2]}")
    return spec, prompt


def ablate_generation(workspace: Workspace, spec: AblationSpec, on_note: Callable[[str], None] | None = None,
                      attempt_fn: Any = None) -> AblationRecord:
    """Measure each carrier of the generation's candidate (see the module docstring); resumes a killed ablation.
    `attempt_fn` replaces the real attempt function (tests: a scripted model per side), as in `evaluate`."""
    from rsi.atomic import write_json_atomic

    note = on_note or (lambda _m: None)
    state = _generation(workspace, spec.generation)
    record = _start(workspace, state, spec)
    path = ablation_path(workspace, state.id)
    for row in record.rows:
        if row.lift is not None:
            continue
        sides = (record.candidate_ref, row.ablated_ref) if row.arm == "without" else (row.ablated_ref, record.parent_ref)
        note(f"ablate {row.carrier} ({row.arm}): {sides[0]} against {sides[1]}")
        outcome = _evaluate(workspace, spec, record, sides, row, lambda: write_json_atomic(
            path, record.model_dump(mode="json")), note, attempt_fn)
        row.lift, row.costs, row.spend = outcome.lift, dict(outcome.costs), outcome.cost_matched_heldout
        record.shares = shares_of(record)
        write_json_atomic(path, record.model_dump(mode="json"))
        note(f"ablate {row.carrier} ({row.arm}): adds {outcome.lift.as_text()}")
    return record


def shares_of(record: AblationRecord) -> LiftShares | None:
    """`lift_shares` of the harness arms' pass rates (None until both are measured; pure)."""
    arms = {row.arm: row for row in record.rows if row.carrier == "harness" and row.lift is not None}
    without, alone = arms.get("without"), arms.get("alone")
    if without is None or alone is None or without.lift is None or alone.lift is None:
        return None
    spend = alone.spend.pass_rate if alone.spend is not None else None
    return lift_shares(parent=alone.lift.parent_rate, candidate=without.lift.candidate_rate,
                       harness_alone=alone.lift.candidate_rate, weights_alone=without.lift.parent_rate,
                       spend_alone=spend, tasks=min(without.lift.tasks, alone.lift.tasks))


def _generation(workspace: Workspace, generation: str | None) -> Any:
    from rsi.generation.outputs import TrainOutput
    from rsi.generation.state import list_generations, read_state

    if generation:
        return read_state(workspace, generation)
    trained = [g for g in list_generations(workspace) if g.outputs(TrainOutput).candidate_ref]
    if not trained:
        raise UserInputError("no generation has a candidate contract to ablate", hint="run `rsi generation` first")
    return trained[-1]


def _start(workspace: Workspace, state: Any, spec: AblationSpec) -> AblationRecord:
    """The stored record (a resume), or a new one with an ablated revision per carrier asked for and carried."""
    from rsi.atomic import write_json_atomic
    from rsi.contracts.refs import resolve_ref
    from rsi.generation.outputs import EvaluateOutput, TrainOutput

    unknown = sorted(set(spec.carriers) - set(CARRIERS))
    if unknown:
        raise UserInputError(f"--carriers: unknown carrier(s) {', '.join(unknown)}; known: {', '.join(CARRIERS)}")
    trained = state.outputs(TrainOutput)
    if not trained.candidate_ref:
        raise UserInputError(f"generation {state.id} has no candidate contract (its train step did not finish)")
    stored = read_ablation(workspace, state.id)
    candidate, parent = resolve_ref(workspace, trained.candidate_ref), resolve_ref(workspace, trained.parent_ref)
    if stored is not None and stored.candidate_ref == trained.candidate_ref:
        # a resume; carriers asked for now and not measured before (a record older than the harness carrier) are
        # added below
        record = stored
        record.carried = carriers_of(candidate, parent)
    else:
        record = AblationRecord(generation=state.id, candidate_ref=trained.candidate_ref,
                                carried=carriers_of(candidate, parent), parent_ref=parent.ref,
                                lift_vs_control=state.outputs(EvaluateOutput).lift_vs_control)
    have = {(row.carrier, row.arm) for row in record.rows}
    for carrier in (c for c in CARRIERS if c in record.carried and c in spec.carriers):
        arms: tuple[Arm, ...] = ("without", "alone") if carrier == "harness" else ("without",)
        for arm in (a for a in arms if (carrier, a) not in have):
            record.rows.append(AblationRow(carrier=carrier, arm=arm,
                                           ablated_ref=_ablated_ref(workspace, candidate, parent, carrier, arm)))
    if any(row.arm == "alone" for row in record.rows) and not record.spend_basis:
        record.parent_ref = record.parent_ref or parent.ref
        record.spend_n, record.spend_basis = _spend_n(workspace, state)
    write_json_atomic(ablation_path(workspace, state.id), record.model_dump(mode="json"))
    return record


def _spend_n(workspace: Workspace, state: Any) -> tuple[int | None, str]:
    """n of the cost-matched side from the generation's own evaluation (candidate vs parent token costs)."""
    from rsi.evaluation import cost_matched_from, load_eval_outcome
    from rsi.generation.outputs import EvaluateOutput

    eval_id = state.outputs(EvaluateOutput).eval_id
    if not eval_id:
        return None, "not measured: the generation has no evaluation to take the candidate's tokens from"
    try:
        return cost_matched_from(load_eval_outcome(workspace, eval_id))
    except UserInputError as error:
        return None, f"not measured: {error.message}"


def _ablated_ref(workspace: Workspace, candidate: Any, parent: Any, carrier: str, arm: Arm = "without") -> str:
    """The revision of hcp/<contract>-ablation.toml holding the candidate without `carrier` (arm 'without') or the
    parent with the candidate's `carrier` alone (arm 'alone'; the harness), found or written."""
    from rsi.contracts.gitio import find_trailer_commit
    from rsi.training.candidate import write_derived

    name = f"{parent.name}-ablation"
    mark = f"{candidate.ref} {carrier}" + ("" if arm == "without" else f" {arm}")
    found = find_trailer_commit(workspace, name, ABLATION_TRAILER, mark)
    if found is not None:
        return f"{name}@r{found[1]}"
    if arm == "without":
        desired, prompt = without(carrier, candidate, parent)
        message = f"{candidate.ref} without its {carrier}"
    else:
        desired, prompt = with_harness_of(parent, candidate)
        message = f"{parent.ref} with {candidate.ref}'s {carrier} alone"
    written = write_derived(workspace, name, parent, desired, prompt, message,
                            {ABLATION_TRAILER: mark}, notes=f"Ablations of {parent.name}'s candidates (rsi ablate).")
    return written.ref


def _evaluate(workspace: Workspace, spec: AblationSpec, record: AblationRecord, sides: tuple[str, str],
              row: AblationRow, save: Callable[[], Any], note: Callable[[str], None], attempt_fn: Any) -> Any:
    from rsi.evaluation import EvalSpec, evaluate

    def created(eval_id: str) -> None:
        row.eval_id = eval_id
        save()

    spend = row.arm == "alone" and record.spend_n is not None  # the cost-matched side rides in the 'alone' arm
    eval_spec = EvalSpec(candidate=sides[0], parent=sides[1], limit_heldout=spec.limit_heldout,
                         limit_covered=0, workers=spec.workers, sandbox=spec.sandbox, resume=row.eval_id or None,
                         cost_matched_n=record.spend_n if spend else None,
                         cost_matched_basis=record.spend_basis if spend else "")
    return evaluate(workspace, eval_spec, on_note=lambda m: note(f"eval: {m}"), on_created=created,
                    attempt_fn=attempt_fn)


def ablation_lines(record: AblationRecord) -> list[str]:
    """The ablation as ledger lines: the lift it decomposes, then what each carrier adds and at what price."""
    whole = record.lift_vs_control
    lines = [f"ablation of {record.generation} ({record.candidate_ref}; carries {', '.join(record.carried) or 'nothing'})"
             + (f": lift vs gen 0 {whole.lift:+.3f} [{whole.lift_ci95[0]:+.3f}, {whole.lift_ci95[1]:+.3f}]" if whole else "")]
    for row in record.rows:
        if row.lift is None:
            lines.append(f"  {row.carrier}: not measured yet ({row.ablated_ref}; `rsi ablate` resumes it)")
            continue
        cand, ablated = row.costs.get("candidate"), row.costs.get("parent")
        price = (f", {cand.completion_tokens_per_task:.0f} vs {ablated.completion_tokens_per_task:.0f} completion "
                 "tokens/task" if cand and ablated else "")
        what = row.carrier if row.arm == "without" else f"{row.carrier} alone (into the parent)"
        lines.append(f"  {what} adds {row.lift.lift:+.3f} [{row.lift.lift_ci95[0]:+.3f}, "
                     f"{row.lift.lift_ci95[1]:+.3f}] over {row.lift.tasks} heldout tasks{price} (eval {row.eval_id})")
    if record.shares is not None:
        lines.extend(shares_lines(record.shares, record.spend_basis))
    return lines


def shares_lines(shares: LiftShares, basis: str = "") -> list[str]:
    """The lift's shares as a small table: one carrier a line, its share and its pass rate's source."""
    s = shares
    spend = ("not measured" + (f" ({basis})" if basis else "")) if s.spend is None else (
        f"{s.spend:+.3f}   the parent as cost-matched best-of-n" + (f" ({basis})" if basis else ""))
    rows = [f"  shares of the lift {s.total:+.3f} over {s.tasks} heldout tasks (candidate {s.candidate_rate:.3f} vs "
            f"parent {s.parent_rate:.3f}):",
            f"    harness      {s.harness:+.3f}   parent weights + candidate harness, vs parent",
            f"    weights      {s.weights:+.3f}   candidate weights + parent harness, vs parent",
            f"    interaction  {s.interaction:+.3f}   total - harness - weights",
            f"    spend        {spend}"]
    if s.harness_beyond_spend is not None:
        rows.append(f"    harness beyond spend {s.harness_beyond_spend:+.3f}   harness - spend")
    return rows
