"""Public checks on a candidate solution, inside the attempt's sandbox (`harness.check`, `repair_turns`).

A task's `[public]` checks are its kind's: `TaskKind.public_checks` (rsi/tasks/kinds.py) runs them; for
the shipped kinds that is rsi/verifier/public.py (examples the instruction already shows, or a script in
the task's public/ folder; the hidden tests/ are never read). Each candidate is checked in a scratch
copy of the attempt's working directory, so a candidate's files never reach the one submitted, and the
scratch copy is removed afterwards (the candidate's code stays in the trajectory).

What the candidate does while checked (crash, hang, flood, lie) costs it the check, never the attempt:
the result is a `CheckRecord` whatever happens. A sandbox that cannot start at all is ours and raises
SandboxError, which the attempt records as an infrastructure error.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from rsi.crashpoint import crash_point
from rsi.harness.trajectory import CheckRecord
from rsi.sandbox.base import Sandbox
from rsi.tasks.kinds import kind_of
from rsi.tasks.spec import Task
from rsi.verifier.public import check_limits as check_limits  # re-exported: the shipped kinds' runner
from rsi.verifier.public import run_public_checks as run_public_checks
from rsi.verifier.tree import remove_tree


class CandidateChecker:
    """Checks the candidates of one attempt, each in a scratch copy of the attempt's working directory.

    `scratch` is a folder of the attempt's own (its out_dir/checks); candidates share the attempt's
    sandbox backend, and each candidate's checks cost one process (two with a public script).
    """

    def __init__(self, task: Task, sandbox: Sandbox, workdir: Path, scratch: Path) -> None:
        self.task, self.sandbox, self.workdir, self.scratch = task, sandbox, workdir, scratch
        self.checked = 0

    @property
    def declared(self) -> bool:
        return self.task.spec.public.declared

    def check(self, code: str) -> CheckRecord:
        """Check one candidate's code (the solution file's whole text); numbered in the order checked."""
        self.checked += 1
        crash_point("harness:check")
        folder = self.scratch / f"c{self.checked}"
        if folder.exists():
            remove_tree(folder)
        shutil.copytree(self.workdir, folder, symlinks=True)
        target = folder / self.task.spec.solution_file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(code, encoding="utf-8")
        try:
            return kind_of(self.task).public_checks(self.task, folder, self.sandbox, self.checked)
        finally:
            remove_tree(folder)  # without recursion: the candidate may have left a deep or hostile tree
