"""Simulated portfolios: pass-probability matrices with latent structure, and a scheduler simulator.

A `PassMatrix` says how likely each configuration passes each task. `generate_matrix` builds one
the way portfolios behave in the Macaron report: every configuration alone passes few tasks (3-10%
by default) while the union covers everything. The structure is latent skill per tag: each
configuration is a specialist in one or two tags (strong on tasks carrying them, near zero
elsewhere), plus a general ability, a task difficulty and per-cell noise, so a scheduler that learns
per-tag success does better than one that does not. `simulate` runs any `rsi.scheduler` scheduler
against a matrix with seeded Bernoulli outcomes (common random numbers: the k-th attempt of
configuration c on task t has the same outcome whichever scheduler asks for it) and returns the
attempts spent to reach full coverage and the coverage curve. `PassMatrix.oracle_attempts` is the
lower bound: each task attempted only with its best configuration, sum over tasks of 1 / p_best.

`generate_ranked` builds worlds like real per-task results of many systems on a public benchmark:
one ability ranking of the configurations plus task difficulty (a Rasch-like model, P(pass) =
sigmoid(ability_c - difficulty_t + tag effect + noise)), a share of tasks no configuration passes,
tags that are informative, weak or absent, optionally a share of specialists mixed into the
ranking, and optionally deterministic outcomes (p is 0 or 1, every configuration greedy:
`max_tries_per_task = 1`). Coverage then counts the reachable tasks (`PassMatrix.reachable`).
`generate_stochastic` builds the stochastic regime issue 40 names: Bernoulli outcomes on every attempt,
configurations whose overall rates are drawn from a long-tailed distribution (single configurations pass
1-21% of the tasks per attempt, most of them near the bottom), and an oracle that needs about 2 attempts
per task: each task belongs to a latent family whose home configuration passes it at a Beta(4, 3) rate
(mean 0.57, E[1 / p] = 2), and every configuration is also able at a random share of other tasks that
brings its overall rate to its draw. No ranking of tasks and no tag structure is required: the families
are shown as tags (`show_tags`) or not at all. Seeds: variants are tuned on `TUNING_SEEDS` and reported
on `HELD_OUT_SEEDS` (for every regime of the simulator, this one included).

`hindsight_best_rate_first` is the bound that knows each configuration's true pass rate;
`hindsight_after_probes` the same after the default's probes (one job per configuration first), which
prices the examination of every configuration on its own.

Pure and seeded: no I/O.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace

from rsi.scheduler import (
    AttemptFact,
    Budget,
    ConfigMajorScheduler,
    ConfigOption,
    JobProposal,
    Scheduler,
    ScheduleRequest,
    TaskOption,
)
from rsi.scheduler.common import EXAMINE_LIMIT, examined, prepare, tries_left

TUNING_SEEDS = range(0, 10)  # scheduler variants are chosen on these seeds, in every regime
HELD_OUT_SEEDS = range(100, 110)  # and reported on these (more from 110 on for paired checks)


@dataclass(frozen=True)
class MatrixSpec:
    """How to generate a pass-probability matrix. Defaults: the report's scale (122 x 12)."""

    n_tasks: int = 122
    n_configs: int = 12
    n_tags: int = 12
    second_tag_rate: float = 0.3  # share of tasks carrying a second tag
    specialties: tuple[int, int] = (1, 2)  # tags each configuration is a specialist in (min, max)
    family_size: int = 1  # >1: configurations come in families sharing specialties (correlated)
    specialist_logit: float = 6.0  # skill added on a specialty tag
    general_sd: float = 0.5  # spread of general ability across configurations
    difficulty_sd: float = 0.8  # spread of task difficulty (shared by every configuration)
    cell_sd: float = 0.6  # per (configuration, task) noise
    config_rate: tuple[float, float] = (0.03, 0.10)  # each configuration's mean pass rate (before the min_best_p lift)
    min_best_p: float = 0.3  # every task has a configuration at least this good (the union covers all)
    tag_noise: float = 0.0  # share of tasks whose visible tags are replaced by a random one
    structured: bool = True  # False: no tag structure at all (tags carry no information)


