"""CLI commands: `rsi run` (start or resume a run), `rsi status`, `rsi coverage`, `rsi report`.

Each command parses flags into the model its core function takes, calls that one function, and
renders. Flags of `rsi run` override the fields of the same `RunSpec` a `--spec FILE` produces.
"""

from __future__ import annotations

import contextlib
import signal
from pathlib import Path
from typing import Annotated, Any

import typer

from rsi.cli.render import console, is_tty, print_json
from rsi.cli.state import state

RUN_PANEL = "Run"
BUDGET_PANEL = "Budget"
EXEC_PANEL = "Execution"
SLURM_PANEL = "SLURM"

# Fields a resumed run takes from its stored plan; giving them with --resume is an error.
PLAN_FIELDS = ("portfolio", "suite", "split", "budget_attempts", "budget_tokens", "budget_minutes",
               "attempts_per_task", "job_size", "seed", "limit_tasks", "scheduler", "difficulty")


def _open_store(db: str | None) -> Any:
    from rsi.store import open_store

    return open_store(db or state.workspace().db_url)


def _sigterm_as_interrupt() -> None:
    """cron and SLURM stop jobs with SIGTERM: treat it like Ctrl-C so the run is marked stopped."""

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    with contextlib.suppress(ValueError):  # not the main thread (e.g. a test runner thread)
        signal.signal(signal.SIGTERM, handler)


