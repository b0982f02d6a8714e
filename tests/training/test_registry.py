"""The adapter registry (content-addressed, atomic, idempotent, lineage immutable, status mutable) and the
contract revisions it writes: the candidate contract and the explicit promotion, in real git."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest

from rsi.adapters.registry import find_adapter, list_adapters, register_adapter, update_status
from rsi.contracts.gitio import parse_commit_message
from rsi.contracts.refs import resolve_ref
from rsi.errors import UserInputError
from rsi.models.embedded.weights import adapter_digest
from rsi.promotion.adapter import promote_adapter
from rsi.training.candidate import ensure_revision_tagged, write_candidate


def fake_peft_folder(folder: Path, payload: bytes) -> Path:
    """A PEFT-shaped folder (registry tests need files, not a model), plus the README peft writes."""
    folder.mkdir(parents=True)
    (folder / "adapter_config.json").write_text(json.dumps({"r": 8, "target_modules": ["q_proj", "v_proj"]}))
    (folder / "adapter_model.safetensors").write_bytes(payload)
    (folder / "README.md").write_text("model card")
    return folder


LINEAGE = {
    "name": "sft",
    "base": {"id": "SmolLM2-135M-Instruct", "version": 1, "sha256": "b" * 64},
    "dataset": {"sha256": "d" * 64, "folder": "/data", "examples": 3, "manifest": {"dataset": {"sha256": "d" * 64}}},
    "source_runs": ["run-1"],
    "parent_contract": {"name": "default", "revision": 1, "ref": "default@r1", "content_hash": "c" * 64},
    "hyperparameters": {"rank": 8, "learning_rate": 0.001},
    "metrics": {"steps": 2, "first_loss": 1.5, "final_loss": 1.2},
    "code": {"rsi_version": "0.1.0", "git_sha": "", "git_dirty": False},
}


def test_register_is_content_addressed_atomic_and_idempotent(workspace, tmp_path) -> None:
    record = register_adapter(workspace, fake_peft_folder(tmp_path / "a", b"weights-1"), LINEAGE)
    assert record.folder == workspace.adapters_dir / record.id
    assert sorted(p.name for p in record.adapter_dir.iterdir()) == ["adapter_config.json", "adapter_model.safetensors"]
    assert record.id == adapter_digest(record.adapter_dir)
    assert record.status.state == "registered" and record.lineage.source_runs == ["run-1"]
    assert not list(workspace.adapters_dir.glob(".tmp-*"))
    assert not (tmp_path / "a").exists()  # moved into the registry

    again = register_adapter(workspace, fake_peft_folder(tmp_path / "b", b"weights-1"), {**LINEAGE, "source_runs": ["other"]})
    assert again.id == record.id and again.lineage.source_runs == ["run-1"]  # lineage never rewritten
    other = register_adapter(workspace, fake_peft_folder(tmp_path / "c", b"weights-2"), LINEAGE)
    assert other.id != record.id
    assert {r.id for r in list_adapters(workspace)} == {record.id, other.id}


def test_find_and_status_updates(workspace, tmp_path) -> None:
    record = register_adapter(workspace, fake_peft_folder(tmp_path / "a", b"w"), LINEAGE)
    assert find_adapter(workspace, record.id[:8]).id == record.id
    assert find_adapter(workspace, f"sft@{record.id[:8]}").id == record.id
    with pytest.raises(UserInputError, match="at least 6"):
        find_adapter(workspace, "abc")
    with pytest.raises(UserInputError, match="no adapter"):
        find_adapter(workspace, "ffffff" if not record.id.startswith("ffffff") else "eeeeee")
    lineage_before = (record.folder / "lineage.json").read_text()
    updated = update_status(record, state="rejected", evaluation={"lift": {"lift": 0.0}})
    assert updated.status.state == "rejected"
    reloaded = find_adapter(workspace, record.id)
    assert reloaded.status.state == "rejected" and reloaded.status.evaluation == {"lift": {"lift": 0.0}}
    assert (record.folder / "lineage.json").read_text() == lineage_before


def test_candidate_revision_and_explicit_promotion(workspace, tmp_path) -> None:
    ensure_revision_tagged(workspace, "default")
    repo = git.Repo(workspace.root)
    assert "hcp/default/r1" in [t.name for t in repo.tags]
    record = register_adapter(workspace, fake_peft_folder(tmp_path / "a", b"w"), LINEAGE)
    relative = record.relative_adapter_dir(workspace)

    written = write_candidate(workspace, "default", record.id, relative, 8, ["q_proj", "v_proj"], parent_ref="default@r1")
    assert written.written and written.ref == "default-candidate@r2"
    first = resolve_ref(workspace, "default-candidate@r1")
    assert first.spec.specialists == [] and first.spec.harness == resolve_ref(workspace, "default@r1").spec.harness
    candidate = resolve_ref(workspace, written.ref)
    [specialist] = candidate.spec.specialists
    assert (specialist.name, specialist.revision, specialist.sha256, specialist.path) == ("sft", 1, record.id, relative)
    assert (candidate.spec.routing.policy, candidate.spec.routing.specialist) == ("fixed", "sft")
    trailers = parse_commit_message(str(repo.tags["hcp/default-candidate/r2"].commit.message))[2]
    assert trailers["Adapter-Id"] == record.id and trailers["Adapter-Parent"].startswith("default@r1 ")
    assert trailers["HCP-Clocks"] == "specialists,harness"  # routing belongs to the harness clock

    # A rerun finds its own revision instead of writing another.
    again = write_candidate(workspace, "default", record.id, relative, 8, ["q_proj", "v_proj"], parent_ref="default@r1")
    assert not again.written and again.ref == written.ref
    assert resolve_ref(workspace, "default").revision == 1  # the parent is untouched until promotion

    promoted = promote_adapter(workspace, "default", written.ref, "eval-123", {"Eval-Lift": "+0.5"}, "gate passed")
    assert promoted.written and promoted.ref == "default@r2"
    parent = resolve_ref(workspace, "default@r2")
    assert parent.spec.specialists == candidate.spec.specialists and parent.spec.routing == candidate.spec.routing
    trailers = parse_commit_message(str(repo.tags["hcp/default/r2"].commit.message))[2]
    assert trailers["Adapter-Eval"] == "eval-123" and trailers["Eval-Lift"] == "+0.5"
    assert trailers["Adapter-Candidate"] == written.ref
    assert not promote_adapter(workspace, "default", written.ref, "eval-123", {}, "again").written

    # The next adapter bumps the specialist revision and builds on the promoted parent.
    second = register_adapter(workspace, fake_peft_folder(tmp_path / "b", b"w2"), LINEAGE)
    next_written = write_candidate(workspace, "default", second.id, second.relative_adapter_dir(workspace), 8,
                                   ["q_proj", "v_proj"], parent_ref="default@r2")
    [next_specialist] = resolve_ref(workspace, next_written.ref).spec.specialists
    assert next_specialist.revision == 2 and next_specialist.sha256 == second.id


def test_a_candidate_carries_the_harness_chosen_on_train_and_its_promotion_writes_it(workspace, tmp_path) -> None:
    ensure_revision_tagged(workspace, "default")
    record = register_adapter(workspace, fake_peft_folder(tmp_path / "a", b"w"), LINEAGE)
    chosen = {"harness.substrate": "text", "harness.system_prompt_file": "prompts/text.md", "harness.max_turns": 1,
              "harness.check": "first-pass", "harness.sampling.greedy_first": True, "harness.sampling.samples": 8,
              "harness.sampling.temperature": 0.4}
    written = write_candidate(workspace, "default", record.id, record.relative_adapter_dir(workspace), 8,
                              ["q_proj", "v_proj"], parent_ref="default@r1", harness_sets=chosen)
    candidate = resolve_ref(workspace, written.ref)
    harness = candidate.spec.harness
    assert (harness.substrate, harness.check, harness.sampling.samples, harness.sampling.greedy_first) == \
        ("text", "first-pass", 8, True)
    assert candidate.system_prompt == (workspace.root / "hcp" / "prompts" / "text.md").read_text()
    assert candidate.spec.routing.specialist == "sft"
    promoted = promote_adapter(workspace, "default", written.ref, "eval-1", {}, "gate passed")
    parent = resolve_ref(workspace, promoted.ref)
    assert parent.spec.harness.check == "first-pass" and parent.spec.specialists == candidate.spec.specialists
    assert parent.system_prompt == candidate.system_prompt
