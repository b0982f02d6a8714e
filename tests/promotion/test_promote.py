"""`rsi promote` with real git and real stored runs: promotion, gate refusal, dry run, crash and rerun."""

from __future__ import annotations

import signal

import git
import pytest

from rsi.config import configuration_from_contract
from rsi.contracts.gitio import parse_commit_message
from rsi.contracts.load import load_contract
from rsi.promotion.isolation import WeakIsolationError
from rsi.promotion.promote import promote_run
from rsi.sandbox.base import Isolation


@pytest.fixture
def runs(builder, planned):
    """Two configurations: the contract's own (parent) and a stepwise candidate that is better."""
    parent = builder.parent_config()
    cand = builder.config("repl-stepwise", **{"harness.prompt_style": "stepwise", "harness.max_turns": 6})
    train, heldout = builder.train_ids(), builder.heldout_ids()

    def make(cand_heldout_passes: int, parent_heldout_passes: int, heldout_tasks: int = 12, cand_tokens: int = 200) -> str:
        plan = [planned(cand, t, verdict="passed" if i < 8 else "failed") for i, t in enumerate(train[:10])]
        plan += [planned(parent, t, verdict="passed" if i < 3 else "failed") for i, t in enumerate(train[:10])]
        for i, t in enumerate(heldout[:heldout_tasks]):
            plan.append(planned(cand, t, verdict="passed" if i < cand_heldout_passes else "failed", tokens=cand_tokens))
            plan.append(planned(parent, t, verdict="passed" if i < parent_heldout_passes else "failed"))
        return builder.run(plan)

    return make, parent, cand


WEAK = Isolation(backend="local-bare", network_isolated=False, filesystem_readonly=False, pid_namespace=False,
                 unprivileged_user=True, notes="WEAK, rlimits only")
STRONG = Isolation(backend="local-namespaces", network_isolated=True, filesystem_readonly=True, pid_namespace=True,
                   unprivileged_user=True)


def head(workspace) -> str:
    return git.Repo(workspace.root).head.commit.hexsha


def tags(workspace) -> list[str]:
    return sorted(t.name for t in git.Repo(workspace.root).tags)


def decision_commits(workspace, decision_hash: str) -> list[str]:
    repo = git.Repo(workspace.root)
    return [c.hexsha for c in repo.iter_commits(paths="hcp/default.toml")
            if parse_commit_message(str(c.message))[2].get("Decision-Hash") == decision_hash]


def test_promotes_better_configuration_with_trailers_and_tag(builder, runs) -> None:
    make, parent, cand = runs
    run_id = make(10, 1)
    ws = builder.workspace
    before = (ws.root / "hcp" / "default.toml").read_text()
    outcome = promote_run(ws, [run_id])
    assert outcome.status == "promoted", outcome.decision.reason
    assert outcome.revision == 2 and outcome.tag == "hcp/default/r2"
    repo = git.Repo(ws.root)
    assert repo.tags["hcp/default/r2"].commit.hexsha == repo.head.commit.hexsha == outcome.commit
    assert not repo.is_dirty(untracked_files=False)
    subject, body, trailers = parse_commit_message(str(repo.head.commit.message))
    assert subject.startswith("hcp(default): r2: promote repl-stepwise")
    assert trailers["HCP-Parent"] == "1" and trailers["HCP-Revision"] == "2"
    assert trailers["Evidence-Runs"] == run_id
    assert trailers["Evidence-Config-Hash"] == cand.config_hash
    assert trailers["Evidence-Parent"] == f"r1 {parent.config_hash}"
    assert trailers["Evidence-Attempts"].startswith("8/10 passed")
    assert "CI95 [" in trailers["Evidence-Pass-Rate"] and "wilson" in trailers["Evidence-Pass-Rate"]
    assert "8/10 tasks solved" in trailers["Evidence-Coverage"]
    assert "lift +0.7500" in trailers["Evidence-Heldout"] and "newcombe" in trailers["Evidence-Heldout"]
    assert trailers["Decision-Hash"] == outcome.decision.decision_hash
    assert "repl-greedy" in body and "repl-stepwise" in body  # every configuration's evidence in the body
    # the new revision runs the candidate's settings, comments of the old file kept
    text = (ws.root / "hcp" / "default.toml").read_text()
    assert "# the bare base on every turn" in text and "# the bare base on every turn" in before
    promoted = configuration_from_contract(load_contract(ws.root / "hcp" / "default.toml"))
    assert promoted.spec.harness.prompt_style == "stepwise" and promoted.spec.harness.max_turns == 6
    assert promoted.spec.harness.version == 2  # the harness clock moved
    assert promoted.spec.hcp.parent == 1 and promoted.spec.hcp.revision == 2
    # idempotent: the same decision again is recognised by its Decision-Hash
    again = promote_run(ws, [run_id])
    assert again.status == "already" and again.revision == 2 and again.commit == outcome.commit
    assert head(ws) == outcome.commit and "hcp/default/r3" not in tags(ws)
    assert decision_commits(ws, outcome.decision.decision_hash) == [outcome.commit]