def run_command(
    portfolio: Annotated[str | None, typer.Option("--portfolio", "-p", help="Portfolio name under portfolios/.", rich_help_panel=RUN_PANEL)] = None,
    suite: Annotated[str | None, typer.Option(help="Task suite (default: the contract's evaluation.suite).", rich_help_panel=RUN_PANEL)] = None,
    split: Annotated[str | None, typer.Option(help="train, heldout or all (default: evaluation.split).", rich_help_panel=RUN_PANEL)] = None,
    limit_tasks: Annotated[int | None, typer.Option("--limit-tasks", help="Only the first N tasks (demos, tests).", rich_help_panel=RUN_PANEL)] = None,
    difficulty: Annotated[str | None, typer.Option(help="Only these difficulties, comma-separated (trivial,easy,medium,hard).", rich_help_panel=RUN_PANEL)] = None,
    job_size: Annotated[int | None, typer.Option("--job-size", help="Most tasks one job targets.", rich_help_panel=RUN_PANEL)] = None,
    attempts_per_task: Annotated[int | None, typer.Option("--attempts-per-task", help="Attempts per task in a job.", rich_help_panel=RUN_PANEL)] = None,
    seed: Annotated[int | None, typer.Option(help="Scheduling and sampling seed.", rich_help_panel=RUN_PANEL)] = None,
    scheduler: Annotated[str | None, typer.Option(help="thompson, or a baseline: round-robin, random, best-single.", rich_help_panel=RUN_PANEL)] = None,
    resume: Annotated[str | None, typer.Option("--resume", help="Resume run RUN_ID (after a crash, kill or Ctrl-C).", rich_help_panel=RUN_PANEL)] = None,
    spec_file: Annotated[Path | None, typer.Option("--spec", help="A RunSpec TOML file; flags override its fields.", rich_help_panel=RUN_PANEL)] = None,
    budget_attempts: Annotated[int | None, typer.Option("--budget-attempts", help="Counted attempts to spend.", rich_help_panel=BUDGET_PANEL)] = None,
    budget_tokens: Annotated[int | None, typer.Option("--budget-tokens", help="Stop after this many tokens.", rich_help_panel=BUDGET_PANEL)] = None,
    budget_minutes: Annotated[float | None, typer.Option("--budget-minutes", help="Stop planning jobs after this long.", rich_help_panel=BUDGET_PANEL)] = None,
    executor: Annotated[str | None, typer.Option(help="local or slurm.", rich_help_panel=EXEC_PANEL)] = None,
    workers: Annotated[int | None, typer.Option(help="Attempts at once (default: sized to the machine).", rich_help_panel=EXEC_PANEL)] = None,
    sandbox: Annotated[str | None, typer.Option(help="auto, local or docker.", rich_help_panel=EXEC_PANEL)] = None,
    db: Annotated[str | None, typer.Option(help="Store URL (default: RSI_DB or runs/rsi.sqlite).", rich_help_panel=EXEC_PANEL)] = None,
    slurm_partition: Annotated[str | None, typer.Option("--slurm-partition", help="Partition for attempt jobs.", rich_help_panel=SLURM_PANEL)] = None,
    slurm_cpus: Annotated[int | None, typer.Option("--slurm-cpus", help="CPUs per attempt.", rich_help_panel=SLURM_PANEL)] = None,
    slurm_mem_gb: Annotated[float | None, typer.Option("--slurm-mem-gb", help="Memory per attempt (GB).", rich_help_panel=SLURM_PANEL)] = None,
    slurm_time_min: Annotated[int | None, typer.Option("--slurm-time-min", help="Time limit per attempt (minutes).", rich_help_panel=SLURM_PANEL)] = None,
    report: Annotated[bool | None, typer.Option("--report/--no-report", help="Write runs/<run>/report.html at the end.", rich_help_panel=RUN_PANEL)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="No live display; print the outcome as JSON.")] = False,
) -> None:
    """Run a portfolio on a task suite under a budget (or resume an interrupted run)."""
    from rsi.display import NullDisplay, PlainDisplay, RichDisplay
    from rsi.errors import UserInputError
    from rsi.run.orchestrator import run_portfolio
    from rsi.run.spec import load_run_spec, validate_run_spec

    flags = {
        "portfolio": portfolio, "suite": suite, "split": split, "limit_tasks": limit_tasks, "job_size": job_size,
        "difficulty": [d.strip() for d in difficulty.split(",") if d.strip()] if difficulty else None,
        "attempts_per_task": attempts_per_task, "seed": seed, "scheduler": scheduler, "resume": resume, "budget_attempts": budget_attempts,
        "budget_tokens": budget_tokens, "budget_minutes": budget_minutes, "executor": executor, "workers": workers,
        "sandbox": sandbox, "db": db, "report": report,
    }
    given = {k: v for k, v in flags.items() if v is not None}
    if resume:
        clash = [f"--{k.replace('_', '-')}" for k in PLAN_FIELDS if k in given]
        if clash:
            raise UserInputError(f"--resume continues the stored plan; drop {', '.join(clash)}",
                                 hint="only --executor, --workers, --sandbox, --db and --slurm-* apply to a resume")
    base = load_run_spec(spec_file).model_dump(exclude_unset=True) if spec_file else {}
    slurm = dict(base.get("slurm") or {})
    for key, value in {"partition": slurm_partition, "cpus_per_attempt": slurm_cpus, "mem_gb": slurm_mem_gb,
                       "time_min": slurm_time_min}.items():
        if value is not None:
            slurm[key] = value
    data = {**base, **given}
    if slurm:
        data["slurm"] = slurm
    spec = validate_run_spec(data, spec_file or "<flags>")
    workspace = state.workspace()
    if as_json:
        display: Any = NullDisplay()
    elif is_tty():
        display = RichDisplay()
    else:
        display = PlainDisplay()
    _sigterm_as_interrupt()
    try:
        outcome = run_portfolio(spec, workspace, display)
    finally:
        display.close()
    if as_json:
        print_json(outcome.model_dump(mode="json"))
        return
    console.print(
        f"[bold]{outcome.run_id}[/] {outcome.status}: {outcome.stop_reason}\n"
        f"  jobs {outcome.jobs}, attempts {outcome.attempts}, passes {outcome.passes}, "
        f"infrastructure errors {outcome.errors}, coverage {outcome.covered}/{outcome.tasks}, tokens {outcome.tokens}, "
        f"{outcome.elapsed_s:.0f}s"
    )
    if outcome.report_path:
        console.print(f"  report: {outcome.report_path}")


