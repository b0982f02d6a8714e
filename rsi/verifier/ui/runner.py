"""The parent side of the UI judge: start judge.py under a wall-time limit, collect a typed result.

`judge_page(options, checks, workdir, sandbox=...)` runs the judge child (judge.py, with cdp.py's text
in front, as `python3 -I -c`) inside the attempt's sandbox when one is given (the local backend's
namespaces or bwrap: no network, a fresh uid, every process of the tree killed with it), else as a
plain child in a session of its own whose whole process group is killed at the end. Either way the
child is killed on wall time: a page that froze the renderer cannot hold the verifier.

What the page causes is a check result (and a FAILED verdict); what is ours is `error` (the verdict
ERROR): Chromium missing, Chromium not starting, the judge crashing, no answer at all from a judge
whose page did nothing wrong that we can tell. A judge killed on wall time is a FAILED verdict: only
the page can make the judge outlast its own per-call deadlines.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from rsi.errors import SandboxError
from rsi.sandbox.base import Limits, Sandbox
from rsi.verdict import Verdict, VerifierOutcome
from rsi.verifier.ui.checks import LAYERS, CheckSpec, Layer, UiOptions

HERE = Path(__file__).parent
SCREENSHOT_NAME = "screenshot.png"
RESULT_NAME = "ui-checks.json"
NO_BROWSER = "no Chromium found (install Debian's `chromium`, or set RSI_CHROMIUM to its path): UI tasks cannot be judged here"
# Chromium inside a sandbox: its address-space reservations (V8's sandbox alone reserves a terabyte)
# dwarf what it uses, so RLIMIT_AS (and with it the sandbox's memory cgroup, which takes the same
# figure) is lifted, and the judge bounds the tree's resident memory itself (judge.MemoryWatch) at
# the task's memory_mb, never below what Chromium needs to render a page at all. Its threads count
# against the uid's process limit.
BROWSER_ADDRESS_SPACE_MB = 1 << 21
BROWSER_MEMORY_FLOOR_MB = 2048  # summed RSS (shared pages counted per process): about 800 MB for a small page
BROWSER_PROCESSES = 4096
BROWSER_OPEN_FILES = 4096
WALL_GRACE_S = 5.0


def find_chromium(override: str | None = None) -> str | None:
    """The Chromium binary: `override`, else $RSI_CHROMIUM, else Debian's `chromium` on PATH."""
    for candidate in (override, os.environ.get("RSI_CHROMIUM"), "chromium", "chromium-browser"):
        if candidate:
            found = shutil.which(candidate)
            if found:
                return found
    return None


def chromium_version(binary: str) -> str:
    """`Chromium 150.0...` (one line), or '' when the binary does not answer."""
    try:
        done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip().splitlines()[0] if done.returncode == 0 and done.stdout.strip() else ""


def judge_source() -> str:
    """cdp.py then judge.py, as one script (the sandbox sees neither file: only the text travels)."""
    parts = []
    for name in ("cdp.py", "judge.py"):
        text = (HERE / name).read_text(encoding="utf-8")
        parts.append(text.replace("from __future__ import annotations\n", ""))
    return "from __future__ import annotations\n" + "\n".join(parts)


class CheckResult(BaseModel):
    id: str
    name: str
    layer: Layer
    passed: bool
    detail: str = ""


class UiResult(BaseModel):
    """What the judge concluded: the checks, the layer scores, the verdict, the screenshot."""

    verdict: Verdict
    reason: str
    checks: list[CheckResult] = Field(default_factory=list)
    layers: dict[str, float] = Field(default_factory=dict, description="layer -> passed / checks in it.")
    required_layers: list[str] = Field(default_factory=list)
    screenshot: Path | None = None
    result_file: Path | None = None
    wall_s: float = 0.0
    peak_mb: int = Field(default=0, description="The browser tree's peak resident memory (summed RSS), as the judge saw it.")
    output: str = ""

    def outcome(self) -> VerifierOutcome:
        """The repo's verifier outcome; reward = the share of required checks that passed."""
        required = [c for c in self.checks if c.layer in self.required_layers]
        reward = 1.0 if self.verdict is Verdict.PASSED else (
            sum(c.passed for c in required) / len(required) if required and self.verdict is Verdict.FAILED else 0.0)
        artifacts = {k: str(v) for k, v in (("screenshot", self.screenshot), ("checks", self.result_file)) if v}
        return VerifierOutcome(verdict=self.verdict, reason=self.reason, reward=reward, output=self.output[:8000],
                               wall_s=self.wall_s, layer_scores=dict(self.layers), artifacts=artifacts)


