"""The fine-tune stage for real: a LoRA adapter trained with peft on the embedded base, on the CPU, from a
dataset exported from a real run; registered with its lineage; evaluated against its parent with the
real embedded model, the real sandbox and the real verifier.

What is real here: the run's harness, sandbox and verifier (its model is the scripted hook that writes
reference solutions, so the exported trajectories are passing ones), the export, peft training on the
real SmolLM2-135M base, the registry, the git revisions, and the whole evaluation (real model serving
the real adapter through the embedded backend). The contract is revised to one turn of 48 tokens so
each real-model attempt takes seconds.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import git
import pytest

import rsi
from rsi.contracts.gitio import parse_commit_message


def _conftest():
    from tests.training import conftest

    return conftest


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_train_register_and_evaluate_real_adapter(workspace, cli, shim, scripted_env, tmp_path, base_folder) -> None:
    helpers = _conftest()
    env = scripted_env
    helpers.make_small_contract(cli, workspace, env)
    # five train tasks, four exported: pyfuncs/anagram-check is a twin of a pyfuncs2 heldout task (never trained on)
    run_id, dataset = helpers.run_and_export(cli, workspace, env, tmp_path / "sft", tasks=5)
    manifest = json.loads((dataset / "manifest.json").read_text())
    assert manifest["dataset"]["examples"] == 4
    # Real-model attempts stay short: 48 completion tokens (the contract the adapter is trained for: r3).
    revised = cli("hcp", "revise", "default", "--set", "harness.sampling.max_tokens=48", "-m", "48 tokens",
                  cwd=workspace.root, env=env)
    assert revised.returncode == 0, revised.stderr

    trained = shim("train", str(dataset), "--contract", "default", "--max-steps", "4", "--batch-size", "2",
                   "--learning-rate", "1e-3", "--max-length", "384", "--threads", "1", "--json",
                   cwd=workspace.root, env=env)
    assert trained.returncode == 0, trained.stderr + trained.stdout
    out = json.loads(trained.stdout)
    # progress: steps, loss, tokens/s, ETA (on stderr under --json)
    assert "training | 4/4 steps" in trained.stderr and "tok/s" in trained.stderr and "eta" in trained.stderr
    losses = out["metrics"]["losses"]
    # it learns: the last two steps' mean loss is below the first two's (single steps are noisy at batch size 1)
    assert len(losses) == 4 and sum(losses[2:]) < sum(losses[:2]), losses

    # The adapter: PEFT format, content-addressed, in the registry.
    from rsi.models.embedded.weights import adapter_digest, locate_base, sha256_file

    adapter_dir = Path(out["adapter_dir"])
    assert sorted(os.listdir(adapter_dir)) == ["adapter_config.json", "adapter_model.safetensors"]
    assert adapter_dir.parent == workspace.adapters_dir / out["adapter_id"]
    assert adapter_digest(adapter_dir) == out["adapter_id"]
    peft_config = json.loads((adapter_dir / "adapter_config.json").read_text())
    assert peft_config["r"] == 8 and sorted(peft_config["target_modules"]) == ["q_proj", "v_proj"]

    # Lineage: base hash, dataset hash + manifest, source runs, parent revision, hyperparameters, metrics, code.
    from rsi.contracts.refs import resolve_ref

    lineage = json.loads((adapter_dir.parent / "lineage.json").read_text())
    parent = resolve_ref(workspace, "default@r3")
    base = parent.spec.base
    assert lineage["base"]["sha256"] == sha256_file(locate_base(base).path)
    assert lineage["dataset"]["sha256"] == manifest["dataset"]["sha256"]
    assert lineage["dataset"]["manifest"] == manifest
    assert lineage["source_runs"] == [run_id]
    assert lineage["parent_contract"]["ref"] == "default@r3"
    assert lineage["parent_contract"]["content_hash"] == parent.content_hash
    assert lineage["hyperparameters"]["learning_rate"] == 1e-3 and lineage["hyperparameters"]["max_steps"] == 4
    assert lineage["hyperparameters"]["rank"] == 8
    assert lineage["metrics"]["steps"] == 4 and lineage["metrics"]["trained_tokens"] > 0
    assert lineage["code"]["rsi_version"] == rsi.__version__

    # It loads back into the base with peft and changes the model's outputs.
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(base_folder)
    model = AutoModelForCausalLM.from_pretrained(base_folder, dtype=torch.float32)
    messages = json.loads((dataset / "train.jsonl").read_text().splitlines()[0])["messages"][:2]
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt")
    ids = ids["input_ids"] if hasattr(ids, "keys") else ids
    with torch.no_grad():
        before = model(input_ids=ids).logits
        tuned = PeftModel.from_pretrained(model, str(adapter_dir))
        after = tuned(input_ids=ids).logits
        with tuned.disable_adapter():
            disabled = tuned(input_ids=ids).logits
    assert torch.allclose(before, disabled, atol=1e-5)
    assert (after - before).abs().max().item() > 1e-3

    # The candidate revision: a separate contract, adapter as [[specialists]], fixed routing to it.
    candidate_ref = out["candidate"]["ref"]
    assert candidate_ref == "default-candidate@r2"
    candidate = resolve_ref(workspace, candidate_ref)
    [specialist] = candidate.spec.specialists
    assert specialist.sha256 == out["adapter_id"] and specialist.name == "sft"
    assert specialist.path == f"runs/adapters/{out['adapter_id']}/adapter"
    assert candidate.spec.routing.policy == "fixed" and candidate.spec.routing.specialist == "sft"
    assert candidate.spec.harness.max_turns == 1  # the parent's runtime, copied
    repo = git.Repo(workspace.root)
    trailers = parse_commit_message(str(repo.tags["hcp/default-candidate/r2"].commit.message))[2]
    assert trailers["Adapter-Id"] == out["adapter_id"]
    assert resolve_ref(workspace, "default").revision == 3  # the parent is untouched: promotion is explicit

    listed = shim("adapters", "list", "--json", cwd=workspace.root, env=env)
    assert listed.returncode == 0, listed.stderr
    [entry] = json.loads(listed.stdout)
    assert entry["id"] == out["adapter_id"] and entry["state"] == "candidate"
    shown = shim("adapters", "show", out["adapter_id"][:10], cwd=workspace.root, env=env)
    assert shown.returncode == 0, shown.stderr
    assert f"dataset    {manifest['dataset']['sha256'][:16]}" in shown.stdout and "parent     default@r3" in shown.stdout

    # Evaluation with the REAL model: both contracts, same tasks and seeds, real verifier verdicts.
    real_env = {k: v for k, v in env.items() if k != "RSI_MODEL_OVERRIDE"}
    real_env["RSI_MODEL_OVERRIDE"] = ""
    evaluated = shim("eval", candidate_ref, "--against", "default@r3", "--limit-heldout", "2", "--limit-covered", "1",
                     "--covered-run", run_id, "--workers", "4", "--json", cwd=workspace.root, env=real_env)
    assert evaluated.returncode in (0, 1), evaluated.stderr + evaluated.stdout
    result = json.loads(evaluated.stdout)
    assert result["lift"]["tasks"] == 2 and result["retention_in_sample"]["covered"] == 1
    assert result["attempts"] == 6 and result["errors"] == 0
    if not os.environ.get("RSI_DTYPE"):  # the shipped contract's [evaluation] dtype, as the trajectories record it
        assert result["dtype"] == "float32" and result["served"] == {"float32": 6}
    assert (evaluated.returncode == 0) == result["decision"]["promote"]
    from rsi.store import open_store

    store = open_store(workspace.db_url)
    try:
        rows = store.list_attempts(result["eval_id"])
    finally:
        store.close()
    assert len(rows) == 6 and all(str(getattr(r.verdict, "value", r.verdict)) in ("passed", "failed", "timeout") for r in rows)
    candidate_rows = [r for r in rows if r.job_index == 1]
    trajectory = Path(candidate_rows[0].trajectory_path).read_text()
    assert '"sft"' in trajectory  # the candidate's turns were served by the adapter
    status = json.loads((adapter_dir.parent / "status.json").read_text())
    assert status["state"] == ("promoted" if result["decision"]["promote"] else "rejected")
    assert status["evaluation"]["eval_id"] == result["eval_id"]
    assert status["evaluation"]["lift"]["tasks"] == 2
