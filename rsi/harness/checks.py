"""Public checks on a candidate solution, inside the attempt's sandbox (`harness.check`, `repair_turns`).

A task's `[public]` checks are its kind's: `TaskKind.public_checks` (rsi/tasks/kinds.py) runs them; for
the shipped kinds that is rsi/verifier/public.py (examples the instruction already shows, or a script in
the task's public/ folder; the hidden tests/ are never read). Each candidate is checked in a scratch
copy of the attempt's working directory, so a candidate's files never reach the one submitted, and the
scratch copy is removed afterwards (the candidate's code stays in the trajectory).

The scratch copy is made by the rules the verifier stages by and the stored evidence is kept by
(`rsi.verifier.stage.stage_submission`, reserved names kept): an iterative walk through directory
descriptors, regular files only, within size, count and depth caps. The agent's folder may nest thousands
of folders deep (a recursive copy dies of RecursionError) or hold a path longer than PATH_MAX (a copy by
path fails): what is past the caps is left out and the record's `note` says so ("workdir nests deeper
than 32 folders", "path longer than PATH_MAX"), so the agent's files cost at most its own check, never
the attempt (which would be an uncounted infrastructure ERROR).

What the candidate does while checked (crash, hang, flood, lie) costs it the check, never the attempt:
the result is a `CheckRecord` whatever happens. A sandbox that cannot start at all is ours and raises
SandboxError, which the attempt records as an infrastructure error.
"""

from __future__ import annotations

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
        try:
            left_out = copy_for_checks(self.workdir, folder)
            target = folder / self.task.spec.solution_file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(code, encoding="utf-8")
            record = kind_of(self.task).public_checks(self.task, folder, self.sandbox, self.checked)
            if left_out:
                record.note = "; ".join(n for n in (record.note, left_out) if n)
            return record
        finally:
            remove_tree(folder)  # without recursion: the candidate may have left a deep or hostile tree


def copy_for_checks(workdir: Path, folder: Path) -> str:
    """Copy the working directory into `folder` (created here) for one candidate's checks; what the copy left
    out, in words ('' when nothing was): see the module docstring."""
    from rsi.verifier.stage import stage_submission

    folder.mkdir(parents=True)
    return left_out_note(stage_submission(workdir, folder, reserved_names=False).refused)


def left_out_note(refused: list[str]) -> str:
    """One line about what a copy of the working directory refused: depth and path length named, the rest counted."""
    if not refused:
        return ""
    from rsi.verifier.stage import MAX_DEPTH, PATH_MAX

    kinds = {"workdir nests deeper than": f"workdir nests deeper than {MAX_DEPTH} folders",
             "path longer than PATH_MAX": f"path longer than PATH_MAX ({PATH_MAX} bytes)"}
    counts = {kind: sum(kind in entry for entry in refused) for kind in kinds}
    named = [f"{kinds[kind]} ({n} left out)" for kind, n in counts.items() if n]
    others = len(refused) - sum(counts.values())
    if others:
        named.append(f"{others} other entries left out (links, special or unreadable files, caps)")
    return "the checks ran without part of the working directory: " + "; ".join(named)
