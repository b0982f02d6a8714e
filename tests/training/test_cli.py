"""The training CLI through the real entry point, without a model: bad input is one located line and exit 2,
empty registries and lineages say so, help is instant."""

from __future__ import annotations

import json


def test_bad_inputs_exit_2_with_one_line(workspace, shim, tmp_path) -> None:
    env = {"RSI_WORKSPACE": str(workspace.root)}
    missing = shim("train", str(tmp_path / "nowhere"), cwd=workspace.root, env=env)
    assert missing.returncode == 2 and "no manifest.json" in missing.stderr and "Traceback" not in missing.stderr
    data = tmp_path / "data"
    data.mkdir()
    (data / "train.jsonl").write_text('{"messages": []}\n')
    (data / "manifest.json").write_text(json.dumps({"dataset": {"sha256": "0" * 64}}))
    tampered = shim("train", str(data), cwd=workspace.root, env=env)
    assert tampered.returncode == 2 and "manifest.json: dataset.sha256" in tampered.stderr
    contract = shim("train", str(data), "--contract", "nosuch", cwd=workspace.root, env=env)
    assert contract.returncode == 2 and "nosuch" in contract.stderr
    executor = shim("train", str(data), "--executor", "ray", cwd=workspace.root, env=env)
    assert executor.returncode == 2 and "--executor: unknown executor 'ray'" in executor.stderr
    show = shim("adapters", "show", "abcdef12", cwd=workspace.root, env=env)
    assert show.returncode == 2 and "no adapter 'abcdef12'" in show.stderr
    resume = shim("generation", "--resume", "g0042", cwd=workspace.root, env=env)
    assert resume.returncode == 2 and "no generation g0042" in resume.stderr
    evaluate = shim("eval", "default", cwd=workspace.root, env=env)
    assert evaluate.returncode == 2 and "--against" in evaluate.stderr


def test_empty_registry_and_lineage(workspace, shim) -> None:
    env = {"RSI_WORKSPACE": str(workspace.root)}
    listed = shim("adapters", "list", cwd=workspace.root, env=env)
    assert listed.returncode == 0 and "no adapters registered" in listed.stdout
    assert json.loads(shim("adapters", "list", "--json", cwd=workspace.root, env=env).stdout) == []
    lineage = shim("lineage", "--json", cwd=workspace.root, env=env)
    assert lineage.returncode == 0 and json.loads(lineage.stdout) == {"generations": [], "plot": None, "ablation": None}
    helped = shim("--help", cwd=workspace.root, env=env)
    for command in ("train", "adapters", "eval", "generation", "nightly", "lineage", "ablate"):
        assert command in helped.stdout
