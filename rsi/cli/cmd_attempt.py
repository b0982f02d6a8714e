"""CLI commands: `rsi attempt` (run one attempt and print its transcript) and `rsi show` (render one,
or list a run's attempts of one task: from a task folder of the run, or from a run id and a task id).

Both render a trajectory the same way: a header (task, configuration, model, sandbox), every step
(prompts, agent replies with their code syntax-highlighted, observations, the specialist that acted),
then the verdict and token totals. `--json` prints the outcome or the trajectory itself instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rsi.cli.options import SandboxOpt
from rsi.cli.render import console, print_json
from rsi.cli.state import state


def _verdict_style(verdict: str) -> str:
    return {"passed": "bold green", "failed": "bold red", "timeout": "bold yellow", "error": "bold magenta"}.get(
        verdict, "bold"
    )


def _out(renderable) -> None:  # noqa: ANN001 - any rich renderable
    # The shared console soft-wraps (good for plain lines); boxes must wrap inside their borders.
    console.print(renderable, soft_wrap=False)


def render_header(trajectory) -> None:  # noqa: ANN001 - Trajectory, imported lazily
    from rich.table import Table

    head = Table.grid(padding=(0, 2))
    head.add_column(style="dim")
    head.add_column()
    config = trajectory.configuration
    head.add_row("attempt", trajectory.attempt_id)
    head.add_row("task", f"{trajectory.task.key}  [dim]{trajectory.task.content_hash[:12]}[/]")
    head.add_row("configuration", f"{config.name}  [dim]{config.config_hash} ({config.contract_ref})[/]")
    head.add_row(
        "harness",
        f"{config.substrate}, prompt {config.prompt_style}" + (f", tools {config.tool_library}" if config.tool_library else ""),
    )
    head.add_row("model", f"{trajectory.model.name} [dim]({trajectory.model.base_id})[/]")
    if trajectory.sandbox is not None:
        head.add_row("sandbox", trajectory.sandbox.backend)
    head.add_row("seed", str(trajectory.seed))
    _out(head)


def render_step(step, *, full: bool = False) -> None:  # noqa: ANN001 - Step, imported lazily
    from rich.console import Group
    from rich.panel import Panel
    from rich.syntax import Syntax
    from rich.text import Text

    from rsi.harness.routing import label

    if step.source in ("system", "user"):
        body = step.message if full or len(step.message) < 1200 else step.message[:1200] + " …"
        _out(Panel(Text(body), title=f"[bold]{step.source}[/]", title_align="left", border_style="blue"))
        return
    if step.source == "environment":
        _out(Text(f"[environment] {step.message}", style="yellow"))
        return
    title = f"[bold]turn {step.turn}[/] agent"
    if step.routing is not None:
        title += f" · {label(step.routing.specialist)} ({step.routing.reason}, {step.routing.turn_kind})"
    if step.metrics is not None:
        title += f" · {step.metrics.prompt_tokens}+{step.metrics.completion_tokens} tok"
        if step.metrics.finish_reason == "length":
            title += " (cut at max_tokens)"
    parts: list = []
    prose = step.message
    if step.code is not None and not full:
        prose = prose.split("```", 1)[0].strip()
    if prose:
        parts.append(Text(prose))
    if step.code is not None:
        parts.append(Syntax(step.code, "python", theme="ansi_dark", line_numbers=False, word_wrap=True))
    elif not step.message.strip():
        parts.append(Text("(empty reply)", style="dim"))
    _out(Panel(Group(*parts), title=title, title_align="left", border_style="cyan"))
    if step.check is not None:
        from rsi.report.transcripts import check_text

        _out(Panel(Text(check_text(step.check.model_dump(mode="json"))), title="public checks", title_align="left",
                   border_style="green" if step.check.all_passed else "red"))
    if step.observation is not None:
        style = "red" if step.execution is not None and step.execution.error else "dim"
        _out(Panel(Text(step.observation, style=style), title="observation", title_align="left", border_style=style))


def render_outcome(trajectory) -> None:  # noqa: ANN001 - Trajectory, imported lazily
    from rich.text import Text

    outcome = trajectory.outcome
    metrics = trajectory.final_metrics
    if outcome is None:
        _out(Text("(unfinished: no outcome recorded)", style="yellow"))
        return
    line = Text()
    line.append(outcome.verdict.value.upper(), style=_verdict_style(outcome.verdict.value))
    line.append(f"  ended by {outcome.ended_by or '?'}")
    if outcome.error_class:
        line.append(f"  [{outcome.error_class}]", style="magenta")
    if outcome.reason:
        line.append(f"  {outcome.reason}")
    console.print(line)
    console.print(
        f"turns {metrics.turns} · tokens {metrics.prompt_tokens} prompt + {metrics.completion_tokens} completion"
        f" · wall {metrics.wall_s:.1f}s · reward {outcome.reward:.2f}",
        style="dim",
    )


def render_trajectory(trajectory, *, full: bool = False) -> None:  # noqa: ANN001 - Trajectory, imported lazily
    """Print one trajectory readably (rich on a TTY, plain text otherwise)."""
    render_header(trajectory)
    for step in trajectory.steps:
        render_step(step, full=full)
    render_outcome(trajectory)


def _trajectory_file(path: Path) -> Path:
    return path / "trajectory.json" if path.is_dir() else path


SHOW_HELP = ("An attempt folder (or its trajectory.json): rendered. A task folder of a run "
             "(runs/RUN/attempts/jNNNN/SUITE__TASK), or a run id or folder with TASK: its attempts listed.")


def _show_target(target: str, task: str | None) -> Path | list[Path]:
    """What `rsi show` was given: one trajectory file, or the attempt folders to list."""
    from rsi.errors import UserInputError
    from rsi.run.layout import RunLayout, attempt_dirs, is_task_dir

    path = Path(target)
    if task is not None:
        run_dir = path if path.is_dir() else state.workspace().run_dir(target)
        if not (run_dir / "attempts").is_dir():
            raise UserInputError(f"{target}: no run folder with attempts here ({run_dir})", hint="`rsi runs` lists runs")
        found = [a for d in RunLayout(run_dir).task_dirs(task) for a in attempt_dirs(d)]
        if not found:
            raise UserInputError(f"run {run_dir.name} has no attempt of task {task!r}",
                                 hint=f"`rsi coverage {run_dir.name} --all-tasks` lists its tasks")
        return found
    if path.is_dir() and not (path / "trajectory.json").is_file() and is_task_dir(path):
        if not attempt_dirs(path):
            raise UserInputError(f"{path}: a task folder of a run, with no finished attempt in it yet")
        return attempt_dirs(path)
    if path.is_dir() and not (path / "trajectory.json").is_file():
        raise UserInputError(f"{path}: holds no trajectory.json, and is not a task folder of a run",
                             hint="give an attempt folder (.../a0), a task folder of a run (runs/RUN/attempts/"
                                  "jNNNN/SUITE__TASK), or `rsi show RUN TASK`")
    return _trajectory_file(path)


def _attempt_rows(folders: list[Path]) -> list[dict[str, object]]:
    """One row per attempt folder: where it is, its configuration, verdict and figures (from its trajectory)."""
    from rsi.errors import UserInputError
    from rsi.harness.trajectory import read_trajectory

    rows: list[dict[str, object]] = []
    for folder in folders:
        row: dict[str, object] = {"job": folder.parent.parent.name, "task": folder.parent.name.replace("__", "/"),
                                  "attempt": folder.name, "folder": str(folder)}
        try:
            t = read_trajectory(folder / "trajectory.json")
        except UserInputError as error:
            rows.append({**row, "verdict": "-", "note": error.message})
            continue
        outcome, metrics = t.outcome, t.final_metrics
        rows.append({**row, "configuration": t.configuration.name,
                     "verdict": outcome.verdict.value if outcome else "unfinished",
                     "ended_by": outcome.ended_by if outcome else "", "turns": metrics.turns,
                     "prompt_tokens": metrics.prompt_tokens, "completion_tokens": metrics.completion_tokens,
                     "wall_s": round(metrics.wall_s, 1)})
    return rows


def _list_attempts(rows: list[dict[str, object]]) -> None:
    from rich.table import Table

    table = Table(box=None, padding=(0, 2, 0, 0), header_style="bold")
    for column in ("job", "attempt", "configuration", "verdict", "turns", "tokens", "wall s", "folder"):
        table.add_column(column, no_wrap=column != "folder", overflow="fold")
    for r in rows:
        tokens = f"{r['prompt_tokens']}+{r['completion_tokens']}" if "prompt_tokens" in r else "-"
        table.add_row(str(r["job"]), str(r["attempt"]), str(r.get("configuration", "-")),
                      f"[{_verdict_style(str(r['verdict']))}]{r['verdict']}[/]", str(r.get("turns", "-")), tokens,
                      str(r.get("wall_s", "-")), str(r["folder"]))
    console.print(f"{len(rows)} attempt(s) of {rows[0]['task']}; `rsi show FOLDER` renders one")
    _out(table)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the root app."""

    @app.command("attempt")
    def attempt(
        configuration: Annotated[
            str, typer.Argument(help="Contract ref (path, NAME, NAME@rN, GITREV:path) or PORTFOLIO:VARIANT.")
        ],
        task: Annotated[str, typer.Argument(help="SUITE/TASK-ID, or a task folder.")],
        sandbox: SandboxOpt = "auto",
        seed: Annotated[int, typer.Option("--seed", help="Sampling seed.")] = 0,
        out: Annotated[
            Path | None, typer.Option("--out", help="Attempt folder (default: runs/attempts/<attempt-id>).")
        ] = None,
        json_output: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
    ) -> None:
        """Run one attempt of a configuration on a task with the real model, and print its transcript."""
        from rsi.harness.single import resolve_configuration, resolve_task_ref, run_single_attempt
        from rsi.harness.trajectory import read_trajectory

        workspace = state.workspace()
        config = resolve_configuration(workspace, configuration)
        loaded_task = resolve_task_ref(workspace, task)
        if loaded_task.spec.split == "test":
            from rsi.errors import UserInputError

            # one attempt's verdict on a sealed task is a look nobody counts (docs/tasks.md)
            raise UserInputError(f"{loaded_task.key} is a sealed test task: only a final evaluation reads it",
                                 hint="`rsi eval CANDIDATE --against PARENT --final`")

        def live(trajectory, step) -> None:  # noqa: ANN001 - the transcript, printed as it happens
            if step.step_id == 1:
                render_header(trajectory)
            render_step(step)

        outcome = run_single_attempt(
            workspace, config, loaded_task, sandbox_name=sandbox, seed=seed, out_dir=out,
            on_step=None if json_output else live,
        )
        if json_output:
            print_json(outcome.model_dump(mode="json"))
        elif outcome.trajectory_path is not None:
            render_outcome(read_trajectory(outcome.trajectory_path))
            console.print(f"trajectory: {outcome.trajectory_path}", style="dim")
        else:
            console.print(f"{outcome.verdict.value}: {outcome.reason}")
        if outcome.verdict.value == "error":
            raise typer.Exit(1)

    @app.command("show")
    def show(
        target: Annotated[str, typer.Argument(metavar="TARGET", help=SHOW_HELP)],
        task: Annotated[str | None, typer.Argument(metavar="[TASK]", help="With a run: a task id or SUITE/ID.")] = None,
        full: Annotated[bool, typer.Option("--full", help="Show prompts and replies untruncated.")] = False,
        json_output: Annotated[bool, typer.Option("--json", help="Print the trajectory (or the attempts) as JSON.")] = False,
    ) -> None:
        """Render one attempt's trajectory (steps, code, observations, routing, verdict, tokens), or list
        the attempts of one task of a run (a task folder of the run, or RUN TASK)."""
        from rsi.harness.trajectory import read_trajectory

        chosen = _show_target(target, task)
        if isinstance(chosen, list):
            rows = _attempt_rows(chosen)
            if json_output:
                print_json(rows)
            else:
                _list_attempts(rows)
            return
        loaded = read_trajectory(chosen)
        if json_output:
            print_json(loaded.model_dump(mode="json"))
            return
        render_trajectory(loaded, full=full)
