"""Loading, identity hashes, the key locator, overrides and configurations."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsi.config import configuration_from_contract
from rsi.contracts.load import load_contract
from rsi.contracts.overrides import OverrideError, apply_overrides, parse_assignment
from rsi.contracts.toml_source import TomlSyntaxError, locate_keys, parse_source
from rsi.errors import ContractError

REPO = Path(__file__).resolve().parents[2]
DEFAULT = REPO / "hcp" / "default.toml"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "prompts").mkdir()
    for prompt in (REPO / "hcp" / "prompts").glob("*.md"):
        (tmp_path / "prompts" / prompt.name).write_text(prompt.read_text())
    return tmp_path


def write(folder: Path, text: str, name: str = "c.toml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


def test_default_loads_with_its_prompt_and_hashes() -> None:
    loaded = load_contract(DEFAULT)
    assert loaded.name == "default" and loaded.revision == 1
    assert loaded.system_prompt == (REPO / "hcp" / "prompts" / "repl.md").read_text()
    assert len(loaded.content_hash) == 64 and set(loaded.clock_hashes) == {"base", "specialists", "harness"}


def test_identity_ignores_bookkeeping_and_inline_vs_file_prompt(folder: Path) -> None:
    base = load_contract(DEFAULT)
    text = DEFAULT.read_text()
    bookkeeping = text.replace("revision = 1", "revision = 7").replace("parent = 0", "parent = 6")
    bookkeeping = bookkeeping.replace("2026-11-29T00:00:00Z", "2030-01-01T12:00:00+02:00").replace(
        'notes = "Shipped', 'notes = "Other notes. Shipped'
    )
    assert load_contract(write(folder, bookkeeping)).content_hash == base.content_hash
    prompt = (REPO / "hcp" / "prompts" / "repl.md").read_text()
    inline = text.replace('system_prompt_file = "prompts/repl.md"', f"system_prompt = {prompt!r}".replace("'", '"""'))
    assert load_contract(write(folder, inline, "inline.toml")).content_hash == base.content_hash


@pytest.mark.parametrize(
    ("old", "new", "clock"),
    [
        ('id = "SmolLM2-135M-Instruct"', 'id = "other"', "base"),
        ("max_turns = 4", "max_turns = 5", "harness"),
        ('policy = "fixed"', 'policy = "rules"', "harness"),  # routing belongs to the harness clock
        ("seed = 0", "seed = 1", None),  # evaluation changes identity but moves no clock
    ],
)
def test_each_real_change_changes_identity_and_its_clock(folder: Path, old: str, new: str, clock) -> None:
    base = load_contract(DEFAULT)
    assert old in DEFAULT.read_text()
    changed = load_contract(write(folder, DEFAULT.read_text().replace(old, new)))
    assert changed.content_hash != base.content_hash
    moved = [c for c in base.clock_hashes if base.clock_hashes[c] != changed.clock_hashes[c]]
    assert moved == ([clock] if clock else [])


def test_locator_handles_tables_arrays_inline_tables_and_multiline_strings() -> None:
    text = (
        'top = 1\n[a]\nb.c = 2\n"quoted.key" = 3\nlong = """\nfake = 1\n[fake]\n"""\nafter = 4\n'
        "[[arr]]\nx = 1\n[[arr]]\nx = [\n  1,\n  { y = 2 },\n]\n[arr.sub]\nz = 5\n"
    )
    lines = locate_keys(text)
    assert lines[("top",)] == 1 and lines[("a",)] == 2 and lines[("a", "b", "c")] == 3
    assert lines[("a", "quoted.key")] == 4 and lines[("a", "after")] == 9
    assert ("fake",) not in lines and ("a", "fake") not in lines
    assert lines[("arr", 0, "x")] == 11 and lines[("arr", 1, "x")] == 13
    assert lines[("arr", 1, "x", 1, "y")] == 15 and lines[("arr", 1, "sub", "z")] == 18


