"""CLI commands: `rsi tasks list|show|validate|check|examples` (parse flags, call rsi.tasks, render)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from rsi.cli.options import SandboxOpt
from rsi.cli.render import console, is_tty, print_json
from rsi.cli.state import state
from rsi.errors import WorkspaceError
from rsi.workspace import Workspace

tasks_app = typer.Typer(
    help="Task suites: list, show, validate, check their verifiers, and add public examples.", no_args_is_help=True
)

SuiteArg = Annotated[str, typer.Argument(help="Suite name (under the workspace's tasks/) or a path to a suite folder.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def _root(suite: str) -> Workspace | None:
    """The workspace, or None when SUITE is a folder and no workspace is around."""
    try:
        return state.workspace()
    except WorkspaceError:
        folder = suite if Path(suite).is_dir() else suite.rpartition("/")[0]
        if folder and Path(folder).is_dir():
            return None
        raise


@tasks_app.command("list")
def list_tasks(
    suite: SuiteArg,
    split: Annotated[
        Literal["train", "heldout", "test"] | None, typer.Option("--split", help="Only tasks of this split.")
    ] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Only tasks carrying this tag (repeatable: all of them).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """List a suite's tasks: id, split, difficulty, tags."""
    from rsi.tasks.load import load_suite

    tasks = load_suite(_root(suite), suite)
    wanted = set(tag or [])
    tasks = [t for t in tasks if (split is None or t.spec.split == split) and wanted <= set(t.spec.tags)]
    if as_json:
        print_json(
            [
                {
                    "id": t.id,
                    "key": t.key,
                    "title": t.spec.title,
                    "split": t.spec.split,
                    "difficulty": t.spec.difficulty,
                    "tags": t.spec.tags,
                    "content_hash": t.content_hash,
                }
                for t in tasks
            ]
        )
        return
    from rich.table import Table

    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("id", "split", "difficulty", "tags", "title"):
        table.add_column(column)
    for t in tasks:
        table.add_row(t.id, t.spec.split, t.spec.difficulty, ",".join(t.spec.tags), t.spec.title)
    console.print(table)
    console.print(f"{len(tasks)} tasks ({_split_counts(tasks)})")


