"""CLI commands: `rsi trajectories export`.

Parses flags, calls one core function (rsi.trajectories.export.export_trajectories) and renders.
Exit codes: 0 done, 1 runtime failure, 2 bad input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rsi.cli.render import console, print_json
from rsi.cli.state import state

trajectories_app = typer.Typer(help="Select and export trajectories for training.", no_args_is_help=True)


def export(
    runs: Annotated[list[str], typer.Argument(help="Run id(s) of one suite.")],
    out: Annotated[Path, typer.Option("--out", help="Folder for train.jsonl and manifest.json.")],
    max_per_task: Annotated[int, typer.Option("--max-per-task", min=1, help="Examples per task at most.")] = 2,
    max_per_config: Annotated[
        int, typer.Option("--max-per-config", min=1, help="Examples per configuration at most.")
    ] = 1000,
    rank_by: Annotated[str, typer.Option("--rank-by", help="tokens (cheapest first) or turns (shortest first).")] = "tokens",
    dedup: Annotated[bool, typer.Option("--dedup/--no-dedup", help="One example per distinct solution.")] = True,
    contract: Annotated[str, typer.Option("--contract", help="Contract whose revision the manifest records.")] = "default",
    allow_weak: Annotated[
        bool, typer.Option("--allow-weak-isolation", help="Use evidence from weakly isolated (rlimits-only) attempts; "
                           "the record says so.")
    ] = False,
    render: Annotated[
        str, typer.Option("--render", help="found: the finding configuration's conversation; deployed: the "
                          "solution in the --contract's own conversation (transfer).")
    ] = "found",
    json_output: Annotated[bool, typer.Option("--json", help="Print the manifest as JSON.")] = False,
) -> None:
    """Export the best passing train trajectories of RUN as chat JSONL for SFT (heldout tasks never)."""
    from rsi.errors import UserInputError
    from rsi.trajectories.export import export_trajectories
    from rsi.trajectories.select import SelectionPolicy

    if rank_by not in ("tokens", "turns"):
        raise UserInputError(f"--rank-by {rank_by!r}: use tokens or turns")
    if render not in ("found", "deployed"):
        raise UserInputError(f"--render {render!r}: use found or deployed")
    policy = SelectionPolicy(
        rank_by="turns" if rank_by == "turns" else "tokens", max_per_task=max_per_task,
        max_per_config=max_per_config, dedup=dedup,
    )
    outcome = export_trajectories(state.workspace(), runs, out, policy, contract, allow_weak_isolation=allow_weak,
                                  render="deployed" if render == "deployed" else "found")
    if json_output:
        print_json(outcome.manifest)
        return
    counts = outcome.manifest["counts"]
    console.print(f"wrote {outcome.examples} examples to {outcome.dataset_path} (sha256 {outcome.dataset_sha256[:16]})",
                  markup=False)
    console.print(f"manifest: {outcome.manifest_path}; tasks {len(counts['per_task'])}, "
                  f"configurations {len(counts['per_config'])}", markup=False)
    for reason, count in sorted(counts["dropped"].items()):
        console.print(f"  dropped {count}: {reason}", markup=False)
    isolation = outcome.manifest["isolation"]
    if isolation["weak_allowed"]:
        console.print(f"note: {isolation['weak']} of {isolation['attempts']} examples come from weakly isolated "
                      "attempts (allowed by --allow-weak-isolation; the manifest says so)", markup=False)


def register(app: typer.Typer) -> None:
    """Add `rsi trajectories export` to the root app."""
    trajectories_app.command("export")(export)
    app.add_typer(trajectories_app, name="trajectories")
