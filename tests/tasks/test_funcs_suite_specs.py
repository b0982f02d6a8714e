"""scripts/make_funcs_suite.py reads the pyfuncs2 task specs from data files; a bad file is a located error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "make_funcs_suite.py"

GOOD = """\
[[task]]
id = "add-two"
title = "Add two"
difficulty = "trivial"
tags = ["math"]
rule = "Return `a` plus `b`."
reference = '''
def add_two(a, b):
    return a + b
'''
cases = '''
[1, 2]
[[1], [2, "x\\\\n"]]
[null, 0.1]
'''
"""


@pytest.fixture
def gen(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "scripts"))
    import make_funcs_suite

    return make_funcs_suite


def test_a_spec_file_loads_into_tasks_with_exact_arguments(gen, tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text(GOOD, encoding="utf-8")
    [task] = gen.load_specs(tmp_path)
    assert (task.id, task.function, task.tags, task.pinned, task.compare) == (
        "add-two",
        "add_two",
        ("math",),
        None,
        "exact",
    )
    assert task.reference == "def add_two(a, b):\n    return a + b\n"
    assert task.cases == ((1, 2), ([1], [2, "x\\n"]), (None, 0.1))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda s: s.replace('title = "Add two"\n', ""), "a.toml task 1 (id 'add-two') key 'title': missing"),
        (lambda s: s.replace('tags = ["math"]', "tags = 3"), "key 'tags': expected a list of strings"),
        (lambda s: s + 'colour = "red"\n', "a.toml task 1 (id 'add-two') key 'colour': unknown"),
        (lambda s: s.replace("[null, 0.1]", "(None, 0.1)"), "key 'cases' line 3: not JSON"),
        (lambda s: s.replace("[1, 2]", '"a"'), "key 'cases' line 1: not a JSON array"),
        (lambda s: s.replace("[[task]]", "[[task]"), "a.toml: not TOML"),
        (lambda s: s + 'split = "heldut"\n', "key 'split': 'heldut' is not one of train, heldout, test"),
        (lambda s: s + 'compare = "approx"\n', "key 'compare': 'approx' is not one of exact, float, unordered"),
    ],
)
def test_a_bad_spec_names_file_task_and_key(gen, tmp_path: Path, edit, message: str) -> None:
    (tmp_path / "a.toml").write_text(edit(GOOD), encoding="utf-8")
    with pytest.raises(gen.SpecError) as err:
        gen.load_specs(tmp_path)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_the_shipped_specs_hold_every_task_once(gen) -> None:
    """The four drawn difficulty groups (260), the four pinned v2 heldout groups (120), then the sealed test files."""
    names = [p.name for p in sorted(gen.SPECS_DIR.glob("*.toml"))]
    assert "09-test-numbers-strings.toml" in names and len(names) >= 9
    assert len({t.id for t in gen.TASKS}) == len(gen.TASKS)
    assert sum(t.pinned is None for t in gen.TASKS) == 260
    assert sum(t.pinned == "heldout" for t in gen.TASKS) == 120
    assert {t.pinned for t in gen.TASKS} == {None, "heldout", "test"}
    test = [t for t in gen.TASKS if t.pinned == "test"]
    assert len(test) >= 250  # issue 47: a sealed split of at least 250 tasks
    assert {t.difficulty for t in test} == {"trivial", "easy", "medium", "hard"}


def test_a_broken_spec_file_stops_the_script_with_one_line_and_status_2(tmp_path: Path) -> None:
    """Run a copy of the script beside a broken spec folder: one located line on stderr, exit 2, no traceback."""
    scripts = tmp_path / "scripts"
    (scripts / "pyfuncs2_specs").mkdir(parents=True)
    (scripts / "make_funcs_suite.py").write_text(SCRIPT.read_text(encoding="utf-8"), encoding="utf-8")
    (scripts / "pyfuncs2_specs" / "01-x.toml").write_text(
        GOOD.replace('difficulty = "trivial"\n', ""), encoding="utf-8"
    )
    done = subprocess.run(
        [sys.executable, str(scripts / "make_funcs_suite.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert (
        done.stderr
        == "error: scripts/pyfuncs2_specs/01-x.toml task 1 (id 'add-two') key 'difficulty': missing\n"
    )


def test_the_values_a_spec_may_take_are_the_task_formats_own(gen) -> None:
    """The generator's allowed `split` and `compare` values cannot drift from what rsi's task format accepts."""
    from typing import get_args

    from rsi.tasks.spec import CompareMode, TaskSpec

    assert gen.ALLOWED["compare"] == get_args(CompareMode)
    assert gen.ALLOWED["split"] == get_args(TaskSpec.model_fields["split"].annotation)
