"""The shipped (Python) kinds' public checks: a task's `[public]` examples and script on one candidate.

`PublicChecksSpec` checks are what the instruction already shows (examples) or a script in the task's
public/ folder; the hidden tests/ are never read here. A candidate's examples all run in ONE sandboxed
process (`check_runner.py`); a public script is a second one. What the candidate does (crash, hang,
flood, lie) costs it the check: the result is a `CheckRecord` whatever happens. A sandbox that cannot
start at all is ours and raises SandboxError. The harness calls this through the task's kind
(`TaskKind.public_checks`, rsi/harness/checks.py `CandidateChecker`).
"""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path

from rsi.sandbox.base import Limits, Sandbox
from rsi.tasks.spec import PublicChecksSpec, Task
from rsi.verdict import CheckRecord, ExampleCheck

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
    public = python_public(task)
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
    public = python_public(task)
    examples = public.examples
    nonce = secrets.token_hex(16)
    module = Path(task.spec.solution_file).with_suffix("").as_posix().replace("/", ".")
    header = {
        "nonce": nonce, "module": module, "timeout_s": EXAMPLE_TIMEOUT_S,
        "unordered": public.compare == "unordered",
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


def python_public(task: Task) -> PublicChecksSpec:
    """The task's `[public]` in the shipped kinds' model (empty for a kind with another)."""
    public = task.spec.public
    return public if isinstance(public, PublicChecksSpec) else PublicChecksSpec()
