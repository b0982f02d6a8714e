"""A generation's summary is a typed record (GenerationSummary) stored in state.json as the object it always was.

The old summary is the one release 112f886 wrote (no `costs` yet); an unfinished generation's is {}. Both are
read through the real state file (read_state) and written back by write_state.
"""

from __future__ import annotations

import json

from rsi.generation.nightly import summary_line
from rsi.generation.outputs import GenerationSummary
from rsi.generation.state import read_state, state_path, write_state
from tests.generation.records import lift_record

OLD_SUMMARY = {
    "contract": "default", "revision_start": 1, "revision_end": 2, "portfolio": "default", "run_id": "run-1",
    "coverage": [4, 10], "cumulative_coverage": [5, 10], "harness": "promoted", "successor": "default-g2",
    "dataset_sha256": "d" * 64, "examples": 3, "harvest_run_id": None, "adapter_id": "a" * 64,
    "candidate_ref": "default-candidate@r2", "eval_id": "ev-1", "lift": lift_record(0.1, -0.1, 0.3),
    "lift_vs_control": None,
    # the in-sample figure, as `retention` was before heldout retention became the gate's (no `split`)
    "retention": {"covered": 10, "still_solved": 9, "retention": 0.9, "parent_resolved": 10, "kept": 9}, "transfer": None,
    "adapter": "rejected",
}


def _state(generation_id: str, summary: dict, status: str) -> dict:
    return {"schema": "rsi-generation/1", "id": generation_id, "number": int(generation_id[1:]),
            "created": "2026-11-20T08:00:00Z", "updated": "2026-11-20T09:00:00Z", "status": status,
            "spec": {"contract": "default"}, "inputs": {"contract": "default", "revision": 1}, "summary": summary}


def _store(workspace, state: dict) -> None:
    path = state_path(workspace, state["id"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state), encoding="utf-8")


def test_an_old_summary_reads_typed_and_is_written_back_with_its_keys(workspace) -> None:
    _store(workspace, _state("g0001", OLD_SUMMARY, "done"))
    state = read_state(workspace, "g0001")
    summary = state.summary
    assert summary is not None and summary.revision_end == 2 and summary.coverage == [4, 10]
    assert summary.lift is not None and summary.lift.lift == 0.1 and summary.costs == {}
    # the old figure reads as what it was, in-sample; the gate's heldout retention comes from the lift's table
    assert summary.retention_in_sample is not None and summary.retention_in_sample.retention == 0.9
    assert summary.retention_in_sample.split == "train"
    assert summary.retention is not None and summary.retention.split == "heldout"
    assert summary.retention.as_text() == "1.000 (3/3)"  # lift_record: 3 of 10 solved by both sides
    write_state(workspace, state)
    stored = json.loads(state_path(workspace, "g0001").read_text(encoding="utf-8"))["summary"]
    added = ("costs", "retention", "retention_in_sample", "retention_vs_control")
    assert {k: v for k, v in stored.items() if k not in added} == {k: v for k, v in OLD_SUMMARY.items() if k not in added}
    assert stored["costs"] == {} and stored["retention_in_sample"] == {**OLD_SUMMARY["retention"], "split": "train",
                                                                       "against": "parent"}
    assert read_state(workspace, "g0001").summary == summary  # written back, it reads the same (nothing moves twice)
    assert summary_line(summary).startswith("contract default r1 -> r2, coverage 4/10, harness promoted, "
                                            "adapter aaaaaaaaaaaa rejected, lift +0.100 CI95 [-0.100, 0.300]")


def test_an_unfinished_generations_summary_is_none_and_stays_an_empty_object(workspace) -> None:
    _store(workspace, _state("g0002", {}, "running"))
    state = read_state(workspace, "g0002")
    assert state.summary is None
    write_state(workspace, state)
    assert json.loads(state_path(workspace, "g0002").read_text(encoding="utf-8"))["summary"] == {}
    assert summary_line(None) == "contract None rNone -> rNone, coverage None/None, harness None, adapter - none"


def test_keys_a_later_version_adds_are_kept() -> None:
    later = {**OLD_SUMMARY, "ships": "default@r3"}
    assert GenerationSummary.model_validate(later).model_dump(mode="json")["ships"] == "default@r3"
