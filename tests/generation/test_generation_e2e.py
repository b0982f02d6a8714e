"""Two consecutive `rsi generation` runs on a small slice of the shipped suite, through the real CLI.

What is real: the shipped default contract and portfolio, `rsi run` (orchestrator, store, real harness,
sandbox and verifier), harness promotion, the successor portfolio, the export, the LoRA training (real
peft on the real SmolLM2 base, 2 steps), the adapter registry, the candidate contract revision, the
evaluation run and its decision, git revisions. What is scripted: the model in the run and evaluation
stages (RSI_MODEL_OVERRIDE), whose replies for every task are a wrong solution first and the reference
solution after it. So the harness decides: the first generation runs a checked harness (text substrate,
greedy first, 2 samples checked against the public examples), which rides into the candidate contract
beside the adapter, and on heldout the candidate solves what the REPL parent cannot (its turns never
write the file): the harness that rides into the candidate is exercised and visible in the lift. The
second generation's parent carries that harness already: both sides answer alike, no lift, rejected.
"""

from __future__ import annotations

import json

import git
import pytest

from rsi.contracts.refs import resolve_ref
from rsi.generation.state import STEPS

ARGS = ("--limit-tasks", "3", "--budget-attempts", "6", "--workers", "2", "--max-steps", "2", "--threads", "1",
        "--max-length", "384", "--limit-heldout", "2", "--limit-covered", "2")


CHECKED = """schema_version = 1
[portfolio]
name = "checked"
base = "default"
[[variants]]
name = "checked"
[variants.overrides]
"harness.substrate" = "text"
"harness.system_prompt_file" = "prompts/text.md"
"harness.max_turns" = 1
"harness.check" = "first-pass"
"harness.sampling.greedy_first" = true
"harness.sampling.samples" = 2
"harness.sampling.temperature" = 0.7
"harness.sampling.max_tokens" = 1024
"""


def _wrong_first_script(workspace, path):
    """Per task: a wrong solution as long as the right one, then the reference solution three times (text blocks).
    A harness that checks its samples writes the right one; the REPL's four turns never write solution.py."""
    from rsi.tasks.load import load_suite

    replies = {}
    for task in load_suite(workspace, "pyfuncs"):
        code = (task.solution_dir / task.spec.solution_file).read_text()
        wrong = "def nothing():\n    return None\n# " + "x" * len(code)
        replies[task.id] = [f"```python\n{wrong}\n```"] + [f"```python\n{code}\n```"] * 3
    path.write_text(json.dumps({"tasks": replies}))
    return path


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_two_consecutive_generations(workspace, shim, scripted_env, tmp_path) -> None:
    from tests.training.conftest import commit_paths

    script = _wrong_first_script(workspace, tmp_path / "wrong-first.json")
    env = {**scripted_env, "RSI_MODEL_OVERRIDE": f"scripted:{script}"}
    workspace.portfolio_path("checked").write_text(CHECKED)
    commit_paths(workspace.root, ["portfolios/checked.toml"], "a checked-harness portfolio")
    first = shim("generation", *ARGS, "--portfolio", "checked", "--harvest-per-task", "2", "--harvest-budget", "4",
                 "--render", "deployed", "--json", cwd=workspace.root, env=env)
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
    # The checked harness the train evidence chose rides into the candidate beside the adapter ...
    promoted = g1["steps"]["promote"]["outputs"]
    assert promoted["status"] == "deferred" and promoted["harness_sets"]["harness.check"] == "first-pass"
    candidate = resolve_ref(workspace, train["candidate_ref"]).spec
    assert candidate.harness.check == "first-pass" and candidate.harness.substrate == "text"
    assert resolve_ref(workspace, train["parent_ref"]).spec.harness.substrate == "repl"
    # ... and changes the answers: the candidate solves both heldout tasks, the REPL parent neither.
    evaluate = g1["steps"]["evaluate"]["outputs"]
    assert evaluate["lift"]["tasks"] == 2 and evaluate["lift"]["candidate_rate"] == 1.0
    assert evaluate["lift"]["parent_rate"] == 0.0 and evaluate["lift"]["lift"] == 1.0
    # the checks chose past the first reply: the second candidate sampled is the one submitted
    assert evaluate["costs"]["candidate"]["k_needed"] == 2.0 and evaluate["costs"]["parent"]["k_needed"] is None
    assert evaluate["retention_in_sample"]["covered"] == min(2, run["covered"])  # the covered train tasks
    assert evaluate["retention"]["split"] == "heldout"  # the gate's retention
    applied = g1["steps"]["promote_adapter"]["outputs"]["state"]
    assert applied == ("promoted" if evaluate["decision"]["promote"] else "rejected")
    status = json.loads((workspace.adapters_dir / train["adapter_id"] / "status.json").read_text())
    assert status["state"] == applied and status["evaluation"]["eval_id"] == evaluate["eval_id"]
    successor = g1["steps"]["propose"]["outputs"]["portfolio"]
    assert successor == "default-g0002"
    repo = git.Repo(workspace.root)
    assert not repo.git.status("--porcelain", "--", "portfolios/default-g0002.toml")  # committed
    assert 'base = "default"' in (workspace.portfolios_dir / "default-g0002.toml").read_text()
    assert g1["inputs"]["portfolio"] == "checked"

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
        measured = gen["steps"]["evaluate"]["outputs"]
        assert row["lift"] == measured["lift"]["lift"]
        # the gate's retention is heldout: "no tasks" (None) where the parent solved none of them, as g0001's REPL parent
        assert row["retention"] == measured["retention"]["retention"]
        assert (row["retention"] is None) == (measured["retention"]["parent_resolved"] == 0)
        assert row["adapter_state"] == gen["steps"]["promote_adapter"]["outputs"]["state"]
        assert row["covered"] == gen["steps"]["run"]["outputs"]["covered"]
    assert rows[0]["lift"] == 1.0  # the harness that rode into g0001's candidate
    with open(view["plot"], "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
    text = shim("lineage", cwd=workspace.root, env=env)
    assert text.returncode == 0 and "the compounding ledger" in text.stdout and "plot:" in text.stdout
    header = next(line for line in text.stdout.splitlines() if "g0001" in line)
    assert "g0002" in header  # the generations side by side, one column each
    assert any(line.startswith("│ status") and line.count("done") == 2 for line in text.stdout.splitlines())