def test_a_12x_candidate_is_refused_by_default_with_its_price(builder, runs, promote_cli) -> None:
    """The shipped contract's gate (max_token_ratio 10) applied by `rsi promote`: the price is read from the heldout
    attempts' trajectories (12x the parent's completion tokens per task), and the refusal names it."""
    make, parent, cand = runs
    run_id = make(10, 1, cand_tokens=2400)
    ws = builder.workspace
    before = head(ws)
    outcome = promote_run(ws, [run_id])
    assert outcome.status == "refused" and head(ws) == before
    assert ("price 12.00x the parent's completion tokens per heldout task (2400 vs 200) is above max_token_ratio 10"
            in outcome.decision.reason)
    assert outcome.decision.prices["parent"].prompt_tokens_per_task == 50.0  # the prompt is priced too
    done = promote_cli("promote", run_id, cwd=ws.root)
    assert done.returncode == 1 and "not promoted" in done.stdout, done.stderr
    assert "price 12.00x the parent's completion tokens" in done.stdout.replace("\n", " ")
    assert "at 12.0x the parent's completion tokens (2400 vs 200), 1.0x its prompt tokens (50 vs 50)" in done.stdout
    # a promotion within the price records it in the commit
    cheap = promote_run(ws, [make(10, 1)])
    assert cheap.status == "promoted", cheap.decision.reason
    assert cheap.trailers["Evidence-Price"].startswith("at 1.0x the parent's completion tokens (200 vs 200)")
    assert "max_token_ratio=10.0" in cheap.trailers["Evidence-Gate"]


def test_refuses_when_candidate_not_better_on_heldout(builder, runs) -> None:
    make, parent, cand = runs
    run_id = make(4, 4)
    ws = builder.workspace
    before = head(ws)
    outcome = promote_run(ws, [run_id])
    assert outcome.status == "refused"
    assert outcome.decision.candidate.config_name == "repl-stepwise"
    assert "does not lie above min_lift" in outcome.decision.reason
    assert head(ws) == before and "hcp/default/r2" not in tags(ws)


def test_refuses_without_heldout_evidence_with_hint(builder, runs, planned) -> None:
    make, parent, cand = runs
    run_id = make(0, 0, heldout_tasks=0)
    outcome = promote_run(builder.workspace, [run_id])
    assert outcome.status == "refused" and "no heldout tasks" in outcome.decision.reason
    assert "--split heldout" in outcome.decision.hint


def test_gate_reads_the_contracts_evaluation_gate(builder, runs) -> None:
    from rsi.contracts.revisions import revise_contract

    make, parent, cand = runs
    run_id = make(4, 4)
    ws = builder.workspace
    revise_contract(ws, "default", {"evaluation.gate.enabled": False}, "promote on evidence alone")
    outcome = promote_run(ws, [run_id])
    assert outcome.status == "promoted" and "gate disabled" in outcome.decision.reason
    assert outcome.revision == 3


