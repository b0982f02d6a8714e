"""The `script` and `pytest` verifier kinds: the task's own tests, run in a fresh sandbox beside the
staged submission, judged through a channel the submission cannot reach.

Both start `boot.py` in the sandbox (a trusted parent that runs before any agent code, makes itself
non-dumpable and alone holds the channel to this process), install the verifier's files after the
sandbox has handed the working directory to the sandbox user (so they stay owned by this process's
uid and read-only: the agent's code cannot rewrite a running tests/test.sh or a test module), and
read one nonce-tagged report (see boot.py). The threat model of each kind, and what remains
possible, is in docs/sandbox.md.

* `script` — passed iff `bash tests/<script>` exits 0 as its trusted parent saw it and, if it wrote
  $RSI_REWARD_FILE, the reward is at least 1.0. The reward can only turn an exit 0 into a failure.
* `pytest` — passed iff every test of the trusted collection (made with the solution replaced by an
  inert module) has exactly one `passed` record from the plugin of pytest_child.py, from a function
  compiled from the task's test file, the run finished, and no record says anything else. An early
  exit, a changed test count, a patched runner or a forged report file are `failed`.

Verdict `error` is kept for what the agent cannot cause: the sandbox not starting, the task's tests/
missing or not collectable without a solution, no interpreter with pytest in the sandbox
(`Sandbox.python_with`, probed without agent code), a crash of boot.py (it says so). Anything agent code can cause is `failed`
or `timeout`.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
from pathlib import Path
from typing import Any

from rsi.errors import SandboxError
from rsi.sandbox.base import Limits, Sandbox, SandboxProcess
from rsi.tasks.spec import Task, python_options
from rsi.verdict import Verdict, VerifierOutcome
from rsi.verifier.channel import Answers, Oversized, send_line

REWARD_THRESHOLD = 1.0
BOOT_SOURCE = (Path(__file__).parent / "boot.py").read_text(encoding="utf-8")
LAUNCHER_SOURCE = (Path(__file__).parent / "launcher.py").read_text(encoding="utf-8")
SHIM_SOURCE = (Path(__file__).parent / "shim.py").read_text(encoding="utf-8")
SHIM_NAMES = ("python3", "python", "rsi-solution")
LAUNCHER_READY_S = 30.0
CHILD_FILE = Path(__file__).parent / "pytest_child.py"
VERIFIER_DIR = ".rsi-verifier"
REPORT_GRACE_S = 5.0
PYTEST_FLAGS = ["--confcutdir", "tests", "-p", "no:cacheprovider", "-p", "no:debugging", "-q", "-o", "addopts=",
                "--rootdir", "."]


def _tail(text: str, limit: int = 4000) -> str:
    return text if len(text) <= limit else "..." + text[-limit:]


def install_verifier_files(
    task: Task, workdir: Path, with_child: bool, shim_python: str | None = None, judge_ids: tuple[int, int] | None = None
) -> None:
    """tests/ (and .rsi-verifier/) into `workdir`, owned by this process's uid, read-only for others.

    Called after the sandbox has started (and chowned the working directory): these files are never
    handed to the sandbox user. A directory owned by another uid cannot be renamed, emptied or
    removed by it, even inside a directory it owns. When rsi is not root there is no other uid:
    the files are then only read-only (docs/sandbox.md).

    `shim_python` (script kind): the solution shims go to .rsi-verifier/bin/ (run by that
    interpreter) and the reward file's folder to .rsi-verifier/reward/. `judge_ids`: the verifier
    uid/gid the script runs as, distinct from the attempt's: then everything here is root's with
    that group, and nothing is readable by any other uid (the attempt's code cannot read tests/).
    """
    tests = workdir / "tests"
    shutil.copytree(task.tests_dir, tests, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"))
    folders = [tests]
    verifier = workdir / VERIFIER_DIR
    if with_child or shim_python:
        verifier.mkdir()
        folders.append(verifier)
    if with_child:
        shutil.copyfile(CHILD_FILE, verifier / "pytest_child.py")
        ini = verifier / "pytest.ini"
        ini.write_text("[pytest]\n", encoding="utf-8")
    executables: set[Path] = set()
    if shim_python:
        (verifier / "bin").mkdir()
        for name in SHIM_NAMES:
            shim = verifier / "bin" / name
            shim.write_text(f"#!{shim_python} -I\n{SHIM_SOURCE}", encoding="utf-8")
            executables.add(shim)
    for folder in folders:
        for path in [folder, *folder.rglob("*")]:
            executable = path.is_dir() or path in executables
            if judge_ids is not None:
                os.chown(path, 0, judge_ids[1], follow_symlinks=False)
                os.chmod(path, 0o750 if executable else 0o640, follow_symlinks=False)
            else:
                os.chmod(path, 0o555 if executable else 0o444, follow_symlinks=False)
    if shim_python:
        reward = verifier / "reward"  # the script writes here; no attempt uid can reach it
        reward.mkdir()
        if judge_ids is not None:
            os.chown(reward, *judge_ids)
        # Without a second uid (rsi not root) the folder is the shared uid's own anyway.
        os.chmod(reward, 0o700 if judge_ids is not None or os.geteuid() != 0 else 0o1777)


def start_launcher(workdir: Path, sandbox: Sandbox, limits: Limits, socket_name: str) -> SandboxProcess:
    """The solution launcher (launcher.py) in an attempt sandbox on `workdir`, once it listens.

    Raises SandboxError when it does not come up: it runs before any agent code (`-I`: nothing in
    the working directory is imported), so that is the machine's fault."""
    nonce = secrets.token_hex(16)
    process = sandbox.start([sandbox.python, "-I", "-c", LAUNCHER_SOURCE], workdir, limits)
    try:
        ready = send_line(process, {"socket": socket_name, "nonce": nonce}) and Answers(process.stdout, nonce).next(
            min(LAUNCHER_READY_S, limits.wall_s)
        )
    except Oversized:
        ready = None
    if not ready:
        stderr = process.stderr_text()
        process.kill()
        raise SandboxError(f"the solution launcher did not start: {stderr.strip()[-300:]}")
    return process


def separate_uids(attempt: SandboxProcess, judge: SandboxProcess) -> tuple[int, int] | None:
    """The judge's (uid, gid) when it differs from the attempt's (rsi is root), else None."""
    mine, theirs = judge.ids, attempt.ids
    if mine is None or theirs is None or mine[0] == theirs[0] or mine[1] == theirs[1]:
        return None
    return mine


def run_boot(
    task: Task, workdir: Path, sandbox: Sandbox, limits: Limits, header: dict[str, Any], python: str
) -> tuple[dict[str, Any] | None, str, bool]:
    """Start boot.py, install the verifier's files, send the header; (report or None, stderr, timed out).

    Script kind: first the solution launcher in an attempt sandbox (it takes the working directory),
    then boot.py as a verifier process (a uid of its own); the working directory becomes root's
    with mode 1777 (both uids create files there; neither can rename the other's, so tests/ stays).
    Raises SandboxError when the sandbox does not start (the caller's `error`).
    """
    nonce = secrets.token_hex(16)
    script = header["kind"] == "script"
    launcher = start_launcher(workdir, sandbox, limits, header["socket"]) if script else None
    report: dict[str, Any] | None = None
    deadline = time.monotonic() + limits.wall_s + REPORT_GRACE_S
    try:
        process = sandbox.start([python, "-I", "-c", BOOT_SOURCE], workdir, limits, verifier=script)
    except SandboxError:
        if launcher is not None:
            launcher.kill()
        raise
    try:
        judge_ids = separate_uids(launcher, process) if launcher is not None else None
        if judge_ids is not None:
            os.chown(workdir, 0, 0)
            os.chmod(workdir, 0o1777)
        install_verifier_files(task, workdir, with_child=not script, shim_python=python if script else None,
                               judge_ids=judge_ids)
        if send_line(process, {**header, "nonce": nonce, "separate_uids": judge_ids is not None}):
            try:
                report = Answers(process.stdout, nonce).next(max(0.0, deadline - time.monotonic()))
            except Oversized:
                report = None
    finally:
        process.kill()
        if launcher is not None:
            launcher.kill()
    stderr = process.stderr_text()
    timed_out = process.timed_out or (report is None and time.monotonic() >= deadline)
    return report, stderr, timed_out


def _unreported(kind: str, stderr: str, timed_out: bool, limits: Limits, wall: float) -> VerifierOutcome:
    if timed_out:
        return VerifierOutcome(verdict=Verdict.TIMEOUT, reason=f"{kind} exceeded {limits.wall_s:g} s", output=_tail(stderr), wall_s=wall)
    return VerifierOutcome(
        verdict=Verdict.FAILED,
        reason=f"the {kind} run ended without a report (its trusted parent was killed or could not finish)",
        output=_tail(stderr),
        wall_s=wall,
    )


def judge_script(task: Task, workdir: Path, sandbox: Sandbox, limits: Limits) -> VerifierOutcome:
    """Run tests/<script> under boot.py and judge its exit status and reward."""
    started = time.monotonic()
    header = {
        "kind": "script",
        "script": f"tests/{python_options(task.spec).script}",
        "reward_file": f"{VERIFIER_DIR}/reward/reward",
        "socket": f".rsi-launch-{secrets.token_hex(8)}.sock",
        "bin": f"{VERIFIER_DIR}/bin",
    }
    try:
        report, stderr, timed_out = run_boot(task, workdir, sandbox, limits, header, sandbox.python)
    except SandboxError as error:
        return VerifierOutcome(verdict=Verdict.ERROR, reason=f"sandbox failed to start: {error.message}")
    wall = time.monotonic() - started
    output = _tail(stderr)
    if report is None:
        return _unreported("test script", stderr, timed_out, limits, wall)
    if "boot_error" in report:
        return VerifierOutcome(verdict=Verdict.ERROR, reason="the verifier's boot process crashed", output=str(report["boot_error"]))
    return script_verdict(report, output, wall)


def script_verdict(report: dict[str, Any], output: str, wall: float) -> VerifierOutcome:
    code = report.get("exit")
    raw = report.get("reward")
    reward = 1.0 if code == 0 else 0.0
    if isinstance(raw, str):
        try:
            reward = float(raw.strip())
        except ValueError:
            return VerifierOutcome(verdict=Verdict.FAILED, reason="reward file is not a number", output=output, wall_s=wall)
        if not 0.0 <= reward <= 1.0:
            return VerifierOutcome(verdict=Verdict.FAILED, reason=f"reward {reward} outside [0, 1]", output=output, wall_s=wall)
    if code != 0:
        return VerifierOutcome(verdict=Verdict.FAILED, reason=f"test script exited {code}", reward=min(reward, 1.0) if raw else 0.0, output=output, wall_s=wall)
    if reward < REWARD_THRESHOLD:
        return VerifierOutcome(verdict=Verdict.FAILED, reason=f"reward {reward:g} below {REWARD_THRESHOLD:g}", reward=reward, output=output, wall_s=wall)
    return VerifierOutcome(verdict=Verdict.PASSED, reason="test script exited 0", reward=reward, output=output, wall_s=wall)


def judge_pytest(task: Task, workdir: Path, sandbox: Sandbox, limits: Limits) -> VerifierOutcome:
    """Run the task's tests under boot.py + pytest_child.py; judge the records against the collection."""
    started = time.monotonic()
    try:
        python = sandbox.python_with("pytest")  # probed without agent code, once per backend
    except SandboxError as error:
        return VerifierOutcome(verdict=Verdict.ERROR, reason=error.message)
    ini = "tests/pytest.ini" if (task.tests_dir / "pytest.ini").is_file() else f"{VERIFIER_DIR}/pytest.ini"
    module = Path(task.spec.solution_file).with_suffix("").as_posix().replace("/", ".")
    header = {
        "kind": "pytest",
        "module": module,
        "pytest_args": ["-c", ini, *PYTEST_FLAGS, "tests"],
        "tests_dir": "tests",
        "child": f"{VERIFIER_DIR}/pytest_child.py",
    }
    try:
        report, stderr, timed_out = run_boot(task, workdir, sandbox, limits, header, python)
    except SandboxError as error:
        return VerifierOutcome(verdict=Verdict.ERROR, reason=f"sandbox failed to start: {error.message}")
    wall = time.monotonic() - started
    if report is None:
        return _unreported("pytest", stderr, timed_out, limits, wall)
    if "boot_error" in report:
        return VerifierOutcome(verdict=Verdict.ERROR, reason="the verifier's boot process crashed", output=str(report["boot_error"]))
    return pytest_verdict(report, _tail(stderr), wall)


def pytest_verdict(report: dict[str, Any], output: str, wall: float) -> VerifierOutcome:
    """The verdict from boot's report: the trusted collection against the recorded outcomes."""
    collect = report.get("collect") or {}
    tests = collect.get("tests")
    if collect.get("exit") != 0 or not isinstance(tests, list) or not tests:
        return VerifierOutcome(
            verdict=Verdict.ERROR,
            reason=f"the task's tests cannot be collected without a solution (pytest exit {collect.get('exit')})",
            output=output,
            wall_s=wall,
        )
    expected = {str(t.get("id")): [t.get("file"), t.get("name"), t.get("line")] for t in tests if isinstance(t, dict)}
    outcomes: dict[str, str] = {}
    problems: list[str] = []
    finished = False
    for record in report.get("records") or []:
        if not isinstance(record, list) or len(record) != 5:
            problems.append("a malformed record")
            continue
        node, outcome, *where = record
        if node == "<session>":
            finished = True
            continue
        if node not in expected:
            problems.append("an outcome for a test that was not collected")
        elif node in outcomes:
            problems.append(f"two outcomes for {node}")
            outcomes[node] = "failed"
        elif outcome == "passed" and where != expected[node]:
            problems.append(f"{node} ran a function other than the task's")
            outcomes[node] = "failed"
        else:
            outcomes[node] = str(outcome)
    passed = sum(1 for node in expected if outcomes.get(node) == "passed")
    reward = passed / len(expected)
    missing = [node for node in expected if node not in outcomes]
    if passed == len(expected) and finished and not problems:
        return VerifierOutcome(verdict=Verdict.PASSED, reason=f"{passed} tests passed", reward=1.0, output=output, wall_s=wall)
    why = f"{passed}/{len(expected)} tests passed"
    if missing:
        why += f"; {len(missing)} never reported an outcome (an early exit, or the runner was changed)"
    if not finished:
        why += "; the test run did not finish"
    if problems:
        why += "; " + "; ".join(sorted(set(problems))[:3])
    return VerifierOutcome(verdict=Verdict.FAILED, reason=why, reward=reward, output=output, wall_s=wall)
