"""The root CLI: instant help (no heavy imports), version, exit codes for bad usage."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("torch", "transformers", "peft", "vllm", "docker", "submitit", "matplotlib", "sqlalchemy")


def test_help_imports_no_heavy_package() -> None:
    probe = (
        "import sys\n"
        "from rsi.cli import app\n"
        "sys.argv = ['rsi', '--help']\n"
        "try:\n    app.main()\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert "Usage" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout[-500:]


def test_every_command_group_is_registered(cli) -> None:
    done = cli("--help")
    assert done.returncode == 0
    for command in ("init", "hcp", "diff", "portfolio", "tasks", "doctor", "attempt", "show", "serve", "run",
                    "status", "coverage", "report", "promote", "propose", "trajectories", "train", "adapters",
                    "eval", "generation", "nightly", "lineage"):
        assert f" {command} " in done.stdout, command


def test_version_and_unknown_command(cli) -> None:
    assert cli("--version").stdout.startswith("rsi ")
    bad = cli("no-such-command")
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr


def test_a_bad_flag_value_is_a_usage_error(cli) -> None:
    bad = cli("run", "--budget-attempts", "abc")
    assert bad.returncode == 2
    assert "--budget-attempts" in bad.stderr and "Traceback" not in bad.stderr


def test_a_bad_generation_flag_value_is_one_line_naming_the_flag(cli) -> None:
    # Values typer cannot check (ranges, choices of the GenerationSpec) are checked by the spec: still one line.
    for args, words in ((("generation", "--render", "bogus"), "--render: Input should be 'found' or 'deployed'"),
                        (("nightly", "--harvest-per-task", "-1"), "--harvest-per-task: Input should be greater")):
        bad = cli(*args)
        assert bad.returncode == 2, bad.stderr
        assert words in bad.stderr and "Traceback" not in bad.stderr and "internal error" not in bad.stderr


def _commands(group, path=()):
    """Every leaf command of the click tree under `group`, with its path of names."""
    import click

    for name, command in getattr(group, "commands", {}).items():
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))
        else:
            yield (*path, name), command


def test_help_texts_keep_every_bracketed_word() -> None:
    """Help quotes TOML tables ([training], [evaluation.gate]); the renderer must not eat them as markup."""
    import re

    import typer.main
    from typer.testing import CliRunner

    from rsi.cli.app import app

    root = typer.main.get_command(app)
    checked: list[tuple[str, ...]] = []
    for path, command in _commands(root):
        words = {w for p in command.params for w in re.findall(r"\[[a-z_.]+\]", getattr(p, "help", None) or "")}
        if not words:
            continue
        out = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "240"}).output
        for word in words:
            assert word in out, f"rsi {' '.join(path)} --help lost {word}"
        checked.append(path)
    assert ("train",) in checked  # its options quote [training]
