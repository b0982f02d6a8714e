"""Two consecutive `rsi generation` runs on a small slice of the shipped suite, through the real CLI.

What is real: the shipped default contract and portfolio, `rsi run` (orchestrator, store, real harness,
sandbox and verifier), harness promotion, the successor portfolio, the export, the LoRA training (real
peft on the real SmolLM2 base, 2 steps), the adapter registry, the candidate contract revision, the
evaluation run and its decision, git revisions. What is scripted: the model in the run and evaluation
stages (RSI_MODEL_OVERRIDE replays each task's reference solution), so both sides of the evaluation
answer alike and the honest outcome is "no lift, adapter rejected" — recorded with its numbers.
"""

from __future__ import annotations

import json

import git
import pytest

from rsi.generation.state import STEPS

ARGS = ("--limit-tasks", "3", "--budget-attempts", "6", "--workers", "2", "--max-steps", "2", "--threads", "1",
        "--max-length", "384", "--limit-heldout", "2", "--limit-covered", "2")


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_two_consecutive_generations(workspace, shim, scripted_env) -> None:
    env = scripted_env
    first = shim("generation", *ARGS, "--harvest-per-task", "2", "--harvest-budget", "4", "--render", "deployed",
                 "--json", cwd=workspace.root, env=env)
    assert first.returncode == 0, first.stderr[-3000:] + first.stdout[-2000:]
    g1 = json.loads(first.stdout)
    assert g1["id"] == "g0001" and g1["status"] == "done"
    assert {name: g1["steps"][name]["status"] for name in STEPS} == {name: "done" for name in STEPS}
    assert all(g1["steps"][name]["tries"] == 1 for name in STEPS)
    assert "g0001 train: done: adapter" in first.stderr and "train: step 2/2" in first.stderr

    run = g1["steps"]["run"]["outputs"]
    assert run["tasks"] == 3 and 1 <= run["covered"] <= run["attempts"] <= 6  # a run stops once all are covered
    harvest = g1["steps"]["harvest"]["outputs"]
    assert harvest["run_id"] != run["run_id"] and 1 <= harvest["attempts"] <= 4
    assert harvest["source_runs"] == [run["run_id"]]  # no --accumulate: this generation's run only
    export = g1["steps"]["export"]["outputs"]
    manifest = json.loads((workspace.root / "runs" / "generations" / "g0001" / "dataset" / "manifest.json").read_text())
    assert manifest["dataset"]["sha256"] == export["dataset_sha256"]
    assert manifest["source"]["runs"] == export["source_runs"] == [run["run_id"], harvest["run_id"]]
    assert manifest["rendering"]["name"] == "deployed"
    train = g1["steps"]["train"]["outputs"]
    lineage = json.loads((workspace.adapters_dir / train["adapter_id"] / "lineage.json").read_text())
    assert lineage["dataset"]["sha256"] == export["dataset_sha256"] and lineage["source_runs"] == export["source_runs"]
    assert lineage["metrics"]["steps"] == 2 and lineage["parent_contract"]["ref"] == train["parent_ref"]
    evaluate = g1["steps"]["evaluate"]["outputs"]
    assert evaluate["lift"]["tasks"] == 2 and evaluate["lift"]["lift"] == 0.0  # same scripted answers both sides
    assert evaluate["retention_in_sample"]["covered"] == min(2, run["covered"])  # the covered train tasks
    assert evaluate["retention"]["split"] == "heldout"  # the gate's retention
    assert g1["steps"]["promote_adapter"]["outputs"]["state"] == "rejected"
    status = json.loads((workspace.adapters_dir / train["adapter_id"] / "status.json").read_text())
    assert status["state"] == "rejected" and status["evaluation"]["eval_id"] == evaluate["eval_id"]
    successor = g1["steps"]["propose"]["outputs"]["portfolio"]
    assert successor == "default-g0002"
    repo = git.Repo(workspace.root)
    assert not repo.git.status("--porcelain", "--", "portfolios/default-g0002.toml")  # committed
    assert 'base = "default"' in (workspace.portfolios_dir / "default-g0002.toml").read_text()

    assert train["init_adapter"] == "" and lineage["init_adapter"] is None  # a fresh LoRA
    second = shim("generation", *ARGS, "--accumulate", "--harvest-per-task", "2", "--harvest-budget", "2",
                  "--continue-adapter", "--json", cwd=workspace.root, env=env)
    assert second.returncode == 0, second.stderr[-3000:] + second.stdout[-2000:]
    g2 = json.loads(second.stdout)
    assert g2["id"] == "g0002" and g2["status"] == "done"
    assert g2["inputs"]["portfolio"] == "default-g0002" and g2["inputs"]["previous"] == "g0001"
    assert g2["steps"]["run"]["outputs"]["run_id"] != run["run_id"]
    # --accumulate: the second harvest samples the first generation's tasks too, and the second dataset pools
    # the first generation's run and harvest with its own.
    g2_run, g2_harvest = g2["steps"]["run"]["outputs"]["run_id"], g2["steps"]["harvest"]["outputs"]
    assert g2_harvest["source_runs"] == [run["run_id"], harvest["run_id"], g2_run]
    assert g2["steps"]["export"]["outputs"]["source_runs"] == [run["run_id"], harvest["run_id"], g2_run,
                                                               g2_harvest["run_id"]]
    assert g2["summary"]["cumulative_coverage"][0] >= run["covered"]
    # --continue-adapter: the second adapter is the first one trained further, and its lineage says so.
    g2_train = g2["steps"]["train"]["outputs"]
    assert g2_train["init_adapter"] == train["adapter_id"] != g2_train["adapter_id"]
    g2_lineage = json.loads((workspace.adapters_dir / g2_train["adapter_id"] / "lineage.json").read_text())
    assert g2_lineage["init_adapter"] == train["adapter_id"]

    # Finished generations are not redone.
    again = shim("generation", "--resume", "g0001", "--json", cwd=workspace.root, env=env)
    assert again.returncode == 0 and json.loads(again.stdout)["steps"] == g1["steps"]

    lineage_out = shim("lineage", "--json", cwd=workspace.root, env=env)
    assert lineage_out.returncode == 0, lineage_out.stderr
    view = json.loads(lineage_out.stdout)
    rows = view["generations"]
    assert [r["generation"] for r in rows] == ["g0001", "g0002"]
    for row, gen in zip(rows, (g1, g2), strict=True):
        assert row["adapter_id"] == gen["steps"]["train"]["outputs"]["adapter_id"]
        assert row["dataset_sha256"] == gen["steps"]["export"]["outputs"]["dataset_sha256"]
        assert row["lift"] == 0.0 and row["retention"] is not None and row["adapter_state"] == "rejected"
        assert row["covered"] == gen["steps"]["run"]["outputs"]["covered"]
    with open(view["plot"], "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
    text = shim("lineage", cwd=workspace.root, env=env)
    assert text.returncode == 0 and "the compounding ledger" in text.stdout and "plot:" in text.stdout
    header = next(line for line in text.stdout.splitlines() if "g0001" in line)
    assert "g0002" in header  # the generations side by side, one column each
    assert any(line.startswith("│ status") and line.count("done") == 2 for line in text.stdout.splitlines())
