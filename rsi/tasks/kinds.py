"""Task kinds: the plug-in that says what a kind of task is, from its task.toml to its verdict.

A kind (`[verifier] kind = NAME`) owns everything that differs between a Python function judged by
hidden cases and, say, a web page judged in a browser:

- `options`: the pydantic model of its `[verifier]` keys besides `kind` (tasks/spec.py validates the
  table through it, so an error is still `task.toml:LINE: verifier.KEY`);
- `public`: the pydantic model of its `[public]` table, and `public_checks`, the runner the harness
  calls on a candidate (`harness.check`, repair turns, `rsi tasks check`);
- `solution_file`: the file a task of the kind asks for when its task.toml names none;
- `reply`: what a text-substrate reply carries (rsi/fences.py `ReplyFormat`: the fences the harness
  extracts, the files they become) and so the words the prompts use (```python, "solution.py");
- `judge`, `file_problems`, `solution_only`, `wrong_solution`: the hidden verifier's side (a judge
  that keeps files, like the ui kind's screenshot, writes them to `rsi.verifier.stage.kept_dir(work)`
  and names them in its outcome's `artifacts`; the verifier moves them into the attempt's evidence);
- `unavailable`: what this machine lacks to judge the kind ('' when nothing), said before an attempt.

Kinds are entries of the `rsi.verifier_kinds` entry point group (rsi/plugins.py), so tasks/spec.py,
the harness's prompts and replies, and rsi/fences.py name none of them: adding a kind is its own module
with a module-level `TaskKind`, one line of pyproject.toml and its row in docs/architecture.md's how-to-add
table. The shipped kinds (cases, script, pytest) are in rsi/verifier/registry.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from rsi import plugins
from rsi.errors import Problem
from rsi.fences import PYTHON_REPLY, ReplyFormat
from rsi.plugins import PluginRegistry, verifier_kind_name
from rsi.sandbox.base import Limits, Sandbox
from rsi.tasks.spec import (
    PublicChecksSpec,
    PublicSpec,
    PythonVerifierOptions,
    Task,
    TaskSpec,
    VerifierOptions,
)
from rsi.verdict import CheckRecord, VerifierOutcome

Judge = Callable[[Task, Path, Sandbox, Limits], VerifierOutcome]
FileCheck = Callable[[Path, TaskSpec, Path, str], list[Problem]]
PublicChecks = Callable[[Task, Path, Sandbox, int], CheckRecord]
"""(task, a scratch working directory holding the candidate, the attempt's sandbox, the candidate's number)
-> its record; what the candidate does costs it the check, never raises for it."""


def _no_file_problems(tests: Path, spec: TaskSpec, toml_file: Path, text: str) -> list[Problem]:
    return []


def _empty_file(task: Task) -> str:
    return ""


def _available() -> str:
    return ""


def no_public_checks(task: Task, workdir: Path, sandbox: Sandbox, candidate: int) -> CheckRecord:
    """A kind without public checks: 0 of 0 passed."""
    return CheckRecord(candidate=candidate, passed=0, total=0)


@dataclass(frozen=True)
class TaskKind:
    """One kind of task. The first two fields are positional (as `VerifierKind(judge, file_problems)` was);
    the rest default to the shipped Python kinds' choices, except `public_checks`, which a kind must name
    when its `public` model declares checks."""

    judge: Judge
    """Judge the staged working directory (tests/ not yet installed) in `sandbox`; never raises for
    what the agent's files do. The task's own broken verifier files are an `error` verdict."""
    file_problems: FileCheck = _no_file_problems
    """What is wrong with the task's tests/ folder (tests dir, spec, task.toml path, its text), located."""
    solution_only: bool = False
    """Stage only the task's solution file (the tests import nothing else the agent wrote)."""
    wrong_solution: Callable[[Task], str] = _empty_file
    """A plausible wrong solution file's text (the `wrong` probe of `rsi tasks check`)."""
    options: type[VerifierOptions] = PythonVerifierOptions
    """The model of the kind's `[verifier]` keys besides `kind`."""
    public: type[PublicSpec] = PublicChecksSpec
    """The model of the kind's `[public]` table."""
    public_checks: PublicChecks = no_public_checks
    """Run the task's public checks on the candidate in a working directory."""
    solution_file: str = "solution.py"
    """The solution file of a task whose task.toml names none."""
    reply: ReplyFormat = PYTHON_REPLY
    """What a text-substrate reply carries: fences, and the files the extra ones become."""
    name: str = ""
    """The kind's name, for messages (the registry's key is what a task names)."""
    unavailable: Callable[[], str] = _available
    """Why this machine cannot judge a task of the kind, in one line ('' when it can): `rsi attempt` says
    it before any model runs (the ui kind: no Chromium)."""

    @property
    def languages(self) -> tuple[str, ...]:
        """The solution's languages in words ("Python"; "HTML", "CSS", "JavaScript")."""
        return tuple(fence.language for fence in self.reply.fences)


TASK_KINDS = cast("PluginRegistry[TaskKind]", plugins.VERIFIER_KINDS)


def task_kind(name: str) -> TaskKind:
    """The registered kind called `name` (an unknown name is a ValueError naming the known ones)."""
    return TASK_KINDS[verifier_kind_name(name)]


def kind_of(task: Task | TaskSpec) -> TaskKind:
    """The kind a task (or its spec) names."""
    spec = task.spec if isinstance(task, Task) else task
    return task_kind(spec.verifier.kind)
