"""`rsi experience build/show`, `rsi diff` naming the library's growth, a SIGKILL right after a revision is written
(exactly one revision after the rerun), and a generation growing the library into its candidate contract."""

from __future__ import annotations

import json
import signal

import pytest

from rsi.experience.library import list_revisions, read_library
from rsi.generation.outputs import ExportOutput
from tests.experience.conftest import generation_at
from tests.promotion.stored_runs import rsi_promote_cli


@pytest.fixture
def two_runs(builder, planned):
    a = builder.config("repl-greedy")
    train, heldout = builder.train_ids(), builder.heldout_ids()
    first = builder.run([planned(a, train[0]), planned(a, train[1]), planned(a, heldout[0])])
    second = builder.run([planned(a, train[2]), planned(a, train[3]), planned(a, train[0], tokens=7)])
    return builder, first, second


def cli(builder, *args, **kwargs):
    return rsi_promote_cli(*args, cwd=builder.workspace.root, **kwargs)


def test_build_show_revise_and_diff_name_the_growth(two_runs) -> None:
    builder, first, second = two_runs
    built = cli(builder, "experience", "build", first, "--contract", "default", "--json")
    assert built.returncode == 0, built.stderr
    one = json.loads(built.stdout)
    assert (one["revision"], one["parent"], one["entries"]) == ("r1", "", 2) and one["refused"] == {"heldout task": 1}
    sets = [f"--set={key}={value}" for key, value in one["sets"].items()]
    assert cli(builder, "hcp", "revise", "default", *sets, "-m", "experience r1").returncode == 0
    grown = json.loads(cli(builder, "experience", "build", second, "--contract", "default", "--json").stdout)
    assert (grown["revision"], grown["parent"], grown["added_entries"], grown["tasks_new"]) == ("r2", "r1", 3, 2)
    sets = [f"--set={key}={value}" for key, value in grown["sets"].items()]
    assert cli(builder, "hcp", "revise", "default", *sets, "-m", "experience r2").returncode == 0
    diff = cli(builder, "diff", "default@r2", "default@r3")
    assert diff.returncode == 1, diff.stderr
    assert "experience library r1 -> r2: +3 entries, 2 tasks new" in diff.stdout
    assert json.loads(cli(builder, "diff", "default@r2", "default@r3", "--json").stdout)["experience"]["added"] == 3
    shown = cli(builder, "experience", "show")
    assert shown.returncode == 0 and "experience r2 (lineage r1 -> r2)" in shown.stdout
    assert "+3 entries, 2 tasks new" in shown.stdout
    bad = cli(builder, "experience", "build", first, "--contract", "default", "--parent", "r1")
    assert bad.returncode == 2 and "not both" in bad.stderr


def test_a_build_killed_after_writing_its_revision_leaves_exactly_one(two_runs) -> None:
    builder, first, _ = two_runs
    root = builder.workspace.runs_dir / "experience"
    killed = cli(builder, "experience", "build", first, env={"RSI_TEST_CRASH_AT": "experience:written"})
    assert killed.returncode == -signal.SIGKILL
    assert list_revisions(root) == ["r1"]
    rerun = json.loads(cli(builder, "experience", "build", first, "--json").stdout)
    assert (rerun["revision"], rerun["written"]) == ("r1", False)
    assert list_revisions(root) == ["r1"] and read_library(root, "r1").manifest.entries == 2


def _generation(workspace, number, run_id, previous=None):
    return generation_at(workspace, number, run_id, previous, experience=True)


def test_a_generation_grows_the_library_records_it_and_carries_it_into_the_candidate(two_runs) -> None:
    builder, first, second = two_runs
    g1 = _generation(builder.workspace, 1, first)
    g1.grow_experience([first])
    grown = g1.state.outputs(ExportOutput).experience
    assert (grown.revision, grown.parent, grown.entries, grown.written) == ("r1", "", 2, True)
    assert g1.experience_sets() == {"harness.experience": "r1", "harness.experience_sha256": grown.content_sha256}
    g1.grow_experience([first])  # the step again (a resume): no second revision
    assert list_revisions(builder.workspace.runs_dir / "experience") == ["r1"]
    # the next generation extends what the last one grew, though the contract never took it (adapter rejected)
    g2 = _generation(builder.workspace, 2, second, previous="g0001")
    g2.grow_experience([second])
    assert (g2.state.outputs(ExportOutput).experience.revision, g2.state.outputs(ExportOutput).experience.parent) == (
        "r2", "r1")
