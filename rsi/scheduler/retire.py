"""Retirement: a dead configuration that costs more than a live one is never planned again in the run.

Pure: the run session (rsi.run.session) calls `retirements` before every proposal, for whatever scheduler
the run uses, and drops the retired configurations from the request (`without_retired`); the simulator
(rsi.simulate) does the same. Each configuration is judged on its first `MIN_ATTEMPTS` (16) counted
attempts (`cost_stats`), with its mean cost per attempt (seconds, or tokens under a token-only budget):

    low  = Wilson 95% lower bound of passes / attempts, divided by the mean cost per attempt
    high = Wilson 95% upper bound of passes / attempts, divided by the mean cost per attempt

The winner is the judged configuration with the highest `low`. Configuration i is retired when its
`high` (optimistic passes per unit of cost) is below the winner's `low` (pessimistic), and besides:

- it passed none of its first 16 attempts (dead, like the REPL configurations of issue 48's run:
  0 of 4-8 at 160-240 s an attempt, where text attempts took 11-80 s), and
- it costs more per attempt than the winner.

With no passes the upper bound stays above 0 (z^2 / (n + z^2): 0.19 at 16 attempts), so a dead
configuration is retired only by one that passes clearly more per unit of cost. The winner can never
be retired (its `high` is at least its `low`), so some configuration is always left. A retirement is
final for the run: the run records the figures it was retired on, and a resume reads them back.

Why the two guards and 16 attempts (measured on the simulator's tuning seeds 0-5, bench/RESULTS.md
"scheduler_efficiency, by cost"): the bare rule compares overall pass rates, and where configurations are
complementary (specialists by tag, task families) a configuration that passes little overall is still
the only one able at its tasks. The bare rule after 4 or 8 attempts retired 10 of 12 configurations on
`stochastic` with costs (seed 1) and never covered every task on `default` with costs (seeds 0, 2);
dead-only after 8 attempts still failed `default` seed 0 (4176 attempts instead of 601); dead-only after
16 retired 0-2 configurations a run and lost no coverage. At equal costs nothing is retired: there the
scheduler's own estimates (passes per attempt) already route attempts away from a weak configuration task
by task, which a final retirement cannot undo. Each configuration is judged on its first attempts only
because later ones go to the tasks still open, harder by selection: a configuration's pass rate falls as
coverage grows, and comparing many late attempts with another's few early ones would favour whoever was
probed first.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from rsi.scheduler.types import ScheduleRequest

MIN_ATTEMPTS = 16  # each configuration is judged on its first this many counted attempts (module docstring)
Z = 1.96  # 95% two-sided Wilson bounds


def wilson(passes: int, attempts: int, z: float = Z) -> tuple[float, float]:
    """Wilson score bounds of passes / attempts; (0, 1) with no attempts. The upper bound at 0 passes is
    z^2 / (n + z^2), above 0: no finite evidence proves a configuration can never pass."""
    if attempts <= 0:
        return 0.0, 1.0
    if not 0 <= passes <= attempts:
        raise ValueError(f"passes ({passes}) must lie in [0, attempts={attempts}]")
    p = passes / attempts
    z2 = z * z
    denominator = 1.0 + z2 / attempts
    centre = (p + z2 / (2 * attempts)) / denominator
    half = z * math.sqrt(p * (1 - p) / attempts + z2 / (4 * attempts * attempts)) / denominator
    return (max(0.0, centre - half) if passes else 0.0), (min(1.0, centre + half) if passes < attempts else 1.0)


@dataclass(frozen=True)
class CostStats:
    """One configuration's counted attempts in a run, its passes, and its mean cost per attempt."""

    config_hash: str
    name: str
    attempts: int
    passes: int
    cost: float | None  # mean cost per attempt in `unit`; None or <= 0: unknown (never judged)

    def bounds(self, z: float = Z) -> tuple[float, float]:
        """(low, high) passes per unit of cost."""
        low, high = wilson(self.passes, self.attempts, z)
        cost = self.cost or 1.0
        return low / cost, high / cost