def score(checks: list[CheckSpec], answers: list[dict], required: Sequence[str] | None) -> UiResult:
    """Per-check results, layer scores and the verdict: passed iff every check of every required layer passed."""
    results = [CheckResult(id=c.id, name=c.name, layer=c.layer, passed=bool(a.get("passed")), detail=str(a.get("detail", "")))
               for c, a in zip(checks, answers, strict=True)]
    layers: dict[str, float] = {layer: sum(r.passed for r in results if r.layer == layer) / n
              for layer in LAYERS if (n := sum(1 for r in results if r.layer == layer))}
    wanted: list[str] = list(required) if required is not None else list(layers)
    failing = [r for r in results if r.layer in wanted and not r.passed]
    missing = [layer for layer in wanted if layer not in layers]
    if missing:
        return UiResult(verdict=Verdict.ERROR, reason=f"required layer(s) with no check: {', '.join(missing)}",
                        checks=results, layers=layers, required_layers=wanted)
    if failing:
        first = failing[0]
        reason = f"{len(failing)} required check(s) failed; first {first.id} ({first.layer}): {first.detail}"
        return UiResult(verdict=Verdict.FAILED, reason=reason[:600], checks=results, layers=layers, required_layers=wanted)
    return UiResult(verdict=Verdict.PASSED, reason=f"{len(results)} checks passed in {len(layers)} layer(s)",
                    checks=results, layers=layers, required_layers=wanted)


def browser_limits(limits: Limits) -> Limits:
    """The task's limits, raised to what Chromium needs to start at all (see the constants above)."""
    return limits.model_copy(update={
        "memory_mb": max(limits.memory_mb, BROWSER_ADDRESS_SPACE_MB),
        "processes": max(limits.processes, BROWSER_PROCESSES),
        "open_files": max(limits.open_files, BROWSER_OPEN_FILES),
        "cpu_s": max(limits.cpu_s, int(limits.wall_s) + 5),
    })


