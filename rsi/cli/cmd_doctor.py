"""CLI command: `rsi doctor [--json]` (run the checks in rsi.doctor, render a table)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rsi.cli.render import console, print_json

_STYLE = {"ok": "green", "missing": "yellow", "failed": "red"}


def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Check what this machine can do: sandboxes (tried for real), SLURM, torch, model file, disk.

    Exits 0 even when optional parts are missing; the table says what each absence means.
    """
    from rsi.cli.state import state
    from rsi.doctor import run_doctor
    from rsi.errors import WorkspaceError

    try:
        folder: Path = state.workspace().root
    except (WorkspaceError, AttributeError):
        folder = Path.cwd()
    report = run_doctor(folder)
    if as_json:
        print_json({"ok": report.ok, "default_sandbox": report.default_sandbox, "checks": [c.model_dump() for c in report.checks]})
        return
    from rich.table import Table

    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("check", "status", "detail"):
        table.add_column(column, overflow="fold")
    for check in report.checks:
        table.add_row(check.name, f"[{_STYLE[check.status]}]{check.status}[/]", check.detail)
    console.print(table)
    console.print(f"default sandbox for attempts: {report.default_sandbox}")


def register(app: typer.Typer) -> None:
    """Add `rsi doctor` to the root app."""
    app.command("doctor")(doctor)
