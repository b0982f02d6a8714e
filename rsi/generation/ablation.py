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

The record, runs/generations/<id>/ablation.json, is rewritten atomically as each evaluation is created and as
each ends, so a killed ablation resumes its evaluations (`rsi eval`'s own resume) and writes no revision twice.
Nothing is promoted: an ablation measures, it never changes the contract.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rsi.errors import UserInputError
from rsi.evaluation import SideCost
from rsi.promotion.decision import LiftSummary
from rsi.sandbox.select import SandboxName
from rsi.workspace import Workspace

ABLATION_FILE = "ablation.json"
ABLATION_TRAILER = "Ablation-Of"
CARRIERS = ("exemplars", "tools", "adapter")


class AblationSpec(BaseModel):
    """One `rsi ablate` (flags map onto these fields)."""

    model_config = ConfigDict(extra="forbid")
    generation: str | None = Field(default=None, description="Generation id; default: the latest with a candidate.")
    carriers: list[str] = Field(default_factory=lambda: list(CARRIERS), description="Carriers to remove, one each.")
    limit_heldout: int | None = Field(default=None, ge=1, description="Only the first N heldout tasks.")
    workers: int | None = Field(default=None, ge=1)
    sandbox: SandboxName = "auto"


class AblationRow(BaseModel):
    """What one carrier adds: the candidate against the candidate without it, on heldout."""

    carrier: str
    ablated_ref: str
    eval_id: str = ""
    lift: LiftSummary | None = Field(default=None, description="Candidate minus ablated: what the carrier adds.")
    costs: dict[str, SideCost] = Field(default_factory=dict, description="'candidate' and 'parent' (the ablated side).")


class AblationRecord(BaseModel):
    generation: str
    candidate_ref: str
    lift_vs_control: LiftSummary | None = Field(default=None, description="The generation's own lift against "
                                                "generation 0 (what the rows decompose).")
    carried: list[str] = Field(description="The carriers the candidate carries.")
    rows: list[AblationRow] = Field(default_factory=list)


def ablation_path(workspace: Workspace, generation: str) -> Path:
    from rsi.generation.state import generations_dir

    return generations_dir(workspace) / generation / ABLATION_FILE


def read_ablation(workspace: Workspace, generation: str) -> AblationRecord | None:
    path = ablation_path(workspace, generation)
    return AblationRecord.model_validate_json(path.read_text(encoding="utf-8")) if path.is_file() else None


def carriers_of(spec: Any) -> list[str]:
    """The carriers a contract spec carries, in CARRIERS order (pure)."""
    from rsi.training.candidate import SPECIALIST_NAME

    harness = spec.harness
    found = {"exemplars": harness.exemplars > 0 and bool(harness.experience), "tools": bool(harness.tool_library),
             "adapter": any(s.name == SPECIALIST_NAME for s in spec.specialists)}
    return [name for name in CARRIERS if found[name]]


def without(carrier: str, candidate: Any, parent: Any) -> tuple[Any, str]:
    """The candidate's runtime (spec, prompt) with `carrier` removed; the parent's specialists and routing stand in
    for the adapter."""
    from rsi.contracts.load import override_contract

    if carrier == "adapter":
        return candidate.spec.model_copy(update={"specialists": parent.spec.specialists,
                                                 "routing": parent.spec.routing}), candidate.system_prompt
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
        note(f"ablate {row.carrier}: {record.candidate_ref} against {row.ablated_ref}")
        outcome = _evaluate(workspace, spec, record.candidate_ref, row, lambda: write_json_atomic(
            path, record.model_dump(mode="json")), note, attempt_fn)
        row.lift, row.costs = outcome.lift, dict(outcome.costs)
        write_json_atomic(path, record.model_dump(mode="json"))
        note(f"ablate {row.carrier}: adds {outcome.lift.as_text()}")
    return record


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
    if stored is not None and stored.candidate_ref == trained.candidate_ref:
        return stored
    candidate, parent = resolve_ref(workspace, trained.candidate_ref), resolve_ref(workspace, trained.parent_ref)
    carried = carriers_of(candidate.spec)
    record = AblationRecord(generation=state.id, candidate_ref=trained.candidate_ref, carried=carried,
                            lift_vs_control=state.outputs(EvaluateOutput).lift_vs_control)
    for carrier in (c for c in CARRIERS if c in carried and c in spec.carriers):
        record.rows.append(AblationRow(carrier=carrier, ablated_ref=_ablated_ref(workspace, candidate, parent, carrier)))
    write_json_atomic(ablation_path(workspace, state.id), record.model_dump(mode="json"))
    return record


def _ablated_ref(workspace: Workspace, candidate: Any, parent: Any, carrier: str) -> str:
    """The revision of hcp/<contract>-ablation.toml holding the candidate without `carrier` (found or written)."""
    from rsi.contracts.gitio import find_trailer_commit
    from rsi.training.candidate import write_derived

    name = f"{parent.name}-ablation"
    mark = f"{candidate.ref} {carrier}"
    found = find_trailer_commit(workspace, name, ABLATION_TRAILER, mark)
    if found is not None:
        return f"{name}@r{found[1]}"
    desired, prompt = without(carrier, candidate, parent)
    written = write_derived(workspace, name, parent, desired, prompt, f"{candidate.ref} without its {carrier}",
                            {ABLATION_TRAILER: mark}, notes=f"Ablations of {parent.name}'s candidates (rsi ablate).")
    return written.ref


def _evaluate(workspace: Workspace, spec: AblationSpec, candidate_ref: str, row: AblationRow,
              save: Callable[[], Any], note: Callable[[str], None], attempt_fn: Any) -> Any:
    from rsi.evaluation import EvalSpec, evaluate

    def created(eval_id: str) -> None:
        row.eval_id = eval_id
        save()

    eval_spec = EvalSpec(candidate=candidate_ref, parent=row.ablated_ref, limit_heldout=spec.limit_heldout,
                         limit_covered=0, workers=spec.workers, sandbox=spec.sandbox, resume=row.eval_id or None)
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
        lines.append(f"  {row.carrier} adds {row.lift.lift:+.3f} [{row.lift.lift_ci95[0]:+.3f}, "
                     f"{row.lift.lift_ci95[1]:+.3f}] over {row.lift.tasks} heldout tasks{price} (eval {row.eval_id})")
    return lines
