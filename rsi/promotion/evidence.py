"""Evidence: what a run (or several runs of one suite) says about each configuration. Pure.

Input is a flat list of `ScoredAttempt`s (one per finished attempt, read from the coverage store by
`rsi.promotion.promote`); output is an `Evidence` value with, per configuration:

- the attempt pass rate with a 95% Wilson score interval (attempts ending in `error` are
  infrastructure failures and are left out, as everywhere in rsi),
- the tasks it solved (at least one passing attempt) and its task solve rate, also with a Wilson interval,
- its marginal coverage: the tasks it solved that no other configuration in the evidence solved,
- its per-tag strengths: for each task tag, tasks attempted, tasks solved and the solve rate.

Wilson rather than the normal approximation because runs are small (tens of attempts per
configuration) and pass rates sit near 0 or 1, where the normal interval collapses or leaves [0, 1].
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from rsi.verdict import Verdict

Z_95 = 1.959963984540054  # two-sided 95% standard normal quantile
ALL_TAGS = "*"  # pseudo-tag under which every task counts (the "overall" strength)


@dataclass(frozen=True)
class ScoredAttempt:
    """One finished attempt, as the promotion and selection cores see it (no I/O handles)."""

    attempt_id: str
    run_id: str
    config_hash: str
    config_name: str
    task_key: str
    task_hash: str
    split: str
    verdict: Verdict
    tags: tuple[str, ...] = ()
    tokens: int = 0
    wall_s: float = 0.0
    trajectory_path: str = ""

    @property
    def passed(self) -> bool:
        return self.verdict is Verdict.PASSED


@dataclass(frozen=True)
class Interval:
    """A two-sided confidence interval; `low <= high`."""

    low: float
    high: float

    def excludes_zero(self) -> bool:
        return self.low > 0.0 or self.high < 0.0

    def as_text(self) -> str:
        return f"[{self.low:.3f}, {self.high:.3f}]"


@dataclass(frozen=True)
class TagStrength:
    """How one configuration did on the tasks carrying one tag."""

    tag: str
    tasks: int
    solved: int

    @property
    def rate(self) -> float:
        return self.solved / self.tasks if self.tasks else 0.0

    @property
    def ci(self) -> Interval:
        return wilson_interval(self.solved, self.tasks)


@dataclass(frozen=True)
class ConfigEvidence:
    """Everything the evidence says about one configuration."""

    config_hash: str
    config_name: str
    attempts: int
    passes: int
    errors: int
    tokens: int
    tasks_attempted: tuple[str, ...]
    tasks_solved: tuple[str, ...]
    marginal: tuple[str, ...]
    tags: tuple[TagStrength, ...] = ()

    @property
    def pass_rate(self) -> float:
        return self.passes / self.attempts if self.attempts else 0.0

    @property
    def pass_ci(self) -> Interval:
        return wilson_interval(self.passes, self.attempts)

    @property
    def solve_rate(self) -> float:
        return len(self.tasks_solved) / len(self.tasks_attempted) if self.tasks_attempted else 0.0

    @property
    def solve_ci(self) -> Interval:
        return wilson_interval(len(self.tasks_solved), len(self.tasks_attempted))

    @property
    def tokens_per_attempt(self) -> float:
        return self.tokens / self.attempts if self.attempts else 0.0

    def tag(self, name: str) -> TagStrength | None:
        return next((t for t in self.tags if t.tag == name), None)

    def summary(self) -> dict[str, object]:
        """A JSON-ready digest (used in evidence files, trailers and `--json` output)."""
        return {
            "config_hash": self.config_hash,
            "config_name": self.config_name,
            "attempts": self.attempts,
            "passes": self.passes,
            "errors": self.errors,
            "pass_rate": round(self.pass_rate, 4),
            "pass_ci95": [round(self.pass_ci.low, 4), round(self.pass_ci.high, 4)],
            "tasks_attempted": len(self.tasks_attempted),
            "tasks_solved": len(self.tasks_solved),
            "marginal": list(self.marginal),
            "tokens": self.tokens,
            "tags": {t.tag: [t.solved, t.tasks] for t in self.tags},
        }


@dataclass(frozen=True)
class Evidence:
    """Per-configuration evidence over one split of one or more runs."""

    run_ids: tuple[str, ...]
    split: str
    configs: tuple[ConfigEvidence, ...]
    tasks: tuple[str, ...]
    task_tags: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def covered(self) -> tuple[str, ...]:
        """Tasks solved by at least one configuration."""
        return tuple(sorted({t for c in self.configs for t in c.tasks_solved}))

    def get(self, config_hash: str) -> ConfigEvidence | None:
        return next((c for c in self.configs if c.config_hash == config_hash), None)

    def tag_names(self) -> tuple[str, ...]:
        return tuple(sorted({t.tag for c in self.configs for t in c.tags}))

    def summary(self) -> dict[str, object]:
        return {
            "run_ids": list(self.run_ids),
            "split": self.split,
            "tasks": len(self.tasks),
            "covered": len(self.covered),
            "configs": [c.summary() for c in self.configs],
        }


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> Interval:
    """Wilson score interval for a binomial proportion; (0, 1) when there are no trials."""
    if trials <= 0:
        return Interval(0.0, 1.0)
    if not 0 <= successes <= trials:
        raise ValueError(f"successes ({successes}) must lie in [0, trials={trials}]")
    p = successes / trials
    z2 = z * z
    denominator = 1.0 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denominator
    # Clamp float noise: at p=0 the lower bound is exactly 0, at p=1 the upper bound exactly 1.
    return Interval(max(0.0, centre - half) if successes else 0.0, min(1.0, centre + half) if successes < trials else 1.0)


def select_split(records: Iterable[ScoredAttempt], split: str) -> list[ScoredAttempt]:
    """Records of one split ('train', 'heldout'), or all of them for 'all'."""
    return [r for r in records if split == "all" or r.split == split]


def task_outcomes(records: Iterable[ScoredAttempt], config_hash: str) -> dict[str, bool]:
    """Per task attempted by `config_hash` (errors left out): did any attempt pass?"""
    outcome: dict[str, bool] = {}
    for record in records:
        if record.config_hash != config_hash or not record.verdict.counts_as_attempt:
            continue
        outcome[record.task_key] = outcome.get(record.task_key, False) or record.passed
    return outcome


def collect_evidence(records: Iterable[ScoredAttempt], split: str = "all") -> Evidence:
    """Turn attempt records into per-configuration evidence over `split`."""
    chosen = select_split(records, split)
    names: dict[str, str] = {}
    attempts: dict[str, int] = defaultdict(int)
    passes: dict[str, int] = defaultdict(int)
    errors: dict[str, int] = defaultdict(int)
    tokens: dict[str, int] = defaultdict(int)
    attempted: dict[str, set[str]] = defaultdict(set)
    solved: dict[str, set[str]] = defaultdict(set)
    task_tags: dict[str, tuple[str, ...]] = {}
    for record in chosen:
        names.setdefault(record.config_hash, record.config_name)
        task_tags.setdefault(record.task_key, tuple(sorted(set(record.tags))))
        tokens[record.config_hash] += record.tokens
        if not record.verdict.counts_as_attempt:
            errors[record.config_hash] += 1
            continue
        attempts[record.config_hash] += 1
        attempted[record.config_hash].add(record.task_key)
        if record.passed:
            passes[record.config_hash] += 1
            solved[record.config_hash].add(record.task_key)
    solvers: dict[str, set[str]] = defaultdict(set)
    for config_hash, tasks in solved.items():
        for task in tasks:
            solvers[task].add(config_hash)
    configs = []
    for config_hash in sorted(names, key=lambda h: (names[h], h)):
        tags = _tag_strengths(attempted[config_hash], solved[config_hash], task_tags)
        configs.append(
            ConfigEvidence(
                config_hash=config_hash,
                config_name=names[config_hash],
                attempts=attempts[config_hash],
                passes=passes[config_hash],
                errors=errors[config_hash],
                tokens=tokens[config_hash],
                tasks_attempted=tuple(sorted(attempted[config_hash])),
                tasks_solved=tuple(sorted(solved[config_hash])),
                marginal=tuple(sorted(t for t in solved[config_hash] if solvers[t] == {config_hash})),
                tags=tags,
            )
        )
    return Evidence(
        run_ids=tuple(sorted({r.run_id for r in chosen})),
        split=split,
        configs=tuple(configs),
        tasks=tuple(sorted(task_tags)),
        task_tags=task_tags,
    )


def _tag_strengths(
    attempted: set[str], solved: set[str], task_tags: Mapping[str, tuple[str, ...]]
) -> tuple[TagStrength, ...]:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for task in attempted:
        for tag in (ALL_TAGS, *task_tags.get(task, ())):
            counts[tag][0] += 1
            counts[tag][1] += task in solved
    return tuple(TagStrength(tag, n, s) for tag, (n, s) in sorted(counts.items()))
