"""The scheduler: a pure, seeded policy that proposes a run's next job from what happened so far.

No I/O, no clock, no global randomness: the same request gives the same proposal, so the orchestrator,
the simulator (rsi.simulate) and tests drive it directly.

    from rsi.scheduler import Budget, ConfigOption, ScheduleRequest, TaskOption, make_scheduler

    scheduler = make_scheduler("thompson")           # or "round-robin", "random", "best-single"
    request = ScheduleRequest(
        configs=[ConfigOption("3f2a...", "baseline"), ...],
        tasks=[TaskOption("pyfuncs/add", "train", ("math",)), ...],
        history=[("3f2a...", "pyfuncs/add", False), ...],   # counted attempts (AttemptFact), any order
        budget=Budget(attempts=450),                       # what is LEFT (None = unlimited)
        seed=7, job_index=12, job_size=8,
    )
    proposal = scheduler.propose(request)               # JobProposal | None (None = stop)
    proposal.config_hash, proposal.task_keys, proposal.attempts_per_task, proposal.reason

Every scheduler stops (returns None) when every target task is covered (target = the request's
`split`, train by default) or the budget cannot pay for one more attempt, and never proposes a covered
task unless `include_covered=True`. A job is one configuration and a batch of at most `job_size`
tasks, each attempted `attempts_per_task` times: the chronological jobs of the Macaron report.

The default, `thompson`, models the pass probability of configuration c on task t hierarchically:

    global rate            mu0   ~ Beta over all counted attempts
    configuration rate     mu_c  = shrinks c's pass rate towards mu0 (strength `config_prior`)
    configuration x tag    th_cg ~ Beta(S_cg + k*mu_c, F_cg + k*(1-mu_c))      (k = `tag_prior`)
    configuration x task   th_ct ~ Beta(s_ct + q*m_ct, f_ct + q*(1-m_ct)),  m_ct = max_g th_cg
                                                                              (q = `task_prior`)

one Thompson draw per cell per job. Each unsolved task votes for its best drawn configuration; the
job goes to the configuration with the largest summed draw over the tasks that chose it (up to
`job_size`), and may be topped up with tasks for which that configuration is nearly as good (draw
at least `fill_ratio` of the task's best). Failures of c on t lower th_ct directly ("already failed
k times"), while successes of c on other tasks of the same tag raise it: per-tag learning transfers.
Baselines with the same interface: round-robin over configurations, uniformly random, and the
single configuration with the best observed pass rate.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol


@dataclass(frozen=True)
class ConfigOption:
    """A configuration the scheduler may pick."""

    config_hash: str
    name: str = ""


@dataclass(frozen=True)
class TaskOption:
    """A task the scheduler may target."""

    key: str
    split: str = "train"
    tags: tuple[str, ...] = ()


class AttemptFact(NamedTuple):
    """One counted attempt (verdict passed, failed or timeout; errors are left out by the caller)."""

    config_hash: str
    task_key: str
    passed: bool


@dataclass(frozen=True)
class Budget:
    """What is left to spend; None means unlimited."""

    attempts: int | None = None
    tokens: int | None = None
    wall_s: float | None = None


@dataclass(frozen=True)
class ScheduleRequest:
    configs: Sequence[ConfigOption]
    tasks: Sequence[TaskOption]
    history: Sequence[AttemptFact | tuple[str, str, bool]] = ()
    budget: Budget = field(default_factory=Budget)
    seed: int = 0
    job_index: int = 0
    job_size: int = 8
    attempts_per_task: int = 1
    split: str | None = "train"
    include_covered: bool = False
    tokens_per_attempt: float | None = None
    wall_s_per_attempt: float | None = None


@dataclass(frozen=True)
class JobProposal:
    config_hash: str
    task_keys: tuple[str, ...]
    attempts_per_task: int
    reason: str = ""

    @property
    def attempts(self) -> int:
        return len(self.task_keys) * self.attempts_per_task


class Scheduler(Protocol):
    name: str

    def propose(self, request: ScheduleRequest) -> JobProposal | None: ...


# -- shared bookkeeping ---------------------------------------------------------------------------


@dataclass
class _Evidence:
    """History folded into counts: per (config, task), and the covered set."""

    tries: dict[tuple[str, str], int]
    wins: dict[tuple[str, str], int]
    covered: set[str]

    @classmethod
    def fold(cls, history: Iterable[AttemptFact | tuple[str, str, bool]]) -> _Evidence:
        tries: dict[tuple[str, str], int] = defaultdict(int)
        wins: dict[tuple[str, str], int] = defaultdict(int)
        covered: set[str] = set()
        for config_hash, task_key, passed in history:
            tries[(config_hash, task_key)] += 1
            if passed:
                wins[(config_hash, task_key)] += 1
                covered.add(task_key)
        return cls(tries, wins, covered)


def _capacity(request: ScheduleRequest) -> int:
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


def _targets(request: ScheduleRequest, evidence: _Evidence) -> list[TaskOption]:
    in_split = [t for t in request.tasks if request.split is None or t.split == request.split]
    if all(t.key in evidence.covered for t in in_split):
        return []  # full coverage of the target split: stop, even when include_covered
    if request.include_covered:
        return in_split
    return [t for t in in_split if t.key not in evidence.covered]


def _rng(request: ScheduleRequest, name: str) -> random.Random:
    # str seeds are hashed with SHA-512 by `random`: stable across processes and platforms.
    return random.Random(f"{name}:{request.seed}:{request.job_index}:{len(request.history)}")


def _prepare(request: ScheduleRequest) -> tuple[_Evidence, list[TaskOption], int] | None:
    if not request.configs:
        return None
    evidence = _Evidence.fold(request.history)
    targets = _targets(request, evidence)
    capacity = _capacity(request)
    if not targets or capacity < 1:
        return None
    return evidence, targets, capacity


# -- Thompson sampling over a hierarchical Beta model ----------------------------------------------


@dataclass
class ThompsonScheduler:
    """Hierarchical Thompson sampling (see the module docstring)."""

    name: str = "thompson"
    prior_rate: float = 0.05  # a priori pass rate of a configuration on a task
    prior_strength: float = 2.0  # pseudo-attempts behind prior_rate at the global level
    config_prior: float = 4.0  # shrinkage of a configuration's rate towards the global rate
    tag_prior: float = 2.0  # shrinkage of a configuration x tag rate towards the configuration's
    task_prior: float = 2.0  # shrinkage of a configuration x task rate towards its tag rate
    fill_ratio: float = 0.8  # top up a job with tasks for which the chosen config is nearly best

    def propose(self, request: ScheduleRequest) -> JobProposal | None:
        prepared = _prepare(request)
        if prepared is None:
            return None
        evidence, targets, capacity = prepared
        rng = _rng(request, self.name)
        tags_of = {t.key: (t.tags or ("",)) for t in request.tasks}
        configs = [c.config_hash for c in request.configs]

        # Aggregate counts per configuration and per (configuration, tag) over all known tasks.
        n_c: dict[str, int] = defaultdict(int)
        s_c: dict[str, int] = defaultdict(int)
        n_cg: dict[tuple[str, str], int] = defaultdict(int)
        s_cg: dict[tuple[str, str], int] = defaultdict(int)
        for (c, t), n in evidence.tries.items():
            s = evidence.wins.get((c, t), 0)
            n_c[c] += n
            s_c[c] += s
            for g in tags_of.get(t, ("",)):
                n_cg[(c, g)] += n
                s_cg[(c, g)] += s
        n_all = sum(n_c.values())
        s_all = sum(s_c.values())
        mu0 = (s_all + self.prior_strength * self.prior_rate) / (n_all + self.prior_strength)

        # One Thompson draw per (configuration, tag) and per (configuration, target task).
        target_tags = sorted({g for t in targets for g in tags_of[t.key]})
        theta_cg: dict[tuple[str, str], float] = {}
        for c in configs:
            mu_c = (s_c[c] + self.config_prior * mu0) / (n_c[c] + self.config_prior)
            for g in target_tags:
                s, n = s_cg[(c, g)], n_cg[(c, g)]
                theta_cg[(c, g)] = rng.betavariate(s + self.tag_prior * mu_c, n - s + self.tag_prior * (1 - mu_c))
        draws: dict[str, dict[str, float]] = {}
        for t in targets:
            row = {}
            for c in configs:
                m = max(theta_cg[(c, g)] for g in tags_of[t.key])
                m = min(max(m, 1e-6), 1 - 1e-6)
                s, n = evidence.wins.get((c, t.key), 0), evidence.tries.get((c, t.key), 0)
                row[c] = rng.betavariate(s + self.task_prior * m, n - s + self.task_prior * (1 - m))
            draws[t.key] = row

        # Each task votes for its best drawn configuration; the config with the most mass wins.
        best = {key: max(row, key=row.__getitem__) for key, row in draws.items()}
        mass: dict[str, list[float]] = defaultdict(list)
        for key, c in best.items():
            mass[c].append(draws[key][c])
        score = {c: sum(sorted(v, reverse=True)[:capacity]) for c, v in mass.items()}
        chosen = max(score, key=lambda c: (score[c], -configs.index(c)))
        mine = sorted((k for k, c in best.items() if c == chosen), key=lambda k: -draws[k][chosen])[:capacity]
        if len(mine) < capacity:
            near = [
                k
                for k in draws
                if best[k] != chosen and draws[k][chosen] >= self.fill_ratio * draws[k][best[k]]
            ]
            near.sort(key=lambda k: -draws[k][chosen] / draws[k][best[k]])
            mine += near[: capacity - len(mine)]
        order = {t.key: i for i, t in enumerate(request.tasks)}
        mine.sort(key=order.__getitem__)
        return JobProposal(
            chosen,
            tuple(mine),
            request.attempts_per_task,
            f"thompson: {len(mine)} of {len(targets)} open tasks drew this configuration as their best",
        )


# -- baselines ------------------------------------------------------------------------------------


def _least_tried(targets: list[TaskOption], evidence: _Evidence, config: str, capacity: int) -> list[str]:
    """Tasks this configuration tried least (stable in the task order): a fair rotation."""
    ranked = sorted(enumerate(targets), key=lambda it: (evidence.tries.get((config, it[1].key), 0), it[0]))
    return sorted((t.key for _, t in ranked[:capacity]), key=[t.key for t in targets].index)


@dataclass
class RoundRobinScheduler:
    """Configurations in turn (job i uses configuration i mod N) on the tasks each tried least."""

    name: str = "round-robin"

    def propose(self, request: ScheduleRequest) -> JobProposal | None:
        prepared = _prepare(request)
        if prepared is None:
            return None
        evidence, targets, capacity = prepared
        config = request.configs[request.job_index % len(request.configs)].config_hash
        tasks = _least_tried(targets, evidence, config, capacity)
        return JobProposal(config, tuple(tasks), request.attempts_per_task, "round-robin")


@dataclass
class RandomScheduler:
    """A uniformly random configuration on a uniformly random batch of open tasks."""

    name: str = "random"

    def propose(self, request: ScheduleRequest) -> JobProposal | None:
        prepared = _prepare(request)
        if prepared is None:
            return None
        _, targets, capacity = prepared
        rng = _rng(request, self.name)
        config = rng.choice(list(request.configs)).config_hash
        picked = rng.sample(range(len(targets)), min(capacity, len(targets)))
        return JobProposal(config, tuple(targets[i].key for i in sorted(picked)), request.attempts_per_task, "random")


@dataclass
class BestSingleScheduler:
    """One job per configuration to probe, then always the best observed pass rate (Laplace)."""

    name: str = "best-single"

    def propose(self, request: ScheduleRequest) -> JobProposal | None:
        prepared = _prepare(request)
        if prepared is None:
            return None
        evidence, targets, capacity = prepared
        configs = [c.config_hash for c in request.configs]
        if request.job_index < len(configs):
            config = configs[request.job_index]
        else:
            n: dict[str, int] = defaultdict(int)
            s: dict[str, int] = defaultdict(int)
            for (c, _), k in evidence.tries.items():
                n[c] += k
            for (c, _), k in evidence.wins.items():
                s[c] += k
            config = max(configs, key=lambda c: ((s[c] + 1) / (n[c] + 2), -configs.index(c)))
        tasks = _least_tried(targets, evidence, config, capacity)
        return JobProposal(config, tuple(tasks), request.attempts_per_task, "best-single")


SCHEDULERS: dict[str, type] = {
    "thompson": ThompsonScheduler,
    "round-robin": RoundRobinScheduler,
    "random": RandomScheduler,
    "best-single": BestSingleScheduler,
}


def make_scheduler(name: str = "thompson") -> Scheduler:
    """A scheduler by name (see SCHEDULERS). Unknown names raise ValueError listing the known ones."""
    try:
        return SCHEDULERS[name]()  # type: ignore[no-any-return]
    except KeyError:
        raise ValueError(f"unknown scheduler {name!r}; known: {', '.join(SCHEDULERS)}") from None
