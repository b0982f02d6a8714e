"""Global CLI options shared by every command (set by the root callback)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rsi.workspace import Workspace, find_workspace


@dataclass
class CliState:
    debug: bool = False
    workspace_dir: Path | None = None

    def workspace(self) -> Workspace:
        return find_workspace(explicit=self.workspace_dir)


state = CliState()
