"""Adapters from other owners: `rsi specialists import PATH` registers a PEFT LoRA folder trained outside rsi.

    import_adapter(workspace, Path("their-adapter"), contract="default", name="sql")

Nothing in the folder is trusted. Before anything is registered:

- `adapter_config.json` must describe a LoRA (`peft_type` LORA, an integer rank `r`, no per-module ranks) whose
  base is the contract's: `base_model_name_or_path` names `[base].id` (exactly, or as a hub id ending in it), or is
  a local folder (provenance only); another model's name is refused unless the caller vouches for it;
- every tensor of `adapter_model.safetensors` must be a `lora_A` / `lora_B` weight of a projection the base has,
  in a layer the base has, with the shape that projection and the rank give (A: [r, in], B: [out, r]), read from
  the base's own config.json (the same HF folder the embedded backend serves).

Each refusal is one located line: the file, the key (or tensor), what was found and what the base needs. What
passes is copied (the owner's folder is left as it was) into the adapter registry under its content hash, with
its provenance in the lineage (`origin`) and the state `registered`: an imported adapter is never trusted as
evaluated; only `rsi eval` (a candidate contract routing to it against its parent) can say it helps.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from rsi.errors import UserInputError
from rsi.workspace import Workspace

CONFIG_FILE = "adapter_config.json"
WEIGHTS_FILE = "adapter_model.safetensors"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")  # rsi.contracts.schema.SpecialistSpec.name
_TENSOR = re.compile(r"layers\.(\d+)\.(?:self_attn|mlp)\.(\w+)\.lora_([AB])(?:\.[\w-]+)?\.weight$")


def projection_shapes(config: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """(in_features, out_features) of each projection a llama-shaped base has, from its config.json (pure)."""
    hidden, inner = int(config["hidden_size"]), int(config["intermediate_size"])
    heads = int(config["num_attention_heads"])
    head_dim = int(config.get("head_dim") or hidden // heads)
    kv = int(config.get("num_key_value_heads") or heads) * head_dim
    return {"q_proj": (hidden, heads * head_dim), "k_proj": (hidden, kv), "v_proj": (hidden, kv),
            "o_proj": (heads * head_dim, hidden), "gate_proj": (hidden, inner), "up_proj": (hidden, inner),
            "down_proj": (inner, hidden)}


def check_config(path: Path, base_id: str, base_name_ok: bool = False) -> dict[str, Any]:
    """The adapter's config, or a located UserInputError naming the key that does not fit."""
    file = path / CONFIG_FILE
    if not file.is_file():
        raise UserInputError(f"{path}: not a PEFT adapter folder (no {CONFIG_FILE})")
    text = file.read_text(encoding="utf-8")
    try:
        config = json.loads(text)
    except json.JSONDecodeError as error:
        raise UserInputError(f"{file}:{error.lineno}: not valid JSON: {error.msg}") from None

    def refuse(key: str, why: str, hint: str | None = None) -> UserInputError:
        return UserInputError(f"{file}:{_line_of(text, key)}: {key}: {why}", hint=hint)

    if str(config.get("peft_type", "")).upper() != "LORA":
        raise refuse("peft_type", f"{config.get('peft_type')!r}: only LoRA adapters can be served")
    if not isinstance(config.get("r"), int) or config["r"] < 1:
        raise refuse("r", f"{config.get('r')!r}: the rank must be a positive integer")
    if config.get("rank_pattern") or config.get("alpha_pattern"):
        raise refuse("rank_pattern", "per-module ranks are not served (one rank for every module)")
    named = str(config.get("base_model_name_or_path") or "")
    if named and not base_name_ok and not _names_base(named, base_id):
        raise refuse("base_model_name_or_path", f"{named!r} is not the contract's base {base_id!r}",
                     hint="--base-name-ok if it was trained on this base under another name (its shapes are still checked)")
    return dict(config)


def check_weights(path: Path, config: dict[str, Any], base_config: dict[str, Any], base_id: str) -> int:
    """The number of LoRA tensors, each checked against the base's projections and layers (located errors)."""
    from safetensors import safe_open

    file = path / WEIGHTS_FILE
    if not file.is_file():
        raise UserInputError(f"{path}: no {WEIGHTS_FILE} (only safetensors weights are imported)")
    shapes, layers, rank = projection_shapes(base_config), int(base_config["num_hidden_layers"]), config["r"]
    with safe_open(str(file), framework="pt") as weights:
        keys = list(weights.keys())
        for key in keys:
            shape = tuple(weights.get_slice(key).get_shape())
            problem = tensor_problem(key, shape, shapes, layers, rank)
            if problem:
                raise UserInputError(f"{file}: {key}: {problem} (base {base_id})")
    if not keys:
        raise UserInputError(f"{file}: holds no tensors")
    return len(keys)


