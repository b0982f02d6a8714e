"""Fixtures for export tests: the stored-run builder shared with tests/promotion."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest


def load_stored_runs():
    name = "rsi_tests_stored_runs"
    if name not in sys.modules:
        path = Path(__file__).resolve().parents[1] / "promotion" / "stored_runs.py"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture
def builder(workspace, monkeypatch):
    monkeypatch.delenv("RSI_DB", raising=False)
    monkeypatch.setenv("RSI_WORKSPACE", str(workspace.root))
    return load_stored_runs().RunBuilder(workspace)


@pytest.fixture
def planned():
    return load_stored_runs().Planned


@pytest.fixture
def promote_cli():
    """`rsi ...` through the real entry point, with this area's commands registered (see stored_runs.py)."""
    return load_stored_runs().rsi_promote_cli
