"""Applying a decision about a candidate that is not one `sft` adapter, in real git and the real adapter registry:
several specialists (one per partition of the train evidence) are all promoted, each named in the commit's
trailers and each adapter's status recorded; a candidate whose specialists are the parent's (it changes only
the harness or routing) is promoted as that runtime change, with no adapter trailer and no adapter's status
touched; a rejection records every changed adapter as rejected."""

from __future__ import annotations

import json
from pathlib import Path

import git

from rsi.adapters.registry import AdapterRecord, find_adapter, register_adapter
from rsi.contracts.gitio import parse_commit_message
from rsi.contracts.refs import resolve_ref
from rsi.contracts.revisions import revise_contract
from rsi.evaluation import EvalOutcome, RetentionEstimate, apply_decision, decide_adapter
from rsi.promotion.adapter import promote_adapter
from rsi.promotion.decision import GatePolicy, paired_lift
from rsi.training.candidate import ensure_revision_tagged, write_candidate_specialists

LINEAGE = {
    "base": {"id": "SmolLM2-135M-Instruct", "version": 1, "sha256": "b" * 64},
    "dataset": {"sha256": "d" * 64, "folder": "/data", "examples": 3},
    "source_runs": ["run-1"],
    "parent_contract": {"name": "default", "revision": 1, "ref": "default@r1", "content_hash": "c" * 64},
    "hyperparameters": {"rank": 8},
    "metrics": {"steps": 1, "first_loss": 1.0, "final_loss": 0.9},
    "code": {"rsi_version": "0.1.0", "git_sha": "", "git_dirty": False},
}


def adapter(workspace, tmp_path: Path, name: str) -> AdapterRecord:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "adapter_config.json").write_text(json.dumps({"r": 8, "target_modules": ["q_proj", "v_proj"]}))
    (folder / "adapter_model.safetensors").write_bytes(f"weights of {name}".encode())
    return register_adapter(workspace, folder, {**LINEAGE, "name": name})


def two_specialists(workspace, tmp_path: Path) -> tuple[list[AdapterRecord], str]:
    """Two adapters (parts `strings` and `math`) and the candidate revision listing both over default@r1."""
    ensure_revision_tagged(workspace, "default")
    records = [adapter(workspace, tmp_path, name) for name in ("strings", "math")]
    written = write_candidate_specialists(
        workspace, "default", [(r.lineage.name, r.id, r.relative_adapter_dir(workspace)) for r in records], 8,
        ["q_proj", "v_proj"], parent_ref="default@r1")
    return records, written.ref


def outcome(candidate: str, parent: str, promote: bool, eval_id: str, adapter_id: str = "") -> EvalOutcome:
    """An evaluation's outcome as `evaluate` stores it, with the decision given (the numbers are not the point)."""

    def side(ref: str) -> dict[str, object]:
        name, _, revision = ref.partition("@r")
        return {"name": name, "revision": int(revision), "ref": ref, "content_hash": "c", "config_hash": "h"}

    decided = decide_adapter(paired_lift({}, {}), RetentionEstimate(0, 0, 0, 0), GatePolicy())
    return EvalOutcome(eval_id=eval_id, suite="pyfuncs", candidate=side(candidate), parent=side(parent),
                       adapter_id=adapter_id, heldout_tasks=["a"], covered_tasks=[],
                       lift=paired_lift({"a": True}, {"a": False}).summary(),
                       retention=RetentionEstimate(0, 0, 0, 0).summary(), per_task={},
                       decision=decided.model_copy(update={"promote": promote, "reason": "decided by the test"}))


def trailers_of(workspace, tag: str) -> tuple[str, dict[str, str]]:
    subject, _, trailers = parse_commit_message(str(git.Repo(workspace.root).tags[tag].commit.message))
    return subject, trailers


def test_a_candidate_of_several_specialists_promotes_every_one(workspace, tmp_path) -> None:
    (strings, math), candidate = two_specialists(workspace, tmp_path)
    applied = apply_decision(workspace, outcome(candidate, "default@r1", True, "eval-both"))
    assert applied.applied is not None and applied.applied.revision is not None
    assert applied.applied.revision.ref == "default@r2"
    promoted = resolve_ref(workspace, "default@r2")
    assert [(s.name, s.sha256) for s in promoted.spec.specialists] == [("strings", strings.id), ("math", math.id)]
    subject, trailers = trailers_of(workspace, "hcp/default/r2")
    assert subject == f"hcp(default): r2: promote adapter {strings.id[:12]} (strings r1) from {candidate}, math r1 {math.id[:12]}"
    assert trailers["Adapter-Id"] == strings.id and trailers["Adapter-Eval"] == "eval-both"
    assert trailers["Adapter-Ids"] == f"{strings.id} (strings r1), {math.id} (math r1)"
    for record in (strings, math):  # each changed adapter's status, not only the routed one's
        status = find_adapter(workspace, record.id).status
        assert status.state == "promoted" and status.promotion["ref"] == "default@r2"
    again = apply_decision(workspace, outcome(candidate, "default@r1", True, "eval-both"))  # idempotent
    assert again.applied is not None and again.applied.revision is not None and not again.applied.revision.written
    assert resolve_ref(workspace, "default").revision == 2


def test_a_rejected_candidate_of_several_specialists_records_every_one(workspace, tmp_path) -> None:
    (strings, math), candidate = two_specialists(workspace, tmp_path)
    applied = apply_decision(workspace, outcome(candidate, "default@r1", False, "eval-no"))
    assert applied.applied is not None and applied.applied.state == "rejected"
    for record in (strings, math):
        status = find_adapter(workspace, record.id).status
        assert status.state == "rejected" and status.evaluation["eval_id"] == "eval-no"
    assert resolve_ref(workspace, "default").revision == 1


def test_a_candidate_that_changes_no_specialist_promotes_its_runtime_without_an_adapter(workspace, tmp_path) -> None:
    (strings, math), candidate = two_specialists(workspace, tmp_path)
    apply_decision(workspace, outcome(candidate, "default@r1", True, "eval-both"))
    # the next candidate keeps default@r2's specialists and changes only the harness (no IndexError, no trailer)
    harness_only = revise_contract(workspace, "default-candidate", {"harness.max_turns": 3}, "harness only")
    ref = f"default-candidate@r{harness_only.revision}"
    applied = apply_decision(workspace, outcome(ref, "default@r2", True, "eval-harness", adapter_id=strings.id))
    assert applied.applied is not None and applied.applied.revision is not None
    assert applied.applied.revision.ref == "default@r3"
    parent = resolve_ref(workspace, "default@r3")
    assert parent.spec.harness.max_turns == 3
    assert parent.spec.specialists == resolve_ref(workspace, "default@r2").spec.specialists
    subject, trailers = trailers_of(workspace, "hcp/default/r3")
    assert subject == f"hcp(default): r3: promote the runtime of {ref} (no adapter changed)"
    assert "Adapter-Id" not in trailers and "Adapter-Ids" not in trailers
    assert trailers["Adapter-Eval"] == "eval-harness" and trailers["Adapter-Candidate"] == ref
    for record in (strings, math):  # the adapters were not what this decision was about: their promotion stands
        status = find_adapter(workspace, record.id).status
        assert status.state == "promoted" and status.promotion["ref"] == "default@r2"
    assert not promote_adapter(workspace, "default", ref, "eval-harness", {}, "again").written
