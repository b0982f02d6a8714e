"""A run's running totals (attempts, passes, coverage, what each configuration's attempts cost).

Rebuilt from the store on resume, updated as results are recorded; the scheduler's history and
the budget checks read them. Pure data.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

RATE_WINDOW_S = 300.0  # the live rates (attempts per minute, completion tokens per second) span this
RATE_MIN_S = 20.0  # and are not given over less


@dataclass
class Spent:
    """One configuration's counted attempts and what they cost."""

    attempts: int = 0
    wall_s: float = 0.0
    tokens: int = 0


@dataclass
class CacheCounts:
    """What the response cache (rsi.models.cache) did for a run's attempts, errors included (their replies
    were served or made all the same)."""

    hits: int = 0
    misses: int = 0
    tokens_not_spent: int = 0

    def add(self, hits: int, misses: int, tokens_not_spent: int) -> None:
        self.hits += hits
        self.misses += misses
        self.tokens_not_spent += tokens_not_spent

    def text(self) -> str:
        """One phrase for end lines: '' when nothing was cacheable."""
        asked = self.hits + self.misses
        if not asked:
            return ""
        return (f"cache {self.hits}/{asked} replies served ({self.hits / asked:.0%}), "
                f"{self.tokens_not_spent} tokens not spent")


@dataclass
class RunTotals:
    """This run's totals so far (rebuilt from the store on resume)."""

    attempts: int = 0
    passes: int = 0
    errors: int = 0
    tokens: int = 0
    covered: set[str] = field(default_factory=set)
    history: list[tuple[str, str, bool]] = field(default_factory=list)  # the scheduler's input
    quarantined: set[str] = field(default_factory=set)  # tasks with an attempt out of error retries
    spent: dict[str, Spent] = field(default_factory=dict)  # per configuration: what its attempts cost
    cache: CacheCounts = field(default_factory=lambda: CacheCounts())  # the response cache's part, every attempt

    def count(self, config_hash: str, task_key: str, passed: bool, wall_s: float, tokens: int) -> None:
        """One counted attempt (passed, failed or timeout) into every total."""
        self.history.append((config_hash, task_key, passed))
        self.attempts += 1
        self.tokens += tokens
        spent = self.spent.setdefault(config_hash, Spent())
        spent.attempts += 1
        spent.wall_s += wall_s
        spent.tokens += tokens
        if passed:
            self.passes += 1
            self.covered.add(task_key)


def attempt_costs(spent: dict[str, Spent], unit: str | None) -> dict[str, float]:
    """Mean cost of one attempt per configuration, in `unit` ("wall_s" or "tokens"); {} for None.
    A configuration that spent nothing in that unit is left out (unknown, not free)."""
    if unit not in ("wall_s", "tokens"):
        return {}
    return {config: getattr(s, unit) / s.attempts for config, s in spent.items() if s.attempts and getattr(s, unit) > 0}


@dataclass
class RecentRate:
    """Counted attempts and their completion tokens per second over a sliding window: what the live
    display shows as the attempt rate and the completion tokens per second, and what the ETA divides
    by. The window opens at the session's first counted result (loading the model is not a rate) and
    spans at most `window_s`: the rate of the last minutes, smoothed against bursts (attempts in flight
    end together) without keeping the start of the run forever."""

    window_s: float = RATE_WINDOW_S
    opened: float | None = None
    events: deque[tuple[float, int]] = field(default_factory=deque)  # (when, completion tokens)

    def add(self, now: float, completion_tokens: int) -> None:
        if self.opened is None:
            self.opened = now  # the first result is where the window starts, not a rate yet
            return
        self.events.append((now, completion_tokens))
        self._trim(now)

    def _trim(self, now: float) -> None:
        while self.events and now - self.events[0][0] > self.window_s:
            self.events.popleft()

    def span_s(self, now: float) -> float:
        return 0.0 if self.opened is None else min(self.window_s, now - self.opened)

    def rates(self, now: float) -> tuple[float, float] | None:
        """(attempts per minute, completion tokens per second) over the window; None while it is shorter than RATE_MIN_S."""
        self._trim(now)
        span = self.span_s(now)
        if span < RATE_MIN_S:
            return None
        return len(self.events) * 60.0 / span, sum(tokens for _, tokens in self.events) / span
