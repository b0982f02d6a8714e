"""`[public]` checks: what every shipped task declares, how a malformed one is reported, what reaches the
working directory, and the content hash. Public checks state what the task already shows the agent;
they are never drawn from tests/."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from rsi.contracts.hashing import canonical_json
from rsi.errors import TaskError
from rsi.tasks.examples import examples_from_instruction
from rsi.tasks.load import content_hash, load_cases, load_suite, load_task, prepare_workdir
from rsi.tasks.spec import Task
from rsi.workspace import shipped_root

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "tasks" / "pyfuncs"
SUITES = sorted(p.name for p in (shipped_root() / "tasks").iterdir() if p.is_dir())
FUNCTION_SUITES = ("pyfuncs", "pyfuncs2")


def _pairs(examples) -> list[tuple[str, str]]:
    return [(e.call, e.expected) for e in examples]


def _literal_call(call: str, function: str) -> list | None:
    """The arguments of `function(literal, ...)` as JSON values (tuples as lists), or None."""
    node = ast.parse(call, mode="eval").body
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == function) or node.keywords:
        return None
    try:
        return json.loads(json.dumps([ast.literal_eval(arg) for arg in node.args]))
    except (ValueError, TypeError):
        return None


def public_example_problems(task: Task) -> list[str]:
    """Why the task's public examples are not exactly what its instruction shows ([] when they are): the
    shipped suites' stricter form of the rule the loader enforces for every suite (rsi.tasks.examples.shown_in).

    With an "Examples:" heading, the examples are exactly its lines, in order; without one, each example
    is a line `call == expected` of the instruction. For a `cases` task, an example that calls the function
    on hidden-case arguments must also expect what that case expects.
    """
    declared = _pairs(task.spec.public.examples)
    problems = []
    if any(line.strip() == "Examples:" for line in task.instruction.splitlines()):
        shown = _pairs(examples_from_instruction(task.instruction))
        if declared != shown:
            problems.append(f"{task.key}: [public] examples {declared} are not the instruction's Examples lines {shown}")
    else:
        lines = {line.strip() for line in task.instruction.splitlines()}
        problems += [
            f"{task.key}: public example `{call} == {expected}` is not shown in the instruction"
            for call, expected in declared
            if f"{call} == {expected}" not in lines
        ]
    if task.spec.verifier.kind == "cases" and declared:
        cases = load_cases(task)
        hidden = {json.dumps(case.args): case.expected for case in cases.cases if not case.kwargs}
        for call, expected in declared:
            args = _literal_call(call, cases.function)
            case = hidden.get(json.dumps(args), ...) if args is not None else ...
            if case is not ... and json.loads(json.dumps(ast.literal_eval(expected))) != case:
                problems.append(f"{task.key}: `{call}` expects {expected}, its hidden case {case!r}")
    return problems


@pytest.fixture(scope="module", params=SUITES)
def shipped_suite(request) -> list[Task]:
    """A shipped suite's tasks whose `[public]` is the Python kinds' (examples and a script): the ui kind's
    public checks are the judge's and tests/tasks/test_ui_suite_specs.py holds them to the instruction."""
    from rsi.tasks.spec import PublicChecksSpec

    tasks = load_suite(shipped_root(), request.param)
    python = [t for t in tasks if isinstance(t.spec.public, PublicChecksSpec)]
    if not python:
        pytest.skip(f"{request.param}: no task of a kind with Python public examples")
    return python


def test_shipped_public_examples_are_what_the_instruction_shows(shipped_suite) -> None:
    problems = [line for task in shipped_suite for line in public_example_problems(task)]
    assert problems == []


@pytest.mark.parametrize("suite", FUNCTION_SUITES)
def test_function_suites_declare_every_instruction_example(suite: str) -> None:
    for task in load_suite(shipped_root(), suite):
        assert len(task.spec.public.examples) >= 2, task.key
        assert _pairs(task.spec.public.examples) == _pairs(examples_from_instruction(task.instruction)), task.key
        assert not task.spec.public.script and not task.public_dir.exists(), task.key


def test_shipped_public_files_are_not_hidden_files(shipped_suite) -> None:
    for task in shipped_suite:
        if task.spec.public.script:
            assert (task.public_dir / task.spec.public.script).is_file(), task.key
        hidden = {p.read_bytes() for p in task.tests_dir.rglob("*") if p.is_file()}
        for file in (p for p in task.public_dir.rglob("*") if p.is_file()):
            assert file.read_bytes() not in hidden, file