@dataclass(frozen=True)
class PassMatrix:
    configs: tuple[ConfigOption, ...]
    tasks: tuple[TaskOption, ...]
    p: tuple[tuple[float, ...], ...]  # p[c][t]
    # What one attempt of each configuration costs (seconds, say); None: every attempt costs 1.
    cost: tuple[float, ...] | None = None

    def unit_cost(self, c: int) -> float:
        return 1.0 if self.cost is None else self.cost[c]

    def oracle_cost(self, fraction: float = 1.0) -> float:
        """Expected cost when every task is attempted only with its cheapest configuration per pass
        (min over c of cost_c / p_ct), to cover `fraction` of the reachable tasks (the cheapest first)."""
        per_task = sorted(min(self.unit_cost(c) / row[t] for c, row in enumerate(self.p) if row[t] > 0)
                          for t in range(len(self.tasks)) if self.best_p(t) > 0)
        return sum(per_task[: coverage_goal(len(per_task), fraction)])

    def best_p(self, t: int) -> float:
        return max(row[t] for row in self.p)

    def reachable(self) -> int:
        """Tasks some configuration can pass: what full coverage means."""
        return sum(1 for t in range(len(self.tasks)) if self.best_p(t) > 0)

    def oracle_attempts(self, fraction: float = 1.0) -> float:
        """Expected attempts when every task is attempted only with its best configuration, to cover
        `fraction` of the reachable tasks (the cheapest ones first)."""
        costs = sorted(1.0 / self.best_p(t) for t in range(len(self.tasks)) if self.best_p(t) > 0)
        return sum(costs[: coverage_goal(len(costs), fraction)])

    def config_rates(self) -> list[float]:
        """Each configuration's mean pass probability over the tasks."""
        return [sum(row) / len(row) for row in self.p]

    def tag_rates(self) -> dict[str, list[float]]:
        """Per visible tag, each configuration's mean pass probability over the tasks showing it."""
        out: dict[str, list[float]] = {}
        for g in sorted({g for task in self.tasks for g in task.tags}):
            shown = [t for t, task in enumerate(self.tasks) if g in task.tags]
            out[g] = [sum(row[t] for t in shown) / len(shown) for row in self.p]
        return out

    def able_cells(self, threshold: float = 0.1) -> set[tuple[str, str]]:
        """The (configuration hash, tag) cells whose mean pass probability on the tag exceeds `threshold`."""
        return {
            (self.configs[c].config_hash, g)
            for g, rates in self.tag_rates().items()
            for c, rate in enumerate(rates)
            if rate > threshold
        }

    def tag_search_attempts(self, threshold: float = 0.1, reps: int = 2000, seed: int = 0) -> float:
        """Expected failed attempts a scheduler spends finding an able configuration for every tag,
        when it learns each tag on its own and nothing tells the configurations apart beforehand.

        Per tag, the best such search sweeps the configurations in a random order, one attempt each,
        round after round, until an able one (mean rate above `threshold`) passes; every attempt by an
        unable configuration is lost. Monte Carlo over `reps` searches per tag, seeded. Not a bound for
        schedulers that use structure across tags (a configuration's other strengths), nor for
        attempts on two-tag tasks, which probe two tags at once.
        """
        rng = random.Random(f"search:{seed}")
        total = 0.0
        for rates in self.tag_rates().values():
            able = [c for c, rate in enumerate(rates) if rate > threshold]
            if not able:
                continue
            lost = 0
            for _ in range(reps):
                order = list(range(len(rates)))
                rng.shuffle(order)
                found = False
                while not found:
                    for c in order:
                        if c not in able:
                            lost += 1
                        elif rng.random() < rates[c]:
                            found = True
                            break
            total += lost / reps
        return total


