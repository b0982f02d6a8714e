"""`rsi tasks examples`: public examples derived from a brought suite's instructions, written into task.toml
with its comments kept, loaded again, and proven (or refused) by `rsi tasks check` against the reference."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from rsi.tasks.load import load_suite

TASK_TOML = """\
# Converted from a docstring-style suite; the comments stay.
id = "below-zero"
title = "Below zero"   # as the source named it
split = "heldout"
"""

INSTRUCTION = '''\
Complete `solution.py`:

```python
def below_zero(operations):
    """ Whether a balance starting at zero ever falls below zero.
    >>> below_zero([1, 2, 3])
    False
    >>> below_zero([1, 2, -4, 5])
    True
    """
```
'''

REFERENCE = """\
def below_zero(operations):
    balance = 0
    for op in operations:
        balance += op
        if balance < 0:
            return True
    return False
"""

CASES = {"function": "below_zero", "cases": [
    {"args": [[]], "expected": False}, {"args": [[1, -2]], "expected": True}, {"args": [[5, -5]], "expected": False},
]}


def brought_suite(root: Path, instruction: str = INSTRUCTION, toml: str = TASK_TOML) -> Path:
    """A one-task suite as a user converting a docstring-style benchmark would write it: no [public]."""
    suite = root / "brought"
    task = suite / "below-zero"
    for folder in ("tests", "solution", "environment"):
        (task / folder).mkdir(parents=True)
    (suite / "suite.toml").write_text('[defaults.verifier]\nkind = "cases"\n')
    (task / "task.toml").write_text(toml)
    (task / "instruction.md").write_text(instruction)
    (task / "solution" / "solution.py").write_text(REFERENCE)
    (task / "environment" / "solution.py").write_text("def below_zero(operations):\n    raise NotImplementedError\n")
    (task / "tests" / "cases.json").write_text(json.dumps(CASES))
    return suite


def test_derive_then_write_round_trips_and_keeps_the_file(tmp_path: Path, cli) -> None:
    suite = brought_suite(tmp_path)
    toml = suite / "below-zero" / "task.toml"
    shown = cli("tasks", "examples", str(suite), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    # Both doctests, the last one too (its output is followed by the docstring's closing quotes).
    assert "brought/below-zero: + below_zero([1, 2, 3]) == False" in shown.stdout
    assert "brought/below-zero: + below_zero([1, 2, -4, 5]) == True" in shown.stdout
    assert "would add 2 examples to 1 of 1 tasks" in shown.stdout
    assert toml.read_text() == TASK_TOML  # without --write nothing changes

    written = cli("tasks", "examples", str(suite), "--write", "--json", cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    report = json.loads(written.stdout)
    assert report["written"] is True and report["examples"] == 2
    text = toml.read_text()
    assert text.startswith(TASK_TOML)  # comments, order and layout kept; the table is appended
    assert tomllib.loads(text)["public"]["examples"] == [
        {"call": "below_zero([1, 2, 3])", "expected": "False"},
        {"call": "below_zero([1, 2, -4, 5])", "expected": "True"},
    ]
    (task,) = load_suite(None, suite)
    assert [(e.call, e.expected) for e in task.spec.public.examples] == [
        ("below_zero([1, 2, 3])", "False"), ("below_zero([1, 2, -4, 5])", "True")]

    again = cli("tasks", "examples", str(suite), "--write", cwd=tmp_path)
    assert "added 0 examples to 0 of 1 tasks" in again.stdout and toml.read_text() == text  # idempotent

    checked = cli("tasks", "check", str(suite), "--sandbox", "local", "--json", cwd=tmp_path, timeout=300)
    assert checked.returncode == 0, checked.stdout
    public = [p for p in json.loads(checked.stdout)["results"][0]["probes"] if p["probe"] == "public"]
    assert public[0]["verdict"] == "passed" and public[0]["reason"] == "2/2 public checks passed"


def test_write_appends_to_declared_examples_in_their_own_layout(tmp_path: Path, cli) -> None:
    """A task that already declares some examples as [[public.examples]] tables gets the rest as tables."""
    declared = TASK_TOML + '\n[[public.examples]]\n# the first, by hand\ncall = "below_zero([1, 2, 3])"\nexpected = "False"\n'
    suite = brought_suite(tmp_path, toml=declared)
    done = cli("tasks", "examples", str(suite), "--write", cwd=tmp_path)
    assert "added 1 examples to 1 of 1 tasks" in done.stdout, done.stdout + done.stderr
    text = (suite / "below-zero" / "task.toml").read_text()
    assert text.startswith(declared) and text.count("[[public.examples]]") == 2
    assert tomllib.loads(text)["public"]["examples"][1] == {"call": "below_zero([1, 2, -4, 5])", "expected": "True"}


def test_tasks_check_refuses_an_example_that_contradicts_the_reference(tmp_path: Path, cli) -> None:
    """The instruction shows a wrong value (so the loader accepts the example): the reference refuses it."""
    suite = brought_suite(tmp_path, instruction=INSTRUCTION.replace("    True\n", "    False\n"))
    assert cli("tasks", "examples", str(suite), "--write", cwd=tmp_path).returncode == 0
    done = cli("tasks", "check", str(suite), "--sandbox", "local", cwd=tmp_path, timeout=300)
    assert done.returncode == 1
    assert ("FAIL brought/below-zero: [public] contradicts the reference solution: 1/2 public checks passed; "
            "examples[1] below_zero([1, 2, -4, 5]) returned True, expected False") in done.stdout
    assert "0/1 tasks sound" in done.stdout