def test_a_hidden_case_shown_with_another_value_is_caught(tmp_path: Path) -> None:
    """The check above has teeth: an example the instruction shows, but with a value its hidden case
    contradicts, is reported (the loader checks only that the instruction shows it)."""
    task = make_task(tmp_path, "examples = [\n" '  {call = "add(2, 3)", expected = "5"},\n' '  {call = "add(-1, 1)", expected = "0"},\n' "]\n")
    assert public_example_problems(task) == []
    wrong = make_task(tmp_path / "c", 'examples = [{call = "add(2, 3)", expected = "6"}]\n', shown="    add(2, 3) == 6\n")
    assert any("its hidden case 5" in p for p in public_example_problems(wrong))


# --- loading -------------------------------------------------------------------------------------


def make_task(tmp_path: Path, public: str | None, task_id: str = "add-two", shown: str = "") -> Task:
    """A copy of pyfuncs/add-two in a one-task suite, its [public] table replaced by `public` (None: none),
    `shown` appended to its instruction."""
    suite = tmp_path / "mini"
    suite.mkdir(parents=True, exist_ok=True)
    shutil.copy(SHIPPED / "suite.toml", suite / "suite.toml")
    shutil.copytree(SHIPPED / task_id, suite / task_id)
    instruction = suite / task_id / "instruction.md"
    instruction.write_text(instruction.read_text() + shown)
    toml = suite / task_id / "task.toml"
    head = toml.read_text().split("\n[public]\n", 1)[0].rstrip("\n") + "\n"
    toml.write_text(head if public is None else f"{head}\n[public]\n{public}")
    return load_task(suite / task_id)


NAMES_CHECK = "\n`python public/check.py` checks the work.\n"


def public_errors(tmp_path: Path, public: str, setup=None, shown: str = "") -> tuple[Path, list[str]]:
    """Load a copy of add-two whose [public] table is `public` (lines 7 on), after `setup(task_dir)`."""
    make_task(tmp_path, None, shown=shown)
    task_dir = tmp_path / "mini" / "add-two"
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text() + f"\n[public]\n{public}")
    if setup is not None:
        setup(task_dir)
    with pytest.raises(TaskError) as caught:
        load_task(task_dir)
    return toml, caught.value.lines()


def test_declared_examples_load(tmp_path: Path) -> None:
    task = make_task(tmp_path, "examples = [\n" "  {call = 'add(\"a\", \"b\")', expected = '\"ab\"'},\n" "]\n",
                     shown='    add("a", "b") == "ab"\n')
    assert _pairs(task.spec.public.examples) == [('add("a", "b")', '"ab"')]
    assert task.spec.public.declared and not task.spec.public.script
    bare = make_task(tmp_path / "bare", None)
    assert not bare.spec.public.declared and bare.spec.public.examples == []


@pytest.mark.parametrize(
    ("public", "line", "error"),
    [
        # Line 7 is `[public]`, line 8 the first key under it.
        ('examples = [{call = "add(1,", expected = "3"}]\n', 8,
         "public.examples[0].call: 'add(1,' is not a Python expression: '(' was never closed"),
        ('examples = [\n  {call = "add(1, 2)", expected = "3"},\n  {call = "add(1, 2)", expected = "3 +"},\n]\n', 10,
         "public.examples[1].expected: '3 +' is not a Python expression: invalid syntax"),
        ('examples = [\n  {call = "add(1, 2)", expected = "3"},  # a comment, with [brackets\n'
         '  {call = "add(\'],\')", expected = "3", note = "x"},\n]\n', 10, "public.examples[1].note: unknown key"),
        ('examples = [{call = "add(1, 2)"}]\n', 8, "public.examples[0].expected: required key is missing"),
        ('examples = [{call = "", expected = "1"}]\n', 8, "public.examples[0].call: String should have at least 1 character"),
        ('examples = [{call = 3, expected = "3"}]\n', 8, "public.examples[0].call: Input should be a valid string"),
        ('[[public.examples]]\ncall = "add(1, 2)"\nexpected = "3"\n\n[[public.examples]]\nexpected = "3"\ncall = "x y"\n', 14,
         "public.examples[1].call: 'x y' is not a Python expression: invalid syntax"),
        ('colour = "blue"\n', 8, "public.colour: unknown key"),
        ('script = "../tests/cases.json"\n', 8,
         "public.script: '../tests/cases.json' must be a relative path inside the task's public/ folder (no '..', not absolute)"),
        ('script = "/etc/passwd"\n', 8, "public.script: '/etc/passwd' must be a relative path inside the task's public/ folder"),
        ('script = "check.py"\n', 8, "public.script: 'check.py' needs a public/ folder in the task, and there is none"),
    ],
)
def test_malformed_public_is_a_located_error(tmp_path: Path, public: str, line: int, error: str) -> None:
    toml, lines = public_errors(tmp_path, public)
    assert any(found.startswith(f"{toml}:{line}: {error}") for found in lines), lines


