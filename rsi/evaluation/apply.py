"""Applying an evaluation's decision: the parent's next revision (rsi.promotion.adapter.promote_adapter) or a
`rejected` status with the numbers, both recorded in the status.json (rsi.adapters.registry) of every registered
adapter the candidate changed against the evaluated parent (one trained `sft`, or one per partition of the train
evidence; none for a candidate that changes only routing or the harness), and the outcome's `applied` written
back to eval.json. Idempotent: a rerun finds the promotion it wrote.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from rsi.atomic import write_json_atomic
from rsi.contracts.records import RevisionWritten
from rsi.errors import UserInputError
from rsi.evaluation.records import EVAL_FILE, AppliedDecision, EvalOutcome
from rsi.workspace import Workspace

if TYPE_CHECKING:
    from rsi.adapters.registry import AdapterRecord


def load_eval_outcome(workspace: Workspace, eval_id: str) -> EvalOutcome:
    path = workspace.run_dir(eval_id) / EVAL_FILE
    if not path.is_file():
        raise UserInputError(f"no evaluation {eval_id} ({path} is missing)")
    return EvalOutcome.model_validate(json.loads(path.read_text(encoding="utf-8")))


def apply_decision(workspace: Workspace, outcome: EvalOutcome) -> EvalOutcome:
    """Promote the candidate into the parent (gate passed) or record its adapters as rejected; idempotent."""
    from rsi.adapters.registry import update_status
    from rsi.promotion.adapter import promote_adapter

    if outcome.split == "test":
        # A final evaluation measures the claim on the sealed split; it never promotes (the heldout gate does),
        # or the sealed split would become one more split that chooses.
        return outcome
    records = decided_adapters(workspace, outcome)
    numbers = {"eval_id": outcome.eval_id, "lift": outcome.lift.model_dump(mode="json"),
               "retention": outcome.retention.model_dump(mode="json"),
               "retention_in_sample": (outcome.retention_in_sample.model_dump(mode="json")
                                       if outcome.retention_in_sample is not None else None),
               "decision": outcome.decision.model_dump(mode="json"), "candidate": outcome.candidate.model_dump(mode="json"),
               "parent": outcome.parent.model_dump(mode="json"), "at": datetime.now(UTC).isoformat(timespec="seconds")}
    applied: AppliedDecision
    if outcome.promote:
        lift, retention = outcome.lift, outcome.retention
        trailers = {
            "Eval-Lift": f"{lift.lift:+.4f} CI95 [{lift.lift_ci95[0]:.3f}, {lift.lift_ci95[1]:.3f}] "
                         f"{lift.method} on {lift.tasks} heldout tasks",
            "Eval-Retention": f"{retention.as_text()} of the heldout tasks the parent solved",
            "Eval-Gate": (f"min_lift={outcome.decision.gate.min_lift} retention_min={outcome.decision.gate.retention_min} "
                          f"max_token_ratio={outcome.decision.gate.max_token_ratio} "
                          f"min_lift_per_1k_tokens={outcome.decision.gate.min_lift_per_1k_tokens}"),
        }
        if outcome.retention_vs_control is not None:
            trailers["Eval-Retention-Control"] = (f"{outcome.retention_vs_control.as_text()} of the heldout tasks "
                                                  "generation 0 solved")
        if outcome.retention_in_sample is not None:
            trailers["Eval-Retention-In-Sample"] = (f"{outcome.retention_in_sample.as_text()} of the covered train "
                                                    "tasks the parent solved (not gated)")
        cand, parent = outcome.costs.get("candidate"), outcome.costs.get("parent")
        if cand is not None and parent is not None:
            trailers["Eval-Cost"] = (f"{cand.completion_tokens_per_task:.1f} completion and "
                                     f"{cand.prompt_tokens_per_task:.1f} prompt tokens/task vs parent "
                                     f"{parent.completion_tokens_per_task:.1f} and {parent.prompt_tokens_per_task:.1f}; "
                                     f"{cand.check_seconds_per_task:.2f} check s/task vs {parent.check_seconds_per_task:.2f}; "
                                     f"{cand.seconds_per_task:.2f} s/task vs {parent.seconds_per_task:.2f}")
        body = f"gate passed: {outcome.decision.reason}"
        written = promote_adapter(workspace, outcome.parent.name, outcome.candidate.ref, outcome.eval_id,
                                  trailers, body)
        applied = AppliedDecision(state="promoted", revision=RevisionWritten.model_validate(written.summary()))
        for record in records:
            update_status(record, state="promoted", evaluation=numbers, promotion=written.summary())
    else:
        applied = AppliedDecision(state="rejected", reason=outcome.decision.reason)
        for record in records:
            update_status(record, state="rejected", evaluation=numbers)
    updated = outcome.model_copy(update={"applied": applied})
    write_json_atomic(workspace.run_dir(outcome.eval_id) / EVAL_FILE, updated.model_dump(mode="json"))
    return updated


def decided_adapters(workspace: Workspace, outcome: EvalOutcome) -> list[AdapterRecord]:
    """The registered adapters the decision is about: every specialist the candidate serves other than the evaluated
    parent does (the one it routes to first). Weights not in the registry are left out; where a side no longer
    resolves (an evaluation of a working copy since edited), the routed adapter (`outcome.adapter_id`) alone."""
    from rsi.adapters.registry import find_adapter
    from rsi.contracts.refs import resolve_ref
    from rsi.promotion.adapter import changed_specialists

    try:
        changed = changed_specialists(resolve_ref(workspace, outcome.parent.ref).spec,
                                      resolve_ref(workspace, outcome.candidate.ref).spec)
        ids = [s.sha256 for s in changed if s.sha256]
    except UserInputError:
        ids = [outcome.adapter_id] if outcome.adapter_id else []
    records = []
    for adapter_id in dict.fromkeys(ids):  # in order, once each
        try:
            records.append(find_adapter(workspace, adapter_id))
        except UserInputError:
            continue
    return records
