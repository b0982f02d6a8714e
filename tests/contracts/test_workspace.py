"""Workspaces: `rsi init` makes a git repository; every command finds it from cwd or --workspace."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)


def test_init_creates_a_committed_git_workspace_with_runs_ignored(tmp_path: Path, cli, git_identity) -> None:
    root = tmp_path / "lab"
    result = cli("init", str(root), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    for part in ("hcp", "portfolios", "tasks", "runs"):
        assert (root / part).is_dir()
    tracked = git(root, "ls-files").stdout.splitlines()
    assert "hcp/default.toml" in tracked and "portfolios/default.toml" in tracked
    assert any(path.startswith("tasks/") for path in tracked)
    assert git(root, "status", "--porcelain").stdout == ""
    (root / "runs" / "out.json").write_text("{}")
    assert git(root, "check-ignore", "runs/out.json").returncode == 0
    assert git(root, "status", "--porcelain").stdout == ""
    again = cli("init", str(root), cwd=tmp_path)
    assert again.returncode == 2 and "already a workspace" in again.stderr


def test_commands_find_the_workspace_from_a_subfolder_or_the_flag(workspace, cli, tmp_path: Path) -> None:
    inside = workspace.root / "hcp" / "prompts"
    found = cli("hcp", "show", "default", "--json", cwd=inside)
    assert found.returncode == 0, found.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    flag = cli("--workspace", str(workspace.root), "portfolio", "validate", cwd=elsewhere)
    assert flag.returncode == 0, flag.stderr
    lost = cli("hcp", "show", "default", cwd=elsewhere, env={"RSI_WORKSPACE": ""})
    assert lost.returncode == 2 and "no workspace" in lost.stderr and "Traceback" not in lost.stderr


def test_show_resolves_paths_names_revisions_and_gitrevs(workspace, cli) -> None:
    import json

    from rsi.contracts.revisions import revise_contract

    revise_contract(workspace, "default", {"harness.system_prompt_file": "prompts/text.md"}, "text prompt")
    by_tag = json.loads(cli("hcp", "show", "default@r1", "--json", cwd=workspace.root).stdout)
    by_rev = json.loads(cli("hcp", "show", "HEAD:hcp/default.toml", "--json", cwd=workspace.root).stdout)
    by_path = json.loads(cli("hcp", "show", "hcp/default.toml", "--json", cwd=workspace.root).stdout)
    assert by_tag["revision"] == 1 and by_tag["system_prompt"].startswith("You are a careful Python programmer working")
    assert by_rev["revision"] == 2 and by_rev["content_hash"] == by_path["content_hash"]
    assert by_rev["system_prompt"] == (workspace.root / "hcp" / "prompts" / "text.md").read_text()
    plain = cli("hcp", "show", "default@r1", cwd=workspace.root)
    assert plain.returncode == 0 and "# system prompt: from prompts/repl.md" in plain.stdout
    assert "Write the requested function into the file solution.py" in plain.stdout
