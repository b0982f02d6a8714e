"""Typed evaluate-step records for synthetic generation states (the ledger and lineage tests).

The ledger reads a generation's outputs as rsi.generation.outputs models, so a synthetic record must be a
whole LiftSummary / RetentionSummary / TransferSummary; these build them from the few numbers a test sets.
"""

from __future__ import annotations

from typing import Any

from rsi.promotion.decision import paired_lift


def lift_record(value: float, low: float, high: float) -> dict[str, Any]:
    """A stored LiftSummary over 10 tasks (0.3 solved each side) with the given lift and interval."""
    both = {f"s/t{i}": i < 3 for i in range(10)}
    template = paired_lift(both, dict(both)).summary()
    return template.model_copy(update={"lift": value, "lift_ci95": (low, high)}).model_dump(mode="json")


def retention_record(retention: float, covered: int = 20) -> dict[str, Any]:
    """A stored heldout RetentionSummary (the gate's); without `split` it would read as a record from when
    `retention` was the in-sample figure (rsi.evaluation.records.upgrade_retention)."""
    return {"covered": covered, "still_solved": round(retention * covered), "retention": retention,
            "parent_resolved": covered, "split": "heldout"}


def transfer_record(transfer: float, covered: int = 10) -> dict[str, Any]:
    return {"portfolio_covered": covered, "candidate_solved": round(transfer * covered), "parent_solved": 0,
            "transfer": transfer, "parent_transfer": 0.0}
