"""scripts/make_ui_suite.py writes tasks/ui/ from data files; a bad spec is a located error, never a task."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "make_ui_suite.py"
SUITE = REPO / "tasks" / "ui"

GOOD = """\
[[task]]
id = "counter"
title = "Counter"
difficulty = "trivial"
tags = ["state"]
instruction = '''
The count, in an element with id "count", starts at 0; a button labelled "Increment" adds one.
For example, one click shows 1.
'''
body = '<p id="count">0</p><button>Increment</button>'
script = '''
document.querySelector("button").onclick = () => { document.getElementById("count").textContent = "1"; };
'''

[[task.public]]
check = "interact"
steps = [{click = {role = "button", name = "Increment"}}]
expect = [{text = "1", selector = "#count"}]

[[task.hidden]]
check = "text"
text = "0"
selector = "#count"
"""


@pytest.fixture
def gen(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "scripts"))
    import make_ui_suite

    return make_ui_suite


def test_the_shipped_suite_is_what_its_generator_writes() -> None:
    """A hand edit of tasks/ui/, or a spec edit without a rebuild, drifts from the specs."""
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_shipped_suite_has_the_promised_size_split_and_shape() -> None:
    specs = [tomllib.loads(p.read_text(encoding="utf-8")) for p in sorted(SUITE.glob("*/task.toml"))]
    assert len(specs) >= 44
    heldout = [s for s in specs if s["split"] == "heldout"]
    assert 0.28 <= len(heldout) / len(specs) <= 0.38
    assert (
        {s["difficulty"] for s in heldout}
        == {s["difficulty"] for s in specs}
        == {"trivial", "easy", "medium"}
    )
    for spec in specs:
        folder = SUITE / spec["id"]
        hidden = tomllib.loads((folder / "tests" / "checks.toml").read_text(encoding="utf-8"))["check"]
        names = {c["check"] for c in hidden}
        assert {"loads", "no-uncaught-errors", "no-external-requests", "max-bytes", "not-blank"} <= names
        assert names & {"element", "text", "interact"}, spec["id"]
        for public in spec.get("public", {}).get("checks", []):
            assert public in hidden, f"{spec['id']}: a public check the verdict does not run"
        assert any(c["id"].startswith("hidden-") for c in hidden), (
            f"{spec['id']}: nothing beyond the public checks"
        )
        stub = (folder / "environment" / "index.html").read_text(encoding="utf-8")
        assert "<script" not in stub and "<title>" in stub


def test_a_spec_file_loads_into_a_task_and_its_files(gen, tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text(GOOD, encoding="utf-8")
    [task] = gen.load_specs(tmp_path)
    assert gen.check_spec(task) == []
    files = gen.task_files(task, "train")
    checks = tomllib.loads(files["tests/checks.toml"])["check"]
    assert [c["id"] for c in checks][:3] == ["loads", "no-uncaught-errors", "no-failed-requests"]
    assert [c["id"] for c in checks if c["id"].startswith(("public", "hidden"))] == ["hidden-1", "public-1"]
    assert tomllib.loads(files["task.toml"])["public"]["checks"][0]["steps"] == [
        {"click": {"role": "button", "name": "Increment"}}
    ]
    assert '<p id="count">0</p>' in files["solution/index.html"]
    assert 'id="count"' not in files["environment/index.html"]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda s: s.replace('title = "Counter"\n', ""), "a.toml task 1 (id 'counter') key 'title': missing"),
        (
            lambda s: s.replace('check = "text"', 'check = "txt"'),
            "hidden check 1 key 'check': 'txt' is not one",
        ),
        (
            lambda s: s.replace("{click = {role", "{tap = {role"),
            "public check 1 key 'steps' item 1: a step is one of",
        ),
        (
            lambda s: s.replace('expect = [{text = "1"', 'expect = [{txt = "1"'),
            "public check 1 key 'expect' item 1: an expectation is",
        ),
        (lambda s: s.replace('text = "0"', "text = 0"), "hidden check 1 key 'text': expected a string"),
        (lambda s: s + 'colour = "red"\n', "unknown"),
    ],
)
def test_a_bad_spec_stops_the_build_with_one_located_line(gen, tmp_path: Path, edit, message: str) -> None:
    (tmp_path / "a.toml").write_text(edit(GOOD), encoding="utf-8")
    with pytest.raises(gen.SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        gen.load_specs(tmp_path)


def test_a_name_the_instruction_never_gives_is_refused(gen, tmp_path: Path) -> None:
    """The agent reads only the instruction: a check on a label it never states could not be met."""
    (tmp_path / "a.toml").write_text(GOOD.replace('name = "Increment"', 'name = "Add"'), encoding="utf-8")
    [task] = gen.load_specs(tmp_path)
    assert gen.check_spec(task) == ["counter: the instruction never names 'Add' (in double quotes)"]


def test_a_check_naming_an_id_the_reference_lacks_is_refused(gen, tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text(
        GOOD.replace('"count"', '"total"').replace('id "total"', 'id "count"'), encoding="utf-8"
    )
    [task] = gen.load_specs(tmp_path)
    assert gen.check_spec(task) == ["counter: the reference has no element with id 'count'"]


def test_splits_are_drawn_by_stratum_and_families_stay_together(gen) -> None:
    tasks = gen.load_specs()
    splits = gen.keep_families_together(tasks, gen.assign_splits(tasks))
    assert splits == gen.keep_families_together(tasks, gen.assign_splits(tasks))  # seeded, not random
    families: dict[str, set[str]] = {}
    for task in tasks:
        if task.family:
            families.setdefault(task.family, set()).add(splits[task.id])
    assert families and all(len(seen) == 1 for seen in families.values())
    assert sum(1 for s in splits.values() if s == "heldout") == round(len(tasks) / 3)
