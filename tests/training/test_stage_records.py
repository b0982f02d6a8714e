"""`rsi train`'s outcome is typed (metrics, lineage, candidate) and serializes to the JSON it always did:
stored files and the generation's state read it, key for key."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from rsi.adapters.registry import AdapterLineage
from rsi.contracts.records import RevisionWritten
from rsi.training.stage import StageLineage, TrainMetrics, TrainStageOutcome

SFT_METRICS = {"steps": 3, "epochs_run": 1.0, "examples": 4, "dropped": {"too_long": 1}, "truncated": 0, "tokens": 10,
               "trained_tokens": 9, "losses": [1.0, 0.75, 0.5], "first_loss": 1.0, "final_loss": 0.5, "wall_s": 2.0,
               "tokens_per_s": 4.5, "seconds_per_step": 0.6, "device": "cpu", "dtype": "float32",
               "resumed_from_step": 1, "trainable_params": 5, "torch_version": "2.13.0", "peft_version": "0.1",
               "transformers_version": "4.0"}
CANDIDATE = {"name": "default-candidate", "revision": 2, "ref": "default-candidate@r2", "tag": "default-candidate/r2",
             "commit": "c0ffee", "content_hash": "h", "written": True}


def _lineage(metrics: dict) -> dict:
    stored = {"schema": "rsi.adapter/1", "id": "abc", "name": "sft", "method": "sft", "created": datetime.now(UTC),
              "base": {"id": "smollm2"}, "dataset": {"sha256": "d", "examples": 4}, "source_runs": ["r1"],
              "parent_contract": {"name": "default", "ref": "default@r1"}, "hyperparameters": {"rank": 8},
              "metrics": metrics, "code": {"rsi_version": "0.1.0"}, "executor": "local"}
    return AdapterLineage.model_validate(stored).model_dump(mode="json", by_alias=True)


def test_the_typed_outcome_serializes_to_the_json_it_replaced() -> None:
    lineage = _lineage(SFT_METRICS)
    before = {"adapter_id": "abc", "adapter_dir": "/a", "registered": True, "candidate": CANDIDATE,
              "metrics": SFT_METRICS, "lineage": lineage}
    outcome = TrainStageOutcome(adapter_id="abc", adapter_dir="/a", registered=True,
                                candidate=RevisionWritten.model_validate(CANDIDATE),
                                metrics=TrainMetrics.model_validate(SFT_METRICS),
                                lineage=StageLineage.model_validate(lineage))
    assert outcome.model_dump(mode="json") == before and "schema" in outcome.model_dump(mode="json")["lineage"]
    assert TrainStageOutcome.model_validate(before) == outcome  # and reads it back
    # typed attributes for what the generation and the CLI read
    m = outcome.metrics
    assert (m.steps, m.first_loss, m.final_loss, m.tokens_per_s, m.wall_s, m.resumed_from_step) == (3, 1.0, 0.5, 4.5, 2.0, 1)
    assert outcome.candidate is not None and outcome.candidate.ref == "default-candidate@r2"
    assert outcome.lineage.parent_contract.ref == "default@r1"
    # no candidate written: None in Python, {} in the JSON, as before
    bare = TrainStageOutcome.model_validate({**before, "candidate": {}})
    assert bare.candidate is None and bare.model_dump(mode="json")["candidate"] == {}


def test_a_methods_own_numbers_stay_and_the_common_ones_are_required() -> None:
    grpo = {**SFT_METRICS, "method": "grpo", "rollouts": 8, "rewards_per_step": [0.25, 0.5]}
    for name in ("epochs_run", "examples", "dropped", "truncated", "tokens"):
        grpo.pop(name)
    assert TrainMetrics.model_validate(grpo).model_dump(mode="json") == grpo
    with pytest.raises(ValidationError, match="final_loss"):
        TrainMetrics.model_validate({k: v for k, v in SFT_METRICS.items() if k != "final_loss"})


def test_records_are_read_by_attribute_and_a_methods_own_numbers_are_its_extras() -> None:
    """Every caller reads attributes (the transitional key access is gone); SFT's own numbers stay extras."""
    metrics = TrainMetrics.model_validate(SFT_METRICS)
    assert metrics.steps == 3 and metrics.resumed_from_step == 1
    assert metrics.model_extra == {"epochs_run": 1.0, "examples": 4, "dropped": {"too_long": 1}, "truncated": 0,
                                   "tokens": 10}
    assert RevisionWritten.model_validate(CANDIDATE).ref == "default-candidate@r2"
    with pytest.raises(TypeError):
        metrics["steps"]  # type: ignore[index]