def test_dry_run_changes_nothing_and_shows_the_diff(builder, runs) -> None:
    make, parent, cand = runs
    run_id = make(10, 1)
    ws = builder.workspace
    path = ws.root / "hcp" / "default.toml"
    before_text, before_head, before_tags = path.read_text(), head(ws), tags(ws)
    outcome = promote_run(ws, [run_id], dry_run=True)
    assert outcome.status == "dry-run"
    changed = {change.key: (change.old, change.new) for change in outcome.diff.changes}
    assert changed["harness.prompt_style"] == ("plain", "stepwise")
    assert changed["harness.max_turns"] == (4, 6)
    assert changed["harness.version"] == (1, 2)
    assert outcome.sets == {"harness.max_turns": 6, "harness.prompt_style": "stepwise"}
    assert path.read_text() == before_text and head(ws) == before_head and tags(ws) == before_tags
    assert not git.Repo(ws.root).is_dirty(untracked_files=True)


@pytest.mark.slow
def test_cli_promote_dry_run_and_refusal_exit_codes(builder, runs, promote_cli) -> None:
    make, parent, cand = runs
    ws = builder.workspace
    good, bad = make(10, 1), make(4, 4)
    dry = promote_cli("promote", good, "--dry-run", cwd=ws.root)
    assert dry.returncode == 0, dry.stderr
    assert "harness.prompt_style" in dry.stdout and "Decision-Hash" in dry.stdout
    refused = promote_cli("promote", bad, cwd=ws.root)
    assert refused.returncode == 1 and "not promoted" in refused.stdout
    missing = promote_cli("promote", "no-such-run", cwd=ws.root)
    assert missing.returncode == 2 and "no run no-such-run" in missing.stderr and "Traceback" not in missing.stderr
    done = promote_cli("promote", good, "--json", cwd=ws.root)
    assert done.returncode == 0, done.stderr
    assert '"status": "promoted"' in done.stdout
    assert tags(ws).count("hcp/default/r2") == 1


# Crash injection: the subprocess SIGKILLs itself at one exact point of the real promotion.
# `_tag` is also called for r1 (tagging the untagged first revision) before anything is written, so it
# dies only when asked to tag r2, the revision this promotion writes.
KILL_AT = """
import os, signal
import rsi.contracts.revisions as _revisions
_real = _revisions.{target}
def _die(*args, **kwargs):
    if "{target}" != "_tag" or args[2] >= 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return _real(*args, **kwargs)
_revisions.{target} = _die
"""


@pytest.mark.slow
@pytest.mark.parametrize("target", ["_commit_only", "_tag", "_write_atomic"])
def test_kill_during_promote_then_rerun_gives_exactly_one_revision(builder, runs, target, promote_cli) -> None:
    make, parent, cand = runs
    run_id = make(10, 1)
    ws = builder.workspace
    before = head(ws)
    crashed = promote_cli("promote", run_id, cwd=ws.root, prelude=KILL_AT.format(target=target))
    assert crashed.returncode == -signal.SIGKILL
    repo = git.Repo(ws.root)
    if target == "_tag":  # killed after the commit: complete revision, tag pending
        assert repo.head.commit.hexsha != before and "hcp/default/r2" not in tags(ws)
    else:  # killed before the commit: no commit, no tag
        assert repo.head.commit.hexsha == before and "hcp/default/r2" not in tags(ws)
    rerun = promote_cli("promote", run_id, "--json", cwd=ws.root)
    assert rerun.returncode == 0, rerun.stderr
    assert ('"status": "already"' if target == "_tag" else '"status": "promoted"') in rerun.stdout
    assert "hcp/default/r2" in tags(ws) and "hcp/default/r3" not in tags(ws)
    repo = git.Repo(ws.root)
    assert repo.tags["hcp/default/r2"].commit.hexsha == repo.head.commit.hexsha
    assert not repo.is_dirty(untracked_files=True)
    revisions = [c for c in repo.iter_commits(paths="hcp/default.toml")
                 if parse_commit_message(str(c.message))[2].get("HCP-Revision") == "2"]
    assert len(revisions) == 1
    third = promote_cli("promote", run_id, "--json", cwd=ws.root)
    assert '"status": "already"' in third.stdout and repo.head.commit.hexsha == revisions[0].hexsha