def test_the_public_script_must_be_a_file_of_public(tmp_path: Path) -> None:
    def folder_without_it(task_dir: Path) -> None:
        (task_dir / "public").mkdir()
        (task_dir / "public" / "other.py").write_text("print('ok')\n")

    toml, lines = public_errors(tmp_path, 'script = "check.py"\n', folder_without_it, shown=NAMES_CHECK)
    assert lines == [f"{toml}:8: public.script: 'check.py' is not a file in the task's public/ folder"]


def test_public_may_not_reach_into_tests(tmp_path: Path) -> None:
    def linked(task_dir: Path) -> None:
        (task_dir / "public").mkdir()
        os.symlink("../tests/cases.json", task_dir / "public" / "check.py")

    toml, lines = public_errors(tmp_path, 'script = "check.py"\n', linked, shown=NAMES_CHECK)
    link = toml.parent / "public" / "check.py"
    assert f"{link}: public/ may not hold links (what it shows the agent must be its own files)" in lines
    assert f"{toml}:8: public.script: 'check.py' is not a file in the task's public/ folder" in lines

    def copied(task_dir: Path) -> None:
        (task_dir / "public" / "check.py").unlink()
        shutil.copy(task_dir / "tests" / "cases.json", task_dir / "public" / "cases.json")
        (task_dir / "public" / "check.py").write_text("print('ok')\n")

    _, lines = public_errors(tmp_path / "2", 'script = "check.py"\n', lambda d: (linked(d), copied(d)), shown=NAMES_CHECK)
    copy = tmp_path / "2" / "mini" / "add-two" / "public" / "cases.json"
    assert lines == [f"{copy}: is a copy of the hidden tests/cases.json; public checks are never drawn from tests/"]


def test_examples_need_a_python_solution_file(tmp_path: Path) -> None:
    toml, lines = public_errors(tmp_path, 'examples = [{call = "add(1, 2)", expected = "3"}]\n',
                                lambda d: (d / "task.toml").write_text((d / "task.toml").read_text().replace(
                                    "[public]", 'solution_file = "out.txt"\n\n[public]')))
    assert f"{toml}:10: public.examples: examples call functions of the solution module, but solution_file 'out.txt' is not a .py file" in lines


def test_cli_validate_reports_the_public_error_and_exits_2(tmp_path: Path, cli) -> None:
    with pytest.raises(TaskError):
        make_task(tmp_path, 'examples = [\n  {call = "add(1, 2)", expected = "3"},\n  {call = "add(1, 2) ==", expected = "3"},\n]\n')
    done = cli("tasks", "validate", str(tmp_path / "mini"), cwd=tmp_path)
    assert done.returncode == 2, done.stdout
    toml = tmp_path / "mini" / "add-two" / "task.toml"
    assert f"error: {toml}:10: public.examples[1].call: 'add(1, 2) ==' is not a Python expression" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_example_the_instruction_does_not_show_is_a_located_error(tmp_path: Path) -> None:
    """The rule lives in the loader: a hidden case put into [public] never loads, whatever the suite."""
    toml, lines = public_errors(tmp_path, 'examples = [\n  {call = "add(2, 3)", expected = "5"},\n  {call = "add(-7, -8)", expected = "-15"},\n]\n')
    assert lines == [f"{toml}:10: public.examples[1]: call `add(-7, -8)` is not shown in instruction.md"]
    # The call is shown, but with another value: refused too (the value is what the agent is told).
    toml, lines = public_errors(tmp_path / "2", 'examples = [{call = "add(2, 3)", expected = "6"}]\n')
    assert lines == [f"{toml}:8: public.examples[0]: call `add(2, 3)` is shown in instruction.md, but not with the value `6`"]
    # As an array of tables, the line is the header of the example's table.
    toml, lines = public_errors(tmp_path / "3", '[[public.examples]]\ncall = "add(2, 3)"\nexpected = "5"\n\n'
                                '[[public.examples]]\ncall = "add(0, 0)"\nexpected = "0"\n')
    assert lines == [f"{toml}:12: public.examples[1]: call `add(0, 0)` is not shown in instruction.md"]
    # Shown in another form the loader reads (a sentence), it loads.
    task = make_task(tmp_path / "4", 'examples = [{call = "add(0, 0)", expected = "0"}]\n', shown="\nAlso `add(0, 0)` returns `0`.\n")
    assert _pairs(task.spec.public.examples) == [("add(0, 0)", "0")]


