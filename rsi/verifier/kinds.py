"""The `script` and `pytest` verifier kinds: run the task's own tests in a fresh sandbox.

Both run agent code and the task's tests in ONE sandboxed process tree, so unlike `cases` they
trust the tests to keep agent code at arm's length:

* `script` — `bash tests/<script>` with the staged submission as its working directory. Passed iff
  it exits 0 and, if it wrote a reward to $RSI_REWARD_FILE, the reward is at least the threshold
  (1.0). A test script that imports agent code in-process, or lets it run before the verdict is
  written, can be fooled by that code (it can write the reward file or exit early); write such
  tasks as `cases` instead when the agent is adversarial.
* `pytest` — `python3 -I` + pytest over the copied tests/, next to the submission's solution file
  only (no agent conftest.py, pytest.ini or plugin can load). Passed iff pytest exits 0 AND its
  JUnit XML report (read on the host) shows at least one test and no failure or error. An exit 0
  from `os._exit(0)` therefore fails: no report. Agent code is imported into the pytest process,
  so a solution written to tamper with pytest from the inside could still forge a report.

Verdict `error` is kept for what the agent cannot cause: the sandbox not starting, the task's
tests/ missing, pytest missing from the sandbox's Python (probed without agent code). Anything
that happens while agent code runs is `failed` or `timeout`.
"""

from __future__ import annotations

import secrets
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from rsi.errors import SandboxError
from rsi.sandbox.base import Limits, Sandbox
from rsi.tasks.spec import Task
from rsi.verdict import Verdict, VerifierOutcome

REWARD_THRESHOLD = 1.0
MAX_REPORT_BYTES = 4 * 1024 * 1024
PYTEST_BOOTSTRAP = (
    "import sys; sys.path.insert(0, '.'); import pytest; raise SystemExit(pytest.main(sys.argv[1:]))"
)


def path_inside(sandbox: Sandbox, workdir: Path, relative: str) -> str:
    """Where `workdir/relative` is seen from inside the sandbox (docker mounts the workdir at /work)."""
    inner = getattr(sandbox, "workdir_inside", None)
    base = inner(workdir) if callable(inner) else str(workdir)
    return f"{base.rstrip('/')}/{relative}"


def _tail(text: str, limit: int = 4000) -> str:
    return text if len(text) <= limit else "..." + text[-limit:]


def judge_script(task: Task, workdir: Path, sandbox: Sandbox, limits: Limits) -> VerifierOutcome:
    """Run tests/<script> (already copied to workdir/tests) and read its exit code and reward."""
    started = time.monotonic()
    reward_name = f".rsi-reward-{secrets.token_hex(8)}"
    env = {"RSI_REWARD_FILE": path_inside(sandbox, workdir, reward_name)}
    argv = ["bash", f"tests/{task.spec.verifier.script}"]
    try:
        result = sandbox.run(argv, workdir, limits, env=env)
    except SandboxError as error:
        return VerifierOutcome(verdict=Verdict.ERROR, reason=f"sandbox failed to start: {error.message}")
    output = _tail(result.stdout + ("\n" + result.stderr if result.stderr else ""))
    wall = time.monotonic() - started
    if result.timed_out:
        return VerifierOutcome(verdict=Verdict.TIMEOUT, reason=f"test script exceeded {limits.wall_s:g} s", output=output, wall_s=wall)
    reward_file = workdir / reward_name
    reward = 1.0 if result.exit_code == 0 else 0.0
    if reward_file.is_file() and not reward_file.is_symlink():
        try:
            reward = float(reward_file.read_text(encoding="utf-8", errors="replace")[:64].strip())
        except ValueError:
            return VerifierOutcome(verdict=Verdict.FAILED, reason="reward file is not a number", output=output, wall_s=wall)
        if not 0.0 <= reward <= 1.0:
            return VerifierOutcome(verdict=Verdict.FAILED, reason=f"reward {reward} outside [0, 1]", output=output, wall_s=wall)
    if result.exit_code != 0:
        return VerifierOutcome(
            verdict=Verdict.FAILED, reason=f"test script exited {result.exit_code}", reward=min(reward, 1.0) if reward_file.exists() else 0.0, output=output, wall_s=wall
        )
    if reward < REWARD_THRESHOLD:
        return VerifierOutcome(verdict=Verdict.FAILED, reason=f"reward {reward:g} below {REWARD_THRESHOLD:g}", reward=reward, output=output, wall_s=wall)
    return VerifierOutcome(verdict=Verdict.PASSED, reason="test script exited 0", reward=reward, output=output, wall_s=wall)


