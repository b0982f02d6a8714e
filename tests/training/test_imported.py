"""`rsi specialists import` (issue 41 item 2): an adapter trained outside rsi, made here with peft directly on the
embedded base, is checked against the contract's base and registered unevaluated; a wrong rank layout, a wrong
shape or another base is one located line (exit 2), and the owner's folder is never changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi.training.imported import projection_shapes, tensor_problem

SMOL = {"hidden_size": 576, "intermediate_size": 1536, "num_attention_heads": 9, "num_key_value_heads": 3,
        "head_dim": 64, "num_hidden_layers": 30}


def test_each_tensor_is_checked_against_the_bases_projections_layers_and_rank() -> None:
    shapes = projection_shapes(SMOL)
    assert shapes["q_proj"] == (576, 576) and shapes["k_proj"] == (576, 192) and shapes["down_proj"] == (1536, 576)
    key = "base_model.model.model.layers.{}.self_attn.{}.lora_{}.weight"
    assert tensor_problem(key.format(3, "q_proj", "A"), (4, 576), shapes, 30, 4) == ""
    assert tensor_problem(key.format(3, "v_proj", "B"), (192, 4), shapes, 30, 4) == ""
    assert "expected [4, 576] for rank 4" in tensor_problem(key.format(3, "q_proj", "A"), (8, 576), shapes, 30, 4)
    assert "expected [192, 4]" in tensor_problem(key.format(0, "k_proj", "B"), (576, 4), shapes, 30, 4)
    assert "the base has 30 layers" in tensor_problem(key.format(30, "q_proj", "A"), (4, 576), shapes, 30, 4)
    assert "no projection 'qkv_proj'" in tensor_problem(key.format(0, "qkv_proj", "A"), (4, 576), shapes, 30, 4)
    assert "not a LoRA A/B weight" in tensor_problem("base_model.model.lm_head.weight", (49152, 576), shapes, 30, 4)


@pytest.fixture(scope="module")
def peft_adapter(base_folder, tmp_path_factory) -> Path:
    """A LoRA made with peft on the embedded base, saved as its owner would (outside any rsi workspace)."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(str(base_folder), dtype=torch.float32)
    peft_model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]))
    folder = tmp_path_factory.mktemp("owner") / "sql-helper"
    peft_model.save_pretrained(str(folder))
    config = json.loads((folder / "adapter_config.json").read_text())
    config["base_model_name_or_path"] = "HuggingFaceTB/SmolLM2-135M-Instruct"  # as a hub-trained one would say
    (folder / "adapter_config.json").write_text(json.dumps(config, indent=2))
    return folder


def _variant(source: Path, tmp_path: Path, **changes) -> Path:
    folder = tmp_path / "variant"
    folder.mkdir(parents=True)
    for file in source.iterdir():
        (folder / file.name).write_bytes(file.read_bytes())
    config = json.loads((folder / "adapter_config.json").read_text())
    (folder / "adapter_config.json").write_text(json.dumps({**config, **changes}, indent=2))
    return folder


@pytest.mark.slow
def test_a_peft_adapter_is_registered_unevaluated_and_its_folder_left_alone(workspace, peft_adapter, cli) -> None:
    before = {f.name: f.read_bytes() for f in peft_adapter.iterdir()}
    done = cli("specialists", "import", str(peft_adapter), "--json", cwd=workspace.root)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["state"] == "registered" and not record["status"]["evaluation"]
    lineage = record["lineage"]
    assert (lineage["name"], lineage["method"], lineage["hyperparameters"]["rank"]) == ("sql-helper", "imported", 4)
    assert lineage["origin"]["imported_from"] == str(peft_adapter) and lineage["origin"]["tensors"] == 2 * 2 * 30
    assert lineage["parent_contract"]["ref"].startswith("default@")
    assert {f.name: f.read_bytes() for f in peft_adapter.iterdir()} == before  # copied, never moved
    listed = json.loads(cli("adapters", "list", "--json", cwd=workspace.root).stdout)
    assert [a["id"] for a in listed] == [record["id"]]


@pytest.mark.slow
def test_a_wrong_rank_layout_or_another_base_is_a_located_error(workspace, peft_adapter, cli, tmp_path) -> None:
    ranked = _variant(peft_adapter, tmp_path / "r", r=8)  # the config claims rank 8, the tensors hold rank 4
    done = cli("specialists", "import", str(ranked), cwd=workspace.root)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "adapter_model.safetensors: base_model.model.model.layers.0.self_attn." in done.stderr
    assert "does not fit (expected [" in done.stderr and "for rank 8)" in done.stderr
    other = _variant(peft_adapter, tmp_path / "b", base_model_name_or_path="HuggingFaceTB/SmolLM2-360M")
    done = cli("specialists", "import", str(other), cwd=workspace.root)
    assert done.returncode == 2 and "adapter_config.json:" in done.stderr and "base_model_name_or_path" in done.stderr
    assert "'HuggingFaceTB/SmolLM2-360M' is not the contract's base 'SmolLM2-135M-Instruct'" in done.stderr
    vouched = cli("specialists", "import", str(other), "--base-name-ok", cwd=workspace.root)
    assert vouched.returncode == 0, vouched.stderr  # its shapes fit this base
    assert cli("adapters", "list", "--json", cwd=workspace.root).stdout.count('"imported"') == 1


def test_a_folder_that_is_no_lora_is_refused_in_one_line(workspace, cli, tmp_path) -> None:
    empty = tmp_path / "nothing"
    empty.mkdir()
    done = cli("specialists", "import", str(empty), cwd=workspace.root)
    assert done.returncode == 2 and "not a PEFT adapter folder (no adapter_config.json)" in done.stderr
    (empty / "adapter_config.json").write_text('{\n  "peft_type": "PREFIX_TUNING",\n  "r": 4\n}\n')
    done = cli("specialists", "import", str(empty), cwd=workspace.root)
    assert done.returncode == 2 and "adapter_config.json:2: peft_type: 'PREFIX_TUNING'" in done.stderr


def test_the_specialist_name_is_one_routing_can_use(workspace, cli, tmp_path) -> None:
    from rsi.training.imported import _specialist_name

    assert _specialist_name("My SQL Helper!", given=False) == "my-sql-helper"
    done = cli("specialists", "import", str(tmp_path), "--name", "SQL", cwd=workspace.root)
    assert done.returncode == 2 and "--name: 'SQL' is not a specialist name" in done.stderr
