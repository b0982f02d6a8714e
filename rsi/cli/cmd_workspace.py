"""CLI commands: `rsi init` (create a workspace)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rsi.cli.render import console


def init(
    directory: Annotated[Path, typer.Argument(help="Folder for the new workspace (created if missing).")],
) -> None:
    """Create a workspace: a git repository with the shipped contracts, portfolios and task suites."""
    from rsi.workspace import init_workspace

    workspace = init_workspace(directory)
    console.print(f"workspace ready at {workspace.root}")


def register(app: typer.Typer) -> None:
    app.command("init")(init)
