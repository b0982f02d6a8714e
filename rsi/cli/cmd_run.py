"""CLI commands: `rsi run` (start or resume a run), `rsi status`, `rsi coverage`, `rsi report`.

Each command parses flags into the model its core function takes, calls that one function, and
renders. Flags of `rsi run` override the fields of the same `RunSpec` a `--spec FILE` produces.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from rsi.cli.options import SANDBOX_HELP
from rsi.cli.render import console, err_console, print_json, run_displayed
from rsi.cli.state import state
from rsi.executors.registry import EXECUTORS

if TYPE_CHECKING:
    from rsi.run.spec import ResolvedRun

RUN_PANEL = "Run"
BUDGET_PANEL = "Budget"
EXEC_PANEL = "Execution"
SLURM_PANEL = "SLURM"

BUDGET_ATTEMPTS_HELP = ("Counted attempts to spend. Default: the contract's [evaluation] attempts_budget, but only when "
                        "no budget is given: the budgets given (attempts, tokens, minutes) are the whole budget, and "
                        "the start line names each with its source.")
BUDGET_FLAGS = {"attempts": "budget_attempts", "tokens": "budget_tokens", "minutes": "budget_minutes"}

# Fields a resumed run takes from its stored plan; giving them with --resume is an error.
PLAN_FIELDS = ("portfolio", "suite", "split", "budget_attempts", "budget_tokens", "budget_minutes",
               "attempts_per_task", "job_size", "seed", "limit_tasks", "scheduler", "difficulty", "target_coverage",
               "retire")


def _open_store(db: str | None) -> Any:
    from rsi.store import open_store

    return open_store(db or state.workspace().db_url)


def run_command(
    portfolio: Annotated[str | None, typer.Option("--portfolio", "-p", help="Portfolio name under portfolios/.", rich_help_panel=RUN_PANEL)] = None,
    suite: Annotated[str | None, typer.Option(help="Task suite (default: the contract's evaluation.suite).", rich_help_panel=RUN_PANEL)] = None,
    split: Annotated[str | None, typer.Option(help="train, heldout or all (default: evaluation.split).", rich_help_panel=RUN_PANEL)] = None,
    limit_tasks: Annotated[int | None, typer.Option("--limit-tasks", help="Only the first N tasks (demos, tests).", rich_help_panel=RUN_PANEL)] = None,
    difficulty: Annotated[str | None, typer.Option(help="Only these difficulties, comma-separated (trivial,easy,medium,hard).", rich_help_panel=RUN_PANEL)] = None,
    job_size: Annotated[int | None, typer.Option("--job-size", help="Most tasks one job targets.", rich_help_panel=RUN_PANEL)] = None,
    attempts_per_task: Annotated[int | None, typer.Option("--attempts-per-task", help="Attempts per task in a job.", rich_help_panel=RUN_PANEL)] = None,
    seed: Annotated[int | None, typer.Option(help="Scheduling and sampling seed.", rich_help_panel=RUN_PANEL)] = None,
    scheduler: Annotated[str | None, typer.Option(help="A scheduler of the registry (default thompson); an unknown name is an error that lists them.", rich_help_panel=RUN_PANEL)] = None,
    resume: Annotated[str | None, typer.Option("--resume", help="Resume run RUN_ID (after a crash, kill or Ctrl-C).", rich_help_panel=RUN_PANEL)] = None,
    spec_file: Annotated[Path | None, typer.Option("--spec", help="A RunSpec TOML file; flags override its fields.", rich_help_panel=RUN_PANEL)] = None,
    budget_attempts: Annotated[int | None, typer.Option("--budget-attempts", help=BUDGET_ATTEMPTS_HELP, rich_help_panel=BUDGET_PANEL)] = None,
    budget_tokens: Annotated[int | None, typer.Option("--budget-tokens", help="Stop after this many tokens (default: no limit).", rich_help_panel=BUDGET_PANEL)] = None,
    budget_minutes: Annotated[float | None, typer.Option("--budget-minutes", help="The run's wall time in minutes: at it, queued attempts are dropped and started ones get --stop-grace-s to finish; they stay planned for --resume (default: no limit).", rich_help_panel=BUDGET_PANEL)] = None,
    retire: Annotated[bool | None, typer.Option("--retire/--no-retire", help="Retire configurations that are surely worse per unit of cost and passed none of their first attempts (rsi.scheduler.retire; default: off).", rich_help_panel=BUDGET_PANEL)] = None,
    target_coverage: Annotated[float | None, typer.Option("--target-coverage", help="Stop once this share of the split is covered (e.g. 0.95).", rich_help_panel=BUDGET_PANEL)] = None,
    executor: Annotated[str | None, typer.Option(help=f"{', '.join(EXECUTORS)} (rsi/executors/registry.py).",
                                                 rich_help_panel=EXEC_PANEL)] = None,
    workers: Annotated[int | None, typer.Option(help="Attempts at once (default: sized to the machine).", rich_help_panel=EXEC_PANEL)] = None,
    overlap: Annotated[bool | None, typer.Option("--overlap/--one-job-at-a-time", help="Plan the next job while the last one finishes (default), or run jobs one after another.", rich_help_panel=EXEC_PANEL)] = None,
    stop_grace_s: Annotated[float | None, typer.Option("--stop-grace-s", help="On Ctrl-C/SIGTERM or at the time budget, seconds started attempts may finish before they are cancelled (default 5).", rich_help_panel=EXEC_PANEL)] = None,
    sandbox: Annotated[str | None, typer.Option(help=SANDBOX_HELP, rich_help_panel=EXEC_PANEL)] = None,
    db: Annotated[str | None, typer.Option(help="Store URL (default: RSI_DB or runs/rsi.sqlite).", rich_help_panel=EXEC_PANEL)] = None,
    slurm_partition: Annotated[str | None, typer.Option("--slurm-partition", help="Partition for attempt jobs.", rich_help_panel=SLURM_PANEL)] = None,
    slurm_cpus: Annotated[int | None, typer.Option("--slurm-cpus", help="CPUs per attempt.", rich_help_panel=SLURM_PANEL)] = None,
    slurm_mem_gb: Annotated[float | None, typer.Option("--slurm-mem-gb", help="Memory per attempt (GB).", rich_help_panel=SLURM_PANEL)] = None,
    slurm_time_min: Annotated[int | None, typer.Option("--slurm-time-min", help="Time limit per attempt (minutes).", rich_help_panel=SLURM_PANEL)] = None,
    report: Annotated[bool | None, typer.Option("--report/--no-report", help="Write runs/<run>/report.html at the end.", rich_help_panel=RUN_PANEL)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="No live display; print the outcome as JSON.")] = False,
) -> None:
    """Run a portfolio on a task suite under a budget (or resume an interrupted run)."""
    flags = {
        "portfolio": portfolio, "suite": suite, "split": split, "limit_tasks": limit_tasks, "job_size": job_size,
        "difficulty": [d.strip() for d in difficulty.split(",") if d.strip()] if difficulty else None,
        "attempts_per_task": attempts_per_task, "seed": seed, "scheduler": scheduler, "resume": resume, "budget_attempts": budget_attempts,
        "budget_tokens": budget_tokens, "budget_minutes": budget_minutes, "executor": executor, "workers": workers,
        "sandbox": sandbox, "db": db, "report": report, "target_coverage": target_coverage, "retire": retire, "overlap_jobs": overlap,
        "stop_grace_s": stop_grace_s,
    }
    slurm = {"partition": slurm_partition, "cpus_per_attempt": slurm_cpus, "mem_gb": slurm_mem_gb,
             "time_min": slurm_time_min}
    spec = _run_spec(flags, slurm, spec_file)
    workspace = state.workspace()
    run_displayed(as_json, lambda display, stop: _run_and_report(spec, workspace, display, stop), _print_outcome)


def _run_and_report(spec: Any, workspace: Any, display: Any, stop: Any) -> Any:
    """The run, then (unless --no-report) its report, runs/<run>/report.html, from what the run stored.
    A report is a convenience: the run's data is already safe, so a report that fails is a note."""
    from rsi.run.orchestrator import run_portfolio

    outcome = run_portfolio(spec, workspace, display, stop=stop)
    if not spec.report:
        return outcome
    try:
        with _open_store(spec.db) as store:
            path = _write_run_report(store, workspace, outcome.run_id)
    except Exception as error:
        err_console.print(f"note: report not written: {type(error).__name__}: {error}", markup=False)
        return outcome
    return outcome.model_copy(update={"report_path": str(path)})


