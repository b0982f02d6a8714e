"""Fixtures for experience-library tests: real stored runs (tests/promotion/stored_runs.py) and entries."""

from __future__ import annotations

import pytest

from rsi.experience.library import ExperienceEntry
from tests.harness.conftest import open_tmp, pyfuncs, sandbox  # noqa: F401 - the harness tests' fixtures


@pytest.fixture
def builder(workspace, monkeypatch):
    from tests.promotion import stored_runs

    monkeypatch.delenv("RSI_DB", raising=False)
    monkeypatch.delenv("RSI_EXPERIENCE_DIR", raising=False)
    monkeypatch.setenv("RSI_WORKSPACE", str(workspace.root))
    return stored_runs.RunBuilder(workspace)


@pytest.fixture
def planned():
    from tests.promotion import stored_runs

    return stored_runs.Planned


def entry(task: str, instruction: str, code: str = "def f():\n    return 1\n", *, tokens: int = 10,
          task_hash: str | None = None, key: str | None = None) -> ExperienceEntry:
    """A library entry for pure tests (retrieval, the split check)."""
    return ExperienceEntry(task_key=f"s/{task}", task_hash=task_hash or f"h-{task}", instruction=instruction,
                           solution_file="solution.py", code=code, code_key=key or f"k-{task}-{tokens}",
                           config_name="c", config_hash="0" * 16, run_id="run-1", attempt_id=f"{task}-a{tokens}",
                           tokens=tokens)


def generation_at(workspace, number: int, run_id: str, previous: str | None = None, **spec):
    """A Generation whose run step recorded `run_id` (its export-step methods can run on their own)."""
    from rsi.generation.generation import Generation
    from rsi.generation.outputs import RunOutput
    from rsi.generation.state import GenerationState, now_utc, write_state

    stamp = now_utc()
    state = GenerationState(id=f"g{number:04d}", number=number, created=stamp, updated=stamp,
                            spec={"contract": "default", **spec},
                            inputs={"contract": "default", "revision": 1, "previous": previous})
    state.step("run").outputs = RunOutput(run_id=run_id).model_dump(mode="json", exclude_unset=True)
    return Generation(workspace, write_state(workspace, state), note=lambda _m: None)
