"""bench/compounding_sealed.py (issue 49): its stages resume from the progress file, its record survives a new
checkout through the folder, its section renders from a result file built of real evaluation and ablation records,
and the issue's goals are computed from the figures (each threshold on both sides of its edge).

The three real generations take many hours of a 2-core machine: they are not run here. What is run is everything
around them: the stage loop (with a runner standing in for the generations), the records (real EvalOutcome and
AblationRecord models, dumped as the benchmark dumps them), a real git repository for the record's restore.
"""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rsi.evaluation.records import (
    ContractSide,
    EvalDecision,
    EvalOutcome,
    GateSummary,
    HeldoutCostMatchedSummary,
    SideCache,
    SideCost,
    heldout_retention,
)
from rsi.generation.ablation import AblationRecord, AblationRow, lift_shares
from rsi.promotion.decision import paired_lift

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(BENCH))
    return importlib.import_module("compounding_sealed")


# -- the stage loop -------------------------------------------------------------------------------------


def test_stage_keys_order_the_main_line_then_the_seed_repeats(bench) -> None:
    assert bench.stage_keys(2, [0, 1, 2]) == ["gen 1", "final 1", "ablate 1", "gen 2", "final 2", "ablate 2",
                                              "seed 1", "seed 2"]
    assert bench.stage_keys(3, [0])[-1] == "ablate 3"  # seed 0 is the main line's generation 1: no repeat
    assert bench.parse_seeds("0, 1,2") == [0, 1, 2]
    with pytest.raises(SystemExit) as refused:
        bench.parse_seeds("0,0")
    assert refused.value.code == 2


def test_a_killed_run_resumes_at_its_stage_and_never_reruns_a_finished_one(bench, tmp_path: Path) -> None:
    calls: list[str] = []
    fail = {"final 1"}

    def runner(key: str, progress: Any) -> dict[str, Any]:
        calls.append(key)
        if key == "final 1":
            progress.update(key, eval_id="ev-1")  # what a final evaluation records the moment it exists
        if key in fail:
            fail.discard(key)
            raise KeyboardInterrupt  # a kill mid-stage
        if key == "ablate 1":
            raise bench.Skip("g0001 trained no candidate")
        return {"key": key}

    keys = bench.stage_keys(1, [0, 1])
    progress = bench.Progress(tmp_path / "progress.json")
    with pytest.raises(KeyboardInterrupt):
        bench.run_stages(progress, keys, runner, note=lambda _m: None)
    stored = json.loads((tmp_path / "progress.json").read_text())["stages"]
    assert stored["gen 1"]["status"] == "done" and stored["gen 1"]["figures"] == {"key": "gen 1"}
    assert stored["final 1"]["status"] == "running" and stored["final 1"]["eval_id"] == "ev-1"
    assert stored["final 1"]["error"] == "KeyboardInterrupt: "

    resumed = bench.Progress(tmp_path / "progress.json")  # a new process reads the file back
    bench.run_stages(resumed, keys, runner, note=lambda _m: None)
    assert calls == ["gen 1", "final 1", "final 1", "ablate 1", "seed 1"]  # gen 1 not rerun
    stages = resumed.data["stages"]
    assert stages["final 1"]["tries"] == 2 and stages["final 1"]["eval_id"] == "ev-1"  # the id a resume needs
    assert stages["ablate 1"]["status"] == "skipped" and "no candidate" in stages["ablate 1"]["reason"]
    bench.run_stages(bench.Progress(tmp_path / "progress.json"), keys, runner, note=lambda _m: None)
    assert len(calls) == 5  # everything finished: nothing runs again


