"""Public checks on a candidate solution, inside the attempt's sandbox (`harness.check`, `repair_turns`).

A task's `[public]` checks are what its instruction already shows (examples) or a script in its
public/ folder; the hidden tests/ are never read here. A candidate's examples all run in ONE sandboxed
process (`check_runner.py`); a public script is a second one. Each candidate is checked in a scratch
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

import json
import secrets
import time
from pathlib import Path

from rsi.crashpoint import crash_point
from rsi.harness.trajectory import CheckRecord, ExampleCheck
from rsi.sandbox.base import Limits, Sandbox
from rsi.tasks.spec import Task
from rsi.verifier.tree import remove_tree

RUNNER_SOURCE = (Path(__file__).parent / "check_runner.py").read_text(encoding="utf-8")
EXAMPLE_TIMEOUT_S = 5.0
CHECK_WALL_S = 20.0
SCRIPT_OUTPUT_CHARS = 600
# A public script runs as `python -I` (no environment, no user site) with the working directory first on
# sys.path, so that `import solution` finds the candidate, as the agent's own `python public/x.py` would.
SCRIPT_BOOT = "import runpy, sys; sys.argv = sys.argv[1:]; sys.path.insert(0, ''); runpy.run_path(sys.argv[0], run_name='__main__')"


def check_limits(task: Task) -> Limits:
    """The task's own limits, the wall clock capped: a check is a handful of calls, not a run."""
    limits = task.spec.limits
    return limits.model_copy(update={"wall_s": min(limits.wall_s, CHECK_WALL_S)})


def run_public_checks(task: Task, workdir: Path, sandbox: Sandbox, candidate: int = 1) -> CheckRecord:
    """Run the task's public checks against the solution file in `workdir` (examples in one process,
    then the public script). A task without public checks passes 0 of 0."""
    started = time.monotonic()
    public = task.spec.public
    record = CheckRecord(candidate=candidate, passed=0, total=len(public.examples) + (1 if public.script else 0))
    if public.examples:
        record.examples = _run_examples(task, workdir, sandbox)
    if public.script:
        result = sandbox.run([sandbox.python, "-I", "-c", SCRIPT_BOOT, f"public/{public.script}"], workdir,
                             check_limits(task), env={"PYTHONDONTWRITEBYTECODE": "1"})
        record.script_exit = -1 if result.timed_out or result.exit_code is None else result.exit_code
        record.script_output = (result.stdout + result.stderr)[-SCRIPT_OUTPUT_CHARS:]
    record.passed = sum(example.passed for example in record.examples) + (1 if record.script_exit == 0 else 0)
    record.wall_s = round(time.monotonic() - started, 4)
    return record


def _run_examples(task: Task, workdir: Path, sandbox: Sandbox) -> list[ExampleCheck]:
    examples = task.spec.public.examples
    nonce = secrets.token_hex(16)
    module = Path(task.spec.solution_file).with_suffix("").as_posix().replace("/", ".")
    header = {
        "nonce": nonce, "module": module, "timeout_s": EXAMPLE_TIMEOUT_S,
        "unordered": task.spec.public.compare == "unordered",
        "examples": [{"call": example.call, "expected": example.expected} for example in examples],
    }
    result = sandbox.run([sandbox.python, "-I", "-c", RUNNER_SOURCE], workdir, check_limits(task), stdin=json.dumps(header),
                         env={"PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"})
    answers: dict[int, dict[str, object]] = {}
    for line in result.stdout.splitlines():
        if line.startswith(nonce + " "):
            try:
                answer = json.loads(line[len(nonce) + 1:])
            except ValueError:
                continue
            if isinstance(answer, dict) and isinstance(answer.get("i"), int):
                answers.setdefault(answer["i"], answer)
    missing = "no answer: " + ("the check ran out of time" if result.timed_out else f"the process exited ({result.exit_code})")
    checks = []
    for index, example in enumerate(examples):
        answer = answers.get(index, {"passed": False, "error": missing})
        checks.append(ExampleCheck(call=example.call, expected=example.expected, passed=answer.get("passed") is True,
                                   got=str(answer.get("got", "")), error=str(answer.get("error", ""))))
    return checks


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
            record = run_public_checks(self.task, folder, self.sandbox, candidate=self.checked)
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
