"""A portfolio ref may select some of its configurations: `default:text-*` (the demo runs this way)."""

from __future__ import annotations

import pytest

from rsi.errors import UserInputError
from rsi.portfolio import load_portfolio, split_selection


def test_split_selection_only_splits_a_colon_that_is_not_part_of_an_existing_path(tmp_path) -> None:
    assert split_selection("default") == ("default", [])
    assert split_selection("default:text-*, repl-greedy") == ("default", ["text-*", "repl-greedy"])
    odd = tmp_path / "odd:name.toml"
    odd.write_text("")
    assert split_selection(str(odd)) == (str(odd), [])


def test_a_selection_keeps_file_order_and_only_the_matching_configurations(workspace) -> None:
    every = [c.name for c in load_portfolio(workspace, "default")]
    chosen = [c.name for c in load_portfolio(workspace, "default:text-*")]
    assert chosen and all(name.startswith("text-") for name in chosen)
    assert chosen == [name for name in every if name.startswith("text-")]
    assert [c.name for c in load_portfolio(workspace, "default:repl-greedy,text-greedy")] == [
        name for name in every if name in ("repl-greedy", "text-greedy")]


def test_a_pattern_that_matches_nothing_is_an_error_naming_the_configurations(workspace, cli) -> None:
    with pytest.raises(UserInputError, match="no configuration matches 'nope-\\*'") as raised:
        load_portfolio(workspace, "default:text-*,nope-*")
    assert "text-greedy" in (raised.value.hint or "")
    shown = cli("--workspace", str(workspace.root), "portfolio", "show", "default:nope")
    assert shown.returncode == 2 and "no configuration matches 'nope'" in shown.stderr
    assert "Traceback" not in shown.stderr
