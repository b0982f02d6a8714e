"""CLI command: `rsi harvest RUN...` (rsi.harvest.run_harvest), many distinct solutions per train task.

Parses flags, calls the one core function, renders like `rsi run` (live display on a TTY, plain lines
otherwise, `--json` for machines). `--resume HARVEST_RUN` continues a killed or stopped harvest.
Exit codes: 0 done, 2 bad input, 130/143 stopped by a signal.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from rsi.cli.options import SandboxOpt
from rsi.cli.render import console, run_displayed
from rsi.cli.state import state


def harvest(
    runs: Annotated[list[str] | None, typer.Argument(help="Source run id(s) of one suite, as `rsi runs` lists them.")] = None,
    per_task: Annotated[int | None, typer.Option("--per-task", min=1, help="Distinct passing solutions wanted per task (default 4).")] = None,
    budget_attempts: Annotated[int | None, typer.Option("--budget-attempts", min=1, help="Attempts this harvest may spend (default 100).")] = None,
    job_size: Annotated[int | None, typer.Option("--job-size", min=1, help="Most tasks one harvest job targets (default 8).")] = None,
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="Attempts at once.")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Sampling seed (default 0).")] = None,
    sandbox: SandboxOpt = "auto",
    resume: Annotated[str | None, typer.Option("--resume", help="Resume harvest run HARVEST_RUN (after a crash, kill or Ctrl-C): its "
                                               "recorded attempts count against its budget and are never run again.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="No live display; print the outcome as JSON.")] = False,
) -> None:
    """Sample the train tasks of RUN again until each has up to --per-task distinct passing solutions (or --resume one)."""
    from rsi.errors import UserInputError
    from rsi.harvest import HarvestSpec, resolve_harvest_spec, run_harvest

    plan = {"per_task": per_task, "budget_attempts": budget_attempts, "job_size": job_size, "seed": seed}
    given = {k: v for k, v in plan.items() if v is not None}
    if resume and (runs or given):
        clash = (["RUN"] if runs else []) + [f"--{k.replace('_', '-')}" for k in given]
        raise UserInputError(f"--resume continues the stored harvest; drop {', '.join(clash)}",
                             hint="only --workers and --sandbox apply to a resume")
    workspace = state.workspace()
    spec = resolve_harvest_spec(workspace, HarvestSpec(source_runs=tuple(runs or ()), workers=workers, sandbox=sandbox,
                                                       resume=resume, **given))

    def show(outcome: Any) -> None:
        console.print(f"[bold]{outcome.run_id}[/] harvest {outcome.status}: {outcome.stop_reason}\n"
                      f"  jobs {outcome.jobs}, attempts {outcome.attempts}, passes {outcome.passes}, "
                      f"infrastructure errors {outcome.errors}, tasks {outcome.tasks}\n"
                      f"  export: rsi trajectories export {' '.join(spec.source_runs)} {outcome.run_id} "
                      f"--max-per-task {spec.per_task}")

    run_displayed(as_json, lambda display, stop: run_harvest(workspace, spec, display, stop=stop), show)


def register(app: typer.Typer) -> None:
    """Add `rsi harvest` to the root app."""
    app.command("harvest")(harvest)
