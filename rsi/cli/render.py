"""Rendering for the CLI: rich on a TTY, plain lines otherwise, JSON on request.

Library code never prints; the CLI modules call these helpers.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from rich.console import Console

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def is_tty() -> bool:
    return sys.stdout.isatty()


def print_json(data: Any) -> None:
    """Machine output: one JSON document on stdout, no colour, no wrapping."""
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
    sys.stdout.flush()


def print_error(lines: list[str], hint: str | None = None) -> None:
    from rich.markup import escape  # messages quote TOML like `[base]`, which rich would eat as markup

    for line in lines:
        err_console.print(f"[bold red]error:[/] {escape(line)}", markup=True, highlight=False)
    if hint:
        err_console.print(f"[dim]hint: {escape(hint)}[/]")


def progress_tracker(command: str, json_output: bool) -> Any:
    """The progress of a long command, shown as `rsi run` shows itself: a live view on a TTY, plain
    timestamped lines otherwise (stderr under --json, where stdout holds one JSON document)."""
    from rsi.progress import PlainProgress, RichProgress, Tracker

    if json_output:
        return Tracker(command, PlainProgress(sys.stderr))
    return Tracker(command, RichProgress() if is_tty() else PlainProgress(sys.stdout))


def run_displayed(as_json: bool, work: Callable[[Any, Any], Any], show: Callable[[Any], None]) -> None:
    """Run `work(display, stop)` the way `rsi run` and `rsi harvest` run: a live display on a TTY, plain
    lines otherwise, none under --json; Ctrl-C and SIGTERM (cron, SLURM) ask it to stop gracefully
    (resumable). Then the outcome as JSON, or `show(outcome)`; a run stopped by a signal exits 130
    (Ctrl-C) or 143 (SIGTERM)."""
    import typer

    from rsi.display import NullDisplay, PlainDisplay, RichDisplay
    from rsi.run.stop import StopRequest, stop_on_signals

    display: Any = NullDisplay() if as_json else RichDisplay() if is_tty() else PlainDisplay()
    stop = StopRequest()
    try:
        with stop_on_signals(stop):
            outcome = work(display, stop)
    finally:
        display.close()
    if as_json:
        print_json(outcome.model_dump(mode="json"))
    else:
        show(outcome)
    if outcome.status == "stopped" and stop.requested:
        raise typer.Exit(stop.exit_code)
