"""Revisions in real git: revise, tags, trailers, parents, comments, refusals, and crash safety."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from rsi.contracts.load import load_contract
from rsi.contracts.overrides import OverrideError
from rsi.contracts.refs import resolve_ref
from rsi.contracts.revisions import revise_contract, revision_log
from rsi.errors import ContractError, RevisionError, UserInputError


def git(workspace, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=workspace.root, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def tags(workspace) -> list[str]:
    return sorted(git(workspace, "tag", "-l", "hcp/default/*").split())


def trailers(workspace, rev: str) -> dict[str, str]:
    """Trailers as git itself parses them (proves they are real trailers, not just text)."""
    raw = git(workspace, "log", "-1", "--format=%(trailers:only,unfold)", f"{rev}^{{commit}}")
    return dict(line.split(": ", 1) for line in raw.splitlines() if line)


def test_three_revisions_tag_trailer_parent_and_keep_comments(workspace) -> None:
    path = workspace.contract_path("default")
    original = path.read_text()
    before = datetime.now(UTC) - timedelta(seconds=2)
    r2 = revise_contract(workspace, "default", {"harness.sampling.temperature": 0.7}, "warmer", {"Evidence-Run": "run-7"})
    r3 = revise_contract(workspace, "default", {"base.id": "SmolLM2-135M-Instruct-b"}, "another base build")
    r4 = revise_contract(workspace, "default", {"evaluation.seed": 5}, "new seed\n\nLonger explanation.")

    assert [r2.revision, r3.revision, r4.revision] == [2, 3, 4]
    assert tags(workspace) == ["hcp/default/r1", "hcp/default/r2", "hcp/default/r3", "hcp/default/r4"]
    assert r2.tagged == ["hcp/default/r1", "hcp/default/r2"]  # r1 tagged on first revise
    assert (r2.clocks_moved, r3.clocks_moved, r4.clocks_moved) == (["harness"], ["base"], [])

    for outcome, parent in ((r2, 1), (r3, 2), (r4, 3)):
        loaded = resolve_ref(workspace, f"default@r{outcome.revision}")
        assert loaded.spec.hcp.parent == parent == outcome.parent
        assert git(workspace, "rev-parse", f"{outcome.tag}^{{commit}}") == outcome.commit
        found = trailers(workspace, outcome.tag)
        assert found["HCP-Name"] == "default"
        assert found["HCP-Revision"] == str(outcome.revision)
        assert found["HCP-Parent"] == str(parent)
        assert found["HCP-Hash"] == loaded.content_hash == outcome.content_hash
        assert found["HCP-Clocks"] == (",".join(outcome.clocks_moved) or "none")
        assert git(workspace, "show", "--name-only", "--format=", outcome.commit) == "hcp/default.toml"
    assert trailers(workspace, r2.tag)["Evidence-Run"] == "run-7"
    assert git(workspace, "show", "-s", "--format=%s", r4.commit) == "hcp(default): r4: new seed"

    final = load_contract(path)
    assert final.spec.harness.version == 2 and final.spec.base.version == 2  # each moved clock bumped once
    assert final.spec.harness.sampling.temperature == 0.7
    assert before <= final.spec.hcp.created <= datetime.now(UTC) + timedelta(seconds=1)
    text = path.read_text()
    for line in original.splitlines():  # every comment of the shipped file survives
        if "#" in line:
            assert line.split("#", 1)[1] in text
    assert "temperature = 0.7      # greedy first; portfolios explore sampling" in text
    assert git(workspace, "status", "--porcelain") == ""


def test_revise_commits_only_the_contract_while_other_changes_stay_staged(workspace) -> None:
    other = workspace.root / "portfolios" / "default.toml"
    other.write_text(other.read_text() + "\n# a staged edit that is not part of the revision\n")
    git(workspace, "add", "portfolios/default.toml")
    outcome = revise_contract(workspace, "default", {"harness.max_turns": 5}, "more turns")
    assert git(workspace, "show", "--name-only", "--format=", outcome.commit) == "hcp/default.toml"
    assert git(workspace, "diff", "--cached", "--name-only") == "portfolios/default.toml"


@pytest.mark.parametrize("how", ["modified", "staged"])
def test_revise_refuses_a_dirty_contract(workspace, how: str, cli) -> None:
    path = workspace.contract_path("default")
    path.write_text(path.read_text().replace("max_turns = 4", "max_turns = 7"))
    if how == "staged":
        git(workspace, "add", "hcp/default.toml")
    edited = path.read_text()
    with pytest.raises(RevisionError, match="uncommitted edits"):
        revise_contract(workspace, "default", {"harness.max_turns": 5}, "x")
    result = cli("hcp", "revise", "default", "--set", "harness.max_turns=5", "-m", "x", cwd=workspace.root)
    assert result.returncode == 1 and "uncommitted edits" in result.stderr and "Traceback" not in result.stderr
    assert path.read_text() == edited  # the user's edit is untouched
    assert tags(workspace) == []


def test_revise_refuses_an_untracked_contract(workspace) -> None:
    source = workspace.contract_path("default").read_text().replace('name = "default"', 'name = "fresh"')
    workspace.contract_path("fresh").write_text(source)
    with pytest.raises(RevisionError, match="not committed"):
        revise_contract(workspace, "fresh", {"harness.max_turns": 5}, "x")


@pytest.mark.parametrize(
    ("sets", "error", "text"),
    [
        ({"harness.sampling.temprature": 0.5}, OverrideError, "did you mean 'temperature'"),
        ({"harness.max_turns": 0}, ContractError, "harness.max_turns"),
        ({"hcp.revision": 9}, OverrideError, "managed by"),
        ({"harness.max_turns": 4}, UserInputError, "nothing to revise"),
    ],
)
def test_revise_rejects_bad_changes_without_touching_anything(workspace, sets, error, text) -> None:
    path = workspace.contract_path("default")
    original = path.read_text()
    head = git(workspace, "rev-parse", "HEAD")
    with pytest.raises(error) as raised:
        revise_contract(workspace, "default", sets, "bad")
    assert text in "\n".join(raised.value.lines())
    assert path.read_text() == original and git(workspace, "rev-parse", "HEAD") == head
    assert git(workspace, "status", "--porcelain") == "" and tags(workspace) == []


def test_revise_cli_reads_values_as_toml_and_exits_2_on_bad_keys(workspace, cli) -> None:
    ok = cli(
        "hcp", "revise", "default", "--set", "harness.sampling.temperature=0.7", "--set", "harness.substrate=text",
        "--set", 'harness.tools=["submit"]', "--trailer", "Evidence-Run=r1", "-m", "text substrate", "--json",
        cwd=workspace.root,
    )
    assert ok.returncode == 0, ok.stderr
    spec = load_contract(workspace.contract_path("default")).spec
    assert spec.harness.sampling.temperature == 0.7 and spec.harness.substrate == "text"
    assert spec.harness.tools == ["submit"]
    bad = cli("hcp", "revise", "default", "--set", "harness.max_turn=3", "-m", "x", cwd=workspace.root)
    assert bad.returncode == 2 and "did you mean 'max_turns'" in bad.stderr and "Traceback" not in bad.stderr


def _crash_script(root: Path, patch: str, sets: str, message: str) -> str:
    return f"""
