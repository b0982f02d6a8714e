"""Building library revisions from real stored runs: train passes only, growth, content addressing, errors."""

from __future__ import annotations

import json

import pytest

from rsi.contracts.hashing import sha256_text
from rsi.errors import UserInputError
from rsi.experience.library import (
    ENTRIES,
    MANIFEST,
    ContaminationError,
    growth,
    list_revisions,
    new_manifest,
    read_library,
    write_revision,
)
from rsi.trajectories.experience import build_experience
from tests.experience.conftest import entry


@pytest.fixture
def runs(builder, planned):
    """A search run (train and heldout passes, failures, a duplicate solution) and a harvest-like second run."""
    a = builder.config("repl-greedy")
    b = builder.config("repl-hot", **{"harness.sampling.temperature": 0.7})
    train, heldout = builder.train_ids(), builder.heldout_ids()
    same = "def f(x):\n    return x + 1\n"
    first = builder.run([
        planned(a, train[0], tokens=300, code=same),
        planned(b, train[0], tokens=100, code="def f(x):\n    return (x+1)  # the same solution\n"),
        planned(a, train[1], tokens=50),
        planned(a, train[2], verdict="failed"),
        planned(a, heldout[0], tokens=5), planned(b, heldout[1], tokens=5),
    ])
    second = builder.run([planned(b, train[0], tokens=80), planned(a, train[3], tokens=60),
                          planned(a, heldout[2], tokens=5)])
    return builder, first, second


def test_a_first_build_holds_the_distinct_passing_train_solutions_with_their_provenance(runs) -> None:
    builder, first, _ = runs
    root = builder.workspace.runs_dir / "experience"
    outcome = build_experience(builder.workspace, [first])
    assert (outcome.revision, outcome.parent, outcome.written) == ("r1", "", True)
    library = read_library(root, "r1")
    train = builder.train_ids()
    keys = [e.task_key for e in library.entries]
    assert sorted(keys) == sorted([builder.tasks[train[0]].key, builder.tasks[train[1]].key])  # one t0 (same code)
    assert not set(keys) & {builder.tasks[t].key for t in builder.heldout_ids()}
    t0 = next(e for e in library.entries if e.task_key == builder.tasks[train[0]].key)
    assert t0.tokens == 100 and t0.config_name == "repl-hot"  # the cheapest attempt of the distinct solution
    assert t0.instruction == builder.tasks[train[0]].instruction and t0.task_hash == builder.tasks[train[0]].content_hash
    assert t0.run_id == first and t0.attempt_id.startswith(f"{first}|") and "return" in t0.code
    manifest = library.manifest
    assert manifest.refused == {"heldout task": 2, "not passed": 1}
    assert (manifest.entries, manifest.tasks, manifest.added_entries, manifest.tasks_new) == (2, 2, 2, 2)
    assert manifest.sources == [first] and manifest.lineage == [] and outcome.sets["harness.experience"] == "r1"
    # the check covers every suite of the workspace: pyfuncs' heldout tasks and pyfuncs2's alike
    assert {builder.tasks[t].key for t in builder.heldout_ids()} < set(manifest.heldout_keys)
    assert "pyfuncs2/factorial" in manifest.heldout_keys


def test_a_train_task_twin_of_another_suites_heldout_task_is_refused_and_named(builder, planned) -> None:
    """pyfuncs/factorial (train) asks for the function pyfuncs2/factorial (heldout) asks for: never in the library,
    and a parent revision that holds it (built before the check) does not carry it forward."""
    a = builder.config("repl-greedy")
    clean = builder.train_ids()[0]
    run = builder.run([planned(a, "factorial", tokens=30), planned(a, clean, tokens=40)])
    outcome = build_experience(builder.workspace, [run])
    reason = "pyfuncs/factorial duplicates pyfuncs2/factorial (heldout)"
    assert outcome.refused == {reason: 1}
    library = read_library(builder.workspace.runs_dir / "experience", outcome.revision)
    assert [e.task_key for e in library.entries] == [builder.tasks[clean].key]
    assert library.manifest.refused == {reason: 1}
    # a parent written before the check, holding the twin: the next build leaves it out and says why
    root = builder.workspace.runs_dir / "experience"
    factorial = builder.tasks["factorial"]
    old = entry("factorial", factorial.instruction).model_copy(update={"task_key": factorial.key,
                                                                        "task_hash": factorial.content_hash})
    manifest, text = new_manifest("", [], [old, *library.entries], 0, set(), [], {}, [], [])
    parent, _ = write_revision(root, manifest, text)
    grown = build_experience(builder.workspace, [run], parent=parent)
    assert grown.grew and grown.refused == {reason: 1, f"parent entry: {reason}": 1}
    assert [e.task_key for e in read_library(root, grown.revision).entries] == [builder.tasks[clean].key]