def test_the_folder_keeps_the_record_a_new_checkout_reopens(bench, tmp_path: Path, git_identity: None,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    results = importlib.import_module("results")

    def checkout(name: str) -> Path:
        repo = tmp_path / name
        (repo / "bench").mkdir(parents=True)
        (repo / "README").write_text("a project\n")
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
        subprocess.run(["git", "commit", "-q", "-m", "a project"], cwd=repo, check=True)
        return repo

    folder, argv = tmp_path / "compounding", ["bench/compounding_sealed.py", "--folder", "/work/compounding"]
    first = checkout("one")
    monkeypatch.chdir(first)
    run = results.start(bench.NAME, seeds=[0], argv=argv, repo=first)
    bench.keep_record(run, folder)
    assert bench.restore_record(folder, first) is None  # this checkout has it

    second = checkout("two")  # a new session's checkout: no bench/results at all
    monkeypatch.chdir(second)
    restored = bench.restore_record(folder, second)
    assert restored == second / "bench" / "results" / run.path.name
    again = results.start(bench.NAME, seeds=[0], argv=argv, repo=second)
    assert again.path == restored and len(again.data["resumes"]) == 1  # reopened, not a second record
    results.finish(again, {"generations": []})
    bench.keep_record(again, folder)
    shutil.rmtree(second / "bench" / "results")
    assert bench.restore_record(folder, second) is None  # a finished record is never brought back to reopen


# -- records -> figures -> section ----------------------------------------------------------------------


def _side(name: str, revision: int) -> ContractSide:
    return ContractSide(name=name, revision=revision, ref=f"{name}@r{revision}", content_hash=f"{name}{revision}" * 8,
                        config_hash=f"c{name}{revision}")


def _cost(rate: float, completion: float, prompt: float, seconds: float = 2.0, k: float | None = None) -> SideCost:
    return SideCost(tasks=40, pass_rate=rate, completion_tokens_per_task=completion, prompt_tokens_per_task=prompt,
                    seconds_per_task=seconds, k_needed=k)


def outcome(candidate: list[bool], parent: list[bool], control: list[bool] | None, *, split: str, eval_id: str,
            parent_ref: tuple[str, int] = ("default", 2), costs: dict[str, SideCost] | None = None,
            looks: int = 1, matched: HeldoutCostMatchedSummary | None = None) -> EvalOutcome:
    """A real EvalOutcome of the given per-task verdicts, its lifts and retentions computed as `evaluate` does."""
    keys = [f"pyfuncs2/t{i:03d}" for i in range(len(candidate))]
    cand, par = dict(zip(keys, candidate, strict=True)), dict(zip(keys, parent, strict=True))
    lift = paired_lift(cand, par)
    per_task = {k: {"candidate": cand[k], "parent": par[k]} for k in keys}
    versus = retention_vs = None
    if control is not None:
        ctrl = dict(zip(keys, control, strict=True))
        for k in keys:
            per_task[k]["control"] = ctrl[k]
        against = paired_lift(cand, ctrl)
        versus, retention_vs = against.summary(), heldout_retention(against, "control").summary()
    gate = GateSummary(enabled=True, min_lift=0.0, retention_min=0.9, max_token_ratio=10.0)
    return EvalOutcome(
        eval_id=eval_id, suite="pyfuncs2", candidate=_side("default-candidate", len(eval_id)), parent=_side(*parent_ref),
        control=_side("default", 2) if control is not None else None, heldout_tasks=keys, covered_tasks=[],
        lift=lift.summary(), lift_vs_control=versus, retention=heldout_retention(lift).summary(),
        retention_vs_control=retention_vs, per_task=per_task, split=split, looks=looks, candidate_looks=1,
        decision=EvalDecision(promote=lift.ci.low > 0, reason=f"lift {lift.lift:+.3f}", gate=gate),
        costs=costs or {}, cost_matched_heldout=matched,
        cache={"candidate": SideCache(hits=10, misses=30, tokens_not_spent=900), "parent": SideCache(hits=40)})


def verdicts(n: int, solved: int, offset: int = 0) -> list[bool]:
    return [offset <= i < offset + solved for i in range(n)]


def ablation(generation: str, carrier_lifts: dict[str, float]) -> dict[str, Any]:
    rows = []
    for carrier, value in carrier_lifts.items():
        both = {f"t{i}": i < 10 for i in range(40)}
        lifted = {k: v or int(k[1:]) < 10 + round(value * 40) for k, v in both.items()}
        rows.append(AblationRow(carrier=carrier, ablated_ref=f"default-ablation@r{len(rows) + 1}", eval_id=f"ab{carrier}",
                                lift=paired_lift(lifted, both).summary()))
    record = AblationRecord(generation=generation, candidate_ref="default-candidate@r3", carried=list(carrier_lifts),
                            rows=rows, shares=lift_shares(0.25, 0.4, 0.3, 0.3, 0.32, 40))
    return json.loads(record.model_dump_json())


def generation(bench, number: int, heldout: EvalOutcome, sealed: EvalOutcome, carriers: dict[str, float],
               vs_first: EvalOutcome | None = None) -> dict[str, Any]:
    figures = {"generation": f"g000{number}", "number": number, "seed": number - 1, "adapter": "promoted",
               "harness": {"status": "deferred", "candidate": "text-checked-samples-8", "selection_run_id": f"sel{number}"},
               "heldout": bench.eval_figures(heldout)}
    sealed_figures = bench.eval_figures(sealed)
    if vs_first is not None:
        sealed_figures["vs_first"] = bench.paired_versus(sealed, vs_first)
    return {**figures, "sealed": sealed_figures, "ablation": ablation(f"g000{number}", carriers)}


N = 200  # sealed tasks of the synthetic run (pyfuncs2 has 276): enough for paired intervals a few points wide


def ci(lift: Any) -> str:
    """How the section writes a stored lift: the figure and its 95% interval, signed."""
    return f"{lift.lift:+.3f} [{lift.lift_ci95[0]:+.3f}, {lift.lift_ci95[1]:+.3f}]"


def three_generations(bench, third_solves: int = 130, third_tokens: float = 400.0) -> tuple[dict[str, Any], dict[str, Any]]:
    """Generation 0 solves 50 of 200 sealed tasks; generation 1 solves 100 (its parent is generation 0), generation
    2 105 and generation 3 `third_solves`, each keeping every task the one before solved. Returns the figures and
    the outcomes they were made from."""
    gen0 = verdicts(N, 50)
    matched = HeldoutCostMatchedSummary(job_index=2, per_task=8, basis="n = round(1 x 800.0 / 100.0) = 8",
                                        sampling="temperature 0.8, top_p 0.95", tasks=N, attempts=8 * N, pass_rate=0.4,
                                        completion_tokens_per_task=790.0, lift=paired_lift(
                                            dict(enumerate(verdicts(N, 80))), dict(enumerate(gen0))).summary())
    made = {
        "held1": outcome(verdicts(N, 90), verdicts(N, 50), None, split="heldout", eval_id="held1"),
        "fin1": outcome(verdicts(N, 100), gen0, None, split="test", eval_id="fin1", looks=1, matched=matched,
                        costs={"candidate": _cost(0.5, 800.0, 3000.0, 9.5, 1.8), "parent": _cost(0.25, 100.0, 600.0)}),
        "held2": outcome(verdicts(N, 95), verdicts(N, 90), verdicts(N, 50), split="heldout", eval_id="held2", looks=2),
        "fin2": outcome(verdicts(N, 105), verdicts(N, 100), gen0, split="test", eval_id="fin2", looks=2,
                        parent_ref=("default", 3),
                        costs={"candidate": _cost(0.525, 700.0, 2800.0), "parent": _cost(0.5, 800.0, 3000.0),
                               "control": _cost(0.25, 100.0, 600.0)}),
        "held3": outcome(verdicts(N, 100), verdicts(N, 95), verdicts(N, 50), split="heldout", eval_id="held3", looks=3),
        "fin3": outcome(verdicts(N, third_solves), verdicts(N, 105), gen0, split="test", eval_id="fin3", looks=3,
                        parent_ref=("default", 4),
                        costs={"candidate": _cost(0.65, third_tokens, 1500.0), "parent": _cost(0.525, 700.0, 2800.0),
                               "control": _cost(0.25, 100.0, 600.0)}),
    }
    first = generation(bench, 1, made["held1"], made["fin1"], {"exemplars": 0.05, "adapter": 0.0, "harness": 0.2})
    second = generation(bench, 2, made["held2"], made["fin2"], {"adapter": 0.025}, vs_first=made["fin1"])
    third = generation(bench, 3, made["held3"], made["fin3"], {"adapter": 0.0, "tools": 0.0}, vs_first=made["fin1"])
    return {"generations": [first, second, third], "test_tasks": N, "wall_min": 600.0}, made


def test_the_section_renders_every_figure_from_records(bench, tmp_path: Path) -> None:
    figures, made = three_generations(bench)
    progress = bench.Progress(tmp_path / "progress.json")  # assembled as main() assembles it
    for g in figures["generations"]:
        n = g["number"]
        progress.update(f"gen {n}", status="done", figures={k: v for k, v in g.items() if k not in ("sealed", "ablation")})
        progress.update(f"final {n}", status="done", figures=g["sealed"])
        progress.update(f"ablate {n}", status="done", figures=g["ablation"])
    seed_sealed = outcome(verdicts(N, 70), verdicts(N, 50), None, split="test", eval_id="fins1")
    progress.update("seed 1", status="done", figures={"generation": "g0001", "adapter": "rejected", "heldout": None,
                                                      "sealed": bench.eval_figures(seed_sealed)})
    progress.update("seed 2", status="skipped", reason="g0001 trained no candidate")
    assembled = json.loads(json.dumps(bench.assemble(progress, 3, [0, 1, 2], N, 600.0)))
    assert [s["seed"] for s in assembled["seeds"]] == [0, 1]  # seed 2 measured nothing: no row
    text = bench.render_result({"params": {"generations": 3, "suite": "pyfuncs2"}, "figures": assembled})
    lines = text.splitlines()

    def cells(prefix: str) -> list[str]:
        return [c.strip() for c in next(line for line in lines if line.startswith(prefix)).strip("|").split("|")]

    fin1, fin3 = made["fin1"], made["fin3"]
    assert fin1.control is None  # generation 1's parent IS generation 0: its lift vs parent is its lift vs gen 0
    assert cells("| 1 (g0001") == [
        "1 (g0001, seed 0)", "promoted", ci(fin1.lift), ci(fin1.lift), ci(made["held1"].lift),
        "1.000 (50/50 vs parent)", "800.0 (8.00x)", "3000 (5.00x)", "9.5", "1.80", "25% (900 tok)",
        "heldout 1; test 1 (this candidate 1)"]
    third = cells("| 3 (g0003")
    assert third[2:4] == [ci(fin3.lift_vs_control), ci(fin3.lift)]  # vs gen 0 (the control side), vs parent
    assert third[5] == "1.000 (95/95 vs parent); 1.000 (50/50 vs control)"
    assert third[6] == "400.0 (4.00x)"  # against generation 0's tokens (the control side), not the parent's
    assert third[11] == "heldout 3; test 3 (this candidate 1)"
    carriers = cells("| 1 | ")
    assert carriers[1] == ci(AblationRow.model_validate(figures["generations"][0]["ablation"]["rows"][0]).lift)
    assert carriers[2] == "not carried" and carriers[5] == "-"  # tools not carried; harness alone not measured
    assert carriers[6] == "harness +0.050, weights +0.050, interaction +0.050, spend +0.070"
    matched = fin1.cost_matched_heldout
    assert cells("| 1 | 8 (") == ["1", "8 (temperature 0.8, top_p 0.95)", "0.400", ci(matched.lift), ci(fin1.lift)]
    assert cells("| 2 | not measured") == ["2", "not measured", "-", "-", "-"]
    by_seed = lines[next(i for i, line in enumerate(lines) if line.startswith("Generation 1 by search seed")):]
    seed_rows = [[c.strip() for c in line.strip("|").split("|")] for line in by_seed if line.startswith("| 0 |")
                 or line.startswith("| 1 |")]
    assert seed_rows == [["0", ci(fin1.lift), ci(made["held1"].lift), "promoted"],  # the main line's generation 1
                         ["1", ci(seed_sealed.lift), "not measured", "rejected"]]
    low, high = sorted((seed_sealed.lift.lift, fin1.lift.lift))
    assert (f"Spread of generation 1's sealed lift over seeds: {low:+.3f} to {high:+.3f} (mean {(low + high) / 2:+.3f}"
            in text)
    assert "- Generation 1: **met**" in text and "- Generation 3: **met** (compounding)" in text
    assert "chosen by paired selection on train tasks (run sel1)" in text
    assert f"by the default gate on heldout ({made['held1'].decision.reason})" in text


# -- the goals ------------------------------------------------------------------------------------------


def _goal(bench, figures: dict[str, Any], which: str) -> dict[str, Any]:
    return bench.goals(json.loads(json.dumps(figures)))[which]


def test_generation_1_goal_each_threshold_on_both_sides(bench) -> None:
    figures, _made = three_generations(bench)
    goal = _goal(bench, figures, "generation_1")
    assert goal["met"] is True and [c["met"] for c in goal["checks"]] == [True] * 5
    sealed = figures["generations"][0]["sealed"]
    sealed["lift"]["lift"] = 0.099  # below +0.10
    assert _goal(bench, figures, "generation_1")["checks"][0]["met"] is False
    sealed["lift"]["lift"], sealed["lift"]["lift_ci95"] = 0.10, [0.0, 0.2]  # at +0.10, interval touching zero
    checks = _goal(bench, figures, "generation_1")["checks"]
    assert checks[0]["met"] is True and checks[1]["met"] is False
    sealed["lift"]["lift_ci95"] = [0.001, 0.2]
    assert _goal(bench, figures, "generation_1")["met"] is True
    sealed["costs"]["candidate"]["prompt_tokens_per_task"] = 6001.0  # 10x generation 0's 600 is the bound
    assert _goal(bench, figures, "generation_1")["checks"][4] == {
        "check": "prompt tokens per task <= 10x gen 0's", "value": "10.00x", "met": False}
    sealed["costs"]["candidate"]["prompt_tokens_per_task"] = 6000.0
    assert _goal(bench, figures, "generation_1")["met"] is True
    held = figures["generations"][0]["heldout"]["retention"]
    held.update(retention=0.89, kept=8, parent_resolved=9)
    goal = _goal(bench, figures, "generation_1")
    assert goal["met"] is False and goal["checks"][2]["met"] is False
    assert "0.890 (8/9 vs parent)" in goal["checks"][2]["value"]
    held.update(retention=None, kept=0, parent_resolved=0)  # generation 0 solved no heldout task: vacuous, as gated
    assert _goal(bench, figures, "generation_1")["checks"][2]["met"] is True
    figures["generations"][0]["sealed"] = None  # not measured: neither met nor not met
    assert _goal(bench, figures, "generation_1")["met"] is None


def test_generation_3_goal_compounding_cheaper_or_a_plateau_with_the_carriers(bench) -> None:
    figures, made = three_generations(bench, third_solves=130)
    compounding = _goal(bench, figures, "generation_3")
    assert compounding["met"] is True and compounding["verdict"] == "compounding"
    step = paired_lift({k: v["candidate"] for k, v in made["fin3"].per_task.items()},
                       {k: v["candidate"] for k, v in made["fin1"].per_task.items()}).summary()
    assert compounding["checks"][0]["value"] == ci(step) and step.lift == 0.15  # 130 vs 100 of 200, paired

    # +0.005 over generation 1 (one task): not the step; at 0.5x its tokens it matches generation 1
    figures, made = three_generations(bench, third_solves=101, third_tokens=400.0)
    cheaper = _goal(bench, figures, "generation_3")
    assert cheaper["checks"][0]["met"] is False
    assert cheaper["checks"][1]["met"] is True and cheaper["met"] is True and cheaper["verdict"] == "compounding"
    assert "tokens 0.50x completion, 0.50x prompt" in cheaper["checks"][1]["value"]  # 400/800 and 1500/3000

    figures, _made = three_generations(bench, third_solves=101, third_tokens=600.0)  # 0.75x: not cheap enough
    verdict = bench.goals(json.loads(json.dumps(figures)))
    assert verdict["generation_3"]["met"] is False and verdict["generation_3"]["verdict"] == "plateau"
    assert [p["generation"] for p in verdict["plateau"]] == [1, 2, 3]
    assert {r["carrier"]: r["lift"] for r in verdict["plateau"][0]["rows"]} == {
        "exemplars": 0.05, "adapter": 0.0, "harness": 0.2}
    text = bench.render_result({"params": {"generations": 3, "suite": "pyfuncs2"}, "figures": {**figures, "seeds": []}})
    assert "- Generation 3: **not met** (plateau)" in text
    assert "- generation 1: exemplars (without) +0.050, adapter (without) +0.000, harness (without) +0.200" in text

    figures, _made = three_generations(bench, third_solves=90, third_tokens=400.0)  # cheaper but worse: not matching
    assert _goal(bench, figures, "generation_3")["met"] is False
    figures["generations"] = figures["generations"][:2]  # generation 3 never ran
    assert _goal(bench, figures, "generation_3")["met"] is None


def test_the_spread_of_seeds(bench) -> None:
    assert bench.spread([0.1]) is None
    found = bench.spread([0.05, 0.1, 0.15])
    assert found == {"n": 3, "min": 0.05, "max": 0.15, "mean": 0.1, "sd": 0.05}


def test_the_benchmark_refuses_a_folder_inside_the_checkout(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(BENCH / "compounding_sealed.py"), "--folder", str(REPO / "runs" / "x"),
                           "--allow-dirty"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "inside the checkout" in done.stderr and "Traceback" not in done.stderr
    assert not (REPO / "runs" / "x").exists()
