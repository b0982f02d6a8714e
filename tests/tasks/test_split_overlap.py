"""No heldout task is a train task in disguise: every shipped function suite, every train x heldout pair.

The measures and limits live in scripts/split_overlap.py (docs/tasks.md, "Split overlap", shows the
distributions they were read from); the generator of pyfuncs2 uses the same module to keep
near-duplicate families in one split. These tests check the shipped suites against it and check that
the measures have teeth: a renamed copy and a sibling task are caught, unrelated tasks are not.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from rsi.tasks.load import load_suite
from rsi.workspace import shipped_root

REPO = Path(__file__).resolve().parents[2]
TASKS = shipped_root() / "tasks"
FUNCTION_SUITES = sorted(
    p.name
    for p in TASKS.iterdir()
    if p.is_dir() and (p / "suite.toml").is_file() and 'kind = "cases"' in (p / "suite.toml").read_text()
)


def _load_overlap():
    spec = importlib.util.spec_from_file_location("split_overlap", REPO / "scripts" / "split_overlap.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["split_overlap"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


overlap = _load_overlap()


@pytest.fixture(scope="module")
def profiles():
    return {suite: overlap.profile_suite(TASKS / suite) for suite in FUNCTION_SUITES}


def test_both_function_suites_are_checked() -> None:
    assert {"pyfuncs", "pyfuncs2"} <= set(FUNCTION_SUITES)


@pytest.mark.parametrize("suite", FUNCTION_SUITES)
def test_no_near_duplicate_straddles_the_splits(suite: str, profiles) -> None:
    pairs = overlap.cross_pairs(profiles[suite])
    train = sum(1 for p in profiles[suite] if p.split == "train")
    heldout = sum(1 for p in profiles[suite] if p.split == "heldout")
    assert len(pairs) == train * heldout > 0  # every pair was compared
    offenders = [
        f"{p.train} ~ {p.heldout} (text {p.text:.2f}, ast {p.ast:.2f})" for p in pairs if p.near_duplicate
    ]
    assert not offenders, "near-duplicates across train and heldout: " + "; ".join(offenders)


@pytest.mark.parametrize("suite", FUNCTION_SUITES)
def test_no_test_task_copies_a_train_or_heldout_task(suite: str, profiles) -> None:
    pairs = overlap.sealed_pairs(profiles[suite])
    earlier = sum(1 for p in profiles[suite] if p.split in ("train", "heldout"))
    test = sum(1 for p in profiles[suite] if p.split == "test")
    assert len(pairs) == earlier * test
    if suite == "pyfuncs2":
        assert test >= 250  # the sealed split exists and was compared
    offenders = [
        f"{p.train} ~ {p.heldout} (text {p.text:.2f}, ast {p.ast:.2f})" for p in pairs if p.near_duplicate
    ]
    assert not offenders, "near-duplicates of sealed test tasks: " + "; ".join(offenders)


def _profile(profiles, suite: str, task_id: str):
    return next(p for p in profiles[suite] if p.id == task_id)


def test_a_renamed_copy_is_a_near_duplicate(profiles) -> None:
    task = next(t for t in load_suite(None, TASKS / "pyfuncs") if t.id == "balanced-brackets")
    source = (task.solution_dir / "solution.py").read_text()
    renamed = source.replace("is_balanced(s)", "brackets_ok(text)").replace("in s:", "in text:")
    renamed = renamed.replace("stack", "pile").replace("pairs", "closers")
    assert renamed.count("text") == 2
    renamed = renamed.replace("'([{'", "'{[('")  # a changed constant changes nothing either
    instruction = (
        task.instruction.replace("is_balanced", "brackets_ok")
        .replace("(s)", "(text)")
        .replace("`s`", "`text`")
    )
    original = _profile(profiles, "pyfuncs", "balanced-brackets")
    copy = overlap.make_profile("copy", "heldout", instruction, "brackets_ok", renamed)
    pair = overlap.compare(original, copy)
    assert pair.text == 1.0 and pair.ast == 1.0 and pair.near_duplicate


def test_a_sibling_task_is_caught(profiles) -> None:
    """Inverse conversions with the same shape: pyfuncs2's generator had to keep them in one split."""
    a = _profile(profiles, "pyfuncs2", "minutes-to-seconds")
    b = _profile(profiles, "pyfuncs2", "seconds-to-minutes")
    assert overlap.compare(a, b).near_duplicate
    assert a.split == b.split


def test_unrelated_tasks_are_not_near_duplicates(profiles) -> None:
    pair = overlap.compare(
        _profile(profiles, "pyfuncs2", "evaluate-expression"), _profile(profiles, "pyfuncs2", "circle-area")
    )
    assert pair.text < 0.3 and pair.ast < 0.3 and not pair.near_duplicate


def test_normalization_drops_names_and_numbers() -> None:
    one = overlap.node_types("def f(a, b):\n    return a + 2 * b\n")
    two = overlap.node_types("def grow(x, y):\n    return x + 7 * y\n")
    other = overlap.node_types("def f(a, b):\n    return a - 2 * b\n")
    assert one == two and one != other  # operators are node types and stay
    words = overlap.rule_words(
        "    def f(xs, n):\n\nReturn the first `n` items of `xs`, at most 3.\n", "f", ["xs", "n"]
    )
    assert words == ("first", "<name>", "items", "<name>", "most", "<num>")


def test_the_limits_are_those_the_docs_justify() -> None:
    docs = (REPO / "docs" / "tasks.md").read_text(encoding="utf-8")
    for limit in (overlap.TEXT_LIMIT, overlap.AST_LIMIT, overlap.MEAN_LIMIT, overlap.AST_MIN_NODES):
        assert str(limit) in docs.split("### Split overlap", 1)[1], limit