import os
from pathlib import Path
import rsi.contracts.revisions as revisions
from rsi.workspace import Workspace
{patch}
revisions.revise_contract(Workspace(Path({str(root)!r})), "default", {sets}, {message!r})
raise SystemExit("the crash point was never reached")
"""


def _run_crashing(workspace, patch: str, sets: str = '{"harness.max_turns": 5}', message: str = "more turns") -> None:
    env = {**os.environ}
    done = subprocess.run(
        [sys.executable, "-c", _crash_script(workspace.root, patch, sets, message)],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 9, done.stderr  # died by os._exit(9) at the crash point


def test_crash_between_write_and_commit_leaves_a_whole_contract_and_rerun_recovers(workspace, cli) -> None:
    path = workspace.contract_path("default")
    head = git(workspace, "rev-parse", "HEAD")
    _run_crashing(workspace, "revisions._commit_only = lambda *a, **k: os._exit(9)")

    # The new revision is on disk, whole and valid, but not committed.
    crashed = load_contract(path)
    assert crashed.revision == 2 and crashed.spec.harness.max_turns == 5
    assert git(workspace, "rev-parse", "HEAD") == head
    assert git(workspace, "status", "--porcelain") == "M hcp/default.toml"
    assert not list(path.parent.glob(".default.toml.*.tmp"))

    # Rerunning the same command finishes that revision instead of making another.
    rerun = cli("hcp", "revise", "default", "--set", "harness.max_turns=5", "-m", "more turns", cwd=workspace.root)
    assert rerun.returncode == 0, rerun.stderr
    assert "recovered" in rerun.stdout
    assert tags(workspace) == ["hcp/default/r1", "hcp/default/r2"]
    assert git(workspace, "status", "--porcelain") == ""
    assert trailers(workspace, "hcp/default/r2")["HCP-Revision"] == "2"
    assert load_contract(path).revision == 2

    # And the next revise builds on it normally.
    r3 = revise_contract(workspace, "default", {"harness.max_turns": 6}, "six")
    assert (r3.revision, r3.parent) == (3, 2)


def test_crash_between_write_and_commit_then_a_different_revise_commits_both(workspace) -> None:
    _run_crashing(workspace, "revisions._commit_only = lambda *a, **k: os._exit(9)")
    outcome = revise_contract(workspace, "default", {"harness.sampling.temperature": 0.7}, "warmer")
    assert (outcome.revision, outcome.parent) == (3, 2)
    log = revision_log(workspace, "default")
    assert [(e.revision, e.message) for e in log] == [
        (1, "rsi init: shipped contracts, portfolios and task suites"),
        (2, "more turns"),
        (3, "warmer"),
    ]


def test_crash_during_the_write_leaves_the_old_contract(workspace) -> None:
    path = workspace.contract_path("default")
    original = path.read_bytes()
    patch = (
        "real_replace = os.replace\n"
        "def replace(src, dst):\n"
        "    if str(dst).endswith('default.toml'):\n"
        "        os._exit(9)\n"
        "    real_replace(src, dst)\n"
        "os.replace = replace\n"
    )
    _run_crashing(workspace, patch)
    assert path.read_bytes() == original  # never half-written: the old text, byte for byte
    assert load_contract(path).revision == 1
    assert list(path.parent.glob(".default.toml.*.tmp"))  # the temp file is what the crash left

    outcome = revise_contract(workspace, "default", {"harness.max_turns": 5}, "more turns")
    assert outcome.revision == 2 and not outcome.recovered
    assert not list(path.parent.glob(".default.toml.*.tmp"))
    assert git(workspace, "status", "--porcelain") == ""


def test_crash_after_commit_before_tag_is_tagged_by_the_next_run(workspace) -> None:
    patch = (
        "real_tag = revisions._tag\n"
        "def tag(repo, name, revision, commit):\n"
        "    if revision == 2:\n"
        "        os._exit(9)\n"
        "    return real_tag(repo, name, revision, commit)\n"
        "revisions._tag = tag\n"
    )
    _run_crashing(workspace, patch)
    assert tags(workspace) == ["hcp/default/r1"]
    r2_commit = git(workspace, "rev-parse", "HEAD")
    outcome = revise_contract(workspace, "default", {"harness.max_turns": 6}, "six")
    assert outcome.revision == 3 and "hcp/default/r2" in outcome.tagged
    assert git(workspace, "rev-parse", "hcp/default/r2^{commit}") == r2_commit
    assert trailers(workspace, "hcp/default/r2")["HCP-Revision"] == "2"


def test_edits_after_a_crash_are_refused_not_committed(workspace) -> None:
    path = workspace.contract_path("default")
    _run_crashing(workspace, "revisions._commit_only = lambda *a, **k: os._exit(9)")
    path.write_text(path.read_text().replace("observation_chars = 1500", "observation_chars = 999"))
    with pytest.raises(RevisionError, match="interrupted revise"):
        revise_contract(workspace, "default", {"harness.max_turns": 5}, "more turns")
    assert "observation_chars = 999" in path.read_text()


def test_first_revision_is_tagged_so_name_at_r1_works(workspace) -> None:
    with pytest.raises(UserInputError, match="no tag hcp/default/r1"):
        resolve_ref(workspace, "default@r1")
    original = load_contract(workspace.contract_path("default"))
    revise_contract(workspace, "default", {"harness.max_turns": 5}, "more turns")
    assert resolve_ref(workspace, "default@r1").content_hash == original.content_hash


def test_log_lists_revisions_with_clocks_hashes_and_messages(workspace, cli) -> None:
    revise_contract(workspace, "default", {"harness.sampling.temperature": 0.7}, "warmer")
    revise_contract(workspace, "default", {"base.id": "other-base"}, "base swap")
    result = cli("hcp", "log", "default", "--json", cwd=workspace.root)
    assert result.returncode == 0, result.stderr
    import json

    entries = json.loads(result.stdout)
    assert [e["revision"] for e in entries] == [1, 2, 3]
    assert [e["clocks_moved"] for e in entries] == [[], ["harness"], ["base"]]
    assert [e["message"] for e in entries][1:] == ["warmer", "base swap"]
    assert entries[2]["content_hash"] == load_contract(workspace.contract_path("default")).content_hash
    assert all(e["tag"] == f"hcp/default/r{e['revision']}" for e in entries)
    assert all(e["date"].endswith("+00:00") for e in entries)
    plain = cli("hcp", "log", "default", cwd=workspace.root)
    assert plain.stdout.splitlines()[1].startswith("r2\t") and "\tharness\t" in plain.stdout.splitlines()[1]


def test_concurrent_revises_take_turns(workspace) -> None:
    """Two processes revising one contract at once: both land, as consecutive revisions."""
    procs = [
        subprocess.Popen(
            [
                sys.executable, "-c",
                "from pathlib import Path; from rsi.contracts.revisions import revise_contract;"
                "from rsi.workspace import Workspace;"
                f"revise_contract(Workspace(Path({str(workspace.root)!r})), 'default', "
                f"{{'harness.max_turns': {turns}}}, 'turns {turns}')",
            ],
            stderr=subprocess.PIPE, text=True,
        )
        for turns in (7, 8)
    ]
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.stderr.read() if proc.stderr else ""
    log = revision_log(workspace, "default")
    assert [e.revision for e in log] == [1, 2, 3]
    assert sorted(e.message for e in log[1:]) == ["turns 7", "turns 8"]
    assert tags(workspace) == ["hcp/default/r1", "hcp/default/r2", "hcp/default/r3"]
    assert git(workspace, "status", "--porcelain") == ""


def test_name_ref_is_pinned_to_its_revision_only_while_it_matches_the_tag(workspace) -> None:
    assert resolve_ref(workspace, "default").ref == "default"  # r1 not tagged yet
    revise_contract(workspace, "default", {"harness.max_turns": 5}, "five")
    assert resolve_ref(workspace, "default").ref == "default@r2"
    path = workspace.contract_path("default")
    path.write_text(path.read_text().replace("max_turns = 5", "max_turns = 6"))
    assert resolve_ref(workspace, "default").ref == "default"  # an uncommitted edit is not r2
