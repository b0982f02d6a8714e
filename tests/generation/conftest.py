"""Fixtures for generation tests: the training helpers (CLI shim, scripted solutions) shared with tests/training."""

from __future__ import annotations

import pytest


def training_helpers():
    """tests/training/conftest.py as a module (test folders cannot import each other under importlib mode)."""
    from tests.training import conftest

    return conftest


@pytest.fixture
def helpers():
    return training_helpers()


@pytest.fixture
def shim():
    return training_helpers().rsi_i


@pytest.fixture
def scripted_env(workspace, tmp_path, monkeypatch):
    """This workspace, its own SQLite store, the reference-solution scripted model, 1 torch thread."""
    monkeypatch.delenv("RSI_DB", raising=False)
    monkeypatch.delenv("RSI_TEST_CRASH_AT", raising=False)
    script = training_helpers().write_solution_script(workspace, tmp_path / "solutions.json")
    return {"RSI_WORKSPACE": str(workspace.root), "RSI_MODEL_OVERRIDE": f"scripted:{script}", "RSI_TORCH_THREADS": "1"}
