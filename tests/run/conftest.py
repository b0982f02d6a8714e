"""Fixtures for the run tests: a real workspace with a two-configuration portfolio."""

from __future__ import annotations

import pytest

# Both variants sample (temperature > 0): these tests exercise budgets, retries and resume, which
# need a configuration to be worth retrying on a task (a greedy one is tried once per task).
MINI_PORTFOLIO = """schema_version = 1
[portfolio]
name = "mini"
base = "default"

[[variants]]
name = "baseline"
[variants.overrides]
"harness.sampling.temperature" = 0.7

[[variants]]
name = "short"
[variants.overrides]
"harness.max_turns" = 3
"harness.sampling.temperature" = 0.7
"""


@pytest.fixture
def mini_ws(workspace, monkeypatch):
    """A fresh workspace (shipped tasks) with portfolios/mini.toml; the store under its runs/."""
    (workspace.portfolios_dir / "mini.toml").write_text(MINI_PORTFOLIO)
    monkeypatch.delenv("RSI_DB", raising=False)
    monkeypatch.delenv("RSI_ATTEMPT_OVERRIDE", raising=False)
    monkeypatch.delenv("RSI_MODEL_OVERRIDE", raising=False)
    return workspace