def test_syntax_errors_carry_line_and_key() -> None:
    with pytest.raises(TomlSyntaxError) as raised:
        parse_source("f.toml", "[harness]\nmax_turns = 4\nsubstrate = repl\n")
    assert str(raised.value.problem).startswith("f.toml:3: harness.substrate: TOML syntax error")


def test_apply_overrides_sets_nested_indexed_and_merged_values() -> None:
    data = {"harness": {"sampling": {"temperature": 0.0, "top_p": 1.0}}, "specialists": [{"name": "a", "rank": 8}]}
    result = apply_overrides(
        data,
        {"harness.sampling": {"top_p": 0.9}, "specialists[0].rank": 4, "evaluation.gate.min_lift": 0.1},
    )
    assert result["harness"]["sampling"] == {"temperature": 0.0, "top_p": 0.9}
    assert result["specialists"][0] == {"name": "a", "rank": 4}
    assert result["evaluation"] == {"gate": {"min_lift": 0.1}}
    assert data["harness"]["sampling"]["top_p"] == 1.0  # the input is not modified


def test_apply_overrides_reports_every_bad_key_with_hints() -> None:
    with pytest.raises(OverrideError) as raised:
        apply_overrides({"specialists": []}, {"harness.max_turn": 1, "bse.id": "x", "specialists[2].rank": 4})
    lines = raised.value.lines()
    assert lines[0] == "harness.max_turn: unknown key 'max_turn' (did you mean 'max_turns'?)"
    assert lines[1] == "bse.id: unknown key 'bse' (did you mean 'base'?)"
    assert lines[2].startswith("specialists[2].rank: index 2 is out of range")


def test_parse_assignment_reads_toml_values() -> None:
    assert parse_assignment("harness.sampling.temperature=0.7") == ("harness.sampling.temperature", 0.7)
    assert parse_assignment("harness.substrate=text") == ("harness.substrate", "text")
    assert parse_assignment('harness.tools=["submit"]') == ("harness.tools", ["submit"])
    assert parse_assignment("evaluation.gate.enabled=false") == ("evaluation.gate.enabled", False)


def test_configuration_from_contract_with_overrides() -> None:
    loaded = load_contract(DEFAULT)
    plain = configuration_from_contract(loaded)
    text = configuration_from_contract(
        loaded,
        name="text",
        overrides={"harness.substrate": "text", "harness.system_prompt_file": "prompts/text.md"},
        parents=["default"],
    )
    assert plain.name == "default" and text.name == "text" and text.parents == ["default"]
    assert text.system_prompt == (REPO / "hcp" / "prompts" / "text.md").read_text()
    assert text.config_hash != plain.config_hash
    inline = configuration_from_contract(loaded, overrides={"harness.system_prompt": "Be brief."})
    assert inline.system_prompt == "Be brief." and inline.spec.harness.system_prompt_file == ""
    with pytest.raises(ContractError, match="harness.max_turns"):
        configuration_from_contract(loaded, overrides={"harness.max_turns": 0})


def test_a_portfolio_given_as_a_contract_says_so() -> None:
    with pytest.raises(ContractError) as raised:
        load_contract(REPO / "portfolios" / "default.toml")
    [problem] = raised.value.problems
    assert problem.key == "portfolio" and "is a portfolio, not a contract" in problem.message


def test_keys_added_later_at_their_defaults_move_no_identity() -> None:
    """A key a later release adds (the learned router's `routing.router`/`router_sha256`, the partition keys of
    `[training]`, ...) left at its default must not move a stored contract's identity: revisions, trailers and
    evidence are keyed by these hashes. These are hcp/default.toml's hashes as the code computed them before
    those keys existed (610d49f); edit them only with a deliberate change of hcp/default.toml itself."""
    loaded = load_contract(DEFAULT)
    assert loaded.content_hash == "967cbbc3e02fcddd05b5733515bcf69669b57bc37ed711cd45e5c812b7eb8ef6"
    assert loaded.clock_hashes["harness"] == "e2dae34ce2719fb1fcf0e2abe964e4537c313cf4d66c9ce630e1e506d9db9770"
    assert configuration_from_contract(loaded).config_hash == "a853b01a6829221f"
