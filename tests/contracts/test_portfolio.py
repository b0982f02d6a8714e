"""Portfolios: variants and grids resolve to distinct, validated, content-hashed configurations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi.config import Configuration
from rsi.contracts.revisions import revise_contract
from rsi.errors import ContractError
from rsi.portfolio import load_portfolio, resolve_portfolio


def test_default_portfolio_is_genuinely_varied(shared_workspace) -> None:
    configs = load_portfolio(shared_workspace, "default")
    assert len(configs) >= 6 and all(isinstance(c, Configuration) for c in configs)
    assert len({c.config_hash for c in configs}) == len(configs)
    assert len({c.name for c in configs}) == len(configs)
    harnesses = [c.spec.harness for c in configs]
    assert {h.substrate for h in harnesses} == {"repl", "text"}
    assert {h.prompt_style for h in harnesses} == {"plain", "stepwise", "example"}
    assert len({c.system_prompt for c in configs}) >= 4
    assert {h.sampling.temperature for h in harnesses} >= {0.0, 0.7}
    assert len({h.sampling.samples for h in harnesses}) >= 2 and len({h.max_turns for h in harnesses}) >= 3
    assert all(h.sampling.max_tokens <= 384 for h in harnesses)  # the embedded model runs ~22 tok/s on CPU
    assert all(c.system_prompt.strip() for c in configs)


def test_grid_is_the_cartesian_product_in_written_order(tmp_path: Path, shared_workspace) -> None:
    path = tmp_path / "grid.toml"
    path.write_text(
        'schema_version = 1\n[portfolio]\nname = "g"\nbase = "default"\n'
        '[[variants]]\nname = "plain"\n'
        '[[grids]]\nname = "sweep"\n[grids.overrides]\n"harness.substrate" = "text"\n'
        '[grids.axes]\n"harness.sampling.temperature" = [0.2, 0.7]\n"harness.max_turns" = [1, 2, 3]\n'
    )
    outcome = resolve_portfolio(shared_workspace, path)
    names = [c.name for c in outcome.configurations]
    assert names == [
        "plain",
        "sweep-temperature-0.2-max_turns-1",
        "sweep-temperature-0.2-max_turns-2",
        "sweep-temperature-0.2-max_turns-3",
        "sweep-temperature-0.7-max_turns-1",
        "sweep-temperature-0.7-max_turns-2",
        "sweep-temperature-0.7-max_turns-3",
    ]
    last = outcome.configurations[-1]
    assert last.spec.harness.substrate == "text" and last.spec.harness.sampling.temperature == 0.7
    assert last.overrides == {"harness.substrate": "text", "harness.sampling.temperature": 0.7, "harness.max_turns": 3}
    assert last.contract_ref == outcome.base.ref


def test_base_can_be_an_older_revision(shared_workspace, workspace) -> None:
    revise_contract(workspace, "default", {"harness.max_turns": 9}, "nine turns")
    path = workspace.portfolios_dir / "old.toml"
    path.write_text('[portfolio]\nname = "old"\nbase = "default@r1"\n[[variants]]\nname = "as-was"\n')
    [config] = load_portfolio(workspace, "old")
    assert config.spec.harness.max_turns == 4 and config.contract_ref == "default@r1"
    [by_path] = load_portfolio(workspace, str(path))
    assert by_path.config_hash == config.config_hash


def test_all_problems_of_a_portfolio_are_reported_together(tmp_path: Path, shared_workspace) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        '[portfolio]\nname = "bad"\nbase = "default"\n'
        '[[variants]]\nname = "a"\n[variants.overrides]\n"harness.max_turn" = 2\n'
        '[[variants]]\nname = "b"\n[variants.overrides]\n"harness.sampling.top_p" = 0\n'
    )
    with pytest.raises(ContractError) as raised:
        resolve_portfolio(shared_workspace, path)
    assert [str(p) for p in raised.value.problems] == [
        f"{path}:7: harness.max_turn: variant 'a': unknown key 'max_turn' (did you mean 'max_turns'?)",
        f"{path}:11: harness.sampling.top_p: variant 'b': Input should be greater than 0 (got 0)",
    ]


def test_portfolio_show_cli(shared_workspace, cli) -> None:
    result = cli("portfolio", "show", "default", "--json", cwd=shared_workspace.root)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    expected = load_portfolio(shared_workspace, "default")
    assert [c["name"] for c in report["configurations"]] == [c.name for c in expected]
    assert [c["config_hash"] for c in report["configurations"]] == [c.config_hash for c in expected]
    assert report["base"]["name"] == "default"
    plain = cli("portfolio", "show", "default", cwd=shared_workspace.root)
    assert plain.returncode == 0 and any(line.startswith("text-greedy\t") for line in plain.stdout.splitlines())
    missing = cli("portfolio", "show", "nope", cwd=shared_workspace.root)
    assert missing.returncode == 2 and "no portfolio" in missing.stderr


def test_base_may_be_a_path_relative_to_the_portfolio(workspace, cli) -> None:
    folder = workspace.root / "portfolios" / "nested"
    folder.mkdir()
    (folder / "rel.toml").write_text(
        '[portfolio]\nname = "rel"\nbase = "../../hcp/default.toml"\n'
        '[[variants]]\nname = "terse"\n[variants.overrides]\n"harness.system_prompt_file" = "prompts/repl_terse.md"\n'
    )
    [config] = load_portfolio(workspace, folder / "rel.toml")
    assert config.system_prompt == (workspace.root / "hcp" / "prompts" / "repl_terse.md").read_text()
    from_sub = cli("hcp", "show", "hcp/default.toml", "--json", cwd=folder)  # path resolved from the root
    assert from_sub.returncode == 0, from_sub.stderr
