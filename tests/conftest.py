"""Shared test policy: markers, and services that must exist in CI but may be missing locally.

`RSI_REQUIRE_SERVICES=1` (set by .ci/run) turns "service missing, skip" into a failure, so CI can
never go green by skipping the real-infrastructure tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def services_required() -> bool:
    return os.environ.get("RSI_REQUIRE_SERVICES") == "1"


def need(condition: bool, why: str) -> None:
    """Skip (locally) or fail (in CI) when a real service or tool the test needs is missing."""
    if condition:
        return
    if services_required():
        pytest.fail(f"required service missing in CI: {why}")
    pytest.skip(why)


def has_cuda() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    cuda = None
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            cuda = has_cuda() if cuda is None else cuda
            if not cuda:
                item.add_marker(pytest.mark.skip(reason="needs a CUDA GPU"))


# Commits in temporary repositories need an identity even on a bare CI machine (one copy for every test).
GIT_ENV = {"GIT_AUTHOR_NAME": "rsi tests", "GIT_AUTHOR_EMAIL": "tests@rsi.local",
           "GIT_COMMITTER_NAME": "rsi tests", "GIT_COMMITTER_EMAIL": "tests@rsi.local"}


@pytest.fixture
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commits in temporary repositories need an identity even on a bare CI machine."""
    for var, value in GIT_ENV.items():
        monkeypatch.setenv(var, value)


@pytest.fixture
def workspace(tmp_path: Path, git_identity: None):
    """A fresh workspace (real git repository) made by `rsi init` from the shipped examples."""
    from rsi.workspace import init_workspace

    return init_workspace(tmp_path / "ws")


def rsi_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 600):
    """Run the real `rsi` console script in a subprocess; returns CompletedProcess (text)."""
    exe = shutil.which("rsi") or str(Path(os.sys.executable).parent / "rsi")
    return subprocess.run(
        [exe, *args], cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture
def cli():
    """The `rsi_cli` runner as a fixture (test modules cannot import conftest under importlib mode)."""
    return rsi_cli


def slurm_idle(wait_s: float = 30.0) -> bool:
    """SLURM answers and its node can take jobs (a node still `completing` an earlier job is waited for)."""
    if not shutil.which("sinfo"):
        return False
    deadline = time.monotonic() + wait_s
    while True:
        try:
            out = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        states = {s.strip().rstrip("*~#") for s in out.split()}
        if states & {"idle", "mixed", "allocated"}:
            return True
        if not out or time.monotonic() > deadline:
            return False
        time.sleep(0.5)


@pytest.fixture
def slurm() -> None:
    """The real single-node SLURM of .ci/services/20-slurm.sh, with its node ready for jobs."""
    need(os.environ.get("RSI_TEST_SLURM") == "1" or slurm_idle(), "single-node SLURM (.ci/services/20-slurm.sh)")
    need(slurm_idle(), "SLURM node idle (sinfo)")
