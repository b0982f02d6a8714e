"""How a run shows itself: a `Display` protocol with three renderings (rich live, plain lines, none).

The runner only calls `update(progress, event)` with a `RunProgress` snapshot and, now and then, a
`RunEvent` (both defined here, below every package that runs or shows a run); it never touches
widgets. The CLI picks the rendering: rich live on a TTY, one plain line per event under cron or
when piped, nothing for `--json`.
"""

from __future__ import annotations

import sys
import threading
import time
from datetime import UTC, datetime
from typing import IO, Any, Literal, Protocol

from pydantic import BaseModel, Field


class RunProgress(BaseModel):
    """A snapshot of a run for displays (the runner builds it; displays only render it)."""

    run_id: str
    portfolio: str = ""
    suite: str = ""
    jobs_done: int = 0
    job_index: int | None = Field(default=None, description="Job in flight.")
    job_config: str = ""
    job_planned: int = Field(default=0, description="Attempts planned in the job in flight.")
    job_done: int = 0
    job_passed: int = 0
    attempts: int = Field(default=0, description="Counted attempts so far (this run).")
    budget_attempts: int | None = Field(default=None, description="Attempts budget; None: no attempts limit.")
    budget_s: float | None = Field(default=None, description="Time budget, if any.")
    errors: int = Field(default=0, description="Infrastructure errors seen (retried, never counted).")
    passes: int = 0
    covered: int = 0
    tasks: int = 0
    tokens: int = Field(default=0, description="Prompt + completion tokens of the counted attempts (this run).")
    elapsed_s: float = Field(default=0.0, description="Wall time of the run: its sessions, as the time budget counts.")
    started: datetime | None = None
    rate_per_min: float | None = Field(
        default=None, description="Counted attempts per minute over the last `rate_window_s` (None: too early).")
    completion_tokens_per_s: float | None = Field(
        default=None, description="Completion tokens (prompt tokens apart) per second over the same window.")
    rate_window_s: float = Field(default=0.0, description="The window both rates are measured over (rsi.run.totals).")

    @property
    def job_pass_rate(self) -> float:
        return self.job_passed / self.job_done if self.job_done else 0.0

    @property
    def attempts_text(self) -> str:
        """Counted attempts, against the attempts budget when there is one."""
        return f"{self.attempts}/{self.budget_attempts}" if self.budget_attempts is not None else str(self.attempts)

    def _time_left(self) -> float | None:
        return None if self.budget_s is None else max(0.0, self.budget_s - self.elapsed_s)

    def _by_attempts(self) -> float | None:
        if self.budget_attempts is None or not self.rate_per_min:
            return None
        return max(0, self.budget_attempts - self.attempts) / (self.rate_per_min / 60.0)

    @property
    def eta_s(self) -> float | None:
        """Time left: the attempts left at the smoothed attempt rate (`rate_per_min`, a sliding window,
        never the run's mean since its start, which a model load skews), capped by the time budget."""
        time_left, by_attempts = self._time_left(), self._by_attempts()
        if by_attempts is None:
            return time_left
        return by_attempts if time_left is None else min(by_attempts, time_left)

    @property
    def eta_basis(self) -> str:
        """What the ETA rests on, in words: the time budget, or the rate and its window."""
        time_left, by_attempts = self._time_left(), self._by_attempts()
        if by_attempts is None:
            return "time budget" if time_left is not None else "no rate yet"
        if time_left is not None and time_left <= by_attempts:
            return "time budget"
        return f"at {self.rate_per_min:.1f}/min over the last {format_window(self.rate_window_s)}"

    @property
    def completion_rate_text(self) -> str:
        """The completion tokens per second, or '-' while the window is too short."""
        rate = self.completion_tokens_per_s
        return "-" if rate is None else f"{rate:.1f}"