def coverage_goal(reachable: int, fraction: float) -> int:
    """Covered tasks that `fraction` of `reachable` asks for (rounded up)."""
    return min(reachable, math.ceil(fraction * reachable - 1e-9))


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x > -50 else 0.0


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def generate_matrix(spec: MatrixSpec = MatrixSpec(), seed: int = 0) -> PassMatrix:
    """A matrix following `spec` (see the module docstring), deterministic in `seed`."""
    rng = random.Random(f"matrix:{seed}")
    tags = [f"tag{g}" for g in range(spec.n_tags)]
    task_tags: list[tuple[int, ...]] = []
    for _ in range(spec.n_tasks):
        first = rng.randrange(spec.n_tags)
        chosen = [first]
        if spec.n_tags > 1 and rng.random() < spec.second_tag_rate:
            chosen.append(rng.choice([g for g in range(spec.n_tags) if g != first]))
        task_tags.append(tuple(chosen))
    difficulty = [rng.gauss(0, spec.difficulty_sd) for _ in range(spec.n_tasks)]

    # Specialties: every tag gets a specialist family first, then random extras.
    n_families = math.ceil(spec.n_configs / max(1, spec.family_size))
    order = list(range(spec.n_tags))
    rng.shuffle(order)
    family_tags: list[set[int]] = [set() for _ in range(n_families)]
    for i, g in enumerate(order):
        family_tags[i % n_families].add(g)
    for fam in family_tags:
        want = rng.randint(*spec.specialties)
        while len(fam) < min(want, spec.n_tags):
            fam.add(rng.randrange(spec.n_tags))
    config_tags = [family_tags[c // max(1, spec.family_size)] for c in range(spec.n_configs)]
    general = [rng.gauss(0, spec.general_sd) for _ in range(spec.n_configs)]

    logits: list[list[float]] = []
    for c in range(spec.n_configs):
        row = []
        for t in range(spec.n_tasks):
            if spec.structured:
                skill = spec.specialist_logit if config_tags[c] & set(task_tags[t]) else 0.0
            else:
                skill = spec.specialist_logit if rng.random() < 0.2 else 0.0
            row.append(skill + general[c] - difficulty[t] + rng.gauss(0, spec.cell_sd))
        logits.append(row)

    # Calibrate: shift each configuration so its mean rate lies in config_rate.
    lo, hi = spec.config_rate
    target = (lo + hi) / 2
    shifts = [_solve_shift(row, target) for row in logits]
    # Keep the configurations' spread: general ability moves each around the target, clamped to range.
    p = []
    for c, row in enumerate(logits):
        base = shifts[c] + general[c] * 0.5
        prow = [_sigmoid(x + base) for x in row]
        rate = sum(prow) / len(prow)
        if rate < lo or rate > hi:
            base = _solve_shift(row, min(max(rate, lo), hi))
            prow = [_sigmoid(x + base) for x in row]
        p.append(prow)
    # The union covers everything: lift each task's best cell to min_best_p.
    for t in range(spec.n_tasks):
        best = max(range(spec.n_configs), key=lambda c: p[c][t])
        if p[best][t] < spec.min_best_p:
            p[best][t] = spec.min_best_p

    visible = []
    for t in range(spec.n_tasks):
        shown = task_tags[t]
        if spec.tag_noise and rng.random() < spec.tag_noise:
            shown = (rng.randrange(spec.n_tags),)
        visible.append(TaskOption(f"sim/t{t:03d}", "train", tuple(tags[g] for g in shown)))
    configs = tuple(ConfigOption(f"c{c:02d}", f"config-{c}") for c in range(spec.n_configs))
    return PassMatrix(configs, tuple(visible), tuple(tuple(row) for row in p))


def _solve_shift(row: list[float], target: float) -> float:
    """The logit shift giving `row` a mean pass probability of `target` (bisection)."""
    lo, hi = -30.0, 30.0
    for _ in range(60):
        mid = (lo + hi) / 2
        rate = sum(_sigmoid(x + mid) for x in row) / len(row)
        lo, hi = (mid, hi) if rate < target else (lo, mid)
    return (lo + hi) / 2


@dataclass(frozen=True)
class RankedSpec:
    """A world like real per-task results of many systems (see the module docstring)."""

    n_tasks: int = 300
    n_configs: int = 24
    n_tags: int = 12
    tag_skew: float = 1.0  # tag sizes fall as 1 / rank ** skew: a few large groups, many small
    ability_sd: float = 1.5  # spread of configuration ability (logit)
    difficulty_sd: float = 2.0  # spread of task difficulty (logit)
    tag_sd: float = 0.3  # per (configuration, tag) effect: 0 absent, 0.3 weak, 1.5 informative
    show_tags: bool = True  # False: tasks carry no tags at all
    cell_sd: float = 1.0  # per (configuration, task) noise
    mean_rate: float = 0.3  # mean pass rate of a configuration over the tasks
    unreachable: float = 0.13  # share of tasks no configuration passes
    broken_share: float = 0.3  # of those, the share picked at random (broken tasks); the rest are the hardest
    specialists: float = 0.0  # share of configurations that are specialists (weak overall, strong on 1-2 tags)
    specialist_logit: float = 5.0
    deterministic: bool = True  # p is 0 or 1 and configurations are greedy (max_tries_per_task = 1)
    min_best_p: float = 0.2  # sampled outcomes: every reachable task has a configuration this good


def generate_ranked(spec: RankedSpec = RankedSpec(), seed: int = 0) -> PassMatrix:
    """A ranked world following `spec`, deterministic in `seed`."""
    rng = random.Random(f"ranked:{seed}")
    weights = [1.0 / (g + 1) ** spec.tag_skew for g in range(spec.n_tags)]
    task_tag = [rng.choices(range(spec.n_tags), weights)[0] for _ in range(spec.n_tasks)]
    difficulty = [rng.gauss(0, spec.difficulty_sd) for _ in range(spec.n_tasks)]
    ability = [rng.gauss(0, spec.ability_sd) for _ in range(spec.n_configs)]
    effect = [[rng.gauss(0, spec.tag_sd) for _ in range(spec.n_tags)] for _ in range(spec.n_configs)]
    n_special = round(spec.specialists * spec.n_configs)
    for c in rng.sample(range(spec.n_configs), n_special):
        ability[c] -= 2 * spec.ability_sd
        for g in rng.sample(range(spec.n_tags), min(spec.n_tags, rng.randint(1, 2))):
            effect[c][g] += spec.specialist_logit
    logits = [[ability[c] + effect[c][task_tag[t]] - difficulty[t] + rng.gauss(0, spec.cell_sd)
               for t in range(spec.n_tasks)] for c in range(spec.n_configs)]

    def rate(shift: float) -> float:
        if spec.deterministic:
            return sum(x + shift > 0 for row in logits for x in row) / (spec.n_tasks * spec.n_configs)
        return sum(_sigmoid(x + shift) for row in logits for x in row) / (spec.n_tasks * spec.n_configs)

    lo, hi = -30.0, 30.0
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if rate(mid) < spec.mean_rate else (lo, mid)
    shift = (lo + hi) / 2
    p = [[(1.0 if x + shift > 0 else 0.0) if spec.deterministic else _sigmoid(x + shift) for x in row] for row in logits]
    n_out = round(spec.unreachable * spec.n_tasks)
    n_broken = round(spec.broken_share * n_out)
    broken = set(rng.sample(range(spec.n_tasks), n_broken))
    by_top = sorted((t for t in range(spec.n_tasks) if t not in broken), key=lambda t: max(row[t] for row in logits))
    out = broken | set(by_top[: n_out - n_broken])
    floor = 1.0 if spec.deterministic else spec.min_best_p
    for t in range(spec.n_tasks):
        if t in out:
            for row in p:
                row[t] = 0.0
            continue
        best = max(range(spec.n_configs), key=lambda c: logits[c][t])
        p[best][t] = max(p[best][t], floor)
    tags = [f"tag{g}" for g in range(spec.n_tags)]
    tasks = tuple(TaskOption(f"sim/t{t:03d}", "train", (tags[task_tag[t]],) if spec.show_tags else ())
                  for t in range(spec.n_tasks))
    limit = 1 if spec.deterministic else None
    configs = tuple(ConfigOption(f"c{c:03d}", f"config-{c}", max_tries_per_task=limit) for c in range(spec.n_configs))
    return PassMatrix(configs, tasks, tuple(tuple(row) for row in p))


@dataclass(frozen=True)
class StochasticSpec:
    """The stochastic regime (see the module docstring): Bernoulli outcomes, long-tailed configuration rates."""

    n_tasks: int = 122
    n_configs: int = 12
    n_families: int = 8  # latent task families, each with a home configuration able at all its tasks
    rate_range: tuple[float, float] = (0.01, 0.21)  # each configuration's mean pass rate per attempt
    concentration: float = 0.5  # gamma shape of the rate draws (< 1: a few strong configurations, a long weak tail)
    able: tuple[float, float] = (4.0, 3.0)  # Beta of an able cell's pass probability (mean 0.57, E[1/p] = 2)
    background: tuple[float, float] = (0.1, 30.0)  # Beta of every other cell (mean 0.3%, long-tailed)
    show_tags: bool = True  # tasks show their family as a tag; False: tasks carry no tags at all


def generate_stochastic(spec: StochasticSpec = StochasticSpec(), seed: int = 0) -> PassMatrix:
    """A stochastic world following `spec`, deterministic in `seed`.

    1. Each configuration's rate: a gamma(`concentration`) draw, scaled so the strongest is the top of
       `rate_range`, floored at its bottom (long-tailed: most configurations weak, a few strong).
    2. Each family's home configuration: drawn in proportion to the rates, among the configurations
       whose home tasks would not lift their rate above the top of `rate_range`.
    3. Each configuration is able at its home tasks and, independently per task, at the share of the
       others that brings its expected rate to its draw; able cells pass at a Beta(`able`) rate, the
       others at a Beta(`background`) one.
    """
    rng = random.Random(f"stochastic:{seed}")
    lo, hi = spec.rate_range
    draws = [rng.gammavariate(spec.concentration, 1.0) for _ in range(spec.n_configs)]
    top = max(draws)
    rate = [max(lo, hi * d / top) for d in draws]
    family = [rng.randrange(spec.n_families) for _ in range(spec.n_tasks)]
    size = [family.count(f) for f in range(spec.n_families)]
    mean_able = spec.able[0] / sum(spec.able)
    home_tasks = [0] * spec.n_configs
    home = []
    for f in range(spec.n_families):
        room = [c for c in range(spec.n_configs) if (home_tasks[c] + size[f]) * mean_able <= hi * spec.n_tasks]
        pool = room or list(range(spec.n_configs))
        c = rng.choices(pool, [rate[i] for i in pool])[0]
        home.append(c)
        home_tasks[c] += size[f]
    bg_mean = spec.background[0] / sum(spec.background)
    p = []
    for c in range(spec.n_configs):
        row = [rng.betavariate(*spec.background) for _ in range(spec.n_tasks)]
        mine = [t for t in range(spec.n_tasks) if home[family[t]] == c]
        others = [t for t in range(spec.n_tasks) if home[family[t]] != c]
        want = (rate[c] - bg_mean) * spec.n_tasks / mean_able - len(mine)
        extra = rng.sample(others, min(len(others), max(0, round(want))))
        for t in mine + extra:
            row[t] = rng.betavariate(*spec.able)
        # The draws' noise must not move the rate out of its range: drop extra able cells above the
        # top, lift the background below the bottom.
        while sum(row) > hi * spec.n_tasks and extra:
            t = extra.pop()
            row[t] = rng.betavariate(*spec.background)
        rest = [t for t in range(spec.n_tasks) if t not in mine and t not in extra]
        short = lo * spec.n_tasks - sum(row)
        if short > 0 and rest:
            for t in rest:
                row[t] += short / len(rest)
        p.append(row)
    tasks = tuple(TaskOption(f"sim/t{t:03d}", "train", (f"fam{family[t]}",) if spec.show_tags else ())
                  for t in range(spec.n_tasks))
    configs = tuple(ConfigOption(f"c{c:02d}", f"config-{c}") for c in range(spec.n_configs))
    return PassMatrix(configs, tasks, tuple(tuple(row) for row in p))


@dataclass(frozen=True)
class CostSpec:
    """Per-configuration costs drawn onto a world (`with_costs`), like the real case of issue 48: REPL
    configurations took 160-240 s an attempt and passed nothing, text ones 11-80 s.

    `weak_expensive`: the share of configurations (the weakest by true mean pass rate) that cost
    `ratio` times the others; every configuration's cost is also multiplied by a lognormal factor of
    sd `spread` (cheap ones differ among themselves too)."""

    weak_expensive: float = 0.33
    ratio: float = 5.0
    spread: float = 0.3


def with_costs(matrix: PassMatrix, spec: CostSpec = CostSpec(), seed: int = 0) -> PassMatrix:
    """`matrix` with a cost per attempt per configuration drawn by `spec` (deterministic in `seed`); the
    cheapest costs about 1."""
    rng = random.Random(f"cost:{seed}")
    rates = matrix.config_rates()
    n = len(matrix.configs)
    weakest = set(sorted(range(n), key=lambda c: (rates[c], c))[: round(spec.weak_expensive * n)])
    cost = [(spec.ratio if c in weakest else 1.0) * math.exp(rng.gauss(0.0, spec.spread)) for c in range(n)]
    low = min(cost)
    return replace(matrix, cost=tuple(x / low for x in cost))


@dataclass(frozen=True)
class SimulationResult:
    scheduler: str
    attempts: int  # attempts spent when the run stopped
    full_coverage: bool  # every reachable task covered
    covered: int
    jobs: int
    curve: tuple[int, ...] = field(repr=False)  # covered tasks after each attempt
    spend: tuple[float, ...] = field(default=(), repr=False)  # cumulative cost after each attempt
    retired: tuple[str, ...] = ()  # configurations retired (rsi.scheduler.retire), in order

    @property
    def attempts_to_full(self) -> int | None:
        return self.attempts if self.full_coverage else None

    def attempts_to(self, goal: int) -> int | None:
        """Attempts spent when `goal` tasks were covered, or None if the run never got there."""
        if goal <= 0:
            return 0
        return next((i + 1 for i, v in enumerate(self.curve) if v >= goal), None)

    def cost_to(self, goal: int) -> float | None:
        """Cost spent when `goal` tasks were covered, or None if the run never got there."""
        at = self.attempts_to(goal)
        if at is None:
            return None
        return self.spend[at - 1] if at else 0.0


def _outcome(seed: int, config: int, task: int, k: int, p: float) -> bool:
    # Common random numbers: the k-th try of (config, task) is the same event for every scheduler.
    return random.Random(f"outcome:{seed}:{config}:{task}:{k}").random() < p


def simulate(
    scheduler: Scheduler,
    matrix: PassMatrix,
    seed: int = 0,
    *,
    job_size: int = 8,
    attempts_per_task: int = 1,
    max_attempts: int = 20_000,
    costs_known: bool = True,
    retire: bool = True,
) -> SimulationResult:
    """Run `scheduler` against `matrix` until it stops, covers every reachable task or spends `max_attempts`.

    As a run session does: each configuration's measured cost per attempt (`matrix.cost`, 1 when it has
    none) is in the request once it has an attempt (`costs_known`), and the retirement rule
    (rsi.scheduler.retire) drops configurations before each proposal (`retire`). Both off: the session
    before issue 48 under an attempts budget."""
    from rsi.scheduler.retire import CostStats, retirements, without_retired

    c_index = {c.config_hash: i for i, c in enumerate(matrix.configs)}
    t_index = {t.key: i for i, t in enumerate(matrix.tasks)}
    history: list[AttemptFact] = []
    tries: dict[tuple[int, int], int] = {}
    covered: set[int] = set()
    curve: list[int] = []
    spend: list[float] = []
    jobs = 0
    reachable = matrix.reachable()
    base = ScheduleRequest(
        configs=matrix.configs, tasks=matrix.tasks, seed=seed, job_size=job_size, attempts_per_task=attempts_per_task
    )
    counts = [0] * len(matrix.configs)
    wins = [0] * len(matrix.configs)  # over each configuration's first attempts (rsi.scheduler.retire.cost_stats)
    from rsi.scheduler import retire as rule
    retired: list[str] = []
    while len(covered) < reachable and len(history) < max_attempts:
        configs = matrix.configs
        if costs_known:
            configs = tuple(replace(o, cost=matrix.unit_cost(c)) if counts[c] else o for c, o in enumerate(configs))
        if retire:
            stats = [CostStats(o.config_hash, o.name, min(counts[c], rule.MIN_ATTEMPTS or counts[c]), wins[c], matrix.unit_cost(c))
                     for c, o in enumerate(matrix.configs)]
            retired += [r.config_hash for r in retirements(stats, retired, "wall_s")]
        request = replace(base, configs=configs, history=history, budget=Budget(attempts=max_attempts - len(history)),
                          job_index=jobs)
        proposal = scheduler.propose(without_retired(request, retired))
        if proposal is None:
            break
        jobs += 1
        c = c_index[proposal.config_hash]
        for key in proposal.task_keys:
            t = t_index[key]
            for _ in range(proposal.attempts_per_task):
                k = tries.get((c, t), 0)
                tries[(c, t)] = k + 1
                passed = _outcome(seed, c, t, k, matrix.p[c][t])
                if passed:
                    covered.add(t)
                if not rule.MIN_ATTEMPTS or counts[c] < rule.MIN_ATTEMPTS:
                    wins[c] += passed
                counts[c] += 1
                history.append(AttemptFact(proposal.config_hash, key, passed))
                curve.append(len(covered))
                spend.append((spend[-1] if spend else 0.0) + matrix.unit_cost(c))
    return SimulationResult(
        scheduler.name, len(history), len(covered) == reachable, len(covered), jobs, tuple(curve), tuple(spend),
        tuple(retired),
    )


def hindsight_best_rate_first(matrix: PassMatrix) -> ConfigMajorScheduler:
    """A bound, not a scheduler: configurations in order of their TRUE overall pass rate, each sweeping
    the open tasks it may still try (configuration-major). It knows what no run knows (the true rates),
    so it is only available here, never as `rsi run --scheduler`."""
    rates = matrix.config_rates()
    order = sorted(range(len(matrix.configs)), key=lambda c: (-rates[c], c))
    return ConfigMajorScheduler(name="hindsight", order=[matrix.configs[c].config_hash for c in order])


@dataclass
class HindsightAfterProbes:
    """A bound, not a scheduler: first the default's examination rule (every configuration, in portfolio
    order, gets a probe job of `probe_tasks` open tasks it may still try; in a portfolio larger than
    `examine_limit`, the same seeded sample the default probes), then hindsight best-rate-first. Against
    `hindsight_best_rate_first` it prices the probes alone: what the examination costs even when the
    ranking is known."""

    sweep: ConfigMajorScheduler
    probe_tasks: int = 4
    name: str = "hindsight+probes"
    examine_limit: int = EXAMINE_LIMIT

    def propose(self, request: ScheduleRequest) -> JobProposal | None:
        prepared = prepare(request)
        if prepared is None:
            return None
        evidence, targets, room = prepared
        tried = evidence.tried_configs()
        for config in (request.configs[i] for i in examined(request, self.examine_limit)):
            if config.config_hash in tried:
                continue
            mine = [t.key for t in targets if tries_left(config, evidence, t.key)][: min(room, self.probe_tasks)]
            if mine:
                return JobProposal(config.config_hash, tuple(mine), request.attempts_per_task, f"{self.name}: probe")
        return self.sweep.propose(request)


def hindsight_after_probes(matrix: PassMatrix, probe_tasks: int = 4) -> HindsightAfterProbes:
    """`HindsightAfterProbes` for `matrix` (a bound of the simulator; see the class)."""
    return HindsightAfterProbes(hindsight_best_rate_first(matrix), probe_tasks)
