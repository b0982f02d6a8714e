"""Loading tasks and suites: round trip, suite defaults, located errors, content hash, workdirs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import tomli_w

from rsi.errors import TaskError
from rsi.tasks.load import (
    SuiteDefaults,
    content_hash,
    load_cases,
    load_suite,
    load_suite_defaults,
    load_task,
    prepare_workdir,
    resolve_task,
)
from rsi.tasks.spec import SuiteSpec, TaskSpec

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "tasks" / "pyfuncs"


def make_suite(tmp_path: Path, ids: tuple[str, ...] = ("add-two", "count-vowels", "subsets")) -> Path:
    """A small suite copied from the shipped one (real files, including its suite.toml)."""
    suite = tmp_path / "mini"
    suite.mkdir()
    shutil.copy(SHIPPED / "suite.toml", suite / "suite.toml")
    for task_id in ids:
        shutil.copytree(SHIPPED / task_id, suite / task_id)
    return suite


def test_round_trip_through_toml(tmp_path: Path) -> None:
    suite = make_suite(tmp_path)
    task = load_task(suite / "add-two", load_suite_defaults(suite))
    assert task.key == "mini/add-two"
    assert task.spec.title == "Add two numbers"
    assert task.spec.verifier.kind == "cases"
    assert "def add(a, b)" in task.instruction
    # Write the full normalized spec back as the task's own toml (no suite defaults): same spec.
    folder = suite / "add-two"
    (folder / "task.toml").write_bytes(tomli_w.dumps(task.spec.model_dump(mode="json")).encode())
    again = load_task(folder)
    assert again.spec == task.spec
    assert again.content_hash == task.content_hash


def test_suite_defaults_apply_and_tables_merge(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, ("add-two",))
    (suite / "suite.toml").write_text(
        'description = "x"\n[defaults]\nagent_timeout_s = 99\ndifficulty = "hard"\n'
        '[defaults.verifier]\nkind = "cases"\n[defaults.limits]\nwall_s = 7\ncpu_s = 3\n'
    )
    toml = suite / "add-two" / "task.toml"
    toml.write_text(toml.read_text().replace('difficulty = "trivial"\n', "") + "[limits]\ncpu_s = 5\n")
    task = load_task(suite / "add-two", load_suite_defaults(suite))
    assert task.spec.agent_timeout_s == 99
    assert task.spec.difficulty == "hard"  # from the defaults: the task no longer sets it
    assert task.spec.limits.wall_s == 7  # from the defaults' [limits]
    assert task.spec.limits.cpu_s == 5  # the task's own value wins, key by key
    assert task.spec.verifier.kind == "cases"
    # Loaded by its path alone, a task still gets its suite's defaults.
    assert load_task(suite / "add-two").spec == task.spec
    # With empty defaults it falls back to the model defaults (kind 'script' needs tests/test.sh).
    with pytest.raises(TaskError, match="test.sh is missing"):
        load_task(suite / "add-two", SuiteDefaults(SuiteSpec()))


def test_load_suite_sorted_and_problems_reported_together(tmp_path: Path) -> None:
    suite = make_suite(tmp_path)
    tasks = load_suite(tmp_path, "mini")
    assert [t.id for t in tasks] == ["add-two", "count-vowels", "subsets"]
    (suite / "add-two" / "task.toml").write_text('id = "add-two"\ntitle = "x"\nsplit = "dev"\n')
    (suite / "subsets" / "instruction.md").unlink()
    with pytest.raises(TaskError) as caught:
        load_suite(tmp_path, suite)
    text = "\n".join(caught.value.lines())
    assert "add-two/task.toml:3: split" in text
    assert "subsets/instruction.md" in text


def test_bad_suite_default_is_located_in_suite_toml(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, ("add-two",))
    (suite / "suite.toml").write_text('[defaults]\nid = "nope"\nagent_timeout_s = -1\n')
    with pytest.raises(TaskError) as caught:
        load_suite(None, suite)
    assert any(str(p).startswith(f"{suite / 'suite.toml'}:2: defaults.id") for p in caught.value.problems)
    (suite / "suite.toml").write_text('[defaults]\nagent_timeout_s = -1\n')
    with pytest.raises(TaskError) as caught:
        load_suite(None, suite)
    assert [str(p) for p in caught.value.problems] == [
        f"{suite / 'suite.toml'}:2: defaults.agent_timeout_s: Input should be greater than 0"
    ]


@pytest.mark.parametrize(
    ("line", "key", "message"),
    [
        ('colour = "blue"', "colour", "unknown key"),
        ("tags = 3", "tags", "valid list"),
        ('split = "dev"', "split", "'train', 'heldout' or 'test'"),
        ("agent_timeout_s = \"soon\"", "agent_timeout_s", "valid number"),
    ],
)
def test_malformed_task_toml_exits_2_with_location(tmp_path: Path, cli, line: str, key: str, message: str) -> None:
    suite = make_suite(tmp_path, ("add-two", "count-vowels"))
    toml = suite / "add-two" / "task.toml"
    kept = [ln for ln in toml.read_text().splitlines() if not ln.startswith(key.split(".")[0] + " ")]
    at = next((n for n, ln in enumerate(kept) if ln.startswith("[")), len(kept))  # a top-level key: before [public]
    toml.write_text("\n".join([*kept[:at], line, *kept[at:]]) + "\n")
    where = at + 1
    done = cli("tasks", "validate", str(suite), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"{toml}:{where}: {key}: " in done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_nested_key_and_cases_file_errors_are_located(tmp_path: Path, cli) -> None:
    suite = make_suite(tmp_path, ("add-two", "count-vowels"))
    toml = suite / "add-two" / "task.toml"
    toml.write_text(toml.read_text() + "\n[limits]\nwall_s = 5\nmemory_gb = 2\n")
    where = len(toml.read_text().splitlines())
    cases = suite / "count-vowels" / "tests" / "cases.json"
    cases.write_text('{"kind": "cases", "function": "count_vowels", "cases": [\n{"args": ["a"], "expected": 1},\n'
                     ' {"args": ["a"], "expect": 1}\n]}')
    done = cli("tasks", "validate", str(suite), cwd=tmp_path)
    assert done.returncode == 2
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert f"error: {toml}:{where}: limits.memory_gb: unknown key" in lines
    assert f"error: {cases}:3: cases[1].expect: unknown key" in lines
    assert f"error: {cases}:3: cases[1].expected: required key is missing" in lines


def test_toml_syntax_error_names_the_line(tmp_path: Path, cli) -> None:
    suite = make_suite(tmp_path, ("add-two",))
    (suite / "add-two" / "task.toml").write_text('id = "add-two"\ntitle = "x\n')
    done = cli("tasks", "validate", str(suite), cwd=tmp_path)
    assert done.returncode == 2
    assert f"{suite / 'add-two' / 'task.toml'}:2: invalid TOML" in done.stderr


def test_id_must_match_folder_and_verifier_files_must_exist(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, ("add-two",))
    toml = suite / "add-two" / "task.toml"
    toml.write_text(toml.read_text().replace('id = "add-two"', 'id = "add-2"'))
    (suite / "add-two" / "tests" / "cases.json").unlink()
    with pytest.raises(TaskError) as caught:
        load_suite(None, suite)
    text = "\n".join(caught.value.lines())
    assert f"{toml}:1: id: 'add-2' differs from the folder name 'add-two'" in text
    assert "cases.json: verifier.cases_file: cases file is missing" in text


def test_content_hash_is_stable_and_sensitive(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, ("add-two",))
    first = load_suite(None, suite)[0]
    # Same content elsewhere (another machine, another folder): same hash.
    other = tmp_path / "elsewhere" / "mini"
    shutil.copytree(suite, other)
    assert load_suite(None, other)[0].content_hash == first.content_hash
    # The reference solution and caches are not part of the task's identity.
    (other / "add-two" / "solution" / "solution.py").write_text("def add(a, b):\n    return b + a\n")
    (other / "add-two" / "tests" / "__pycache__").mkdir()
    (other / "add-two" / "tests" / "__pycache__" / "x.pyc").write_bytes(b"junk")
    assert load_suite(None, other)[0].content_hash == first.content_hash
    # A change to a hidden test, the instruction, the environment or the spec changes it.
    cases = other / "add-two" / "tests" / "cases.json"
    original = cases.read_text()
    cases.write_text(original.replace('"expected": 5', '"expected": 6'))
    assert load_suite(None, other)[0].content_hash != first.content_hash
    cases.write_text(original)
    (other / "add-two" / "environment" / "notes.txt").write_text("hint")
    assert load_suite(None, other)[0].content_hash != first.content_hash
    (other / "add-two" / "environment" / "notes.txt").unlink()
    assert load_suite(None, other)[0].content_hash == first.content_hash
    spec = TaskSpec.model_validate({**first.spec.model_dump(), "verifier_timeout_s": 31})
    assert content_hash(spec, first.instruction, other / "add-two") != first.content_hash


def test_prepare_workdir_copies_environment_only(tmp_path: Path) -> None:
    task = load_suite(None, make_suite(tmp_path, ("add-two",)))[0]
    dest = prepare_workdir(task, tmp_path / "work")
    assert sorted(p.name for p in dest.iterdir()) == ["solution.py"]
    assert "raise NotImplementedError" in (dest / "solution.py").read_text()
    assert not (dest / "cases.json").exists() and not (dest / "tests").exists()
    with pytest.raises(TaskError, match="new or empty"):
        prepare_workdir(task, dest)


def test_resolve_task_by_suite_name_and_path(tmp_path: Path) -> None:
    make_suite(tmp_path, ("add-two", "subsets"))
    by_name = resolve_task(tmp_path, "mini/subsets")
    by_path = resolve_task(None, str(tmp_path / "mini" / "subsets"))
    assert by_name.content_hash == by_path.content_hash
    assert load_cases(by_name).compare == "unordered"
    with pytest.raises(TaskError, match="no task 'nope'"):
        resolve_task(tmp_path, "mini/nope")
    with pytest.raises(TaskError, match="no task suite 'other'"):
        resolve_task(tmp_path, "other/add-two")


@pytest.mark.parametrize("value", ["../../x.py", "/etc/passwd", "sub/../../x.py"])
def test_solution_file_must_stay_inside_the_task_folder(tmp_path: Path, cli, value: str) -> None:
    suite = make_suite(tmp_path, ("add-two",))
    toml = suite / "add-two" / "task.toml"
    head, public = toml.read_text().split("\n[public]\n")
    toml.write_text(f'{head}solution_file = "{value}"\n\n[public]\n{public}')
    where = len(head.splitlines()) + 1
    done = cli("tasks", "validate", str(suite), cwd=tmp_path)
    assert done.returncode == 2, done.stdout
    assert f"error: {toml}:{where}: solution_file: '{value}' must be a relative path inside the task's folder" in done.stderr
    assert "Traceback" not in done.stderr


def test_nan_or_infinity_in_cases_is_a_located_error(tmp_path: Path, cli) -> None:
    suite = make_suite(tmp_path, ("add-two", "count-vowels"))
    cases = suite / "count-vowels" / "tests" / "cases.json"
    cases.write_text('{"kind": "cases", "function": "count_vowels", "cases": [\n{"args": ["a"], "expected": 1},\n'
                     ' {"args": ["e"], "expected": NaN},\n {"args": [Infinity], "expected": 1}\n]}')
    done = cli("tasks", "validate", str(suite), cwd=tmp_path)
    assert done.returncode == 2, done.stdout
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert f"error: {cases}:3: cases[1].expected: NaN and Infinity are not values a case can hold (JSON has no such numbers)" in lines
    assert any(ln.startswith(f"error: {cases}:4: cases[2].args[0]: NaN and Infinity") for ln in lines), lines