def format_window(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


class RunEvent(BaseModel):
    """Something a display may announce (one plain log line each)."""

    kind: Literal["run_started", "run_resumed", "job_started", "attempt", "retry", "job_finished", "run_finished", "note"]
    message: str


class Display(Protocol):
    def update(self, progress: RunProgress, event: RunEvent | None = None) -> None:
        """A new snapshot, optionally with an event worth a log line."""
        ...

    def close(self) -> None: ...


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def progress_line(p: RunProgress) -> str:
    """The one-line summary both renderings share."""
    cover = f"{p.covered}/{p.tasks}" if p.tasks else "-"
    job = f"job {p.job_index} {p.job_config} {p.job_done}/{p.job_planned}" if p.job_index is not None else "idle"
    return (
        f"{job} | attempts {p.attempts_text} | covered {cover} | "
        f"job pass {p.job_pass_rate:.0%} | errors {p.errors} | {p.completion_rate_text} completion tok/s | "
        f"eta {format_duration(p.eta_s)} ({p.eta_basis})"
    )


class NullDisplay:
    """Shows nothing (for --json and library callers). It takes any update, so it is also the null
    `ProgressDisplay` of the other long commands (rsi.progress.NullProgress)."""

    def update(self, *_: object, **__: object) -> None:
        return None

    def close(self) -> None:
        return None


class PlainDisplay:
    """One timestamped line per event: for cron, CI logs and pipes."""

    def __init__(self, stream: IO[str] | None = None, every_attempt: bool = True) -> None:
        self.stream = stream or sys.stderr
        self.every_attempt = every_attempt

    def update(self, progress: RunProgress, event: RunEvent | None = None) -> None:
        if event is None or (event.kind == "attempt" and not self.every_attempt):
            return
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        line = f"{stamp} run={progress.run_id} {event.kind}: {event.message}"
        if event.kind in ("attempt", "job_finished"):
            line += f" [{progress_line(progress)}]"
        self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        self.stream.flush()


class LiveView:
    """A Rich live view drawn by the subclass's `_render` (also from Live's own refresh thread, so a
    subclass sets what `_render` reads before calling this `__init__`, and swaps snapshots under `_lock`).
    Shared by `rsi run`'s panel (RichDisplay) and the other long commands' bar (rsi.progress.RichProgress)."""

    def __init__(self, console: Any = None, refresh_per_second: float = 4.0) -> None:
        from rich.console import Console  # lazy: only a TTY needs the widgets
        from rich.live import Live

        self.console = console or Console(stderr=True)
        self._lock = threading.Lock()
        self._live = Live(self._render(), console=self.console, refresh_per_second=refresh_per_second,
                          transient=False, get_renderable=self._render)
        self._live.start()

    def _render(self) -> Any:
        raise NotImplementedError

    def close(self) -> None:
        with self._lock:
            self._live.refresh()
            self._live.stop()


class RichDisplay(LiveView):
    """A live panel (jobs, attempts, coverage, job pass rate, completion tokens/s, ETA) plus scrolling events.
    The rates are `RunProgress`'s: over a sliding window (rsi.run.totals.RecentRate), said with the ETA."""

    def __init__(self, console: Any = None, refresh_per_second: float = 4.0) -> None:
        self._progress: RunProgress | None = None
        # The clock ticks between snapshots: elapsed time is the snapshot's plus the time since it came
        # (a model load or a long attempt would otherwise freeze it, and 0m00s looks like a hang).
        self._started = time.monotonic()
        self._received = self._started
        self._last = 0.0
        super().__init__(console, refresh_per_second)

    def _render(self) -> Any:
        from rich.table import Table

        table = Table.grid(padding=(0, 2))
        p = self._progress
        since = time.monotonic() - self._received
        if p is None:
            table.add_row(f"[dim]starting (planning, loading the model)...  {format_duration(since)}[/]")
            return table
        covered = f"{p.covered}/{p.tasks}" + (f" ({p.covered / p.tasks:.0%})" if p.tasks else "")
        job = (f"#{p.job_index} {p.job_config}  {p.job_done}/{p.job_planned}  pass {p.job_pass_rate:.0%}"
               if p.job_index is not None else "-")
        table.add_row("[bold]run[/]", p.run_id, "[bold]portfolio[/]", f"{p.portfolio} on {p.suite}")
        table.add_row("[bold]jobs done[/]", str(p.jobs_done), "[bold]job[/]", job)
        table.add_row("[bold]attempts[/]", p.attempts_text, "[bold]coverage[/]", covered)
        table.add_row("[bold]errors[/]", str(p.errors), "[bold]completion tok/s[/]", p.completion_rate_text)
        eta = format_duration(None if p.eta_s is None else max(0.0, p.eta_s - since))
        table.add_row("[bold]elapsed[/]", format_duration(p.elapsed_s + since), "[bold]eta[/]", f"{eta} ({p.eta_basis})")
        return table

    def update(self, progress: RunProgress, event: RunEvent | None = None) -> None:
        with self._lock:
            self._progress = progress
            self._received = time.monotonic()
            if event is not None and event.kind != "attempt":
                self._live.console.print(f"[dim]{event.kind}[/] {event.message}", highlight=False)
            now = time.monotonic()
            if now - self._last > 0.25:
                self._last = now
                self._live.refresh()