_PYTEST_PROBES: dict[tuple[str, ...], str | None] = {}


def pytest_missing(sandbox: Sandbox, workdir: Path) -> str | None:
    """Why pytest cannot run in this sandbox's Python (None when it can). Probed once per backend."""
    python = getattr(sandbox, "python", None) or "python3"
    key = (sandbox.name, python, str(getattr(sandbox, "image", "")), str(getattr(sandbox, "base_url", "")))
    if key not in _PYTEST_PROBES:
        probe_dir = workdir.parent / "pytest-probe"
        probe_dir.mkdir(exist_ok=True)
        try:
            result = sandbox.run([python, "-I", "-c", "import pytest"], probe_dir, Limits(wall_s=30))
        except SandboxError as error:
            return f"sandbox failed to start: {error.message}"
        _PYTEST_PROBES[key] = None if result.exit_code == 0 else f"pytest is not importable by {python} in the sandbox"
    return _PYTEST_PROBES[key]


def read_junit(report: Path) -> tuple[int, int, int] | None:
    """(tests, failures+errors, skipped) from a JUnit XML report, or None when absent or unreadable."""
    if not report.is_file() or report.is_symlink() or report.stat().st_size > MAX_REPORT_BYTES:
        return None
    try:
        root = ElementTree.fromstring(report.read_bytes())
    except ElementTree.ParseError:
        return None
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    if not suites:
        return None
    tests = bad = skipped = 0
    try:
        for suite in suites:
            tests += int(suite.get("tests", "0"))
            bad += int(suite.get("failures", "0")) + int(suite.get("errors", "0"))
            skipped += int(suite.get("skipped", "0"))
    except ValueError:
        return None
    return tests, bad, skipped


def judge_pytest(task: Task, workdir: Path, sandbox: Sandbox, limits: Limits) -> VerifierOutcome:
    """Run pytest over workdir/tests with only the solution file beside it; read the JUnit report."""
    started = time.monotonic()
    missing = pytest_missing(sandbox, workdir)
    if missing:
        return VerifierOutcome(verdict=Verdict.ERROR, reason=missing)
    python = getattr(sandbox, "python", None) or "python3"
    report_name = f".rsi-junit-{secrets.token_hex(8)}.xml"
    # An explicit ini file and confcutdir stop pytest's upward search, which could otherwise pick up
    # a pytest.ini or conftest.py planted in a parent folder (/tmp, in the bare mode).
    ini = "tests/pytest.ini" if (workdir / "tests" / "pytest.ini").is_file() else f".rsi-pytest-{secrets.token_hex(8)}.ini"
    if not (workdir / ini).exists():
        (workdir / ini).write_text("[pytest]\n", encoding="utf-8")
    argv = [python, "-I", "-c", PYTEST_BOOTSTRAP, "-c", ini, "--confcutdir", ".", "-p", "no:cacheprovider",
            "-q", "-o", "addopts=", "--rootdir", ".", f"--junitxml={report_name}", "tests"]
    try:
        result = sandbox.run(argv, workdir, limits)
    except SandboxError as error:
        return VerifierOutcome(verdict=Verdict.ERROR, reason=f"sandbox failed to start: {error.message}")
    output = _tail(result.stdout + ("\n" + result.stderr if result.stderr else ""))
    wall = time.monotonic() - started
    if result.timed_out:
        return VerifierOutcome(verdict=Verdict.TIMEOUT, reason=f"pytest exceeded {limits.wall_s:g} s", output=output, wall_s=wall)
    counts = read_junit(workdir / report_name)
    if counts is None:
        return VerifierOutcome(
            verdict=Verdict.FAILED, reason=f"pytest exited {result.exit_code} without a test report", output=output, wall_s=wall
        )
    tests, bad, skipped = counts
    reward = max(0, tests - bad - skipped) / tests if tests else 0.0
    if result.exit_code != 0 or tests < 1 or bad:
        why = f"pytest exited {result.exit_code}: {tests} tests, {bad} failed or errored"
        return VerifierOutcome(verdict=Verdict.FAILED, reason=why, reward=reward, output=output, wall_s=wall)
    return VerifierOutcome(verdict=Verdict.PASSED, reason=f"{tests} tests passed", reward=reward, output=output, wall_s=wall)
