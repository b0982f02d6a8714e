"""Fixtures for promotion tests: real stored runs in a fresh workspace (see stored_runs.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest


def load_stored_runs():
    """The stored_runs helper module (test modules cannot import each other under importlib mode)."""
    name = "rsi_tests_stored_runs"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("stored_runs.py"))
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
