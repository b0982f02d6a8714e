"""The verifier kinds: `[verifier] kind` name -> what that kind does.

Every place that used to switch on the kind's name asks its entry instead: the verifier (`judge`,
`solution_only`), task loading (`file_problems`, reported by `rsi tasks check` with file:line:key)
and the `wrong` probe of `rsi tasks check` (`wrong_solution`). `TaskSpec.verifier.kind` validates
against VERIFIER_KINDS, so an unknown kind is a located error when the task is read, never a
fall-through to another kind.

The registry is `rsi.plugins.VERIFIER_KINDS` (entry point group `rsi.verifier_kinds`), typed here: the
tasks below read a kind's name and its file checks through it without importing this module. Adding a
kind is one module with a module-level `VerifierKind` and one line of pyproject.toml
(`cases = "rsi.verifier.registry:CASES"`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from rsi import plugins
from rsi.errors import Problem
from rsi.plugins import PluginRegistry
from rsi.plugins import verifier_kind_name as verifier_kind_name  # re-exported: callers import it here
from rsi.sandbox.base import Limits, Sandbox
from rsi.tasks.locate import toml_line
from rsi.tasks.spec import Task, TaskSpec
from rsi.verdict import Verdict, VerifierOutcome
from rsi.verifier.cases import judge_cases, load_cases_or_error
from rsi.verifier.kinds import judge_pytest, judge_script

Judge = Callable[[Task, Path, Sandbox, Limits], VerifierOutcome]
FileCheck = Callable[[Path, TaskSpec, Path, str], list[Problem]]


def _no_file_problems(tests: Path, spec: TaskSpec, toml_file: Path, text: str) -> list[Problem]:
    return []


def _empty_file(task: Task) -> str:
    return ""


@dataclass(frozen=True)
class VerifierKind:
    """One kind of hidden verifier."""

    judge: Judge
    """Judge the staged working directory (tests/ not yet installed) in `sandbox`; never raises for
    what the agent's files do. The task's own broken verifier files are an `error` verdict."""
    file_problems: FileCheck = _no_file_problems
    """What is wrong with the task's tests/ folder (tests dir, spec, task.toml path, its text), located."""
    solution_only: bool = False
    """Stage only the task's solution file (the tests import nothing else the agent wrote)."""
    wrong_solution: Callable[[Task], str] = _empty_file
    """A plausible wrong solution file's text (the `wrong` probe of `rsi tasks check`)."""


# -- the shipped kinds -------------------------------------------------------------------------------
def _judge_cases(task: Task, work: Path, sandbox: Sandbox, limits: Limits) -> VerifierOutcome:
    cases = load_cases_or_error(task)
    if isinstance(cases, VerifierOutcome):
        return cases
    return judge_cases(task, cases, work, sandbox, limits)


def _cases_file_problems(tests: Path, spec: TaskSpec, toml_file: Path, text: str) -> list[Problem]:
    from rsi.tasks.load import check_cases_file

    problems: list[Problem] = []
    cases = check_cases_file(tests / spec.verifier.cases_file, problems)
    if cases is not None and not spec.solution_file.endswith(".py"):
        problems.append(Problem(toml_file, toml_line(text, ("solution_file",)), "solution_file", "cases tasks need a .py file"))
    return problems


def _cases_wrong_solution(task: Task) -> str:
    from rsi.tasks.load import load_cases

    return f"def {load_cases(task).function}(*args, **kwargs):\n    return None\n"


def _judge_script(task: Task, work: Path, sandbox: Sandbox, limits: Limits) -> VerifierOutcome:
    if not task.script_path.is_file():
        return VerifierOutcome(verdict=Verdict.ERROR, reason=f"task's test script is missing: {task.script_path}")
    return judge_script(task, work, sandbox, limits)


def _script_file_problems(tests: Path, spec: TaskSpec, toml_file: Path, text: str) -> list[Problem]:
    if (tests / spec.verifier.script).is_file():
        return []
    line = toml_line(text, ("verifier", "kind"))
    return [Problem(toml_file, line, "verifier.script", f"tests/{spec.verifier.script} is missing")]


def _pytest_file_problems(tests: Path, spec: TaskSpec, toml_file: Path, text: str) -> list[Problem]:
    if any(tests.glob("test_*.py")):
        return []
    line = toml_line(text, ("verifier", "kind"))
    return [Problem(toml_file, line, "verifier.kind", "kind 'pytest' needs tests/test_*.py files")]


CASES = VerifierKind(_judge_cases, _cases_file_problems, wrong_solution=_cases_wrong_solution)
SCRIPT = VerifierKind(_judge_script, _script_file_problems)
PYTEST = VerifierKind(judge_pytest, _pytest_file_problems, solution_only=True)

VERIFIER_KINDS = cast("PluginRegistry[VerifierKind]", plugins.VERIFIER_KINDS)


def verifier_kind(name: str) -> VerifierKind:
    """The registered kind called `name` (KeyError-free: an unknown name is a ValueError naming the known ones)."""
    return VERIFIER_KINDS[verifier_kind_name(name)]
