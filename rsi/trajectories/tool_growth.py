"""Growing the tool library from stored runs: the production path into `rsi.promotion.tools`' private validation.

    grow_tools(workspace, ["run-1", "harvest-2"], parent="r1", sandbox="auto")

Every PASSING attempt on a TRAIN task of the runs (judged as the experience library judges them:
`rsi.trajectories.experience.load_train_attempts`, heldout refused by split, key and content hash) offers the helpers
it saved with `save_tool`. They go through `promote_tools`: the candidate library must import in a fresh
sandbox, and every task a helper's attempts solved is re-verified by the hidden verifier with the solution
bound to the LIBRARY copy, so a helper that only worked thanks to other REPL state is rejected and never
reaches a revision, nor the contract. What passes becomes the next revision over `parent`; an identical
revision (same parent, same module) is reused, so a rerun after a crash writes no second one.

The outcome counts what the ledger shows (`rsi lineage`): helpers offered, validated, rejected, and the
attempts of the runs that used the library they were offered (an `rsi_tools` import in code they ran).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from rsi.crashpoint import crash_point
from rsi.errors import RsiError
from rsi.workspace import Workspace

if TYPE_CHECKING:
    from rsi.harness.trajectory import Trajectory

USE_MARK = "rsi_tools"  # the library's package name (rsi.harness.tools.PACKAGE): code that imports it used it


class ToolGrowth(BaseModel):
    """What one growth of the tool library offered, validated and wrote."""

    revision: str = Field(default="", description="The library revision to carry ('' none; the parent when "
                          "nothing new passed).")
    parent: str = ""
    written: bool = Field(default=False, description="False: nothing new, or an identical revision was reused.")
    helpers: int = Field(default=0, description="Helpers in `revision`, inherited ones included.")
    offered: list[str] = Field(default_factory=list, description="Distinct helper names saved by passing train attempts.")
    validated: list[str] = Field(default_factory=list)
    rejected: dict[str, str] = Field(default_factory=dict, description="Helper name -> why the validation refused it.")
    used: int = Field(default=0, description="Attempts of the runs whose code imported the library they were offered.")
    refused: dict[str, int] = Field(default_factory=dict, description="Attempts offering no helper, by reason.")
    sources: list[str] = Field(default_factory=list)

    @property
    def sets(self) -> dict[str, str]:
        """The dotted-key sets that put this revision into a contract ({} when there is none)."""
        return {"harness.tool_library": self.revision} if self.revision else {}

    def as_text(self) -> str:
        what = (f"{len(self.validated)} of {len(self.offered)} offered helpers validated"
                + (f" (rejected: {'; '.join(f'{n}: {why}' for n, why in sorted(self.rejected.items()))})"
                   if self.rejected else ""))
        if self.revision and self.revision != self.parent:
            again = "" if self.written else ", reused"
            return f"tool library {self.revision} (parent {self.parent or 'none'}{again}): {what}; {self.helpers} helpers"
        return f"tool library unchanged ({self.parent or 'none'}): {what}; {self.used} attempts used a library"


def grow_tools(workspace: Workspace, run_ids: list[str], parent: str = "", sandbox: str = "auto") -> ToolGrowth:
    """Validate the helpers the runs' passing train attempts saved; write the ones that pass over `parent`."""
    from rsi.harness.tools import read_manifest
    from rsi.promotion.tools import ToolCandidate, candidates_from_trajectory, promote_tools
    from rsi.sandbox.select import make_sandbox
    from rsi.trajectories.experience import load_train_attempts

    loaded = load_train_attempts(workspace, run_ids)
    candidates: list[ToolCandidate] = []
    refused: Counter[str] = Counter()
    used = 0
    for record in loaded.attempts:
        trajectory = _trajectory(record.trajectory_path)
        used += bool(trajectory is not None and trajectory.configuration.tool_library and _imports_library(trajectory))
        reason = loaded.refusal(record) or ("" if trajectory is not None else "no readable trajectory")
        if reason or trajectory is None:
            refused[reason] += 1
            continue
        candidates.extend(candidates_from_trajectory(trajectory))
    offered = sorted({c.name for c in candidates})
    grown = ToolGrowth(revision=parent, parent=parent, offered=offered, used=used, refused=dict(refused),
                       sources=list(run_ids))
    if candidates:
        root = tools_root(workspace)
        outcome = promote_tools(root, candidates, loaded.tasks, make_sandbox(sandbox), parent=parent)  # type: ignore[arg-type]
        crash_point("tools:written")  # crash tests: a rerun must find this revision, not write a second
        grown.revision, grown.written = outcome.revision or parent, outcome.written
        grown.validated, grown.rejected = list(outcome.accepted), dict(outcome.rejected)
    if grown.revision:
        grown.helpers = len(read_manifest(tools_root(workspace), grown.revision).helpers)
    return grown


def tools_root(workspace: Workspace) -> Path:
    """Where the workspace's tool library revisions live (the harness installs them from there too)."""
    from rsi.harness.tools import library_root

    return library_root(workspace.runs_dir)


def tools_parent_for(workspace: Workspace, contract: str, previous: str = "") -> str:
    """The revision a growth for `contract` extends (`carried_parent` over the contract's `harness.tool_library`)."""
    from rsi.promotion.promote import load_head_contract
    from rsi.trajectories.experience import carried_parent

    current = load_head_contract(workspace, contract).spec.harness.tool_library
    return carried_parent(current, previous, lambda revision: _ancestors(workspace, revision))


def _ancestors(workspace: Workspace, revision: str) -> set[str]:
    """A tool library revision and every revision it extends (the manifests' parent chain)."""
    from rsi.harness.tools import read_manifest

    found, at = set(), revision
    while at:
        found.add(at)
        at = read_manifest(tools_root(workspace), at).parent
    return found


def _trajectory(path: str) -> Trajectory | None:
    from rsi.harness.trajectory import read_trajectory

    try:
        return read_trajectory(Path(path)) if path else None
    except RsiError:
        return None


def _imports_library(trajectory: Trajectory) -> bool:
    """Whether any code the agent ran, or the file it submitted, imports the tool library."""
    codes = [step.code or "" for step in trajectory.steps]
    final = trajectory.outcome.final_code if trajectory.outcome else None
    return any(USE_MARK in code for code in [*codes, final or ""])