def test_weak_evidence_is_refused_unless_allowed_and_the_commit_says_so(builder, planned) -> None:
    """Half the evidence from a weak sandbox: refused (nothing written); allowed, the trailer records it."""
    parent = builder.parent_config()
    cand = builder.config("repl-stepwise", **{"harness.prompt_style": "stepwise", "harness.max_turns": 6})
    train, heldout = builder.train_ids(), builder.heldout_ids()
    plan = [planned(cand, t, sandbox=WEAK) for t in train[:8]]
    plan += [planned(parent, t, verdict="failed", sandbox=STRONG) for t in train[:8]]
    plan += [planned(cand, t, sandbox=WEAK) for t in heldout[:10]]
    plan += [planned(parent, t, verdict="failed", sandbox=STRONG) for t in heldout[:10]]
    plan.append(planned(parent, train[9], verdict="error", sandbox=WEAK))  # errors are no evidence
    run_id = builder.run(plan)
    ws = builder.workspace
    before, tags_before = head(ws), tags(ws)
    with pytest.raises(WeakIsolationError) as refused:
        promote_run(ws, [run_id])
    assert refused.value.message == "refusing to promote: 18 of 36 attempts were weakly isolated (local-bare: WEAK, rlimits only)"
    assert head(ws) == before and tags(ws) == tags_before
    outcome = promote_run(ws, [run_id], allow_weak_isolation=True)
    assert outcome.status == "promoted", outcome.decision.reason
    trailers = parse_commit_message(str(git.Repo(ws.root).head.commit.message))[2]
    assert trailers["Evidence-Isolation"] == ("18/36 weakly isolated; 0 unrecorded; sandboxes: local-bare 18, "
                                              "local-namespaces 18 (allowed by --allow-weak-isolation)")
    assert outcome.summary()["isolation"]["weak_allowed"] is True


def test_unrecorded_isolation_is_recorded_as_such_and_not_refused(builder, runs) -> None:
    make, _, _ = runs
    outcome = promote_run(builder.workspace, [make(10, 1)])
    assert outcome.status == "promoted"
    trailers = parse_commit_message(str(git.Repo(builder.workspace.root).head.commit.message))[2]
    # The builder's trajectories record no sandbox (as noop attempts): counted as unrecorded, never refused.
    assert trailers["Evidence-Isolation"] == "0/44 weakly isolated; 44 unrecorded; sandboxes: none recorded"


def test_a_generation_defers_the_heldout_gate_to_its_evaluation_and_writes_nothing(builder, runs) -> None:
    make, parent, cand = runs
    run_id = make(0, 0, heldout_tasks=0)
    before = head(builder.workspace)
    outcome = promote_run(builder.workspace, [run_id], defer_heldout_gate=True)
    assert outcome.status == "deferred" and outcome.revision is None and head(builder.workspace) == before
    assert outcome.decision.candidate.config_hash == cand.config_hash  # the train evidence ranks it first
    assert outcome.sets == {"harness.max_turns": 6, "harness.prompt_style": "stepwise"}
    assert "heldout gate of this generation's evaluation" in outcome.notes[0]


def test_heldout_tasks_never_choose_the_deferred_configuration(builder, planned) -> None:
    # On heldout the candidate would win everything; on train the parent's configuration is better: the train
    # evidence alone chooses, so nothing is deferred (the parent's configuration is already the contract's).
    parent = builder.parent_config()
    cand = builder.config("repl-stepwise", **{"harness.prompt_style": "stepwise"})
    train, heldout = builder.train_ids(), builder.heldout_ids()
    plan = [planned(cand, t, verdict="passed" if i < 2 else "failed") for i, t in enumerate(train[:10])]
    plan += [planned(parent, t, verdict="passed" if i < 8 else "failed") for i, t in enumerate(train[:10])]
    plan += [planned(cand, t, verdict="passed") for t in heldout[:12]]
    run_id = builder.run(plan)
    outcome = promote_run(builder.workspace, [run_id], defer_heldout_gate=True)
    assert outcome.decision.selection_split == "train"
    assert outcome.decision.candidate.config_hash == parent.config_hash and outcome.status == "refused"
