"""`rsi diff`: semantic differences between revisions and files, clocks moved, exit codes."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import tomli_w

from rsi.contracts.diff import diff_contracts
from rsi.contracts.load import load_contract
from rsi.contracts.revisions import revise_contract

REPO = Path(__file__).resolve().parents[2]
DEFAULT = REPO / "hcp" / "default.toml"


def reformatted(text: str) -> str:
    """Same content: no comments, keys in reverse order, defaults spelled out, another layout."""
    data = tomllib.loads(text)

    def reverse(value):
        if isinstance(value, dict):
            return {k: reverse(v) for k, v in reversed(list(value.items()))}
        return value

    data = reverse(data)
    data["serving"] = {"backend": "embedded", "max_batch": 16}  # explicit defaults
    return tomli_w.dumps(data)


def test_diff_between_revisions_by_cli(workspace, cli) -> None:
    revise_contract(workspace, "default", {"harness.sampling.temperature": 0.7}, "warmer")
    result = cli("diff", "default@r1", "default@r2", "--json", cwd=workspace.root)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["equal"] is False and report["clocks_moved"] == ["harness"]
    harness = {c["key"]: c for c in report["sections"]["harness"]}
    assert (harness["harness.sampling.temperature"]["old"], harness["harness.sampling.temperature"]["new"]) == (0.0, 0.7)
    assert (harness["harness.version"]["old"], harness["harness.version"]["new"]) == (1, 2)
    assert {c["key"] for c in report["sections"]["hcp"]} == {"hcp.revision", "hcp.parent", "hcp.created"}
    assert all(c["bookkeeping"] for c in report["sections"]["hcp"])
    assert set(report["sections"]) == {"hcp", "harness"}

    plain = cli("diff", "default@r1", "default@r2", cwd=workspace.root)
    assert plain.returncode == 1
    lines = plain.stdout.splitlines()
    assert "different; clocks moved: harness" in lines
    assert "[harness]" in lines and "  harness.sampling.temperature: 0.0 -> 0.7" in lines


def test_diff_of_a_revision_with_itself_and_by_gitrev(workspace, cli) -> None:
    revise_contract(workspace, "default", {"base.id": "other"}, "base")
    same = cli("diff", "default@r2", "default", cwd=workspace.root)
    assert same.returncode == 0, same.stdout + same.stderr
    assert "equal identity; clocks moved: none" in same.stdout
    by_rev = cli("diff", "HEAD~1:hcp/default.toml", "HEAD:hcp/default.toml", "--json", cwd=workspace.root)
    assert by_rev.returncode == 1
    assert json.loads(by_rev.stdout)["clocks_moved"] == ["base"]


def test_diff_between_files_ignores_formatting_comments_order_and_defaults(tmp_path: Path, cli) -> None:
    copy = tmp_path / "hcp" / "copy.toml"
    copy.parent.mkdir()
    (tmp_path / "hcp" / "prompts").mkdir()
    (tmp_path / "hcp" / "prompts" / "repl.md").write_text((REPO / "hcp" / "prompts" / "repl.md").read_text())
    copy.write_text(reformatted(DEFAULT.read_text()))
    assert "#" not in copy.read_text()
    result = cli("diff", str(DEFAULT), str(copy), cwd=tmp_path)  # outside any workspace: files still work
    assert result.returncode == 0, result.stdout + result.stderr
    assert load_contract(copy).content_hash == load_contract(DEFAULT).content_hash

    copy.write_text(copy.read_text().replace("max_turns = 4", "max_turns = 9"))
    changed = cli("diff", str(DEFAULT), str(copy), "--json", cwd=tmp_path)
    assert changed.returncode == 1
    report = json.loads(changed.stdout)
    assert [(c["key"], c["old"], c["new"]) for c in report["sections"]["harness"]] == [("harness.max_turns", 4, 9)]


def test_prompt_change_is_a_unified_text_diff(tmp_path: Path) -> None:
    other = tmp_path / "other.toml"
    (tmp_path / "prompts").mkdir()
    prompt = (REPO / "hcp" / "prompts" / "repl.md").read_text()
    (tmp_path / "prompts" / "repl.md").write_text(prompt.replace("careful Python programmer", "meticulous engineer"))
    other.write_text(DEFAULT.read_text())
    result = diff_contracts(load_contract(DEFAULT), load_contract(other))
    assert not result.equal and result.clocks_moved == ["harness"]
    [change] = [c for c in result.changes if c.key == "harness.system_prompt"]
    assert change.text_diff is not None
    assert "-You are a careful Python programmer" in change.text_diff
    assert "+You are a meticulous engineer" in change.text_diff
    assert change.text_diff.startswith("--- ")


def test_adding_a_specialist_moves_the_specialists_clock(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "repl.md").write_text((REPO / "hcp" / "prompts" / "repl.md").read_text())
    other = tmp_path / "default.toml"
    other.write_text(DEFAULT.read_text() + '\n[[specialists]]\nname = "fixer"\npath = "runs/adapters/fixer"\n')
    result = diff_contracts(load_contract(DEFAULT), load_contract(other))
    assert result.clocks_moved == ["specialists"]
    assert {c.key for c in result.sections()["specialists"]} >= {"specialists[0].name", "specialists[0].path"}
    assert all(c.kind == "added" for c in result.sections()["specialists"])
    assert result.specialists == ["specialist fixer added (r1, rank 8, adapter runs/adapters/fixer)"]


def test_the_diff_names_specialists_added_replaced_removed_and_re_routed(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "repl.md").write_text((REPO / "hcp" / "prompts" / "repl.md").read_text())

    routing = '[routing]\npolicy = "fixed"\nspecialist = ""        # the bare base on every turn\nsummary_tokens = 192\n'
    assert routing in DEFAULT.read_text()

    def contract(name: str, specialists: str, routed: str) -> Path:
        path = tmp_path / f"{name}.toml"
        path.write_text(DEFAULT.read_text().replace(routing, routed) + specialists)
        return path

    sft = '\n[[specialists]]\nname = "sft"\nrevision = {}\npath = "runs/adapters/{}"\nsha256 = "{}"\n'
    one = contract("one", sft.format(1, "a", "a" * 64), '[routing]\npolicy = "fixed"\nspecialist = "sft"\n')
    two = contract("two", sft.format(2, "b", "b" * 64) + '[[specialists]]\nname = "sql"\npath = "runs/adapters/s"\n',
                   '[routing]\npolicy = "rules"\n[[routing.rules]]\nturn = "after_error"\nspecialist = "sql"\n'
                   '[[routing.rules]]\nspecialist = "sft"\n')
    result = diff_contracts(load_contract(one), load_contract(two))
    assert result.specialists == [
        "specialist sql added (r1, rank 8, adapter runs/adapters/s)",
        f"specialist sft replaced: r1 -> r2 (adapter {'a' * 12} -> {'b' * 12})",
        "re-routed: every turn to sft -> first-match rules (2) over sft, sql",
    ]
    back = diff_contracts(load_contract(two), load_contract(DEFAULT))
    assert back.specialists[:2] == ["specialist sft removed (was r2)", "specialist sql removed (was r1)"]
    assert back.specialists[2] == "re-routed: first-match rules (2) over sft, sql -> every turn to the base"
    assert back.to_json()["specialists"] == back.specialists


def test_bad_refs_exit_2(workspace, cli) -> None:
    for ref in ("nope", "default@r9", "no-such-rev:hcp/default.toml", "missing.toml"):
        result = cli("diff", "default", ref, cwd=workspace.root)
        assert result.returncode == 2, (ref, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr and result.stderr.startswith("error: ")


def test_rich_rendering_on_a_terminal_keeps_bracketed_values(tmp_path: Path, monkeypatch) -> None:
    """On a TTY the diff is coloured; values such as ["submit"] or [base] must not be eaten as markup."""
    from rsi.cli import cmd_hcp

    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "repl.md").write_text((REPO / "hcp" / "prompts" / "repl.md").read_text() + "\nSee [base].\n")
    other = tmp_path / "default.toml"
    other.write_text(DEFAULT.read_text().replace('tools = ["submit", "save_tool"]',
                                                 'tools = ["submit"]\ntool_library = "[bold]lib"'))
    result = diff_contracts(load_contract(DEFAULT), load_contract(other))
    monkeypatch.setattr(cmd_hcp, "is_tty", lambda: True)
    with cmd_hcp.console.capture() as captured:
        cmd_hcp.render_diff(result)
    text = captured.get()
    assert '"[bold]lib"' in text and '["submit"]' in text and "+See [base]." in text
    assert "harness.tool_library:" in text and "different; clocks moved: harness" in text
