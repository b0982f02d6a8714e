"""`rsi tasks list|show|validate` through the real console script."""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_list_filters_and_json(cli) -> None:
    """Read-only commands run in the source checkout, itself a workspace (hcp/ at the root)."""
    done = cli("tasks", "list", "pyfuncs", "--json", cwd=REPO)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert len(rows) >= 60
    assert [r["id"] for r in rows] == sorted(r["id"] for r in rows)
    assert {"id", "split", "difficulty", "tags", "content_hash"} <= set(rows[0])
    heldout = json.loads(cli("tasks", "list", "pyfuncs", "--split", "heldout", "--json", cwd=REPO).stdout)
    assert heldout and all(r["split"] == "heldout" for r in heldout)
    assert len(heldout) == sum(r["split"] == "heldout" for r in rows)
    tagged = json.loads(
        cli("tasks", "list", "pyfuncs", "--tag", "strings", "--tag", "parsing", "--json", cwd=REPO).stdout
    )
    assert tagged and all({"strings", "parsing"} <= set(r["tags"]) for r in tagged)
    table = cli("tasks", "list", "pyfuncs", "--split", "train", cwd=REPO)
    assert table.returncode == 0
    assert "add-two" in table.stdout and "trivial" in table.stdout
    assert "caesar-cipher" not in table.stdout  # heldout


def test_list_by_path_outside_a_workspace(cli, tmp_path: Path) -> None:
    done = cli("tasks", "list", str(REPO / "tasks" / "pyfuncs"), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert any(r["id"] == "add-two" for r in json.loads(done.stdout))


def test_show_hides_tests_unless_revealed(cli) -> None:
    done = cli("tasks", "show", "pyfuncs/count-vowels", cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert "def count_vowels(s)" in done.stdout
    assert "rhythm" not in done.stdout  # a hidden case
    assert "aeiouAEIOU" not in done.stdout  # the reference solution
    revealed = cli("tasks", "show", "pyfuncs/count-vowels", "--reveal", cwd=REPO)
    assert "rhythm" in revealed.stdout and "aeiouAEIOU" in revealed.stdout
    data = json.loads(cli("tasks", "show", "pyfuncs/count-vowels", "--json", cwd=REPO).stdout)
    assert data["spec"]["verifier"]["kind"] == "cases" and "tests" not in data
    assert len(data["content_hash"]) == 64


def test_show_unknown_task_exits_2(cli) -> None:
    done = cli("tasks", "show", "pyfuncs/count-vowel", cwd=REPO)
    assert done.returncode == 2
    assert "no task 'count-vowel'" in done.stderr and "count-vowels" in done.stderr
    done = cli("tasks", "list", "nosuch", cwd=REPO)
    assert done.returncode == 2
    assert "no task suite 'nosuch'" in done.stderr and "pyfuncs" in done.stderr


def test_validate_in_a_fresh_workspace(cli, workspace) -> None:
    """`rsi init` copies the shipped suites; they validate there by name."""
    done = cli("tasks", "validate", "pyfuncs", "--json", cwd=workspace.root)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["ok"] and data["tasks"] >= 60 and 0.2 <= data["heldout"] / data["tasks"] <= 0.3