def test_growth_lineage_and_no_second_revision_for_the_same_content(runs) -> None:
    builder, first, second = runs
    root = builder.workspace.runs_dir / "experience"
    build_experience(builder.workspace, [first])
    grown = build_experience(builder.workspace, [second], parent="r1")
    assert (grown.revision, grown.parent, grown.added_entries, grown.tasks_new) == ("r2", "r1", 2, 1)
    assert read_library(root, "r2").manifest.lineage == ["r1"]
    assert growth(root, "r1", "r2").as_text().startswith("+2 entries, 1 tasks new")
    # the same build again (a rerun after a crash past the write): the existing revision, none written
    again = build_experience(builder.workspace, [second], parent="r1")
    assert (again.revision, again.written) == ("r2", False)
    # nothing new on top of r2
    same = build_experience(builder.workspace, [first, second], parent="r2")
    assert (same.revision, same.grew) == ("r2", False) and "nothing new" in same.as_text()
    assert list_revisions(root) == ["r1", "r2"]


def test_a_heldout_task_carried_by_a_parent_is_refused(runs) -> None:
    """A suite re-split after a revision was built: the next build refuses to carry the now-heldout task."""
    builder, first, _ = runs
    root = builder.workspace.runs_dir / "experience"
    heldout = builder.tasks[builder.heldout_ids()[0]]
    leaked = entry("x", "leak").model_copy(update={"task_key": heldout.key, "task_hash": "other"})
    manifest, text = new_manifest("", [], [leaked], 0, set(), [], {}, [], [])
    write_revision(root, manifest, text)
    with pytest.raises(ContaminationError, match=heldout.key):
        build_experience(builder.workspace, [first], parent="r1")


def test_a_renamed_copy_of_a_heldout_task_is_refused_by_content_hash() -> None:
    from rsi.promotion.evidence import ScoredAttempt
    from rsi.trajectories.experience import collect_entries
    from rsi.verdict import Verdict

    record = ScoredAttempt("a1", "run", "c" * 16, "c", "s/copy", "H", "train", Verdict.PASSED, trajectory_path="x")
    found = collect_entries([record], {"s/copy": object()}, heldout_keys=set(), heldout_hashes={"H"})
    assert found.entries == [] and found.refused == {"heldout content hash": 1}


def test_content_addressing_and_malformed_files_are_located_errors(runs) -> None:
    builder, first, _ = runs
    root = builder.workspace.runs_dir / "experience"
    outcome = build_experience(builder.workspace, [first])
    read_library(root, "r1", outcome.content_sha256)  # the contract's pin matches
    with pytest.raises(UserInputError, match="the contract"):
        read_library(root, "r1", "0" * 64)
    path = root / "r1" / ENTRIES
    lines = path.read_text().splitlines()
    path.write_text(lines[0] + "\n{not json\n")
    with pytest.raises(UserInputError, match="is not the"):
        read_library(root, "r1")  # the digest no longer matches
    manifest = json.loads((root / "r1" / MANIFEST).read_text())
    wrong_split = json.dumps({**json.loads(lines[1]), "split": "heldout"})
    for bad, where in (("{not json", f"{ENTRIES}:2: not an experience entry"),
                       (wrong_split, f"{ENTRIES}:2: not an experience entry: split")):
        path.write_text(lines[0] + "\n" + bad + "\n")
        (root / "r1" / MANIFEST).write_text(json.dumps({**manifest, "content_sha256": sha256_text(path.read_text())}))
        with pytest.raises(UserInputError, match=where.replace(".", r"\.")):
            read_library(root, "r1")
    (root / "r1" / MANIFEST).write_text("{}")
    with pytest.raises(UserInputError, match=f"{MANIFEST}: not an experience manifest"):
        read_library(root, "r1")
    with pytest.raises(UserInputError, match="does not exist"):
        read_library(root, "r9")
