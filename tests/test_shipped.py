"""One test per kind of shipped example: every contract, portfolio (and task suite) must be valid.

The shipped examples are what `rsi init` copies into every new workspace, so a broken one breaks
every user on day one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rsi.workspace import Workspace, shipped_root

ROOT = shipped_root()
CONTRACTS = sorted((ROOT / "hcp").glob("*.toml"))
PORTFOLIOS = sorted((ROOT / "portfolios").glob("*.toml"))


def test_examples_are_shipped() -> None:
    assert [p.name for p in CONTRACTS] and "default.toml" in [p.name for p in CONTRACTS]
    assert "default.toml" in [p.name for p in PORTFOLIOS]


@pytest.mark.parametrize("path", CONTRACTS, ids=lambda p: p.stem)
def test_shipped_contract_is_valid(path: Path) -> None:
    from rsi.contracts.load import load_contract

    loaded = load_contract(path)
    assert loaded.name == path.stem  # hcp.name matches the file, so `rsi hcp revise NAME` finds it
    assert loaded.system_prompt.strip(), "a shipped contract resolves to a non-empty system prompt"


@pytest.mark.parametrize("path", PORTFOLIOS, ids=lambda p: p.stem)
def test_shipped_portfolio_is_valid(path: Path) -> None:
    from rsi.portfolio import resolve_portfolio

    outcome = resolve_portfolio(Workspace(ROOT), path)
    assert outcome.name == path.stem
    assert outcome.configurations and len({c.config_hash for c in outcome.configurations}) == len(
        outcome.configurations
    )


# --- task suites (engineer B adds the check of every shipped task here) ---------------------------