def test_a_public_script_the_instruction_does_not_name_is_a_located_error(tmp_path: Path) -> None:
    def with_script(task_dir: Path) -> None:
        (task_dir / "public").mkdir()
        (task_dir / "public" / "check.py").write_text("import solution\n")

    toml, lines = public_errors(tmp_path, 'script = "check.py"\n', with_script)
    assert lines == [f"{toml}:8: public.script: 'check.py' is not named in instruction.md "
                     "(say there that `python public/check.py` checks the work)"]
    make_task(tmp_path / "named", None, shown=NAMES_CHECK)
    task_dir = tmp_path / "named" / "mini" / "add-two"
    with_script(task_dir)
    (task_dir / "task.toml").write_text((task_dir / "task.toml").read_text() + '\n[public]\nscript = "check.py"\n')
    assert load_task(task_dir).spec.public.script == "check.py"


def test_cli_validate_reports_an_unshown_example_in_one_line_and_exits_2(tmp_path: Path, cli) -> None:
    with pytest.raises(TaskError):
        make_task(tmp_path, 'examples = [{call = "add(10, 20)", expected = "30"}]\n')
    done = cli("tasks", "validate", str(tmp_path / "mini"), cwd=tmp_path)
    assert done.returncode == 2, done.stdout
    toml = tmp_path / "mini" / "add-two" / "task.toml"
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: {toml}:8: public.examples[0]: call `add(10, 20)` is not shown in instruction.md"]
    assert "Traceback" not in done.stderr


# --- the working directory and the content hash ----------------------------------------------------------


def test_prepare_workdir_copies_public_as_public_and_nothing_hidden(tmp_path: Path) -> None:
    task = make_task(tmp_path, None, shown=NAMES_CHECK)
    (task.root / "public").mkdir()
    (task.root / "public" / "check.py").write_text("import solution\nassert solution.add(2, 3) == 5\n")
    (task.root / "public" / "data").mkdir()
    (task.root / "public" / "data" / "input.txt").write_text("2 3\n")
    (task.root / "task.toml").write_text((task.root / "task.toml").read_text() + '\n[public]\nscript = "check.py"\n')
    task = load_task(task.root)
    dest = prepare_workdir(task, tmp_path / "work")
    found = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*"))
    assert found == ["public", "public/check.py", "public/data", "public/data/input.txt", "solution.py"]
    assert "raise NotImplementedError" in (dest / "solution.py").read_text()
    # A task with examples only has no public/ folder: the working directory is environment/ alone.
    plain = prepare_workdir(load_task(SHIPPED / "add-two"), tmp_path / "plain")
    assert sorted(p.name for p in plain.iterdir()) == ["solution.py"]


def _hash_before_public(task: Task) -> str:
    """content_hash as it was before `[public]` existed (spec without the key; environment/ and tests/)."""
    digest = hashlib.sha256()

    def feed(label: str, data: bytes) -> None:
        digest.update(label.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)

    dumped = task.spec.model_dump(mode="json")
    dumped.pop("public")
    feed("spec", canonical_json(dumped).encode())
    feed("instruction", task.instruction.encode("utf-8"))
    for part in ("environment", "tests"):
        for file in sorted((p for p in (task.root / part).rglob("*") if p.is_file()), key=lambda p: p.relative_to(task.root / part).as_posix()):
            feed(f"{part}/{file.relative_to(task.root / part).as_posix()}", file.read_bytes())
    return digest.hexdigest()


def test_content_hash_counts_public_only_where_declared(tmp_path: Path) -> None:
    bare = make_task(tmp_path / "a", None)
    assert bare.content_hash == _hash_before_public(bare)  # a task without [public] keeps its identity
    declared = make_task(tmp_path / "b", 'examples = [{call = "add(2, 3)", expected = "5"}]\n')
    assert declared.content_hash != bare.content_hash
    other = make_task(tmp_path / "c", 'examples = [{call = "add(-1, 1)", expected = "0"}]\n')
    assert other.content_hash != declared.content_hash
    # A file of public/ reaches the agent, so it is part of the task's identity.
    (declared.root / "public").mkdir()
    (declared.root / "public" / "notes.txt").write_text("x")
    assert content_hash(declared.spec, declared.instruction, declared.root) != declared.content_hash