@tasks_app.command("show")
def show_task(
    ref: Annotated[str, typer.Argument(help="SUITE/TASK, e.g. pyfuncs/add-two.")],
    reveal: Annotated[
        bool, typer.Option("--reveal", help="Also print the hidden tests/ and the reference solution/.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Show a task's spec and instruction (never its hidden tests unless --reveal)."""
    from rsi.tasks.load import resolve_task

    task = resolve_task(_root(ref), ref)
    env_files = _files(task.environment_dir)
    hidden = {"tests": _files(task.tests_dir), "solution": _files(task.solution_dir)} if reveal else {}
    if as_json:
        data = {
            "key": task.key,
            "root": str(task.root),
            "content_hash": task.content_hash,
            "spec": task.spec.model_dump(mode="json"),
            "instruction": task.instruction,
            "environment": {str(p): text for p, text in env_files},
        }
        for part, files in hidden.items():
            data[part] = {str(p): text for p, text in files}
        print_json(data)
        return
    console.print(f"[bold]{task.key}[/]  {task.spec.title}")
    for key, value in task.spec.model_dump(mode="json").items():
        if key not in ("id", "title"):
            console.print(f"  {key}: {value}", markup=False)
    console.print(f"  content_hash: {task.content_hash}")
    console.print(f"  environment: {', '.join(str(p) for p, _ in env_files) or '(empty)'}", markup=False)
    console.rule("instruction.md")
    console.print(task.instruction.rstrip(), markup=False)
    if not reveal:
        console.rule()
        console.print("[dim]hidden tests/ not shown; add --reveal to print them[/]")
        return
    for part, files in hidden.items():
        for path, text in files:
            console.rule(f"{part}/{path}")
            console.print(text.rstrip(), markup=False)


def _files(folder: Path) -> list[tuple[Path, str]]:
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            text = f"<{path.stat().st_size} bytes, binary>"
        out.append((path.relative_to(folder), text))
    return out


@tasks_app.command("validate")
def validate_suite(suite: SuiteArg, as_json: JsonOpt = False) -> None:
    """Load every task of a suite; print every problem (file:line: key: message) and exit 2 if any."""
    from rsi.tasks.load import load_suite

    tasks = load_suite(_root(suite), suite)
    heldout = sum(1 for t in tasks if t.spec.split == "heldout")
    sealed = sum(1 for t in tasks if t.spec.split == "test")
    if as_json:
        print_json({"ok": True, "tasks": len(tasks), "heldout": heldout, "test": sealed})
        return
    console.print(f"ok: {len(tasks)} tasks ({_split_counts(tasks)})")


def _split_counts(tasks: list[Any]) -> str:
    """'40 train, 12 heldout' (and ', 250 test (sealed)' where the suite has a sealed split)."""
    counts = {split: sum(1 for t in tasks if t.spec.split == split) for split in ("train", "heldout", "test")}
    sealed = f", {counts['test']} test (sealed)" if counts["test"] else ""
    return f"{counts['train']} train, {counts['heldout']} heldout{sealed}"


def _selected(suite: str, task_id: list[str] | None) -> list[Any]:
    """The suite's tasks, or only those `--task` names (an unknown id is a located error)."""
    from rsi.errors import Problem, TaskError
    from rsi.tasks.load import load_suite

    tasks = load_suite(_root(suite), suite)
    if task_id:
        unknown = sorted(set(task_id) - {t.id for t in tasks})
        if unknown:
            raise TaskError([Problem(suite, None, "--task", f"no task '{u}' in the suite") for u in unknown])
        tasks = [t for t in tasks if t.id in set(task_id)]
    return tasks


@tasks_app.command("check")
def check_suite_cmd(
    suite: SuiteArg,
    sandbox: SandboxOpt = "auto",
    workers: Annotated[int, typer.Option("--workers", min=1, help="Tasks checked in parallel.")] = 2,
    task_id: Annotated[list[str] | None, typer.Option("--task", help="Only these task ids (repeatable).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Judge each task's reference (must pass), empty and wrong solutions (must fail); exit 1 on a bad task."""
    from rsi.harness.task_check import check_suite

    tasks = _selected(suite, task_id)
    if as_json or not is_tty():
        outcome = check_suite(tasks, sandbox, workers)
    else:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        columns = (TextColumn("checking"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=console, transient=True) as progress:
            bar = progress.add_task("check", total=len(tasks))
            outcome = check_suite(tasks, sandbox, workers, on_done=lambda _r: progress.advance(bar))
    if as_json:
        print_json(
            {
                "ok": outcome.ok,
                "sandbox": outcome.sandbox,
                "tasks": len(outcome.results),
                "failed": [r.key for r in outcome.failed],
                "results": [r.model_dump(mode="json") | {"ok": r.ok} for r in outcome.results],
            }
        )
    else:
        from rich.markup import escape

        for result in outcome.failed:
            for line in result.problems():
                console.print(f"[red]FAIL[/] {escape(line)}", markup=True, highlight=False)
        good = len(outcome.results) - len(outcome.failed)
        console.print(f"{good}/{len(outcome.results)} tasks sound (sandbox: {outcome.sandbox})")
    if not outcome.ok:
        raise typer.Exit(1)


@tasks_app.command("examples")
def examples_cmd(
    suite: SuiteArg,
    write: Annotated[bool, typer.Option("--write", help="Append them to each task.toml's [public] examples.")] = False,
    task_id: Annotated[list[str] | None, typer.Option("--task", help="Only these task ids (repeatable).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Public examples each instruction shows but task.toml does not declare: list them, or add them (--write)."""
    from rsi.tasks.add_examples import propose
    from rsi.tasks.add_examples import write as write_examples

    tasks = _selected(suite, task_id)
    proposals = [propose(t) for t in tasks]
    if write:
        for proposal in proposals:
            if proposal.new:
                write_examples(proposal)
    adding = [p for p in proposals if p.new]
    total = sum(len(p.new) for p in adding)
    if as_json:
        print_json(
            {
                "written": write,
                "tasks": len(proposals),
                "examples": total,
                "proposals": [
                    {"key": p.key, "task_toml": str(p.task_toml), "declared": p.declared, "skipped": p.skipped,
                     "new": [e.model_dump() for e in p.new]}
                    for p in proposals if p.new or p.skipped
                ],
            }
        )
        return
    for proposal in proposals:
        if proposal.skipped:
            console.print(f"[yellow]skipped[/] {proposal.key}: {proposal.skipped}", markup=True, highlight=False)
        for example in proposal.new:
            console.print(f"{proposal.key}: + {example.call} == {example.expected}", markup=False, highlight=False)
    verb = "added" if write else "would add"
    console.print(f"{verb} {total} examples to {len(adding)} of {len(proposals)} tasks", highlight=False)
    if total and not write:
        console.print("[dim]--write adds them; then `rsi tasks check SUITE` runs them on each reference solution[/]")
    elif total:
        console.print("[dim]now run `rsi tasks check SUITE`: it refuses an example the reference solution contradicts[/]")


def register(app: typer.Typer) -> None:
    """Add this module's commands to the root app."""
    app.add_typer(tasks_app, name="tasks")
