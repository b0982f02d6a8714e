"""The shipped task kinds, `cases`, `script` and `pytest`: `[verifier] kind` name -> what that kind does.

Every place that used to switch on the kind's name asks its entry instead (rsi/tasks/kinds.py
`TaskKind`): the spec (`options`, `public`, `solution_file`), the verifier (`judge`, `solution_only`),
task loading (`file_problems`, reported by `rsi tasks check` with file:line:key), the harness (`reply`,
`public_checks`) and the `wrong` probe of `rsi tasks check` (`wrong_solution`). `TaskSpec.verifier.kind`
validates against VERIFIER_KINDS, so an unknown kind is a located error when the task is read, never a
fall-through to another kind.

The registry is `rsi.plugins.VERIFIER_KINDS` (entry point group `rsi.verifier_kinds`), typed as
`rsi.tasks.kinds.TASK_KINDS`. Adding a kind is one module with a module-level `TaskKind` and one line of
pyproject.toml (`cases = "rsi.verifier.registry:CASES"`). The three here are Python kinds: they keep every
default of `TaskKind` (Python fences, solution.py, `PythonVerifierOptions`, `PublicChecksSpec`) and run
their public checks with rsi/verifier/public.py.
"""

from __future__ import annotations

from pathlib import Path

from rsi.errors import Problem
from rsi.plugins import verifier_kind_name as verifier_kind_name  # re-exported: callers import it here
from rsi.sandbox.base import Limits, Sandbox
from rsi.tasks.kinds import TASK_KINDS, FileCheck, Judge, TaskKind
from rsi.tasks.locate import toml_line
from rsi.tasks.spec import Task, TaskSpec, python_options
from rsi.verdict import Verdict, VerifierOutcome
from rsi.verifier.cases import judge_cases, load_cases_or_error
from rsi.verifier.kinds import judge_pytest, judge_script
from rsi.verifier.public import run_public_checks

VerifierKind = TaskKind  # the name a kind had before it was a task kind; a lab's module may still use it
VERIFIER_KINDS = TASK_KINDS
__all__ = ["CASES", "PYTEST", "SCRIPT", "VERIFIER_KINDS", "FileCheck", "Judge", "VerifierKind", "verifier_kind"]


# -- the shipped kinds -------------------------------------------------------------------------------
def _judge_cases(task: Task, work: Path, sandbox: Sandbox, limits: Limits) -> VerifierOutcome:
    cases = load_cases_or_error(task)
    if isinstance(cases, VerifierOutcome):
        return cases
    return judge_cases(task, cases, work, sandbox, limits)


def _cases_file_problems(tests: Path, spec: TaskSpec, toml_file: Path, text: str) -> list[Problem]:
    from rsi.tasks.load import check_cases_file

    problems: list[Problem] = []
    cases = check_cases_file(tests / python_options(spec).cases_file, problems)
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
    script = python_options(spec).script
    if (tests / script).is_file():
        return []
    line = toml_line(text, ("verifier", "kind"))
    return [Problem(toml_file, line, "verifier.script", f"tests/{script} is missing")]


def _pytest_file_problems(tests: Path, spec: TaskSpec, toml_file: Path, text: str) -> list[Problem]:
    if any(tests.glob("test_*.py")):
        return []
    line = toml_line(text, ("verifier", "kind"))
    return [Problem(toml_file, line, "verifier.kind", "kind 'pytest' needs tests/test_*.py files")]


CASES = TaskKind(_judge_cases, _cases_file_problems, wrong_solution=_cases_wrong_solution,
                 public_checks=run_public_checks, name="cases")
SCRIPT = TaskKind(_judge_script, _script_file_problems, public_checks=run_public_checks, name="script")
PYTEST = TaskKind(judge_pytest, _pytest_file_problems, solution_only=True, public_checks=run_public_checks, name="pytest")


def verifier_kind(name: str) -> TaskKind:
    """The registered kind called `name` (KeyError-free: an unknown name is a ValueError naming the known ones)."""
    return VERIFIER_KINDS[verifier_kind_name(name)]
