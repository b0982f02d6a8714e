"""The versioned tool library: its layout, reading a revision, installing it into an attempt.

During an attempt the agent may call `save_tool(name, function)`; the helper's source travels with
the attempt (its trajectory's `tools_saved` and `<attempt>/tools.json`). Promotion into a new,
immutable revision, after a private validation the agent never sees, is `rsi.promotion.tools`.

Layout (under the workspace, next to other run outputs):

    runs/tools/
      r1/
        manifest.json          revision, parent, created, helpers (with provenance), validation, hash
        rsi_tools/__init__.py  every helper of this revision (the parent's, then the new ones)
      r2/ ...

A contract selects a revision with `harness.tool_library = "r2"` (hashed into its config_hash);
`install_library` copies that `rsi_tools/` package into an attempt's working directory, where the
agent imports it (`from rsi_tools import ...`) and where the verifier finds it too.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, Field

from rsi.errors import UserInputError
from rsi.harness.trajectory import Trajectory
from rsi.verdict import Verdict

PACKAGE = "rsi_tools"
_REVISION = re.compile(r"^r([1-9][0-9]*)$")


class HelperRecord(BaseModel):
    name: str
    function: str
    source_sha256: str
    tasks: list[str]
    attempts: list[str]
    revision: str = Field(description="The revision that first promoted it.")


class ValidationRecord(BaseModel):
    name: str
    task_key: str
    attempt_id: str
    verdict: Verdict
    reason: str = ""


class ToolManifest(BaseModel):
    revision: str
    parent: str = ""
    created: datetime
    helpers: list[HelperRecord]
    validation: list[ValidationRecord] = Field(default_factory=list)
    content_sha256: str = Field(description="Hash of rsi_tools/__init__.py.")


TOOLS_DIR_ENV = "RSI_TOOLS_DIR"


def library_root(runs_dir: Path) -> Path:
    """Where tool library revisions live: $RSI_TOOLS_DIR, else the workspace's runs/tools (one answer for the
    harness that installs them and the generation that grows them)."""
    override = os.environ.get(TOOLS_DIR_ENV)
    return Path(override) if override else runs_dir / "tools"


# -- reading and installing ------------------------------------------------------------------------
def revision_dir(tools_root: Path, revision: str) -> Path:
    if not _REVISION.match(revision):
        raise UserInputError(f"tool library revision {revision!r}: expected r<N>, e.g. r1")
    return tools_root / revision


def read_manifest(tools_root: Path, revision: str) -> ToolManifest:
    folder = revision_dir(tools_root, revision)
    path = folder / "manifest.json"
    if not path.is_file():
        raise UserInputError(
            f"{path}: tool library revision {revision!r} does not exist",
            hint="set harness.tool_library to an existing revision under runs/tools/, or to ''",
        )
    return ToolManifest.model_validate_json(path.read_text(encoding="utf-8"))


def list_revisions(tools_root: Path) -> list[str]:
    if not tools_root.is_dir():
        return []
    found = [p.name for p in tools_root.iterdir() if _REVISION.match(p.name) and (p / "manifest.json").is_file()]
    return sorted(found, key=lambda name: int(name[1:]))


def install_library(tools_root: Path, revision: str, workdir: Path) -> list[str]:
    """Copy revision's `rsi_tools` package into `workdir`; returns the helper names it exports."""
    manifest = read_manifest(tools_root, revision)
    source = revision_dir(tools_root, revision) / PACKAGE
    shutil.copytree(source, workdir / PACKAGE, dirs_exist_ok=False)
    return [helper.name for helper in manifest.helpers]


def write_saved_tools(trajectory: Trajectory, out_dir: Path) -> Path | None:
    """`<attempt>/tools.json`: the helpers this attempt saved (None when it saved none)."""
    if not trajectory.tools_saved:
        return None
    path = out_dir / "tools.json"
    payload = [tool.model_dump(mode="json") for tool in trajectory.tools_saved]
    path.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return path
