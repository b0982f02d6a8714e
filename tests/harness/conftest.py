"""Fixtures for the harness tests: the real local sandbox, tasks, and configurations."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from rsi.config import Configuration
from rsi.contracts.schema import ContractSpec

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def sandbox():
    from rsi.sandbox.select import make_sandbox

    return make_sandbox("local")


def make_backend(name: str):
    """A sandbox backend by name; skipped locally (failed in CI) where this machine lacks it."""
    from tests.sandbox.conftest import make_backend as make_sandbox_backend

    return make_sandbox_backend(name)


@pytest.fixture(params=["local-bwrap", "local-bare", "docker"])
def every_backend(request):
    """Each sandbox backend in turn: the harness must not depend on which one serves it."""
    return make_backend(request.param)


@pytest.fixture
def open_tmp():
    """A temp folder every user can traverse (mode 0755), removed afterwards.

    pytest's tmp_path lives under a 0700 folder; the sandbox user (nobody) must be able to walk
    down to an attempt's working directory for `import solution` to work inside the sandbox.
    """
    folder = Path(tempfile.mkdtemp(prefix="rsi-harness-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def workdir(open_tmp: Path) -> Path:
    folder = open_tmp / "work"
    folder.mkdir()
    return folder


def make_config(
    *,
    harness: dict[str, Any] | None = None,
    routing: dict[str, Any] | None = None,
    specialists: list[str] = (),  # type: ignore[assignment]
    system_prompt: str = "You write Python.",
    name: str = "test",
) -> Configuration:
    """A configuration built from a minimal contract plus the given sections."""
    spec = ContractSpec.model_validate(
        {
            "hcp": {"name": "test", "revision": 1, "created": "2026-01-01T00:00:00Z"},
            "base": {"id": "SmolLM2-135M-Instruct", "file": "SmolLM2-135M-Instruct.Q4_1.gguf"},
            "specialists": [{"name": s, "path": f"adapters/{s}"} for s in specialists],
            "harness": {"tools": ["submit", "save_tool"], **(harness or {})},
            "routing": routing or {},
        }
    )
    return Configuration(name=name, contract_ref="tests/harness", spec=spec, system_prompt=system_prompt)


@pytest.fixture
def config_factory():
    return make_config


@pytest.fixture(scope="session")
def pyfuncs():
    """Engineer B's shipped pyfuncs suite, loaded by its real loader."""
    from rsi.tasks.load import load_suite

    return {task.id: task for task in load_suite(REPO / "tasks", "pyfuncs")}