def tensor_problem(key: str, shape: tuple[int, ...], shapes: dict[str, tuple[int, int]], layers: int,
                   rank: int) -> str:
    """Why one tensor does not fit the base ('' when it does; pure)."""
    found = _TENSOR.search(key)
    if found is None:
        return "not a LoRA A/B weight of a layer's projection"
    layer, module, which = int(found.group(1)), found.group(2), found.group(3)
    if module not in shapes:
        return f"the base has no projection {module!r} (it has {', '.join(shapes)})"
    if layer >= layers:
        return f"layer {layer}: the base has {layers} layers"
    in_features, out_features = shapes[module]
    expected = (rank, in_features) if which == "A" else (out_features, rank)
    if tuple(shape) != expected:
        return f"shape {list(shape)} does not fit (expected {list(expected)} for rank {rank})"
    return ""


def import_adapter(workspace: Workspace, folder: Path, contract: str = "default", name: str = "",
                   base_name_ok: bool = False) -> Any:
    """Check the folder against `contract`'s base and register a copy (see the module docstring); the record."""
    from rsi.adapters.lineage import (
        BaseIdentity,
        DatasetRecord,
        Hyperparameters,
        ImportOrigin,
        ParentContract,
    )
    from rsi.adapters.registry import KEPT_FILES, code_version, register_adapter
    from rsi.models.embedded.weights import hf_folder
    from rsi.promotion.promote import load_head_contract

    folder = Path(folder).resolve()
    name = _specialist_name(name or folder.name, given=bool(name))
    loaded = load_head_contract(workspace, contract)
    base = loaded.spec.base
    config = check_config(folder, base.id, base_name_ok)
    base_config = json.loads((hf_folder(base, workspace.root) / "config.json").read_text(encoding="utf-8"))
    tensors = check_weights(folder, config, base_config, base.id)
    staging = Path(tempfile.mkdtemp(prefix="rsi-import-"))
    copy = staging / "adapter"
    copy.mkdir()
    for kept in KEPT_FILES:
        if (folder / kept).is_file():
            shutil.copy2(folder / kept, copy / kept)
    try:
        return register_adapter(workspace, copy, {
            "name": name, "method": "imported", "base": BaseIdentity.model_validate(base.model_dump(mode="json")),
            "dataset": DatasetRecord(), "source_runs": [],
            "parent_contract": ParentContract(name=loaded.spec.hcp.name, revision=loaded.spec.hcp.revision,
                                              ref=f"{loaded.spec.hcp.name}@r{loaded.spec.hcp.revision}",
                                              content_hash=loaded.content_hash),
            "hyperparameters": Hyperparameters(rank=config["r"], lora_alpha=config.get("lora_alpha"),
                                               target_modules=config.get("target_modules")),
            "metrics": {}, "code": code_version(),
            "origin": ImportOrigin(imported_from=str(folder), base_model_name_or_path=config.get("base_model_name_or_path"),
                                   tensors=tensors, peft_version=config.get("peft_version", "")),
        })
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _names_base(named: str, base_id: str) -> bool:
    if Path(named).is_absolute() or named.startswith("."):
        return True  # a local folder: where the owner kept the base, provenance only
    return named.lower() == base_id.lower() or named.lower().endswith("/" + base_id.lower())


def _specialist_name(raw: str, given: bool) -> str:
    """A name routing can use (`[[specialists]] name`): `--name` as given, or the folder's name made into one."""
    if given:
        if not _NAME.match(raw):
            raise UserInputError(f"--name: {raw!r} is not a specialist name (lowercase letters, digits, '_', '.', '-')")
        return raw
    return re.sub(r"[^a-z0-9_.-]+", "-", raw.lower()).strip("-.") or "imported"


def _line_of(text: str, key: str) -> int:
    """The line of `"key"` in a JSON text (1 where it is absent: the file's start)."""
    return next((n for n, line in enumerate(text.splitlines(), start=1) if f'"{key}"' in line), 1)
