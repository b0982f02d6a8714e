"""Fixtures for promotion tests: real stored runs in a fresh workspace (see stored_runs.py)."""

from __future__ import annotations

import pytest


def load_stored_runs():
    """The stored_runs helper module (imported through the repository root, as tests.conftest is)."""
    from tests.promotion import stored_runs

    return stored_runs


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
