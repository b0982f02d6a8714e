"""`thompson-tags` (and `thompson-draws`): the per-tag specialist model, the default before `thompson`.

Kept for comparison: it is strong when every configuration is a specialist of one or two tags (the
simulator's specialist worlds) and weak when configurations follow one ranking and tags carry little
(measured in bench/RESULTS.md, "scheduler_efficiency"). A hierarchical Bayesian model of the pass
probability of configuration c on task t, used greedily on posterior means (`temperature=0`) or
with Thompson draws (`temperature=1`, registered as `thompson-draws`):

    cell (c, tag g)      "able" with probability P(able_cg), else "unable". The able rate r1, the
                         unable rate r0 (~0) and the share of able cells are fitted by EM over all
                         cells (empirical Bayes); a cell's rate is its own counts shrunk towards r1
                         or r0. A plain Beta per cell is too sure, after a few failures, that an
                         able-but-unlucky configuration is unable; the mixture is not. Each
                         configuration's cells are then conditioned on "able at some tag" and
                         each tag's on "some configuration is able at it".
    credit               a failure counts against every tag of its task; a pass on a multi-tag
                         task is credited to its tags in proportion to rate ** `credit_power`.
    task t               p_ct = h_t * max_g rate_cg: hardness h_t (a small grid) is shared by every
                         configuration, so failures of all of them make the task look hard rather
                         than each of them look unable; and "c cannot do t" (prior
                         `broken_prior`) grows with each failure of c on t ("failed k times").

Per task, a configuration not known able at the task's tags may lead the least-tried
configuration on that task by at most `max_lead` tries: when tags carry no information, the model
alone keeps choosing whichever configuration got lucky once (measured worse than round-robin).

Under a time or token budget, estimates are divided by each configuration's measured cost per
attempt (`ConfigOption.cost`): the highest pass probability per second (or token) wins.

Each open task votes for the configuration with its highest estimate; the job goes to the
configuration with the largest summed estimate over its voters (up to `job_size` tasks), holding
at most `probe_limit` tasks per cell not yet known able (one attempt mostly tells whether a
configuration can do a tag; eight would mostly confirm that it cannot). Untried cells start at
P(able) * r1, above cells that failed and below cells that passed: exploration comes from that
optimism, and stops for a tag once one configuration is known able at it. Ties go to the first
configuration, then the first task, so the proposal is a pure function of the request.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from rsi.scheduler.common import Evidence as _Evidence
from rsi.scheduler.common import per_unit_cost, prepare, seeded_rng, without_exhausted
from rsi.scheduler.types import JobProposal, ScheduleRequest, TaskOption

# -- Thompson sampling over a hierarchical Beta model ----------------------------------------------


@dataclass
class TagMixtureScheduler:
    """The hierarchical Bayesian scheduler (see the module docstring): greedy on posterior means
    by default, Thompson draws with `temperature=1`."""

    name: str = "thompson-tags"
    prior_rate: float = 0.05  # a priori pass rate of any configuration on any task
    prior_strength: float = 2.0  # pseudo-attempts behind prior_rate
    able_prior: float = 0.1  # a priori share of (configuration, tag) cells that are "able"
    able_strength: float = 2.0  # pseudo-attempts pulling an able cell towards the able rate r1
    unable_strength: float = 20.0  # pseudo-attempts pinning an unable cell near the unable rate r0
    em_iterations: int = 8
    assume_coverable: bool = True  # every tag has an able configuration (see _fit_mixture)
    assume_useful: bool = True  # every configuration is able at some tag (see _fit_mixture)
    tag_failure_cap: float = 3.0  # failures of c on t count f / (1 + f / cap) times per tag (saturating)
    credit_power: float = 3.0  # a pass on a multi-tag task is credited to tags by rate ** power
    r0_prior_strength: float = 20.0  # pseudo-attempts behind unable_rate_prior in the EM
    able_rate_prior: float = 0.3  # a priori pass rate of an able cell (the EM moves it)
    unable_rate_prior: float = 0.01  # an unable cell (nearly) never passes
    broken_prior: float = 0.3  # a priori chance that an able configuration still cannot do a task
    max_lead: int = 1  # per-task fairness among configurations not known able (see _draw_tasks); 0: off
    task_able_prior: float = 0.05  # a priori chance that a configuration can do a task its tags say it cannot
    hardness_grid: tuple[float, ...] = (1.0, 0.6, 0.3)  # task hardness multipliers (uniform prior)
    per_task_draws: bool = True  # draw each task's cells separately (see _draw_tasks)
    temperature: float = 0.0  # 1: Thompson draws; 0: posterior means (greedy); between: tempered
    fill_ratio: float = 1.01  # top up a job with tasks for which the chosen config is nearly best (>1: off)
    probe_limit: int = 1  # tasks per job probing one (configuration, tag) cell not known able
    confident_able: float = 0.8  # P(able) above which a cell is known able

    def propose(self, request: ScheduleRequest) -> JobProposal | None:
        prepared = prepare(request)
        if prepared is None:
            return None
        evidence, targets, capacity = prepared
        rng = seeded_rng(request, self.name)
        tags_of = {t.key: (t.tags or ("",)) for t in request.tasks}
        configs = [c.config_hash for c in request.configs]
        n_cg, s_cg, mu0 = self._tag_counts(evidence, tags_of)
        cells = [(c, g) for c in configs for g in sorted({g for t in request.tasks for g in tags_of[t.key]})]
        able, r1, r0 = self._fit_mixture(cells, n_cg, s_cg, mu0)
        draws = self._draw_tasks(rng, configs, targets, tags_of, evidence, n_cg, s_cg, able, r1, r0)
        draws = without_exhausted(request, evidence, draws)
        if not draws:
            return None  # every open task has been tried by every configuration that could still differ
        draws = per_unit_cost(request.configs, draws)

        def probe_of(task_key: str, c: str) -> tuple[str, str] | None:
            """The cell a (task, config) pair would probe, or None when c is known able there."""
            tags = tags_of[task_key]
            if any(able.get((c, g), 0.0) >= self.confident_able for g in tags):
                return None
            return (c, max(tags, key=lambda g: able.get((c, g), 0.0)))

        return self._pack_job(request, draws, configs, capacity, len(targets), probe_of)

    def _tag_counts(
        self, evidence: _Evidence, tags_of: dict[str, tuple[str, ...]]
    ) -> tuple[dict[tuple[str, str], float], dict[tuple[str, str], float], float]:
        """Attempts and passes per (configuration, tag).

        A failure counts against every tag of its task (none of them helped); a pass is credited
        to the task's tags in proportion to how good the configuration looks at each (two passes:
        equal split, then by the resulting rates), so a specialist's pass on a two-tag task does not
        make it look able at the other tag.
        """
        n_cg: dict[tuple[str, str], float] = defaultdict(float)
        s_cg: dict[tuple[str, str], float] = defaultdict(float)
        multi: list[tuple[str, tuple[str, ...], int]] = []
        n_all = s_all = 0
        for (c, t), n in evidence.tries.items():
            s = evidence.wins.get((c, t), 0)
            n_all += n
            s_all += s
            tags = tags_of.get(t, ("",))
            # A task failed again and again says more about that task than about the tag: the
            # failures of c on t count f / (1 + f / cap) times at the tag level (at most `cap`).
            failures = (n - s) / (1.0 + (n - s) / self.tag_failure_cap)
            for g in tags:
                n_cg[(c, g)] += failures
            if s:
                if len(tags) == 1:
                    n_cg[(c, tags[0])] += s
                    s_cg[(c, tags[0])] += s
                else:
                    multi.append((c, tags, s))
        mu0 = (s_all + self.prior_strength * self.prior_rate) / (n_all + self.prior_strength)
        split: list[dict[str, float]] = [{g: 1 / len(tags) for g in tags} for _, tags, _ in multi]
        for _ in range(2):
            n_try, s_try = dict(n_cg), dict(s_cg)
            for (c, tags, s), share in zip(multi, split, strict=True):
                for g in tags:
                    n_try[(c, g)] = n_try.get((c, g), 0.0) + s * share[g]
                    s_try[(c, g)] = s_try.get((c, g), 0.0) + s * share[g]
            rate = {
                cell: (s_try.get(cell, 0.0) + mu0) / (n_try[cell] + 1.0) for cell in n_try
            }
            split = []
            for c, tags, _ in multi:
                weights = {g: rate.get((c, g), mu0) ** self.credit_power for g in tags}
                z = sum(weights.values())
                split.append({g: w / z for g, w in weights.items()})
        for (c, tags, s), share in zip(multi, split, strict=True):
            for g in tags:
                n_cg[(c, g)] += s * share[g]
                s_cg[(c, g)] += s * share[g]
        return n_cg, s_cg, mu0

    def _fit_mixture(
        self,
        cells: list[tuple[str, str]],
        n_cg: dict[tuple[str, str], float],
        s_cg: dict[tuple[str, str], float],
        mu0: float,
    ) -> tuple[dict[tuple[str, str], float], float, float]:
        """EM for P(able) per cell and the rates r1 (able) > r0 (unable), anchored on mu0."""
        # mu0 is the pass rate of the attempts made so far, which a good scheduler keeps high: it
        # bounds the able rate from below, while "unable" means (nearly) never passing.
        r1_prior = min(max(mu0, self.able_rate_prior), 0.9)
        r0_prior = min(self.unable_rate_prior, mu0)
        pi, r1, r0 = self.able_prior, r1_prior, r0_prior
        able: dict[tuple[str, str], float] = {}
        for _ in range(self.em_iterations):
            for cell in cells:
                s, n = s_cg[cell], n_cg[cell]
                l1 = pi * r1**s * (1 - r1) ** (n - s)
                l0 = (1 - pi) * r0**s * (1 - r0) ** (n - s)
                able[cell] = l1 / (l1 + l0) if l1 + l0 > 0 else pi
            pi = (sum(able.values()) + 5 * self.able_prior) / (len(cells) + 5)
            k1, k0 = 4.0, self.r0_prior_strength
            r1 = (sum(able[c] * s_cg[c] for c in cells) + k1 * r1_prior) / (sum(able[c] * n_cg[c] for c in cells) + k1)
            r0 = (sum((1 - able[c]) * s_cg[c] for c in cells) + k0 * r0_prior) / (
                sum((1 - able[c]) * n_cg[c] for c in cells) + k0
            )
            r1, r0 = min(max(r1, 1e-4), 0.99), min(max(r0, 1e-5), 0.99)
            if r0 > r1:
                r0, r1 = r1, r0
        # The portfolio is meant to cover every task, and each configuration is in it for a
        # reason: condition each configuration's cells on "able at one tag at least"
        # (`assume_useful`), then each tag's cells on "one configuration at least is able at it"
        # (`assume_coverable`). This lifts the cells with the least evidence against them when a
        # whole row or column looks unable -- the configuration with no known strength yet is the
        # likeliest specialist of a tag nobody can do -- instead of hammering whichever
        # configuration once got lucky.
        if self.assume_useful:
            _condition_on_at_least_one(able, lambda cell: cell[0])
        if self.assume_coverable:
            _condition_on_at_least_one(able, lambda cell: cell[1])
        return able, r1, r0

    def _draw_tasks(
        self,
        rng: random.Random,
        configs: list[str],
        targets: list[TaskOption],
        tags_of: dict[str, tuple[str, ...]],
        evidence: _Evidence,
        n_cg: dict[tuple[str, str], float],
        s_cg: dict[tuple[str, str], float],
        able: dict[tuple[str, str], float],
        r1: float,
        r0: float,
    ) -> dict[str, dict[str, float]]:
        """The estimated P(pass) of every (open task, configuration): posterior means, or
        (tempered) Thompson draws when `temperature` > 0.

        With draws and `per_task_draws`, each task draws its cells separately: an uncertain cell
        then wins only some of its tasks, so one job probes many cells a little instead of spending
        a whole batch on one.
        """
        shared: dict[tuple[str, str], float] = {}

        def draw(c: str, g: str) -> float:
            s, n = s_cg[(c, g)], n_cg[(c, g)]
            w = able.get((c, g), self.able_prior)
            m1 = (s + self.able_strength * r1) / (n + self.able_strength)
            m0 = (s + self.unable_strength * r0) / (n + self.unable_strength)
            mean = w * m1 + (1 - w) * m0
            if self.temperature <= 0:
                return mean
            if rng.random() < w:
                sample = rng.betavariate(s + self.able_strength * r1, n - s + self.able_strength * (1 - r1))
            else:
                sample = rng.betavariate(s + self.unable_strength * r0, n - s + self.unable_strength * (1 - r0))
            return min(max(mean + self.temperature * (sample - mean), 0.0), 1.0)

        out: dict[str, dict[str, float]] = {}
        for t in targets:
            tags = tags_of[t.key]
            base = {}
            for c in configs:
                values = []
                for g in tags:
                    if self.per_task_draws:
                        values.append(draw(c, g))
                    else:
                        if (c, g) not in shared:
                            shared[(c, g)] = draw(c, g)
                        values.append(shared[(c, g)])
                base[c] = min(max(max(values), 1e-6), 1 - 1e-6)
            tries = {c: evidence.tries.get((c, t.key), 0) for c in configs}
            wins = {c: evidence.wins.get((c, t.key), 0) for c in configs}
            row = self._task_row(configs, base, tries, wins, r1)
            if self.max_lead:
                # Fairness while nothing is known: a configuration not known able at this task's
                # tags gets at most `max_lead` more tries here than the least-tried configuration.
                least = min(tries.values())
                for c in configs:
                    known = any(able.get((c, g), 0.0) >= self.confident_able for g in tags)
                    if not known and tries[c] - least >= self.max_lead:
                        row[c] *= 1e-3
            out[t.key] = row
        return out

    def _task_row(
        self, configs: list[str], base: dict[str, float], tries: dict[str, int], wins: dict[str, int], r1: float
    ) -> dict[str, float]:
        """One open task's estimate per configuration, from its tag-level rates `base` and the task's own
        tries and wins."""
        # Hardness h is shared by every configuration (p_ct = h * base): failures of all of
        # them on this task make it look hard rather than making each look unable.
        # (Log space: hundreds of failures must not underflow to 0.)
        log_like = []
        for h in self.hardness_grid:
            total = 0.0
            for c in configs:
                if tries[c]:
                    q = min(base[c] * h, 1 - 1e-9)
                    total += wins[c] * math.log(q) + (tries[c] - wins[c]) * math.log1p(-q)
            log_like.append(total)
        top = max(log_like)
        weights = [math.exp(v - top) for v in log_like]
        h_mean = sum(h * w for h, w in zip(self.hardness_grid, weights, strict=True)) / sum(weights)
        row = {}
        for c in configs:
            # "This configuration cannot do this task", beyond tag and hardness: prior
            # `broken_prior`, likelier after each of its failures here ("failed k times").
            q = min(base[c] * h_mean, 1 - 1e-9)
            if wins[c]:
                row[c] = q
                continue
            if self.broken_prior:
                log_ok = math.log1p(-self.broken_prior) + tries[c] * math.log1p(-q)
                gap = math.log(self.broken_prior) - log_ok
                q = q / (1.0 + math.exp(gap)) if gap < 700 else 0.0
            # ... and the converse: c may be able at this one task whatever its tags say
            # (prior `task_able_prior`, at the able rate), fading with each failure of c on t.
            if self.task_able_prior:
                q1 = min(r1 * h_mean, 1 - 1e-9)
                log_yes = math.log(self.task_able_prior) + tries[c] * math.log1p(-q1)
                gap = math.log1p(-self.task_able_prior) - log_yes
                idio = q1 / (1.0 + math.exp(gap)) if gap < 700 else 0.0
                q = 1.0 - (1.0 - q) * (1.0 - idio)
            row[c] = q
        return row

    def _pack_job(
        self,
        request: ScheduleRequest,
        draws: dict[str, dict[str, float]],
        configs: list[str],
        capacity: int,
        n_open: int,
        probe_of,  # type: ignore[no-untyped-def]
    ) -> JobProposal:
        """Each task votes for its best-rated configuration; the one with the most mass gets the job.

        A job holds at most `probe_limit` tasks per (configuration, tag) cell not yet known able:
        one or two attempts tell whether a configuration can do a tag; eight would mostly be spent
        confirming that it cannot.
        """
        best = {key: max(row, key=lambda c: (row[c], -configs.index(c))) for key, row in draws.items()}

        def take(c: str, keys: list[str], room: int, used: dict) -> list[str]:
            out: list[str] = []
            for k in keys:
                if len(out) >= room:
                    break
                cell = probe_of(k, c)
                if cell is not None:
                    if used.get(cell, 0) >= self.probe_limit:
                        continue
                    used[cell] = used.get(cell, 0) + 1
                out.append(k)
            return out

        voters: dict[str, list[str]] = defaultdict(list)
        for key, c in best.items():
            voters[c].append(key)
        picks: dict[str, list[str]] = {}
        score: dict[str, float] = {}
        for c, keys in voters.items():
            keys.sort(key=lambda k: -draws[k][c])
            picks[c] = take(c, keys, capacity, {})
            score[c] = sum(draws[k][c] for k in picks[c])
        chosen = max(score, key=lambda c: (score[c], -configs.index(c)))
        mine = picks[chosen]
        if len(mine) < capacity:
            used: dict = {}
            for k in mine:
                cell = probe_of(k, chosen)
                if cell is not None:
                    used[cell] = used.get(cell, 0) + 1
            near = [k for k in draws if best[k] != chosen and draws[k][chosen] >= self.fill_ratio * draws[k][best[k]]]
            near.sort(key=lambda k: -draws[k][chosen] / draws[k][best[k]])
            mine = mine + take(chosen, near, capacity - len(mine), used)
        order = {t.key: i for i, t in enumerate(request.tasks)}
        mine.sort(key=order.__getitem__)
        return JobProposal(
            chosen,
            tuple(mine),
            request.attempts_per_task,
            f"{self.name}: {len(mine)} of {n_open} open tasks rate this configuration best",
        )


def _condition_on_at_least_one(
    able: dict[tuple[str, str], float], group_of: Callable[[tuple[str, str]], str]
) -> None:
    """Condition independent P(able) cells, group by group, on "at least one cell is able":
    P(able_i | any able) = P(able_i) / P(any able). In place."""
    groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for cell in able:
        groups[group_of(cell)].append(cell)
    for group in groups.values():
        none = 1.0
        for cell in group:
            none *= 1.0 - able[cell]
        if 0.0 < 1.0 - none < 1.0:
            for cell in group:
                able[cell] = min(1.0, able[cell] / (1.0 - none))


@dataclass
class TagMixtureDrawsScheduler(TagMixtureScheduler):
    """The same model with classic Thompson draws (temperature 1), kept for comparison."""

    name: str = "thompson-draws"
    temperature: float = 1.0
