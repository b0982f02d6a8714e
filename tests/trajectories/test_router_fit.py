"""`rsi router fit` (rsi/trajectories/router_fit.py): train evidence only, revisions, the pinned sha256."""

from __future__ import annotations

import json

import pytest

from rsi.contracts.load import load_contract
from rsi.contracts.refs import resolve_ref
from rsi.errors import ContractError
from rsi.harness.router import Example, fit, label, turn_features
from rsi.store import open_store
from rsi.trajectories.router_fit import collect_examples, write_router

SPECIALISTS_TOML = """
[[specialists]]
name = "mathy"
path = "adapters/mathy"

[[specialists]]
name = "wordy"
path = "adapters/wordy"
"""
SPECIALISTS = (None, "mathy", "wordy")


@pytest.fixture
def routed(builder, workspace):
    """The default contract with two specialists, and one fixed-routed configuration per specialist (and base)."""
    path = workspace.contract_path("default")
    path.write_text(path.read_text(encoding="utf-8") + SPECIALISTS_TOML, encoding="utf-8")
    builder.contract = resolve_ref(workspace, "default")
    configs = {s: builder.config(label(s), **{"routing.specialist": s or ""}) for s in SPECIALISTS}
    return builder, configs


def _tags(builder, task_id):
    return builder.tasks[task_id].spec.tags


def _train_run(builder, configs, planned):
    """Mathy passes math tasks, wordy passes strings tasks, the base passes nothing (train only)."""
    rows = []
    for task_id in builder.train_ids():
        tags = _tags(builder, task_id)
        rows += [planned(configs["mathy"], task_id, "passed" if "math" in tags else "failed"),
                 planned(configs["wordy"], task_id, "passed" if "strings" in tags else "failed"),
                 planned(configs[None], task_id, "failed")]
    return builder.run(rows)


def _heldout_run(builder, configs, planned):
    """The opposite on heldout: evidence that would change every count were it read."""
    rows = []
    for task_id in builder.heldout_ids():
        rows += [planned(configs["mathy"], task_id, "failed"), planned(configs["wordy"], task_id, "failed"),
                 planned(configs[None], task_id, "passed")]
    return builder.run(rows)


def _collect(workspace, builder, runs=()):
    with open_store(workspace.db_url) as store:
        return collect_examples(store, "pyfuncs", list(builder.tasks.values()), SPECIALISTS, runs)


def test_the_fit_never_reads_heldout_evidence(routed, workspace, planned):
    builder, configs = routed
    train_run = _train_run(builder, configs, planned)
    before, evidence_before = _collect(workspace, builder)
    first = write_router(workspace.hcp_dir, "default", SPECIALISTS, before, evidence_before)
    heldout_run = _heldout_run(builder, configs, planned)
    after, evidence_after = _collect(workspace, builder)
    assert after == before and evidence_after == evidence_before
    second = write_router(workspace.hcp_dir, "default", SPECIALISTS, after, evidence_after)
    assert second.reused and second.path == first.path and second.sha256 == first.sha256
    record = json.loads(first.path.read_text(encoding="utf-8"))
    assert record["schema"] == "rsi.router/1" and record["revision"] == 1
    assert record["evidence"]["split"] == "train" and record["evidence"]["runs"] == [train_run]
    heldout_keys = {builder.tasks[t].key for t in builder.heldout_ids()}
    assert record["evidence"]["tasks"] and not heldout_keys & set(record["evidence"]["tasks"])
    assert heldout_run not in record["evidence"]["runs"]
    # The heldout rows do matter: fitted on, they would change the base's counts.
    leaked = [Example(None, key, tuple(turn_features(["math"], "", "first", "")), True) for key in heldout_keys]
    assert fit(before + leaked, SPECIALISTS) != fit(before, SPECIALISTS)
    # Only the heldout run given: nothing to fit on.
    assert _collect(workspace, builder, [heldout_run])[0] == []


