"""Progress of the long commands besides `rsi run` (train, eval, generation, harvest), shown the way
`rsi run` shows itself (rsi/display.py): a Rich live view on a TTY, plain timestamped lines under
cron or in a pipe, nothing under `--json`.

Library code reports through a `Tracker` (`stage`, `advance`, `say`); the tracker makes `StageProgress`
snapshots (elapsed time, rate and ETA computed once, here) and hands them to a `ProgressDisplay`,
which only renders. So a training loop or an evaluation never touches a widget, and the same call
sites serve a terminal, a cron log and a test.
"""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime
from typing import IO, Any, Protocol

from pydantic import BaseModel, Field

from rsi.display import LiveView, NullDisplay, format_duration

FieldValue = str | int | float


class StageProgress(BaseModel):
    """One snapshot of a long command: which stage, how far, and the stage's own numbers."""

    command: str = Field(description="train, eval, generation, harvest, ...")
    stage: str = Field(default="", description="The current stage, e.g. 'epoch 1' or 'parent on heldout'.")
    done: int = 0
    total: int | None = Field(default=None, description="Units of the stage; None when unknown.")
    unit: str = "steps"
    elapsed_s: float = Field(default=0.0, description="Since the command started.")
    stage_elapsed_s: float = 0.0
    rate_per_s: float | None = Field(default=None, description="Units per second in this stage.")
    eta_s: float | None = Field(default=None, description="Seconds left in this stage at the current rate.")
    fields: dict[str, FieldValue] = Field(default_factory=dict, description="Stage numbers: loss, tok/s, passes...")


def _number(value: FieldValue) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def progress_text(p: StageProgress) -> str:
    """The one-line summary every rendering shares."""
    amount = f"{p.done}/{p.total}" if p.total is not None else str(p.done)
    parts = [f"{p.command}: {p.stage}" if p.stage else p.command, f"{amount} {p.unit}"]
    if p.rate_per_s is not None:
        parts.append(f"{p.rate_per_s:.2g} {p.unit}/s")
    parts += [f"{k} {_number(v)}" for k, v in p.fields.items()]
    parts.append(f"elapsed {format_duration(p.elapsed_s)}")
    if p.eta_s is not None:
        parts.append(f"eta {format_duration(p.eta_s)}")
    return " | ".join(parts)


class ProgressDisplay(Protocol):
    def update(self, progress: StageProgress, message: str | None = None) -> None:
        """A new snapshot, optionally with a message worth a line of its own."""
        ...

    def close(self) -> None: ...


NullProgress = NullDisplay  # shows nothing, whichever snapshots it is given


class PlainProgress:
    """Timestamped lines: every message, a stage's start and end, and a progress line at most every
    `every_s` seconds in between (a cron log of a 3-hour training stays readable)."""

    def __init__(self, stream: IO[str] | None = None, every_s: float = 30.0,
                 clock: Any = time.monotonic) -> None:
        self.stream = stream or sys.stderr
        self.every_s = every_s
        self._clock = clock
        self._last_line = -float("inf")
        self._stage: tuple[str, str] | None = None

    def _write(self, text: str) -> None:
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.stream.write(f"{stamp} {text}\n")
        self.stream.flush()

    def update(self, progress: StageProgress, message: str | None = None) -> None:
        if message:
            self._write(f"{progress.command}: {message}")
        now = self._clock()
        stage = (progress.command, progress.stage)
        finished = progress.total is not None and progress.done >= progress.total
        if stage != self._stage or finished or now - self._last_line >= self.every_s:
            self._stage = stage
            self._last_line = now
            self._write(progress_text(progress))

    def close(self) -> None:
        self.stream.flush()


class RichProgress(LiveView):
    """A live bar with the stage's numbers; messages scroll above it."""

    def __init__(self, console: Any = None, refresh_per_second: float = 4.0) -> None:
        self._progress: StageProgress | None = None
        super().__init__(console, refresh_per_second)

    def _render(self) -> Any:
        from rich.progress_bar import ProgressBar
        from rich.table import Table

        table = Table.grid(padding=(0, 2))
        p = self._progress
        if p is None:
            table.add_row("[dim]starting...[/]")
            return table
        amount = f"{p.done}/{p.total}" if p.total is not None else str(p.done)
        bar = ProgressBar(total=float(p.total), completed=float(p.done), width=30) if p.total else ""
        table.add_row(f"[bold]{p.command}[/]", p.stage, bar, f"{amount} {p.unit}",
                      f"eta {format_duration(p.eta_s)}" if p.eta_s is not None else "")
        numbers = "  ".join(f"[bold]{k}[/] {_number(v)}" for k, v in p.fields.items())
        table.add_row("", f"elapsed {format_duration(p.elapsed_s)}", numbers, "", "")
        return table

    def update(self, progress: StageProgress, message: str | None = None) -> None:
        with self._lock:
            self._progress = progress
            if message:
                self._live.console.print(f"[dim]{progress.command}[/] {message}", highlight=False, markup=False)
            self._live.refresh()


def make_progress(kind: str, stream: IO[str] | None = None) -> ProgressDisplay:
    """`rich`, `plain` or `none` (the kinds `progress_kind` names)."""
    if kind == "rich":
        return RichProgress()
    if kind == "plain":
        return PlainProgress(stream)
    return NullProgress()


def progress_kind(json_output: bool, tty: bool) -> str:
    """The rendering a command should use: none under --json, rich on a TTY, plain lines otherwise."""
    return "none" if json_output else "rich" if tty else "plain"


class Tracker:
    """What library code calls: it times stages and hands snapshots to a display (never prints)."""

    def __init__(self, command: str, display: ProgressDisplay | None = None, clock: Any = time.monotonic) -> None:
        self.command = command
        self.display: ProgressDisplay = display or NullProgress()
        self._clock = clock
        self._started = clock()
        self._stage_started = self._started
        self._current = StageProgress(command=command)

    def _emit(self, message: str | None = None) -> StageProgress:
        now = self._clock()
        p = self._current
        p.elapsed_s = now - self._started
        p.stage_elapsed_s = now - self._stage_started
        p.rate_per_s = p.done / p.stage_elapsed_s if p.done and p.stage_elapsed_s > 0 else None
        p.eta_s = ((p.total - p.done) / p.rate_per_s if p.rate_per_s and p.total is not None else None)
        snapshot = p.model_copy(deep=True)
        self.display.update(snapshot, message)
        return snapshot

    @property
    def current_stage(self) -> str:
        return self._current.stage

    def stage(self, name: str, total: int | None = None, unit: str = "steps") -> StageProgress:
        """Start a stage (its clock, rate and ETA start over)."""
        self._stage_started = self._clock()
        self._current = StageProgress(command=self.command, stage=name, total=total, unit=unit)
        return self._emit()

    def advance(self, done: int, **fields: FieldValue) -> StageProgress:
        """`done` units of the stage are finished; `fields` replace the stage's numbers of the same names."""
        self._current.done = done
        self._current.fields.update(fields)
        return self._emit()

    def say(self, message: str) -> StageProgress:
        """A line worth keeping (a finished step, a decision), shown by every rendering but `none`."""
        return self._emit(message)

    def close(self) -> None:
        self.display.close()
