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
    assert "lift_vs_control" not in column.extra  # the compounding figures have rows of their own now
    assert "<b>+0.125 <span class='note'>[-0.050, 0.300]</span></b>" in html


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


def _compounding(workspace, lifts: list[tuple[float, float]], tokens: list[tuple[float, float]]) -> None:
    """Generations with what the compounding ledger shows: lift against the parent and generation 0, the candidate's
    price, the cache, the looks at both splits, and an `rsi ablate` record for the last one."""
    from rsi.atomic import write_json_atomic
    from rsi.generation.ablation import AblationRecord, AblationRow, ablation_path, lift_shares
    from rsi.generation.state import read_state
    from rsi.store import open_store
    from rsi.store.looks import Look, record_look

    for i, ((parent_lift, gen0_lift), (completion, prompt)) in enumerate(zip(lifts, tokens, strict=True)):
        state = _generation(workspace, covered=4 + i, lift=parent_lift, kept=7, start=1, end=1)
        state = read_state(workspace, state.id)
        evaluate = state.step("evaluate").outputs
        evaluate["eval_id"] = f"ev{state.number}"
        evaluate["lift_vs_control"] = lift_record(gen0_lift, gen0_lift - 0.05, gen0_lift + 0.05)
        evaluate["costs"] = {
            "candidate": {"tasks": 10, "pass_rate": 0.4, "completion_tokens_per_task": completion,
                          "prompt_tokens_per_task": prompt, "seconds_per_task": 3.5 + i, "k_needed": 1.5},
            "parent": {"tasks": 10, "pass_rate": 0.3, "completion_tokens_per_task": 100.0,
                       "prompt_tokens_per_task": 400.0, "seconds_per_task": 2.0}}
        evaluate["cache"] = {"candidate": {"hits": 1, "misses": 9, "tokens_not_spent": 120},
                             "parent": {"hits": 10, "misses": 0, "tokens_not_spent": 1000}}
        state.step("train").outputs["candidate_ref"] = f"default-candidate@r{state.number + 1}"
        write_state(workspace, state)
    store = open_store(workspace.db_url)
    try:
        for n in range(1, len(lifts) + 1):
            record_look(store, Look(eval_id=f"ev{n}", suite="pyfuncs", split="heldout", candidate_hash=f"h{n}",
                                    candidate_ref=f"default-candidate@r{n + 1}", tasks=10))
            record_look(store, Look(eval_id=f"final{n}", suite="pyfuncs", split="test", candidate_hash=f"h{n}",
                                    candidate_ref=f"default-candidate@r{n + 1}", tasks=25))
    finally:
        store.close()
    last = f"g{len(lifts):04d}"
    both = {f"t{i}": i < 3 for i in range(10)}
    rows = [AblationRow(carrier=carrier, ablated_ref=f"default-ablation@r{i + 1}", eval_id=f"ab{i}",
                        lift=paired_lift({k: v or int(k[1:]) < 3 + gain for k, v in both.items()}, both).summary())
            for i, (carrier, gain) in enumerate((("exemplars", 1), ("adapter", 0), ("harness", 2)))]
    record = AblationRecord(generation=last, candidate_ref="default-candidate@r4", carried=["exemplars", "adapter", "harness"],
                            rows=rows, shares=lift_shares(0.3, 0.5, 0.4, 0.35, 0.38, 10))
    write_json_atomic(ablation_path(workspace, last), record.model_dump(mode="json"))


def test_the_lineage_page_shows_the_compounding_figures_and_the_lift_and_tokens_plot(workspace, page, tmp_path) -> None:
    """Three generations in a real workspace; the page, opened in headless Chromium, shows per generation the lift
    against the parent and generation 0 with intervals, the price, k needed, the cache's share, the looks of both
    splits and (where ablated) each carrier's share, and the lift-and-tokens chart is drawn on screen."""
    from PIL import Image

    from rsi.report import write_lineage_report

    _compounding(workspace, lifts=[(0.1, 0.1), (0.05, 0.15), (0.02, 0.18)],
                 tokens=[(800.0, 3000.0), (600.0, 2500.0), (400.0, 1600.0)])
    path = write_lineage_report(workspace, tmp_path / "lineage.html")
    page.navigate(path.as_uri())
    assert page.errors == [], page.errors
    table = page.evaluate("Object.fromEntries([...document.querySelectorAll('table.lineage tbody tr')].map(tr => "
                          "[tr.cells[0].innerText.trim(), [...tr.cells].slice(1).map(td => td.innerText.trim())]))")
    assert table["heldout lift vs parent (95% CI)"] == ["+0.100 [-0.100, 0.300]", "+0.050 [-0.150, 0.250]",
                                                       "+0.020 [-0.180, 0.220]"]
    assert table["heldout lift vs generation 0 (95% CI)"] == ["+0.100 [0.050, 0.150]", "+0.150 [0.100, 0.200]",
                                                             "+0.180 [0.130, 0.230]"]
    assert table["completion tokens / task (x parent)"] == ["800 (8.00x)", "600 (6.00x)", "400 (4.00x)"]
    assert table["prompt tokens / task"] == ["3000", "2500", "1600"]
    assert table["seconds / task"] == ["3.5", "4.5", "5.5"]
    assert table["k needed (parent)"] == ["1.50", "1.50", "1.50"]
    assert table["eval cache served"] == ["55% (1120 tokens not spent)"] * 3  # 11 of 20 replies
    assert table["looks: heldout; sealed test (this candidate)"] == ["1; 1 (1)", "2; 2 (1)", "3; 3 (1)"]
    shares = table["carriers' shares (rsi ablate)"]
    assert shares[:2] == ["-", "-"]  # only the last generation was ablated
    assert "exemplars: +0.100" in shares[2] and "adapter: +0.000" in shares[2] and "harness: +0.200" in shares[2]
    assert "harness +0.100, weights +0.050, interaction +0.050, spend +0.080" in shares[2]

    # The lift-and-tokens chart: decoded by the browser at its own size, and on screen in the series' colours.
    size = page.evaluate("(i => i.complete && [i.naturalWidth, i.naturalHeight])"
                         "(document.getElementById('chart-lift-tokens'))")
    assert size == [720, 520]
    box = page.evaluate("(e => { e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
                        " return [r.x, r.y, r.width, r.height, window.devicePixelRatio]; })"
                        "(document.getElementById('chart-lift-tokens'))")
    shot = page.screenshot(tmp_path / "lineage-chart.png")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    x, y, width, height, ratio = box
    with Image.open(shot) as image:
        seen = image.convert("RGB").crop((int(x * ratio), int(y * ratio), int((x + width) * ratio),
                                          int(min(y + height, image.height / ratio) * ratio)))
        colours = {colour for _count, colour in seen.getcolors(maxcolors=1 << 20)}

    def near(rgb: tuple[int, int, int]) -> bool:
        return any(all(abs(a - b) < 12 for a, b in zip(rgb, c, strict=True)) for c in colours)

    assert near((0xD6, 0x27, 0x28)) and near((0xFF, 0x7F, 0x0E))  # lift vs parent, lift vs generation 0
    assert near((0x9A, 0x67, 0xBD)) or near((0x94, 0x67, 0xBD))  # completion tokens per task
    assert page.errors == [], page.errors
