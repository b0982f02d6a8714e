"""`rsi lineage` from generation records (fast, no model): rows, the PNG, and the nightly's lock and summary line."""

from __future__ import annotations

from filelock import FileLock

from rsi.generation.generation import GenerationSpec, start_or_resume
from rsi.generation.lineage import build_lineage, lineage_png
from rsi.generation.nightly import EXIT_LOCKED, LOCK_FILE, run_nightly, summary_line
from rsi.generation.outputs import GenerationSummary
from rsi.generation.state import generations_dir, write_state
from tests.generation.records import lift_record, retention_record


def _finished(workspace, lift: float, retention: float, covered: int):
    state, _ = start_or_resume(workspace, GenerationSpec(), new=True)
    outputs = {
        "run": {"run_id": f"run-{state.number}", "covered": covered, "tasks": 10, "cumulative_covered": covered + 1,
                "cumulative_tasks": 10},
        "promote": {"status": "refused"},
        "export": {"dataset_sha256": "d" * 64, "examples": 3},
        "train": {"adapter_id": "a" * 64, "parent_ref": "default@r1", "candidate_ref": "default-candidate@r2"},
        "evaluate": {"eval_id": "ev", "lift": lift_record(lift, lift - 0.2, lift + 0.2),
                     "retention": retention_record(retention)},
        "promote_adapter": {"state": "rejected"},
    }
    for name, values in outputs.items():
        state.step(name).outputs.update(values)
        state.step(name).status = "done"
    state.status = "done"
    state.summary = GenerationSummary.model_validate({
        "contract": "default", "revision_start": 1, "revision_end": 1, "coverage": [covered, 10], "harness": "refused",
        "adapter_id": "a" * 64, "adapter": "rejected", "lift": outputs["evaluate"]["lift"],
        "retention": outputs["evaluate"]["retention"]})
    return write_state(workspace, state)


def test_lineage_rows_and_plot(workspace) -> None:
    _finished(workspace, 0.1, 0.95, 4)
    _finished(workspace, 0.25, 1.0, 6)
    rows = build_lineage(workspace)
    assert [(r.generation, r.covered, r.lift, r.retention, r.revision_end) for r in rows] == [
        ("g0001", 4, 0.1, 0.95, 1), ("g0002", 6, 0.25, 1.0, 1)]
    assert rows[1].adapter_parent == "default@r1" and rows[1].candidate_ref == "default-candidate@r2"
    assert rows[0].steps["train"] == "done"
    png = lineage_png(rows)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    assert lineage_png([])[:4] == b"\x89PNG"


def test_summary_line_and_a_held_lock(workspace) -> None:
    state = _finished(workspace, 0.125, 0.9, 5)
    line = summary_line(state.summary)
    assert line == ("contract default r1 -> r1, coverage 5/10, harness refused, adapter aaaaaaaaaaaa rejected, "
                    "lift +0.125 CI95 [-0.075, 0.325], heldout retention 0.900 (18/20)")
    assert state.summary is not None
    priced = GenerationSummary.model_validate({**state.summary.model_dump(mode="json"), "costs": {
        "parent": {"tasks": 10, "pass_rate": 0.1, "completion_tokens_per_task": 80.0, "seconds_per_task": 2.0},
        "candidate": {"tasks": 10, "pass_rate": 0.2, "completion_tokens_per_task": 800.0, "seconds_per_task": 9.0}}})
    assert ("lift +0.125 CI95 [-0.075, 0.325], at 10.0x the parent's completion tokens (800 vs 80), prompt tokens 0 vs 0 "
            "(the parent's unmeasured) and 0.00 vs 0.00 check seconds per heldout task") in summary_line(priced)
    folder = generations_dir(workspace)
    logged: list[str] = []
    with FileLock(str(folder / LOCK_FILE)):
        outcome = run_nightly(workspace, GenerationSpec(), logged.append)
    assert outcome.exit_code == EXIT_LOCKED == 0 and outcome.status == "locked"
    assert len(logged) == 1 and logged[0].startswith("another rsi nightly is running")