def _unsandboxed(argv: list[str], workdir: Path, stdin: str, wall_s: float) -> tuple[str, str, bool]:
    """Run argv in a session of its own; kill the whole group at the end (Chromium stays in it)."""
    process = subprocess.Popen(argv, cwd=workdir, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    timed_out = False
    try:
        out, err = process.communicate(stdin.encode(), timeout=wall_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
    finally:
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        _wait_group_gone(process.pid)
    return out.decode(errors="replace"), err.decode(errors="replace"), timed_out


def _kill_named(profile: str) -> None:
    """SIGKILL every process whose command line names `profile` (a fresh random folder: only this
    judgement's browser names it), for one that left the killed group (Chromium's zygotes)."""
    marker = f"--user-data-dir={profile}".encode()
    for _ in range(20):
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/cmdline", "rb") as fh:
                        if marker in fh.read():
                            found.append(int(entry))
                except OSError:
                    continue
        if not found:
            return
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def _wait_group_gone(pgid: int, within_s: float = 5.0) -> None:
    """Until no process of the group is left (a SIGKILLed browser may still write its profile meanwhile)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except OSError:
            return
        time.sleep(0.05)


def _sandboxed(sandbox: Sandbox, argv: list[str], workdir: Path, stdin: str, limits: Limits) -> tuple[str, str, bool]:
    done = sandbox.run(argv, workdir, limits, stdin=stdin)
    return done.stdout, done.stderr, done.timed_out


def judge_page(
    options: UiOptions,
    checks: list[CheckSpec],
    workdir: Path,
    *,
    sandbox: Sandbox | None = None,
    limits: Limits | None = None,
    out_dir: Path | None = None,
    chromium: str | None = None,
) -> UiResult:
    """Judge the page in `workdir` (the staged submission: options.entry and its files). Never raises.

    `limits.wall_s` bounds the whole judgement (browser start, load, every check). `out_dir`, when
    given, receives screenshot.png and ui-checks.json (the attempt's output folder)."""
    started = time.monotonic()
    limits = limits or Limits(wall_s=60)
    binary = find_chromium(chromium)
    if binary is None:
        return UiResult(verdict=Verdict.ERROR, reason=NO_BROWSER)
    if not checks:
        return UiResult(verdict=Verdict.ERROR, reason="the task names no UI check")
    nonce = secrets.token_hex(16)
    shot_dir = f".rsi-ui-{secrets.token_hex(6)}"
    request = {
        "nonce": nonce, "chromium": binary, "root": ".", "entry": options.entry, "viewport": list(options.viewport),
        "load_s": options.load_s, "step_s": options.step_s, "screenshot_path": f"{shot_dir}/{SCREENSHOT_NAME}",
        "checks": [{"check": c.name, **c.params} for c in checks],
        "memory_mb": max(limits.memory_mb, BROWSER_MEMORY_FLOOR_MB),
    }
    argv_tail = ["-I", "-c", judge_source()]
    try:
        if sandbox is not None:
            # the judge makes the screenshot's folder itself (it owns the workdir inside the sandbox)
            argv = [sandbox.python, *argv_tail]
            out, err, timed_out = _sandboxed(sandbox, argv, workdir, json.dumps(request) + "\n", browser_limits(limits))
        else:
            profile = tempfile.mkdtemp(prefix="rsi-ui-profile-")
            try:
                out, err, timed_out = _unsandboxed([sys.executable, *argv_tail], workdir,
                                                   json.dumps({**request, "profile": profile}) + "\n",
                                                   limits.wall_s + WALL_GRACE_S)
            finally:
                _kill_named(profile)
                shutil.rmtree(profile, ignore_errors=True)
    except SandboxError as error:
        return UiResult(verdict=Verdict.ERROR, reason=f"sandbox failed to start: {error.message}",
                        wall_s=time.monotonic() - started)
    wall = time.monotonic() - started
    answer = _answer(out, nonce)
    if answer is None:
        if timed_out:
            reason = f"the page held the judge past its {limits.wall_s:g} s wall limit (killed with every browser process)"
            return UiResult(verdict=Verdict.FAILED, reason=reason, wall_s=wall, output=err[-2000:])
        return UiResult(verdict=Verdict.ERROR, reason="the UI judge ended without an answer", wall_s=wall, output=err[-2000:])
    if "error" in answer:
        return UiResult(verdict=Verdict.ERROR, reason=str(answer["error"]).splitlines()[0][:400], wall_s=wall,
                        output=str(answer["error"])[:2000])
    answers = sorted(answer.get("checks", []), key=lambda a: a.get("index", 0))
    result = score(checks, answers, options.required_layers).model_copy(update={"wall_s": wall, "output": err[-2000:],
                                                                              "peak_mb": int(answer.get("peak_mb", 0))})
    return _keep(result, workdir / shot_dir / SCREENSHOT_NAME if answer.get("screenshot") else None, out_dir)


def _answer(stdout: str, nonce: str) -> dict | None:
    for line in reversed(stdout.splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("nonce") == nonce:
            return data
    return None


def _keep(result: UiResult, shot: Path | None, out_dir: Path | None) -> UiResult:
    """Copy the screenshot (a regular file only) and the per-check results into `out_dir`."""
    if out_dir is None:
        return result
    out_dir.mkdir(parents=True, exist_ok=True)
    update: dict[str, Path] = {}
    if shot is not None and shot.is_file() and not shot.is_symlink():
        shutil.copyfile(shot, out_dir / SCREENSHOT_NAME)
        update["screenshot"] = out_dir / SCREENSHOT_NAME
    result = result.model_copy(update=update)
    file = out_dir / RESULT_NAME
    file.write_text(json.dumps(result.model_dump(mode="json", exclude={"result_file"}), indent=2) + "\n", encoding="utf-8")
    return result.model_copy(update={"result_file": file})


def scratch_dir() -> Path:
    """A folder the sandbox user can traverse, for callers that judge a page outside an attempt."""
    folder = Path(tempfile.mkdtemp(prefix="rsi-ui-"))
    folder.chmod(0o711)
    return folder
