"""A run's running totals (attempts, passes, coverage, what each configuration's attempts cost).

Rebuilt from the store on resume, updated as results are recorded; the scheduler's history and
the budget checks read them. Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Spent:
    """One configuration's counted attempts and what they cost."""

    attempts: int = 0
    wall_s: float = 0.0
    tokens: int = 0


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
