"""`rsi report --lineage`: generations side by side from generation records, a real contract revision
in git (the diff) and whatever fields the ledger holds, known or not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi.contracts.revisions import revise_contract
from rsi.generation.generation import GenerationSpec, start_or_resume
from rsi.generation.lineage import LineageRow
from rsi.generation.outputs import GenerationSummary
from rsi.generation.state import write_state
from rsi.promotion.decision import paired_lift
from rsi.report.lineage import KNOWN_FIELDS, build_lineage_report, load_lineage_report
from rsi.report.lineage_page import render_lineage_page
from tests.generation.records import lift_record, retention_record


def _generation(workspace, covered: int, lift: float, kept: int, start: int, end: int):
    state, _ = start_or_resume(workspace, GenerationSpec(), new=True)
    outputs = {
        "run": {"run_id": f"run-{state.number}", "covered": covered, "tasks": 10, "cumulative_covered": covered + 1,
                "cumulative_tasks": 10},
        "promote": {"status": "promoted", "revision": end},
        "export": {"dataset_sha256": "d" * 64, "examples": 3 + state.number},
        "train": {"adapter_id": "a" * 64, "parent_ref": f"default@r{start}", "candidate_ref": "default-candidate@r2"},
        "evaluate": {"eval_id": "ev", "lift": lift_record(lift, lift - 0.2, lift + 0.2),
                     "retention": retention_record(kept / 8, covered=8)},
    }
    for name, values in outputs.items():
        state.step(name).outputs.update(values)
        state.step(name).status = "done"
    state.inputs["revision"] = start
    state.status = "done"
    state.summary = GenerationSummary(revision_end=end)
    return write_state(workspace, state)


def test_generations_side_by_side_with_intervals_and_the_contract_diff(workspace) -> None:
    revise_contract(workspace, "default", {"harness.max_turns": 3}, "fewer turns")
    _generation(workspace, covered=4, lift=0.1, kept=7, start=1, end=2)
    _generation(workspace, covered=6, lift=0.25, kept=8, start=2, end=2)
    report = load_lineage_report(workspace)
    first, second = report.generations
    assert [g.row.generation for g in report.generations] == ["g0001", "g0002"]
    assert (first.retention_kept, first.retention_covered) == (7, 8)
    low, high = first.retention_ci95
    assert 0.4 < low < 7 / 8 < high < 1.0  # Wilson 95% interval of 7/8
    assert second.retention_ci95[1] == 1.0
    assert first.diff is not None and not first.diff.problem and not first.diff.equal
    changed = {c.key: c.new for c in first.diff.changes if not c.bookkeeping}
    assert changed == {"harness.max_turns": 3, "harness.version": 2}  # the revision bumped the harness clock
    assert first.diff.clocks_moved == ["harness"]
    assert second.diff is not None and second.diff.equal and not second.diff.changes
    assert first.dataset["examples"] == 4

    html = render_lineage_page(report)
    assert "g0001" in html and "g0002" in html and "harness.max_turns" in html
    assert "+0.100" in html and "[-0.100, 0.300]" in html and "7/8 covered tasks kept" in html


def test_fields_the_ledger_gains_later_are_shown_not_dropped() -> None:
    """The report takes typed rows; a row field the page has no row of its own for is shown, not dropped."""
    row = LineageRow(generation="g0001", number=1, status="done", created="2026-12-01T00:00:00+00:00",
                     contract="default", covered=2, tasks=4, lift_vs_control=0.125, lift_vs_control_ci95=[-0.05, 0.3],
                     library="default@e2", tools_offered=3)
    report = build_lineage_report([row], {}, {}, {})
    column = report.generations[0]
    assert column.row is row
    assert set(column.extra) == set(LineageRow.model_fields) - KNOWN_FIELDS  # every field without a row of its own
    assert (column.extra["library"], column.extra["tools_offered"]) == ("default@e2", 3)
    html = render_lineage_page(report)
    assert "library: default@e2" in html and "tools_offered: 3" in html
    assert "lift_vs_control: <b>+0.125 <span class='note'>[-0.050, 0.300]</span></b>" in html


@pytest.mark.parametrize("with_generation", [False, True])
def test_cli_writes_the_lineage_report(workspace, cli, with_generation) -> None:
    if with_generation:
        _generation(workspace, covered=5, lift=0.0, kept=6, start=1, end=1)
    result = cli("report", "--lineage", "--json", cwd=workspace.root)
    assert result.returncode == 0, result.stderr
    path = json.loads(result.stdout)["report"]
    assert path.endswith("generations/lineage.html")
    html = Path(path).read_text(encoding="utf-8")
    assert "default-src 'none'" in html and "http://" not in html
    assert ("g0001" in html) == with_generation and ("no generations yet" in html) == (not with_generation)
    refused = cli("report", "somerun", "--lineage", cwd=workspace.root)
    assert refused.returncode == 2 and "--lineage takes no RUN" in refused.stderr


def test_retention_interval_uses_what_the_parent_solved_and_reads_older_records() -> None:
    from rsi.report.lineage import _retention

    current = {"retention": {"covered": 10, "still_solved": 9, "parent_resolved": 8, "kept": 7, "retention": 0.875,
                             "split": "heldout"}}
    base, kept, interval = _retention(current)
    assert (base, kept) == (8, 7) and interval is not None and interval[0] < 7 / 8 < interval[1]
    # a record from when `retention` was in-sample (no `split`): the gate's heldout figure is read from its lift's
    # paired table (the parent solved 6 heldout tasks, the candidate kept 5 of them), never from the train figure
    lift = paired_lift({f"t{i}": i != 0 and i < 8 for i in range(10)}, {f"t{i}": i < 6 for i in range(10)})
    older = {"lift": lift.summary().model_dump(mode="json"),
             "retention": {"covered": 10, "still_solved": 9, "parent_resolved": 8, "retention": 0.9}}
    assert _retention(older)[:2] == (6, 5)
    assert _retention({"retention": older["retention"]}) == (None, None, None)  # no lift, no heldout figure
