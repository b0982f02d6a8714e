"""Bookkeeping every scheduler shares: history folded into counts, the job's capacity under the budget,
the target tasks, and the (configuration, task) pairs that used up `max_tries_per_task`."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rsi.scheduler.types import AttemptFact, ConfigOption, ScheduleRequest, TaskOption


@dataclass
class Evidence:
    """History folded into counts: per (config, task), and the covered set."""

    tries: dict[tuple[str, str], int]
    wins: dict[tuple[str, str], int]
    covered: set[str]

    @classmethod
    def fold(cls, history: Iterable[AttemptFact | tuple[str, str, bool]]) -> Evidence:
        tries: dict[tuple[str, str], int] = defaultdict(int)
        wins: dict[tuple[str, str], int] = defaultdict(int)
        covered: set[str] = set()
        for config_hash, task_key, passed in history:
            tries[(config_hash, task_key)] += 1
            if passed:
                wins[(config_hash, task_key)] += 1
                covered.add(task_key)
        return cls(tries, wins, covered)

    def tried_configs(self) -> set[str]:
        return {c for c, _ in self.tries}


def capacity(request: ScheduleRequest) -> int:
    """How many tasks the next job may hold under the job size and the remaining budget."""
    per_task = max(1, request.attempts_per_task)
    cap = request.job_size
    budget = request.budget
    if budget.attempts is not None:
        cap = min(cap, budget.attempts // per_task)
    if budget.tokens is not None:
        if budget.tokens <= 0:
            return 0
        if request.tokens_per_attempt:
            cap = min(cap, int(budget.tokens // (request.tokens_per_attempt * per_task)))
    if budget.wall_s is not None:
        if budget.wall_s <= 0:
            return 0
        if request.wall_s_per_attempt:
            cap = min(cap, int(budget.wall_s // (request.wall_s_per_attempt * per_task)))
    return max(0, cap)


def targets(request: ScheduleRequest, evidence: Evidence) -> list[TaskOption]:
    in_split = [t for t in request.tasks if request.split is None or t.split == request.split]
    if all(t.key in evidence.covered for t in in_split):
        return []  # full coverage of the target split: stop, even when include_covered
    if request.include_covered:
        return in_split
    return [t for t in in_split if t.key not in evidence.covered]


def tries_left(config: ConfigOption, evidence: Evidence, task_key: str) -> bool:
    """Whether `config` may still try `task_key` (its `max_tries_per_task` is not used up)."""
    limit = config.max_tries_per_task
    return limit is None or evidence.tries.get((config.config_hash, task_key), 0) < limit


def open_for(config: ConfigOption, tasks: Sequence[TaskOption], evidence: Evidence) -> list[TaskOption]:
    """The tasks of `tasks` that `config` may still try."""
    return [t for t in tasks if tries_left(config, evidence, t.key)]


def without_exhausted(
    request: ScheduleRequest, evidence: Evidence, draws: dict[str, dict[str, float]]
) -> dict[str, dict[str, float]]:
    """Zero the (task, configuration) pairs that used up `max_tries_per_task`; drop tasks left with none."""
    limits = {c.config_hash: c.max_tries_per_task for c in request.configs if c.max_tries_per_task is not None}
    if not limits:
        return draws
    kept: dict[str, dict[str, float]] = {}
    for key, row in draws.items():
        row = {c: (0.0 if c in limits and evidence.tries.get((c, key), 0) >= limits[c] else q) for c, q in row.items()}
        if any(q > 0.0 for q in row.values()):
            kept[key] = row
    return kept


def unit_costs(configs: Sequence[ConfigOption]) -> dict[str, float] | None:
    """Each configuration's cost per attempt in the binding currency, or None when no cost is known.

    A configuration not measured yet costs the median of those that were.
    """
    known = sorted(c.cost for c in configs if c.cost is not None and c.cost > 0)
    if not known:
        return None
    median = known[len(known) // 2]
    return {c.config_hash: c.cost if c.cost is not None and c.cost > 0 else median for c in configs}


def per_unit_cost(
    configs: Sequence[ConfigOption], draws: dict[str, dict[str, float]]
) -> dict[str, dict[str, float]]:
    """Pass probability per unit of cost, when configurations' costs are known.

    Using the configuration with the highest p / cost is what minimises the expected cost until a
    task first passes, so under a time or token budget a configuration twice as slow must be twice
    as likely to pass to be chosen. With no cost known (an attempts budget) the estimates are left as
    they are.
    """
    cost = unit_costs(configs)
    if cost is None:
        return draws
    return {key: {c: q / cost[c] for c, q in row.items()} for key, row in draws.items()}


EXAMINE_LIMIT = 24  # portfolios up to this size are examined whole; larger ones by a sample this size


def examined(request: ScheduleRequest, limit: int = EXAMINE_LIMIT) -> list[int]:
    """Indices of the configurations the examination rule probes: all of them up to `limit`; beyond, a
    sample of `limit` drawn with the run's seed (the same in every proposal of a run), in portfolio order."""
    n = len(request.configs)
    if n <= limit:
        return list(range(n))
    return sorted(random.Random(f"examine:{request.seed}:{n}").sample(range(n), limit))


def seeded_rng(request: ScheduleRequest, name: str) -> random.Random:
    # str seeds are hashed with SHA-512 by `random`: stable across processes and platforms.
    return random.Random(f"{name}:{request.seed}:{request.job_index}:{len(request.history)}")


def prepare(request: ScheduleRequest) -> tuple[Evidence, list[TaskOption], int] | None:
    if not request.configs:
        return None
    evidence = Evidence.fold(request.history)
    open_tasks = targets(request, evidence)
    room = capacity(request)
    if not open_tasks or room < 1:
        return None
    return evidence, open_tasks, room