def _write_run_report(store: Any, workspace: Any, run_id: str, out: Path | None = None) -> Path:
    from rsi.report import write_report

    run_dir = workspace.run_dir(run_id)
    return write_report(store, run_id, out or run_dir / "report.html", root=workspace.root, run_dir=run_dir)


def _run_spec(flags: dict[str, Any], slurm_flags: dict[str, Any], spec_file: Path | None) -> Any:
    """The RunSpec: the `--spec` file's fields, overridden by the flags given (None = not given)."""
    from rsi.errors import UserInputError
    from rsi.run.spec import load_run_spec, validate_run_spec

    given = {k: v for k, v in flags.items() if v is not None}
    if given.get("resume"):
        clash = [f"--{k.replace('_', '-')}" for k in PLAN_FIELDS if k in given]
        if clash:
            raise UserInputError(f"--resume continues the stored plan; drop {', '.join(clash)}",
                                 hint="only execution flags (--executor, --workers, --overlap, --sandbox, --db, "
                                      "--slurm-*) apply to a resume")
    base = load_run_spec(spec_file).model_dump(exclude_unset=True) if spec_file else {}
    slurm = {**(base.get("slurm") or {}), **{k: v for k, v in slurm_flags.items() if v is not None}}
    data = {**base, **given}
    if slurm:
        data["slurm"] = slurm
    sources = dict(base.get("budget_sources") or {})
    for kind, field in BUDGET_FLAGS.items():  # where each budget given came from: the start line says
        if field in given:
            sources[kind] = f"--{field.replace('_', '-')}"
        elif field in base and spec_file is not None:
            sources.setdefault(kind, f"{spec_file}: {field}")
    if sources:
        data["budget_sources"] = sources
    return validate_run_spec(data, spec_file or "<flags>")


