"""Load and validate tasks and suites from disk; prepare an attempt's working directory.

Every problem found in a task (or in every task of a suite) is gathered and raised once as a
`TaskError` of located `Problem`s, so one `rsi tasks validate` run shows all that is wrong.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import tomllib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError as PydanticValidationError

from rsi.contracts.hashing import canonical_json
from rsi.errors import Problem, TaskError
from rsi.plugins import VERIFIER_KINDS, verifier_kind_name
from rsi.tasks.examples import shown_in
from rsi.tasks.locate import (
    dotted,
    json_line,
    json_syntax_problem,
    pydantic_problems,
    toml_item_line,
    toml_line,
    toml_syntax_problem,
)
from rsi.tasks.spec import CasesSpec, PublicChecksSpec, SuiteSpec, Task, TaskSpec
from rsi.workspace import Workspace

TASK_FILE = "task.toml"
SUITE_FILE = "suite.toml"
INSTRUCTION_FILE = "instruction.md"
_NOT_DEFAULTABLE = ("id", "title")
_IGNORED = ("__pycache__", ".pytest_cache", ".DS_Store")


class SuiteDefaults:
    """A parsed suite.toml: its defaults and where they came from (to locate problems in them)."""

    def __init__(self, spec: SuiteSpec, file: Path | None = None, text: str | None = None) -> None:
        self.spec = spec
        self.file = file
        self.text = text

    @property
    def values(self) -> dict[str, Any]:
        return self.spec.defaults


def _read_toml(file: Path, problems: list[Problem]) -> tuple[dict[str, Any], str] | None:
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        problems.append(Problem(file, None, "", f"cannot read: {error}"))
        return None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as error:
        problems.append(toml_syntax_problem(file, error))
        return None


def _merge(defaults: dict[str, Any], own: dict[str, Any]) -> dict[str, Any]:
    """Task values over suite defaults; tables merge key by key, everything else is replaced."""
    merged = dict(defaults)
    for key, value in own.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _has_path(data: dict[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = data
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def load_suite_defaults(suite_dir: Path) -> SuiteDefaults:
    """Parse `suite_dir/suite.toml` (empty defaults when absent); raises TaskError on problems."""
    file = suite_dir / SUITE_FILE
    if not file.exists():
        return SuiteDefaults(SuiteSpec())
    problems: list[Problem] = []
    parsed = _read_toml(file, problems)
    if parsed is None:
        raise TaskError(problems)
    data, text = parsed
    try:
        spec = SuiteSpec.model_validate(data)
    except PydanticValidationError as error:
        raise TaskError(pydantic_problems(file, error, text)) from None
    known = set(TaskSpec.model_fields) - set(_NOT_DEFAULTABLE)
    for key in spec.defaults:
        if key not in known:
            why = "cannot be a suite default" if key in _NOT_DEFAULTABLE else "unknown key"
            problems.append(Problem(file, toml_line(text, ("defaults", key)), f"defaults.{key}", why))
    if not problems:
        # Validate the defaults' values on their own so a bad default is located in suite.toml.
        try:
            TaskSpec.model_validate({"id": "x", "title": "x", **spec.defaults})
        except PydanticValidationError as error:
            problems.extend(pydantic_problems(file, error, text, prefix=("defaults",)))
    if problems:
        raise TaskError(problems)
    return SuiteDefaults(spec, file, text)


def load_cases(task: Task) -> CasesSpec:
    """Parse the hidden cases file of a `kind = "cases"` task (JSON, or TOML by suffix)."""
    problems: list[Problem] = []
    cases = check_cases_file(task.cases_path, problems)
    if cases is None:
        raise TaskError(problems)
    return cases


def check_cases_file(file: Path, problems: list[Problem]) -> CasesSpec | None:
    """The cases file parsed and validated, or None with what is wrong added to `problems` (located)."""
    if not file.is_file():
        problems.append(Problem(file, None, "verifier.cases_file", "cases file is missing"))
        return None
    text: str | None = None
    json_text: str | None = None
    if file.suffix == ".toml":
        parsed = _read_toml(file, problems)
        if parsed is None:
            return None
        data, text = parsed
    else:
        try:
            json_text = file.read_text(encoding="utf-8")
            data = json.loads(json_text)
        except json.JSONDecodeError as error:
            problems.append(json_syntax_problem(file, error))
            return None
        except (OSError, UnicodeDecodeError) as error:
            problems.append(Problem(file, None, "", f"cannot read: {error}"))
            return None
    bad_numbers = list(_non_finite(data, ()))
    for loc in bad_numbers[:20]:
        line = json_line(json_text, loc) if json_text is not None else toml_line(text or "", tuple(str(p) for p in loc if not isinstance(p, int)))
        problems.append(Problem(file, line, dotted(loc), "NaN and Infinity are not values a case can hold (JSON has no such numbers)"))
    if bad_numbers:
        return None
    try:
        return CasesSpec.model_validate(data)
    except PydanticValidationError as error:
        problems.extend(pydantic_problems(file, error, text, json_text=json_text))
        return None


def _non_finite(value: Any, loc: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
    """Key paths of every NaN or infinite float in parsed JSON/TOML data (Python's json accepts them)."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, loc)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            yield where
        elif isinstance(item, dict):
            stack.extend((v, (*where, k)) for k, v in reversed(list(item.items())))
        elif isinstance(item, list):
            stack.extend((v, (*where, i)) for i, v in reversed(list(enumerate(item))))


def _files_under(folder: Path) -> list[Path]:
    """Regular files below `folder`, sorted by relative POSIX path; caches are skipped."""
    if not folder.is_dir():
        return []
    found = []
    for path in folder.rglob("*"):
        rel = path.relative_to(folder)
        if any(part in _IGNORED for part in rel.parts) or path.suffix == ".pyc":
            continue
        if path.is_file():
            found.append(path)
    return sorted(found, key=lambda p: p.relative_to(folder).as_posix())


def content_hash(spec: TaskSpec, instruction: str, root: Path) -> str:
    """sha256 over the normalized spec, the instruction, and environment/, public/ and tests/ files.

    Stable across machines: paths are relative POSIX paths in sorted order, each hashed with its
    length and bytes, so renaming or editing any hidden test changes the hash.
    """
    digest = hashlib.sha256()

    def feed(label: str, data: bytes) -> None:
        digest.update(label.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)

    # A task without public checks hashes as it did before `[public]` existed.
    dumped = spec.model_dump(mode="json", exclude=None if spec.public.declared else {"public"})
    feed("spec", canonical_json(dumped).encode())
    feed("instruction", instruction.encode("utf-8"))
    for part in ("environment", "public", "tests"):
        for file in _files_under(root / part):
            feed(f"{part}/{file.relative_to(root / part).as_posix()}", file.read_bytes())
    return digest.hexdigest()


def _check_verifier_files(task_dir: Path, spec: TaskSpec, toml_file: Path, text: str, problems: list[Problem]) -> None:
    tests = task_dir / "tests"
    if not tests.is_dir():
        problems.append(Problem(tests, None, "", "the hidden verifier folder tests/ is missing"))
        return
    kind = VERIFIER_KINDS[verifier_kind_name(spec.verifier.kind)]  # its entry point: the kind's own module
    problems.extend(kind.file_problems(tests, spec, toml_file, text))


def _links_under(folder: Path) -> list[Path]:
    """Symbolic links at or below `folder` (sorted)."""
    if folder.is_symlink():
        return [folder]
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*") if p.is_symlink())


def _check_public_files(task_dir: Path, spec: TaskSpec, toml_file: Path, text: str, problems: list[Problem]) -> None:
    """`[public]` against the task's folders: the script is a file of public/, public/ holds no link (it
    could reach tests/) and no copy of a hidden test file, and examples need a Python solution file.
    The script and examples are the shipped kinds' `[public]` (`PublicChecksSpec`); another kind's
    `[public]` is its own model's, and its files its `file_problems`' to check."""
    public = task_dir / "public"
    links = _links_under(public)
    for link in links:
        problems.append(Problem(link, None, "", "public/ may not hold links (what it shows the agent must be its own files)"))
    if public.exists() and not public.is_dir():
        problems.append(Problem(public, None, "", "public must be a folder"))
        return
    declared = spec.public if isinstance(spec.public, PublicChecksSpec) else PublicChecksSpec()
    script = declared.script
    if script:
        where = toml_item_line(text, ("public", "script"))
        target = public / script
        if not public.is_dir():
            problems.append(Problem(toml_file, where, "public.script", f"'{script}' needs a public/ folder in the task, and there is none"))
        elif not target.is_file() or target.is_symlink():
            problems.append(Problem(toml_file, where, "public.script", f"'{script}' is not a file in the task's public/ folder"))
        elif not target.resolve().is_relative_to(public.resolve()):
            problems.append(Problem(toml_file, where, "public.script", f"'{script}' leads outside the task's public/ folder"))
    if declared.examples and PurePosixPath(spec.solution_file).suffix != ".py":
        problems.append(
            Problem(
                toml_file,
                toml_item_line(text, ("public", "examples")),
                "public.examples",
                f"examples call functions of the solution module, but solution_file '{spec.solution_file}' is not a .py file",
            )
        )
    if public.is_dir() and not links:
        if (task_dir / "environment" / "public").exists():
            problems.append(
                Problem(task_dir / "environment" / "public", None, "", "public/ is copied into the working directory as public/; environment/ may not hold one too")
            )
        hidden = {data: file for file in _files_under(task_dir / "tests") if (data := file.read_bytes()).strip()}
        for file in _files_under(public):
            twin = hidden.get(file.read_bytes())
            if twin is not None:
                problems.append(
                    Problem(file, None, "", f"is a copy of the hidden {twin.relative_to(task_dir).as_posix()}; public checks are never drawn from tests/")
                )


def _check_public_shown(spec: TaskSpec, instruction: str, toml_file: Path, text: str, problems: list[Problem]) -> None:
    """`[public]` states only what the agent reads: every example's call and value appear in instruction.md
    (rsi.tasks.examples.shown_in says how), and a public script is named there as public/<script>.
    Otherwise a suite could put hidden cases into `[public]` and selection would choose on them."""
    if not isinstance(spec.public, PublicChecksSpec):
        return
    for index, example in enumerate(spec.public.examples):
        why = shown_in(instruction, example)
        if why is not None:
            where = toml_item_line(text, ("public", "examples", index))
            problems.append(Problem(toml_file, where, f"public.examples[{index}]", why))
    script = spec.public.script
    if script and f"public/{script}" not in instruction:
        problems.append(
            Problem(toml_file, toml_item_line(text, ("public", "script")), "public.script",
                    f"'{script}' is not named in instruction.md (say there that `python public/{script}` checks the work)")
        )


def _spec_problems(
    toml_file: Path, text: str, own: dict[str, Any], defaults: SuiteDefaults | None, error: PydanticValidationError
) -> list[Problem]:
    """Locate each spec error in task.toml, or in suite.toml when the bad value came from there."""
    problems = []
    for problem in pydantic_problems(toml_file, error, text):
        path = tuple(p for p in problem.key.replace("[", ".").replace("]", "").split(".") if p and not p.isdigit())
        from_defaults = defaults is not None and defaults.file is not None and bool(path)
        if from_defaults and not _has_path(own, path) and _has_path(defaults_values(defaults), path):
            assert defaults is not None and defaults.file is not None
            line = toml_line(defaults.text or "", ("defaults", *path))
            problems.append(Problem(defaults.file, line, f"defaults.{problem.key}", problem.message))
            continue
        problems.append(problem)
    return problems


def load_task(task_dir: Path, suite_defaults: SuiteDefaults | None = None, suite: str | None = None) -> Task:
    """Load one task folder; raises TaskError listing every problem found in it.

    Without `suite_defaults`, the defaults of the suite the folder sits in (its parent's suite.toml,
    if any) apply, so a task loads the same whether reached through its suite or by its path.
    """
    task_dir = Path(task_dir)
    if suite_defaults is None:
        suite_defaults = load_suite_defaults(task_dir.resolve().parent)
    toml_file = task_dir / TASK_FILE
    problems: list[Problem] = []
    if not toml_file.is_file():
        raise TaskError([Problem(toml_file, None, "", "not a task: task.toml is missing")])
    parsed = _read_toml(toml_file, problems)
    spec: TaskSpec | None = None
    text = ""
    if parsed is not None:
        own, text = parsed
        merged = _merge(defaults_values(suite_defaults), own)
        try:
            spec = TaskSpec.model_validate(merged)
        except PydanticValidationError as error:
            problems.extend(_spec_problems(toml_file, text, own, suite_defaults, error))
    if spec is not None and spec.id != task_dir.name:
        problems.append(
            Problem(toml_file, toml_line(text, ("id",)), "id", f"'{spec.id}' differs from the folder name '{task_dir.name}'")
        )
    instruction_file = task_dir / INSTRUCTION_FILE
    instruction = ""
    if not instruction_file.is_file():
        problems.append(Problem(instruction_file, None, "", "instruction.md is missing"))
    else:
        instruction = instruction_file.read_text(encoding="utf-8")
        if not instruction.strip():
            problems.append(Problem(instruction_file, None, "", "instruction.md is empty"))
    environment = task_dir / "environment"
    if environment.exists() and not environment.is_dir():
        problems.append(Problem(environment, None, "", "environment must be a folder"))
    if spec is not None:
        _check_verifier_files(task_dir, spec, toml_file, text, problems)
        _check_public_files(task_dir, spec, toml_file, text, problems)
        if instruction.strip():
            _check_public_shown(spec, instruction, toml_file, text, problems)
        if spec.tags and any(not tag.strip() for tag in spec.tags):
            problems.append(Problem(toml_file, toml_line(text, ("tags",)), "tags", "tags must be non-empty strings"))
    if problems or spec is None:
        raise TaskError(problems)
    return Task(
        suite=suite or task_dir.parent.name,
        spec=spec,
        root=task_dir.resolve(),
        instruction=instruction,
        content_hash=content_hash(spec, instruction, task_dir),
    )


def defaults_values(suite_defaults: SuiteDefaults | dict[str, Any] | None) -> dict[str, Any]:
    if suite_defaults is None:
        return {}
    if isinstance(suite_defaults, dict):
        return suite_defaults
    return suite_defaults.values


def resolve_suite_dir(root_or_workspace: Workspace | Path | None, suite: str | Path) -> Path:
    """A suite given as a path (absolute, or relative to cwd) or as a name under the workspace's tasks/."""
    as_path = Path(suite).expanduser()
    if as_path.is_dir() and (as_path.is_absolute() or "/" in str(suite) or root_or_workspace is None):
        return as_path.resolve()
    if isinstance(root_or_workspace, Workspace):
        tasks_dir = root_or_workspace.tasks_dir
    elif root_or_workspace is not None:
        root = Path(root_or_workspace)
        tasks_dir = root / "tasks" if (root / "tasks").is_dir() else root
    else:
        tasks_dir = Path.cwd() / "tasks"
    candidate = tasks_dir / str(suite)
    if candidate.is_dir():
        return candidate.resolve()
    if as_path.is_dir():
        return as_path.resolve()
    known = sorted(p.name for p in tasks_dir.iterdir() if p.is_dir()) if tasks_dir.is_dir() else []
    raise TaskError(
        [Problem(candidate, None, "", f"no task suite '{suite}'")],
        hint=f"known suites: {', '.join(known) or 'none'}; or pass a path to a suite folder",
    )


def task_dirs(suite_dir: Path) -> list[Path]:
    """Folders of a suite that are tasks (everything but hidden and cache folders)."""
    return sorted(
        p for p in suite_dir.iterdir() if p.is_dir() and not p.name.startswith((".", "_")) and p.name not in _IGNORED
    )


def load_suite(root_or_workspace: Workspace | Path | None, suite: str | Path) -> list[Task]:
    """Every task of a suite, sorted by id; problems from all tasks (and suite.toml) raised at once."""
    suite_dir = resolve_suite_dir(root_or_workspace, suite)
    problems: list[Problem] = []
    try:
        defaults = load_suite_defaults(suite_dir)
    except TaskError as error:
        # Tasks loaded without their defaults would only repeat the same mistake in every task.
        raise TaskError(error.problems, hint="fix suite.toml first; its tasks are checked after it loads") from None
    tasks: list[Task] = []
    folders = task_dirs(suite_dir)
    if not folders:
        problems.append(Problem(suite_dir, None, "", "the suite holds no task folders"))
    for folder in folders:
        try:
            tasks.append(load_task(folder, defaults, suite=suite_dir.name))
        except TaskError as error:
            problems.extend(error.problems)
    if problems:
        raise TaskError(problems, hint="fix the listed files; `rsi tasks validate SUITE` re-checks them all")
    return sorted(tasks, key=lambda t: t.id)


def resolve_task(root_or_workspace: Workspace | Path | None, ref: str) -> Task:
    """`SUITE/TASK` (suite by name or path) -> the loaded task."""
    suite, sep, task_id = str(ref).rstrip("/").rpartition("/")
    if not sep or not suite or not task_id:
        raise TaskError([Problem(ref, None, "", "expected SUITE/TASK")], hint="e.g. `rsi tasks show pyfuncs/add-two`")
    suite_dir = resolve_suite_dir(root_or_workspace, suite)
    folder = suite_dir / task_id
    if not folder.is_dir():
        known = [p.name for p in task_dirs(suite_dir)]
        close = [k for k in known if task_id in k or k in task_id][:5]
        raise TaskError(
            [Problem(folder, None, "", f"no task '{task_id}' in suite '{suite_dir.name}'")],
            hint=f"similar: {', '.join(close)}" if close else "list them with `rsi tasks list SUITE`",
        )
    return load_task(folder, load_suite_defaults(suite_dir), suite=suite_dir.name)


def prepare_workdir(task: Task, dest: Path) -> Path:
    """Copy the task's environment/ into `dest`, a new or empty folder, and its public/ folder (when it has
    one) into `dest/public/`. Nothing from tests/ or solution/ is copied."""
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise TaskError([Problem(dest, None, "", "the working directory must be new or empty")])
    dest.mkdir(parents=True, exist_ok=True)
    if task.environment_dir.is_dir():
        shutil.copytree(
            task.environment_dir, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*_IGNORED, "*.pyc")
        )
    if task.public_dir.is_dir():
        links = _links_under(task.public_dir)
        if links:  # the loader refuses these; a folder changed after loading is refused here too
            raise TaskError([Problem(links[0], None, "", "public/ may not hold links")])
        shutil.copytree(
            task.public_dir, dest / "public", dirs_exist_ok=True, ignore=shutil.ignore_patterns(*_IGNORED, "*.pyc")
        )
    return dest
