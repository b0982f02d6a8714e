"""Fixtures for the verifier tests: small self-made tasks of each kind in a world-readable tmp dir.

The tasks live where the sandbox user COULD read them if the sandbox let it (mode 0755/0644), so a
hostile solution that finds the hidden tests is stopped only by the sandbox, not by permissions.
Backends come from tests/sandbox/conftest.py.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.sandbox.conftest import backend, backends, isolating_backend, listener  # noqa: F401


@pytest.fixture
def backend_with_pytest(isolating_backend):  # noqa: F811 - the fixture imported above
    """An isolating backend whose sandbox offers an interpreter with pytest (else a skip naming why:
    the pytest kind then ends every verification as `error` with that message, before any attempt)."""
    from rsi.errors import SandboxError

    try:
        isolating_backend.python_with("pytest")
    except SandboxError as error:
        pytest.skip(f"pytest in the {isolating_backend.isolation().backend} sandbox: {error.message}")
    return isolating_backend


@pytest.fixture
def open_tmp():
    folder = Path(tempfile.mkdtemp(prefix="rsi-verifier-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _task(root: Path, kind: str, timeout_s: float = 10):
    from rsi.sandbox.base import Limits
    from rsi.tasks.spec import Task, TaskSpec, VerifierSpec

    spec = TaskSpec(
        id=root.name,
        title=f"test task {root.name}",
        verifier=VerifierSpec(kind=kind),
        verifier_timeout_s=timeout_s,
        limits=Limits(wall_s=timeout_s, cpu_s=max(1, int(timeout_s)), memory_mb=512, processes=32),
    )
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return Task(suite="selfmade", spec=spec, root=root, instruction="write it", content_hash="0" * 64)


@pytest.fixture
def make_cases_task(open_tmp: Path):
    """A `cases` task: `double(x)` returns 2*x; its reference solution is in solution/."""

    def make(
        cases: list[dict[str, Any]] | None = None,
        compare: str = "exact",
        name: str = "double",
        raw: str | None = None,
        timeout_s: float = 10,
    ):
        root = open_tmp / "tasks" / name
        (root / "tests").mkdir(parents=True)
        (root / "solution").mkdir()
        (root / "environment").mkdir()
        data = {
            "function": "double",
            "compare": compare,
            "cases": cases or [{"args": [x], "expected": 2 * x} for x in (0, 1, -3, 7, 2.5, 1000)],
        }
        (root / "tests" / "cases.json").write_text(raw if raw is not None else json.dumps(data))
        (root / "solution" / "solution.py").write_text("def double(x):\n    return 2 * x\n")
        return _task(root, "cases", timeout_s)

    return make


@pytest.fixture
def make_script_task(open_tmp: Path):
    def make(script: str, name: str = "scripted", timeout_s: float = 10):
        root = open_tmp / "tasks" / name
        (root / "tests").mkdir(parents=True)
        (root / "tests" / "test.sh").write_text(script)
        return _task(root, "script", timeout_s)

    return make


@pytest.fixture
def make_pytest_task(open_tmp: Path):
    def make(name: str = "pytested", source: str | None = None):
        root = open_tmp / "tasks" / name
        (root / "tests").mkdir(parents=True)
        (root / "tests" / "test_double.py").write_text(
            source
            or "from solution import double\n\n"
            "def test_small():\n    assert double(2) == 4\n\n"
            "def test_negative():\n    assert double(-3) == -6\n"
        )
        return _task(root, "pytest")

    return make


@pytest.fixture
def final_workdir(open_tmp: Path):
    """A final working directory factory: {relative path: text}."""
    counter = [0]

    def make(files: dict[str, str]) -> Path:
        counter[0] += 1
        folder = open_tmp / f"final-{counter[0]}"
        folder.mkdir()
        for rel, text in files.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(text)
        return folder

    return make
