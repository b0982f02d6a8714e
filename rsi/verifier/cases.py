"""The trusted judge of `cases` tasks: hold the expected values, ask a sandboxed child for results.

The judge runs in this (host) process. The child (`case_runner.py`, run with `python3 -I` in a
fresh sandbox directory holding only the agent's staged files) receives each case's inputs one at
a time and answers with the function's return value, tagged with a random nonce. The cases file is
never inside the sandbox, and the child is never told whether an answer was right, so the only way
to pass is to return correct values. Whatever the child does besides — prints `PASSED`, exits 0,
kills its parent, floods output, hangs — ends as failed or timeout, never passed.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import signal
import time
from pathlib import Path
from typing import Any

from rsi.errors import RsiError, SandboxError
from rsi.sandbox.base import Limits, Sandbox, SandboxProcess
from rsi.tasks.spec import CaseSpec, CasesSpec, Task
from rsi.verdict import Verdict, VerifierOutcome
from rsi.verifier.channel import MAX_ANSWER_BYTES, Answers, Oversized, send_line
from rsi.verifier.compare import matches

RUNNER_SOURCE = (Path(__file__).parent / "case_runner.py").read_text(encoding="utf-8")
CASE_TIMEOUT_S = 10.0
READY_TIMEOUT_S = 20.0


def _describe(value: Any, limit: int = 200) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def judge_cases(
    task: Task,
    cases: CasesSpec,
    workdir: Path,
    sandbox: Sandbox,
    limits: Limits,
    case_timeout_s: float = CASE_TIMEOUT_S,
) -> VerifierOutcome:
    """Run every case through a sandboxed child in `workdir` (already staged) and judge the answers."""
    started = time.monotonic()
    total = len(cases.cases)
    module = Path(task.spec.solution_file).with_suffix("").as_posix().replace("/", ".")
    if not (workdir / task.spec.solution_file).is_file():
        return VerifierOutcome(
            verdict=Verdict.FAILED, reason=f"{task.spec.solution_file} is missing from the final working directory"
        )
    python = sandbox.python
    argv = [python, "-I", "-c", RUNNER_SOURCE]
    nonce = secrets.token_hex(16)
    try:
        process = sandbox.start(argv, workdir, limits, env={"PYTHONHASHSEED": "0"})
    except SandboxError as error:
        return VerifierOutcome(verdict=Verdict.ERROR, reason=f"sandbox failed to start: {error.message}")
    # `reason` may travel (trajectories, reports, reflective prompts): it names case numbers only.
    # Hidden inputs and expected values stay in `output`, which is never shown to an agent.
    log: list[str] = []
    first_miss = ""
    passed = 0
    verdict: Verdict | None = None
    reason = ""
    try:
        answers = Answers(process.stdout, nonce)
        # The budget starts once the process exists: a slow container start is not the solution's time.
        deadline = time.monotonic() + limits.wall_s
        verdict, reason = _handshake(process, answers, {"nonce": nonce, "module": module, "function": cases.function},
                                     deadline, f"{cases.function} from {task.spec.solution_file}")
        for index, case in enumerate(cases.cases if verdict is None else []):
            budget = min(case_timeout_s, deadline - time.monotonic())
            if budget <= 0:
                verdict, reason = Verdict.TIMEOUT, f"verifier time limit ({limits.wall_s:g} s) reached at case {index}"
                break
            if not send_line(process, {"i": index, "args": case.args, "kwargs": case.kwargs}):
                verdict, reason = Verdict.FAILED, f"the solution process stopped reading at case {index}"
                break
            answer = answers.next(budget)
            if answer is None:
                verdict, reason = _silent(process, answers, f"at case {index}", budget if budget >= case_timeout_s else None)
                if verdict is Verdict.TIMEOUT and budget < case_timeout_s:
                    reason = f"verifier time limit ({limits.wall_s:g} s) reached at case {index}"
                break
            if answer.get("i") != index:
                verdict, reason = Verdict.FAILED, f"answer out of order at case {index}"
                break
            miss, line = _judge_answer(cases, index, case, answer)
            passed += 0 if miss else 1
            first_miss = first_miss or miss
            log += [line] if line else []
    except Oversized:
        verdict, reason = Verdict.FAILED, f"the solution process wrote more than {MAX_ANSWER_BYTES} bytes in one answer"
    finally:
        process.kill()
    stderr = process.stderr_text()
    if verdict is None:
        verdict = Verdict.PASSED if passed == total else Verdict.FAILED
        reason = f"{passed}/{total} cases passed" + ("" if passed == total else f"; {first_miss}")
    output = "\n".join(log[:20] + ([f"stderr:\n{stderr[-2000:]}"] if stderr.strip() else []))
    return VerifierOutcome(
        verdict=verdict,
        reason=reason,
        reward=passed / total if total else 0.0,
        output=output[:8000],
        wall_s=time.monotonic() - started,
    )


def _handshake(
    process: SandboxProcess, answers: Answers, header: dict[str, Any], deadline: float, what: str
) -> tuple[Verdict | None, str]:
    """Send the header and wait for the child's `ready`: (None, '') when it loaded the function."""
    if not send_line(process, header):
        return Verdict.FAILED, "the solution process closed its input before starting"
    ready = answers.next(min(READY_TIMEOUT_S, max(0.0, deadline - time.monotonic())))
    if ready is None:
        return _silent(process, answers, "while importing the solution")
    if not ready.get("ready"):
        return Verdict.FAILED, f"cannot load {what}: {ready.get('error', '')}"
    return None, ""


def _judge_answer(cases: CasesSpec, index: int, case: CaseSpec, answer: dict[str, Any]) -> tuple[str, str]:
    """('', '') when the answer matches; else (the reason's note, naming the case number only, and the
    log line, which holds the hidden input and expected value). Pure."""
    call = f"{cases.function}(*{_describe(case.args)}, **{_describe(case.kwargs)})"
    if not answer.get("ok"):
        error_name = str(answer.get("error", "")).split(":", 1)[0][:60]
        return f"case {index} raised {error_name}", f"case {index}: {call} raised {answer.get('error', '')}"
    if matches(answer.get("value"), case.expected, cases.compare, cases.rel_tol, cases.abs_tol):
        return "", ""
    return (f"case {index} returned a wrong value",
            f"case {index}: {call} returned {_describe(answer.get('value'))}, expected {_describe(case.expected)}")


def _silent(process: SandboxProcess, answers: Answers, where: str, case_timeout_s: float | None = None):
    """The child gave no answer: it died (failed), was killed for its wall limit, or is too slow."""
    if answers.eof:
        with contextlib.suppress(Exception):
            process.wait(2)
        if process.timed_out:
            return Verdict.TIMEOUT, f"sandbox wall-clock limit reached {where}"
        code = process.poll()
        if code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
            return Verdict.TIMEOUT, f"CPU time limit reached {where}"
        return Verdict.FAILED, f"the solution process exited (code {code}) {where}"
    if case_timeout_s is not None:
        return Verdict.TIMEOUT, f"no answer within {case_timeout_s:g} s {where}"
    return Verdict.TIMEOUT, f"no answer in time {where}"


def load_cases_or_error(task: Task) -> CasesSpec | VerifierOutcome:
    """The task's cases, or an `error` outcome: a broken cases file is the task's fault, not the agent's."""
    try:
        from rsi.tasks.load import load_cases

        return load_cases(task)
    except RsiError as error:
        return VerifierOutcome(verdict=Verdict.ERROR, reason=f"task's cases file is broken: {error.message}")