def _print_outcome(outcome: Any) -> None:
    console.print(
        f"[bold]{outcome.run_id}[/] {outcome.status}: {outcome.stop_reason}\n"
        f"  jobs {outcome.jobs}, attempts {outcome.attempts}, passes {outcome.passes}, "
        f"infrastructure errors {outcome.errors}, coverage {outcome.coverage_text}, tokens {outcome.tokens} "
        f"(prompt + completion), wall time {outcome.elapsed_s:.0f}s"
    )
    from rsi.run.totals import CacheCounts

    cache = CacheCounts(outcome.cache_hits, outcome.cache_misses, outcome.tokens_not_spent).text()
    if cache:
        console.print(f"  {cache}")
    if outcome.report_path:
        console.print(f"  report: {outcome.report_path}")


def status_command(
    run_id: Annotated[str | None, typer.Argument(metavar="[RUN]", help="Run id (default: the latest run).")] = None,
    all_runs: Annotated[bool, typer.Option("--all", help="List every run instead (as `rsi runs`).")] = False,
    db: Annotated[str | None, typer.Option(help="Store URL (default: RSI_DB or runs/rsi.sqlite).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Progress of a run: whether it is running now, jobs, attempts against the budget, coverage, errors."""
    from rsi.run.liveness import probe
    from rsi.run.plot import sparkline
    from rsi.run.setup import read_state, resume_command
    from rsi.run.summary import run_state, summarize_run

    if all_runs:
        runs_command(db=db, as_json=as_json)
        return
    with _open_store(db) as store:
        s = summarize_run(store, run_id, state.workspace().run_dir)
        row = store.get_run(s.run_id)
        scheduler, resolved = row.scheduler, _stored_resolved(row)  # a harvest or an evaluation resumes with its own command
    run_dir = state.workspace().run_dir(s.run_id)
    live = probe(run_dir)
    now = run_state(s.status, live.live, live.known)
    end_reason = "" if now in ("running", "interrupted") else str(read_state(run_dir).get("end_reason", ""))
    if as_json:
        print_json({**s.model_dump(mode="json", exclude={"task_lines", "job_lines"}),
                    "coverage": s.coverage, "pass_rate": s.pass_rate, "budget_used": s.budget_used,
                    "state": now, "live": live.live, "pid": live.pid if live.live else None, "end_reason": end_reason})
        return
    budget = s.budget.get("attempts")
    console.print(f"[bold]{s.run_id}[/]  {now}  portfolio {s.portfolio} on {s.suite} ({s.split})")
    if now == "running":
        console.print(f"  running      in process {live.pid} on {live.host} since {live.since[:19]}")
    elif now == "interrupted":
        console.print(f"  interrupted  no process runs it: resume with `{resume_command(scheduler, s.run_id)}`")
    elif end_reason:
        console.print(f"  ended        {end_reason}")
    console.print(f"  jobs         {s.jobs}" + (f" ({s.jobs_open} open)" if s.jobs_open else ""))
    console.print(f"  budget       {_budget_text(resolved, s.budget)}", markup=False)
    spent = f"{s.attempts}/{budget} ({s.budget_used:.0%} of budget)" if budget else f"{s.attempts}"
    console.print(f"  attempts     {spent}, passes {s.passes} ({s.pass_rate:.1%})")
    console.print(f"  coverage     {s.coverage_text}  {sparkline(s.curve, s.tasks)}")
    console.print(f"  errors       {s.errors} infrastructure (retried, not counted)")
    console.print(f"  tokens       {s.tokens} (prompt + completion)")
    console.print(f"  wall time    {_wall_text(s)}")
    for c in s.config_lines:
        if c.retired:
            from rsi.scheduler.retire import Retirement

            console.print(f"  retired      {c.name}: {Retirement.from_json(c.retired).describe()}", markup=False)


def _wall_text(s: Any) -> str:
    """The run's wall time (its sessions, as `rsi run` showed it), apart from its attempts' summed time."""
    from rsi.display import format_duration

    where = "" if s.wall_from == "sessions" else f" ({s.wall_from}: no run folder here)"
    return (f"{format_duration(s.wall_s)} ({s.wall_s:.0f} s){where}; attempts' own times sum to "
            f"{s.attempt_s:.0f} s (they run side by side)")


def _stored_resolved(row: Any) -> ResolvedRun | None:
    """The run's resolved plan (rsi/run/kinds.py `read_core`), None for a run stored without one."""
    from rsi.errors import StoreError
    from rsi.run.kinds import read_core

    try:
        return read_core(row).resolved
    except StoreError:
        return None


def _budget_text(resolved: ResolvedRun | None, budget: dict[str, Any]) -> str:
    """A stored run's budgets with their sources (the start line's words), from its resolved plan."""
    from rsi.run.spec import describe_budgets

    if resolved is not None:
        return describe_budgets(resolved).removeprefix("budget ")
    # a run stored without a resolved plan: its budget dict says enough
    shown = [f"{budget[k]:g} {unit}" for k, unit in (("attempts", "attempts"), ("tokens", "tokens"),
                                                     ("minutes", "min")) if budget.get(k) is not None]
    return ", ".join(shown) or "none"


def runs_command(
    db: Annotated[str | None, typer.Option(help="Store URL (default: RSI_DB or runs/rsi.sqlite).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Every run in the store, oldest first: id, started, state (running now or not), portfolio, coverage, attempts."""
    from rich.table import Table

    from rsi.run.liveness import probe
    from rsi.run.setup import read_state
    from rsi.run.summary import run_line, run_state, summarize_run

    workspace = state.workspace()
    with _open_store(db) as store:
        lines = []
        for run in store.list_runs():
            run_dir = workspace.run_dir(run.id)
            live = probe(run_dir)
            lines.append(run_line(summarize_run(store, run.id, workspace.run_dir), run_state(run.status, live.live, live.known),
                                  str(read_state(run_dir).get("end_reason", ""))))
    if as_json:
        print_json([{**line.model_dump(mode="json"), "coverage": line.coverage} for line in lines])
        return
    if not lines:
        console.print("no runs yet: start one with `rsi run`")
        return
    # Fits the terminal (80 columns too): no box, no "started" column (the run id is the UTC start time). The run
    # id is what every other command takes, so it and the figures are never cut; a long portfolio gives way.
    rows = [(line.run_id, line.state, line.portfolio, f"{line.covered}/{line.tasks} {line.coverage:.0%}",
             f"{line.attempts}{f'/{line.budget_attempts}' if line.budget_attempts else ''}") for line in lines]
    columns = ("run", "state", "portfolio", "coverage", "attempts")
    widths = [max(len(column), *(len(row[i]) for row in rows)) for i, column in enumerate(columns)]
    room = console.width - sum(w for i, w in enumerate(widths) if columns[i] != "portfolio") - 2 * len(columns)
    table = Table(box=None, padding=(0, 2, 0, 0), header_style="bold")
    for i, column in enumerate(columns):
        if column == "portfolio":
            table.add_column(column, no_wrap=True, overflow="ellipsis", max_width=max(12, room))
        else:
            table.add_column(column, no_wrap=True, min_width=widths[i], justify="right" if i > 2 else "left")
    for row in rows:
        table.add_row(*row)
    console.print(table)


def coverage_command(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="Run id.")],
    db: Annotated[str | None, typer.Option(help="Store URL (default: RSI_DB or runs/rsi.sqlite).")] = None,
    png: Annotated[Path | None, typer.Option(help="Where to write the curve (default: runs/<run>/coverage.png).")] = None,
    all_tasks: Annotated[bool, typer.Option("--all-tasks", help="List every task, not only the covered and tried ones first.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Coverage of a run: per task, per configuration, and the coverage-vs-attempts curve (PNG + terminal)."""
    from rich import box
    from rich.table import Table

    from rsi.run.plot import text_curve, write_curve_png
    from rsi.run.summary import summarize_run

    with _open_store(db) as store:
        s = summarize_run(store, run_id, state.workspace().run_dir)
    target = png or state.workspace().run_dir(s.run_id) / "coverage.png"
    written = write_curve_png(s.curve, s.tasks, target, f"{s.portfolio} on {s.suite}") if s.curve else None
    if as_json:
        print_json({
            "run_id": s.run_id, "covered": s.covered, "tasks": s.tasks, "split": s.split, "coverage": s.coverage,
            "curve": s.curve,
            "png": str(written) if written else None,
            "tasks_detail": [t.model_dump(mode="json") for t in s.task_lines],
            "configurations": [{**c.model_dump(mode="json"), "pass_rate": c.pass_rate} for c in s.config_lines],
        })
        return
    configs = Table(title="per configuration", title_justify="left", box=box.SIMPLE_HEAD)
    # Names are what a reader compares: never cut them (the numbers need little room).
    configs.add_column("configuration", no_wrap=True,
                       min_width=max((len(c.name) for c in s.config_lines), default=len("configuration")))
    for column in ("jobs", "attempts", "passes", "rate", "solved", "unique", "errors"):
        configs.add_column(column, justify="right", min_width=len(column))
    for c in s.config_lines:
        configs.add_row(c.name, str(c.jobs), str(c.attempts), str(c.passes), f"{c.pass_rate:.1%}",
                        str(c.tasks_solved), str(c.unique_solves), str(c.errors))
    shown, hidden = _task_rows(s.task_lines, None if all_tasks else TASK_ROWS)
    tasks = Table(title="per task", title_justify="left")
    # Task ids are what a reader looks up: never cut them; the configuration list folds instead.
    tasks.add_column("task", no_wrap=True, min_width=max((len(t.task_key) for t in shown), default=4))
    for column in ("attempts", "passes", "errors", "first pass"):
        tasks.add_column(column, justify="right", min_width=len(column))
    tasks.add_column("solved by", overflow="fold")
    for t in shown:
        tasks.add_row(t.task_key, str(t.attempts), str(t.passes), str(t.errors),
                      "-" if t.first_pass_job is None else str(t.first_pass_job), ", ".join(t.solved_by) or "-")
    console.print(f"[bold]{s.run_id}[/] coverage {s.coverage_text} after {s.attempts} attempts")
    console.print(configs)
    console.print(tasks)
    if hidden:
        console.print(_left_out(hidden))
    console.print("coverage vs attempts:")
    for line in text_curve(s.curve, s.tasks):
        console.print(line, markup=False)
    if written:
        console.print(f"plot: {written}")


TASK_ROWS = 25  # per-task rows `rsi coverage` prints by default: a 164-task suite must not flood a terminal


def _task_rows(lines: list[Any], limit: int | None) -> tuple[list[Any], list[Any]]:
    """Covered tasks first (in the order they were covered), then tried ones (most attempts first),
    then the rest; the first `limit` of them to show, and the ones left out."""
    ordered = sorted(lines, key=lambda t: (t.first_pass_job is None, t.first_pass_job or 0,
                                           -(t.attempts + t.errors), t.task_key))
    return (ordered, []) if limit is None else (ordered[:limit], ordered[limit:])


def _left_out(hidden: list[Any]) -> str:
    covered = sum(1 for t in hidden if t.passes)
    tried = sum(1 for t in hidden if not t.passes and (t.attempts or t.errors))
    return (f"... and {len(hidden)} more tasks ({covered} covered, {tried} tried without a pass, "
            f"{len(hidden) - covered - tried} never tried): --all-tasks lists every one, --json for machines")


def report_command(
    run_id: Annotated[str | None, typer.Argument(metavar="[RUN]", help="Run id (default: the latest run).")] = None,
    lineage: Annotated[bool, typer.Option("--lineage", help="Write the lineage report instead: every generation side by side.")] = False,
    db: Annotated[str | None, typer.Option(help="Store URL (default: RSI_DB or runs/rsi.sqlite).")] = None,
    out: Annotated[Path | None, typer.Option(help="Where to write it (default: runs/<run>/report.html, runs/generations/lineage.html).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Write a self-contained HTML report: a run's (chart, matrix, transcripts, search) or, with --lineage, the generations'."""
    from rsi.report import write_lineage_report
    from rsi.report.write import find_run

    workspace = state.workspace()
    if lineage:
        from rsi.errors import UserInputError
        from rsi.generation.state import generations_dir

        if run_id is not None:
            raise UserInputError(f"--lineage takes no RUN (got {run_id!r})", hint="rsi report --lineage")
        path = write_lineage_report(workspace, out or generations_dir(workspace) / "lineage.html")
        resolved = None
    else:
        with _open_store(db) as store:
            resolved = find_run(store, run_id).id
            path = _write_run_report(store, workspace, resolved, out)
    if as_json:
        print_json({"run_id": resolved, "report": str(path)})
    else:
        console.print(f"report: {path}")


def register(app: typer.Typer) -> None:
    """Add this module's commands to the root app."""
    app.command("run")(run_command)
    app.command("status")(status_command)
    app.command("runs")(runs_command)
    app.command("coverage")(coverage_command)
    app.command("report")(report_command)