def status_command(
    run_id: Annotated[str | None, typer.Argument(metavar="[RUN]", help="Run id (default: the latest run).")] = None,
    db: Annotated[str | None, typer.Option(help="Store URL (default: RSI_DB or runs/rsi.sqlite).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Progress of a run: jobs, attempts against the budget, coverage, errors."""
    from rsi.run.plot import sparkline
    from rsi.run.summary import summarize_run

    with _open_store(db) as store:
        s = summarize_run(store, run_id)
    if as_json:
        print_json({**s.model_dump(mode="json", exclude={"task_lines", "job_lines"}),
                    "coverage": s.coverage, "pass_rate": s.pass_rate, "budget_used": s.budget_used})
        return
    budget = s.budget.get("attempts") or 0
    console.print(f"[bold]{s.run_id}[/]  {s.status}  portfolio {s.portfolio} on {s.suite} ({s.split})")
    console.print(f"  jobs         {s.jobs}" + (f" ({s.jobs_open} open: resume with `rsi run --resume {s.run_id}`)"
                                                   if s.jobs_open and s.status == "running" else ""))
    console.print(f"  attempts     {s.attempts}/{budget} ({s.budget_used:.0%} of budget), passes {s.passes} "
                  f"({s.pass_rate:.1%})")
    console.print(f"  coverage     {s.covered}/{s.tasks} ({s.coverage:.1%})  {sparkline(s.curve, s.tasks)}")
    console.print(f"  errors       {s.errors} infrastructure (retried, not counted)")
    console.print(f"  tokens       {s.tokens}")


def coverage_command(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="Run id.")],
    db: Annotated[str | None, typer.Option(help="Store URL (default: RSI_DB or runs/rsi.sqlite).")] = None,
    png: Annotated[Path | None, typer.Option(help="Where to write the curve (default: runs/<run>/coverage.png).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Coverage of a run: per task, per configuration, and the coverage-vs-attempts curve (PNG + terminal)."""
    from rich.table import Table

    from rsi.run.plot import text_curve, write_curve_png
    from rsi.run.summary import summarize_run

    with _open_store(db) as store:
        s = summarize_run(store, run_id)
    target = png or state.workspace().run_dir(s.run_id) / "coverage.png"
    written = write_curve_png(s.curve, s.tasks, target, f"{s.portfolio} on {s.suite}") if s.curve else None
    if as_json:
        print_json({
            "run_id": s.run_id, "covered": s.covered, "tasks": s.tasks, "coverage": s.coverage, "curve": s.curve,
            "png": str(written) if written else None,
            "tasks_detail": [t.model_dump(mode="json") for t in s.task_lines],
            "configurations": [{**c.model_dump(mode="json"), "pass_rate": c.pass_rate} for c in s.config_lines],
        })
        return
    configs = Table(title="per configuration", title_justify="left")
    for column in ("configuration", "jobs", "attempts", "passes", "pass rate", "solved", "unique", "errors"):
        configs.add_column(column, justify="left" if column == "configuration" else "right")
    for c in s.config_lines:
        configs.add_row(c.name, str(c.jobs), str(c.attempts), str(c.passes), f"{c.pass_rate:.1%}",
                        str(c.tasks_solved), str(c.unique_solves), str(c.errors))
    tasks = Table(title="per task", title_justify="left")
    for column in ("task", "attempts", "passes", "errors", "first pass job", "solved by"):
        tasks.add_column(column, justify="left" if column in ("task", "solved by") else "right")
    for t in s.task_lines:
        tasks.add_row(t.task_key, str(t.attempts), str(t.passes), str(t.errors),
                      "-" if t.first_pass_job is None else str(t.first_pass_job), ", ".join(t.solved_by) or "-")
    console.print(f"[bold]{s.run_id}[/] coverage {s.covered}/{s.tasks} ({s.coverage:.1%}) after {s.attempts} attempts")
    console.print(configs)
    console.print(tasks)
    console.print("coverage vs attempts:")
    for line in text_curve(s.curve, s.tasks):
        console.print(line, markup=False)
    if written:
        console.print(f"plot: {written}")


def report_command(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="Run id.")],
    db: Annotated[str | None, typer.Option(help="Store URL (default: RSI_DB or runs/rsi.sqlite).")] = None,
    out: Annotated[Path | None, typer.Option(help="Where to write it (default: runs/<run>/report.html).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Write a self-contained HTML report of a run (tables and the coverage plot inside)."""
    from rsi.report import write_report
    from rsi.run.summary import summarize_run

    with _open_store(db) as store:
        resolved = summarize_run(store, run_id).run_id
        path = write_report(store, resolved, out or state.workspace().run_dir(resolved) / "report.html")
    if as_json:
        print_json({"run_id": resolved, "report": str(path)})
    else:
        console.print(f"report: {path}")


def register(app: typer.Typer) -> None:
    """Add this module's commands to the root app."""
    app.command("run")(run_command)
    app.command("status")(status_command)
    app.command("coverage")(coverage_command)
    app.command("report")(report_command)