def test_learned_picks_per_task_and_a_changed_fit_is_a_new_revision(routed, workspace, planned):
    builder, configs = routed
    _train_run(builder, configs, planned)
    examples, evidence = _collect(workspace, builder)
    outcome = write_router(workspace.hcp_dir, "default", SPECIALISTS, examples, evidence)
    stats = {s.specialist: (s.passes, s.attempts) for s in outcome.record.specialists}
    assert stats[None][0] == 0 and stats["mathy"][0] > 0 and stats["wordy"][0] > 0
    acc = outcome.accuracy
    assert acc.tasks == len(builder.train_ids()) and acc.in_sample >= acc.leave_one_out > acc.tasks // 2
    fewer = [e for e in examples if e.task_key != examples[0].task_key]
    again = write_router(workspace.hcp_dir, "default", SPECIALISTS, fewer, evidence)
    assert not again.reused and again.record.revision == 2 and again.path.name == "default-r2.json"


def test_cli_fits_applies_and_a_tampered_router_is_a_located_error(routed, workspace, planned, promote_cli):
    builder, configs = routed
    _train_run(builder, configs, planned)
    done = promote_cli("router", "fit", "--contract", "default", "--apply", cwd=workspace.root)
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stdout and "train pass rate" in done.stdout and "leaving each task out" in done.stdout
    contract = load_contract(workspace.contract_path("default"))
    assert contract.spec.routing.policy == "learned" and contract.spec.routing.router == "routers/default-r1.json"
    again = promote_cli("router", "fit", "--contract", "default", cwd=workspace.root)
    assert again.returncode == 0 and again.stdout.startswith("reused"), again.stderr
    router = workspace.hcp_dir / "routers" / "default-r1.json"
    router.write_text(router.read_text(encoding="utf-8").replace('"passes": 0', '"passes": 1', 1), encoding="utf-8")
    with pytest.raises(ContractError) as raised:
        load_contract(workspace.contract_path("default"))
    assert [p.key for p in raised.value.problems] == ["routing.router_sha256"]
    refused = promote_cli("hcp", "validate", "hcp/default.toml", cwd=workspace.root)
    assert refused.returncode == 2 and "routing.router_sha256" in refused.stderr + refused.stdout
    router.unlink()
    missing = promote_cli("hcp", "validate", "hcp/default.toml", cwd=workspace.root)
    assert missing.returncode == 2 and "router file not found" in missing.stderr + missing.stdout


def test_a_revision_that_routes_by_a_fresh_router_loads_at_its_own_commit(routed, workspace, planned):
    """`revise_contract` commits the router file its revision names beside the contract: evaluating
    `default@rN` reads rN's commit, and a freshly fitted router was only in the working tree (before,
    rN failed to load with "router file not found")."""
    import subprocess

    from rsi.contracts.revisions import revise_contract
    from rsi.trajectories.router_fit import fit_contract

    builder, configs = routed
    run = _train_run(builder, configs, planned)
    subprocess.run(["git", "commit", "-qam", "two specialists"], cwd=workspace.root, check=True)
    outcome = fit_contract(workspace, "default", [run])
    relative = outcome.path.relative_to(workspace.hcp_dir).as_posix()
    revised = revise_contract(workspace, "default", {"routing.policy": "learned", "routing.router": relative,
                                                     "routing.router_sha256": outcome.sha256}, "route by the router")
    loaded = resolve_ref(workspace, f"default@r{revised.revision}")
    assert loaded.spec.routing.policy == "learned" and loaded.spec.routing.router == relative
    tracked = subprocess.run(["git", "ls-files", f"hcp/{relative}"], cwd=workspace.root, capture_output=True,
                             text=True, check=True).stdout.strip()
    assert tracked == f"hcp/{relative}"
    later = revise_contract(workspace, "default", {"harness.max_turns": 3}, "fewer turns, the same router")
    assert resolve_ref(workspace, f"default@r{later.revision}").spec.routing.router == relative  # held, unchanged
