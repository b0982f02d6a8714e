"""CLI command: `rsi harvest RUN...` (rsi.run.harvest.run_harvest), many distinct solutions per train task.

Parses flags, calls the one core function, renders like `rsi run` (live display on a TTY, plain lines
otherwise, `--json` for machines). Exit codes: 0 done, 2 bad input, 130/143 stopped by a signal.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from rsi.cli.options import SandboxOpt
from rsi.cli.render import console, is_tty, print_json
from rsi.cli.state import state


def harvest(
    runs: Annotated[list[str], typer.Argument(help="Source run id(s) of one suite, as `rsi runs` lists them.")],
    per_task: Annotated[int, typer.Option("--per-task", min=1, help="Distinct passing solutions wanted per task.")] = 4,
    budget_attempts: Annotated[int, typer.Option("--budget-attempts", min=1, help="Attempts this harvest may spend.")] = 100,
    job_size: Annotated[int, typer.Option("--job-size", min=1, help="Most tasks one harvest job targets.")] = 8,
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="Attempts at once.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Sampling seed.")] = 0,
    sandbox: SandboxOpt = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="No live display; print the outcome as JSON.")] = False,
) -> None:
    """Sample the train tasks of RUN again until each has up to --per-task distinct passing solutions."""
    from rsi.display import NullDisplay, PlainDisplay, RichDisplay
    from rsi.run.harvest import HarvestSpec, run_harvest
    from rsi.run.stop import StopRequest, stop_on_signals

    spec = HarvestSpec(source_runs=tuple(runs), per_task=per_task, budget_attempts=budget_attempts,
                       job_size=job_size, workers=workers, seed=seed, sandbox=sandbox)
    display: Any = NullDisplay() if as_json else RichDisplay() if is_tty() else PlainDisplay()
    stop = StopRequest()
    try:
        with stop_on_signals(stop):
            outcome = run_harvest(state.workspace(), spec, display, stop=stop)
    finally:
        display.close()
    if as_json:
        print_json(outcome.model_dump(mode="json"))
    else:
        console.print(f"[bold]{outcome.run_id}[/] harvest {outcome.status}: {outcome.stop_reason}\n"
                      f"  jobs {outcome.jobs}, attempts {outcome.attempts}, passes {outcome.passes}, "
                      f"infrastructure errors {outcome.errors}, tasks {outcome.tasks}\n"
                      f"  export: rsi trajectories export {' '.join(runs)} {outcome.run_id} --max-per-task {per_task}")
    if outcome.status == "stopped" and stop.requested:
        raise typer.Exit(stop.exit_code)


def register(app: typer.Typer) -> None:
    """Add `rsi harvest` to the root app."""
    app.command("harvest")(harvest)