@dataclass(frozen=True)
class Retirement:
    """Why one configuration was retired: its figures and those of the configuration it lost to."""

    config_hash: str
    name: str
    passes: int
    attempts: int
    cost: float  # mean cost per attempt, in `unit`
    low: float  # Wilson 95% lower bound of its pass rate per unit of cost
    high: float  # and upper: below the winner's `lost_to_low`
    unit: str  # "wall_s", "tokens" or "attempt"
    lost_to: str  # the winner's configuration hash
    lost_to_name: str
    lost_to_passes: int
    lost_to_attempts: int
    lost_to_cost: float
    lost_to_low: float
    lost_to_high: float

    def describe(self) -> str:
        """One line: the figures the rule compared."""
        unit = {"wall_s": "s", "tokens": "tok", "attempt": "attempt"}.get(self.unit, self.unit)
        return (f"retired: {self.passes}/{self.attempts} passed at {self.cost:.4g} {unit}/attempt, at most "
                f"{_rate(self.high, unit)} (95% upper bound) < at least {_rate(self.lost_to_low, unit)} of "
                f"{self.lost_to_name or self.lost_to} ({self.lost_to_passes}/{self.lost_to_attempts} passed at "
                f"{self.lost_to_cost:.4g} {unit}/attempt, 95% lower bound)")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Retirement:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__})


def _rate(value: float, unit: str) -> str:
    # Passes per 1000 units keeps second and token rates readable (0.0021 passes/s is 2.1 per 1000 s).
    return f"{value:.3g} passes/{unit}" if unit == "attempt" else f"{value * 1000:.3g} passes/1000 {unit}"


def retirements(
    stats: Sequence[CostStats], retired: Collection[str] = (), unit: str = "wall_s",
    min_attempts: int | None = None, z: float = Z,
) -> list[Retirement]:
    """The configurations of `stats` the rule retires now (module docstring), besides those in `retired`.

    Only configurations with at least `min_attempts` counted attempts (`MIN_ATTEMPTS` with None) and a
    known cost are judged or judge; the winner is the one with the highest lower bound among them (the
    first on ties). Give it `cost_stats` of the history: each configuration's first attempts."""
    min_attempts = MIN_ATTEMPTS if min_attempts is None else min_attempts
    judged = [s for s in stats if s.config_hash not in retired and s.attempts >= max(1, min_attempts)
              and s.cost is not None and s.cost > 0]
    if len(judged) < 2:
        return []
    bounds = {s.config_hash: s.bounds(z) for s in judged}
    winner = max(judged, key=lambda s: bounds[s.config_hash][0])  # max keeps the first on ties
    w_low, w_high = bounds[winner.config_hash]
    out = []
    for s in judged:
        low, high = bounds[s.config_hash]
        if s is not winner and high < w_low and not s.passes and float(s.cost or 0.0) > float(winner.cost or 0.0):
            out.append(Retirement(
                s.config_hash, s.name, s.passes, s.attempts, float(s.cost or 0.0), low, high, unit,
                winner.config_hash, winner.name, winner.passes, winner.attempts, float(winner.cost or 0.0),
                w_low, w_high))
    return out


def cost_stats(
    history: Iterable[tuple[str, str, bool]], costs: Mapping[str, float], names: Mapping[str, str] | None = None,
    window: int | None = None,
) -> list[CostStats]:
    """Per configuration of the history (in order of first attempt): its first `window` counted attempts
    (`MIN_ATTEMPTS` with None; 0: all), their passes, and the mean cost per attempt from `costs` (None where not known).

    Why a window: later attempts go to the tasks still open, harder by selection, so a configuration's
    pass rate falls as coverage grows; comparing one configuration's many attempts with another's few
    would favour whoever was probed first. The first attempts of every configuration are its probe."""
    window = MIN_ATTEMPTS if window is None else window
    attempts: dict[str, int] = {}
    passes: dict[str, int] = {}
    for config_hash, _, passed in history:
        if window and attempts.get(config_hash, 0) >= window:
            continue
        attempts[config_hash] = attempts.get(config_hash, 0) + 1
        passes[config_hash] = passes.get(config_hash, 0) + bool(passed)
    names = names or {}
    return [CostStats(c, names.get(c, ""), n, passes[c], costs.get(c)) for c, n in attempts.items()]


def without_retired(request: ScheduleRequest, retired: Collection[str]) -> ScheduleRequest:
    """`request` without the retired configurations. Their attempts stay in the history: what they tell
    about the tasks (difficulty, coverage) still counts."""
    if not retired:
        return request
    return replace(request, configs=[c for c in request.configs if c.config_hash not in retired])


def recorded(details: Iterable[Mapping[str, Any]]) -> dict[str, Retirement]:
    """The retirements a run's job rows recorded under `details["retired"]` (in job order), by
    configuration hash: the first record of each wins."""
    out: dict[str, Retirement] = {}
    for row in details:
        for data in row.get("retired", None) or []:
            out.setdefault(data["config_hash"], Retirement.from_json(data))
    return out
