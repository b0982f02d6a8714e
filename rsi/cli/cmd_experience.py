"""CLI commands: `rsi experience build RUN...` and `rsi experience show [REVISION]` (docs/experience.md).

Parses flags, calls one core function (rsi.trajectories.experience.build_experience, rsi.experience.library.read_library)
and renders. Exit codes: 0 done, 1 runtime failure (a heldout task in the library), 2 bad input.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated

import typer

from rsi.cli.render import console, print_json
from rsi.cli.state import state

experience_app = typer.Typer(help="The experience library: verified passing train solutions, versioned.",
                             no_args_is_help=True)


@experience_app.command("build")
def build(
    runs: Annotated[list[str], typer.Argument(help="Run id(s) of one suite: search runs and harvests.")],
    contract: Annotated[str | None, typer.Option("--contract", help="Extend this contract's library "
                                                 "(harness.experience as committed).")] = None,
    parent: Annotated[str | None, typer.Option("--parent", help="Extend this revision (r<N>) instead.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
) -> None:
    """Add the distinct passing TRAIN solutions of RUN... to the library as a new revision (heldout tasks never)."""
    from rsi.errors import UserInputError
    from rsi.trajectories.experience import build_experience, parent_for

    if contract and parent:
        raise UserInputError("give --contract or --parent, not both")
    workspace = state.workspace()
    base = parent or (parent_for(workspace, contract) if contract else "")
    outcome = build_experience(workspace, runs, parent=base)
    if json_output:
        print_json({"revision": outcome.revision, "parent": outcome.parent, "written": outcome.written,
                    "grew": outcome.grew, "entries": outcome.entries, "tasks": outcome.tasks,
                    "added_entries": outcome.added_entries, "tasks_new": outcome.tasks_new,
                    "content_sha256": outcome.content_sha256, "sources": list(outcome.sources),
                    "refused": outcome.refused, "sets": outcome.sets})
        return
    console.print(outcome.as_text(), markup=False)
    if outcome.refused:
        console.print("  not taken: " + ", ".join(f"{n} {why}" for why, n in sorted(outcome.refused.items())), markup=False)
    if outcome.grew:
        sets = " ".join(f"--set {key}={value}" for key, value in outcome.sets.items())
        console.print(f"  into a contract: rsi hcp revise {contract or 'NAME'} {sets} -m 'experience {outcome.revision}'",
                      markup=False)


@experience_app.command("show")
def show(
    revision: Annotated[str | None, typer.Argument(help="r<N> (default: the newest).")] = None,
    entries: Annotated[bool, typer.Option("--entries", help="List every entry.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print the manifest (and entries) as JSON.")] = False,
) -> None:
    """A library revision: lineage, size, growth over its parent, provenance by configuration and run."""
    from rsi.errors import UserInputError
    from rsi.experience.library import growth, list_revisions, read_library

    root = state.workspace().runs_dir / "experience"
    known = list_revisions(root)
    if not known:
        raise UserInputError(f"no experience library under {root}", hint="`rsi experience build RUN...` writes one")
    library = read_library(root, revision or known[-1])
    manifest = library.manifest
    grown = growth(root, manifest.parent, manifest.revision)
    if json_output:
        data = manifest.model_dump(mode="json", by_alias=True, exclude={"heldout_keys", "heldout_hashes"})
        data["growth"] = grown.to_json()
        if entries:
            data["entries_list"] = [e.model_dump(mode="json") for e in library.entries]
        print_json(data)
        return
    lineage = " -> ".join([*manifest.lineage, manifest.revision])
    by_config = Counter(e.config_name for e in library.entries)
    console.print(f"experience {manifest.revision} (lineage {lineage}), sha256 {manifest.content_sha256[:16]}\n"
                  f"  {manifest.entries} entries over {manifest.tasks} train tasks; over {manifest.parent or 'nothing'}: "
                  f"{grown.as_text()}\n  sources: {', '.join(manifest.sources)}\n"
                  f"  by configuration: {', '.join(f'{name} {n}' for name, n in by_config.most_common())}\n"
                  f"  not taken: {', '.join(f'{n} {why}' for why, n in manifest.refused.items()) or 'nothing'}; "
                  f"checked against {len(manifest.heldout_keys)} heldout tasks", markup=False)
    for entry in library.entries if entries else ():
        console.print(f"  {entry.entry_id}  {entry.config_name}  {entry.run_id}  {entry.tokens} tokens", markup=False)


def register(app: typer.Typer) -> None:
    """Add `rsi experience ...` to the root app."""
    app.add_typer(experience_app, name="experience")
