"""Fixtures for the run tests: a real workspace with a two-configuration portfolio."""

from __future__ import annotations

import pytest

from tests.run.mini import MINI_PORTFOLIO


@pytest.fixture
def mini_ws(workspace, monkeypatch):
    """A fresh workspace (shipped tasks) with portfolios/mini.toml; the store under its runs/."""
    (workspace.portfolios_dir / "mini.toml").write_text(MINI_PORTFOLIO)
    monkeypatch.delenv("RSI_DB", raising=False)
    monkeypatch.delenv("RSI_ATTEMPT_OVERRIDE", raising=False)
    monkeypatch.delenv("RSI_MODEL_OVERRIDE", raising=False)
    return workspace
