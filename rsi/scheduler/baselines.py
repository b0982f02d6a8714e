"""Baseline schedulers, to compare the default with. Each respects `max_tries_per_task`: a pair
(configuration, task) that used up its tries is never proposed again, so under deterministic outcomes
(`max_tries_per_task = 1`) no baseline re-runs an attempt that already failed.

- `round-robin` (task-major): job i goes to configuration i mod N (skipping those with nothing left
  to try), on the open tasks it tried least.
- `config-major`: one configuration at a time sweeps every open task it may still try, then the next
  one; after the last, the sweep starts again (sampled configurations may retry).
- `random`: a uniformly random configuration that may still try something, on a random batch of the
  open tasks it may try.
- `best-single`: one probing job per configuration, then always the best observed pass rate.

`ConfigMajorScheduler(order=...)` with the configurations sorted by their true pass rate is the
simulator's hindsight best-rate-first bound (`rsi.simulate.hindsight_best_rate_first`): it uses
knowledge no scheduler has, so it is not registered as a run scheduler.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from rsi.scheduler.common import Evidence, open_for, prepare, seeded_rng
from rsi.scheduler.types import ConfigOption, JobProposal, ScheduleRequest, TaskOption


class _Baseline:
    """What every baseline does first: fold the history, and stop when nothing is open or the budget
    cannot pay an attempt; `_pick` then chooses among what is left."""

    name: str

    def propose(self, request: ScheduleRequest) -> JobProposal | None:
        prepared = prepare(request)
        if prepared is None:
            return None
        evidence, targets, capacity = prepared
        return self._pick(request, evidence, targets, capacity)

    def _pick(
        self, request: ScheduleRequest, evidence: Evidence, targets: list[TaskOption], capacity: int
    ) -> JobProposal | None:
        raise NotImplementedError


def _usable(request: ScheduleRequest, targets: list[TaskOption], evidence: Evidence) -> list[tuple[ConfigOption, list[TaskOption]]]:
    """Each configuration that may still try an open task, with those tasks (portfolio order)."""
    return [(c, mine) for c in request.configs if (mine := open_for(c, targets, evidence))]


def _least_tried(tasks: list[TaskOption], evidence: Evidence, config: str, capacity: int) -> list[str]:
    """Tasks this configuration tried least (stable in the task order): a fair rotation."""
    ranked = sorted(enumerate(tasks), key=lambda it: (evidence.tries.get((config, it[1].key), 0), it[0]))
    return sorted((t.key for _, t in ranked[:capacity]), key=[t.key for t in tasks].index)


@dataclass
class RoundRobinScheduler(_Baseline):
    """Configurations in turn (job i uses configuration i mod N) on the tasks each tried least."""

    name: str = "round-robin"

    def _pick(
        self, request: ScheduleRequest, evidence: Evidence, targets: list[TaskOption], capacity: int
    ) -> JobProposal | None:
        n = len(request.configs)
        for step in range(n):  # the configuration whose turn it is, or the next that may still try a task
            config = request.configs[(request.job_index + step) % n]
            mine = open_for(config, targets, evidence)
            if mine:
                tasks = _least_tried(mine, evidence, config.config_hash, capacity)
                return JobProposal(config.config_hash, tuple(tasks), request.attempts_per_task, "round-robin")
        return None


@dataclass
class ConfigMajorScheduler(_Baseline):
    """One configuration sweeps the open tasks, then the next (in `order`, else the portfolio's).

    Stateless: the sweep in progress is read from the history. Round r is the least number of tries any
    configuration has on a task it may still try; the first configuration (in order) holding such a
    task at r tries gets the job, on those tasks.
    """

    name: str = "config-major"
    order: Sequence[str] | None = None

    def _pick(
        self, request: ScheduleRequest, evidence: Evidence, targets: list[TaskOption], capacity: int
    ) -> JobProposal | None:
        by_hash = {c.config_hash: c for c in request.configs}
        ranked: list[ConfigOption] = (
            [by_hash[h] for h in self.order if h in by_hash] if self.order is not None else list(request.configs)
        )
        pending = {c.config_hash: open_for(c, targets, evidence) for c in ranked}
        counts = [evidence.tries.get((c.config_hash, t.key), 0) for c in ranked for t in pending[c.config_hash]]
        if not counts:
            return None
        sweep = min(counts)
        for config in ranked:
            mine = pending[config.config_hash]
            tries = {t.key: evidence.tries.get((config.config_hash, t.key), 0) for t in mine}
            if any(k == sweep for k in tries.values()):
                # The sweep's tasks first; room left goes to this configuration's next sweep.
                keys = [t.key for t in sorted(mine, key=lambda t: tries[t.key] > sweep)][:capacity]
                order = {t.key: i for i, t in enumerate(targets)}
                keys.sort(key=order.__getitem__)
                return JobProposal(config.config_hash, tuple(keys), request.attempts_per_task, f"{self.name}: sweep {sweep + 1}")
        return None


@dataclass
class RandomScheduler(_Baseline):
    """A uniformly random configuration (that may still try a task) on a random batch of open tasks."""

    name: str = "random"

    def _pick(
        self, request: ScheduleRequest, evidence: Evidence, targets: list[TaskOption], capacity: int
    ) -> JobProposal | None:
        rng = seeded_rng(request, self.name)
        choices = _usable(request, targets, evidence)
        if not choices:
            return None
        config, mine = rng.choice(choices)
        picked = sorted(rng.sample(range(len(mine)), min(capacity, len(mine))))
        return JobProposal(config.config_hash, tuple(mine[i].key for i in picked), request.attempts_per_task, "random")


@dataclass
class BestSingleScheduler(_Baseline):
    """One job per configuration to probe, then always the best observed pass rate (Laplace) among the
    configurations that may still try an open task."""

    name: str = "best-single"

    def _pick(
        self, request: ScheduleRequest, evidence: Evidence, targets: list[TaskOption], capacity: int
    ) -> JobProposal | None:
        n: dict[str, int] = defaultdict(int)
        s: dict[str, int] = defaultdict(int)
        for (c, _), k in evidence.tries.items():
            n[c] += k
        for (c, _), k in evidence.wins.items():
            s[c] += k
        usable = _usable(request, targets, evidence)
        if not usable:
            return None
        unprobed = [(c, mine) for c, mine in usable if not n[c.config_hash]]
        if unprobed and request.job_index < len(request.configs):
            config, mine = unprobed[0]
        else:
            config, mine = max(usable, key=lambda it: (s[it[0].config_hash] + 1) / (n[it[0].config_hash] + 2))
        tasks = _least_tried(mine, evidence, config.config_hash, capacity)
        return JobProposal(config.config_hash, tuple(tasks), request.attempts_per_task, "best-single")
