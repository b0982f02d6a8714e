"""Scheduler sample efficiency on simulated portfolios, and the scheduler's time per proposal.

For each setting (a `rsi.simulate.MatrixSpec`: per-tag specialists; or a `RankedSpec`: one ability
ranking + task difficulty + unreachable tasks, like real leaderboards) and seed, generate a
pass-probability matrix and run every scheduler against it with seeded outcomes (common random
numbers across schedulers), jobs of 8 tasks, one attempt each. Reported: attempts to cover 90%, 95%
and 100% of the reachable tasks, as multiples of the oracle (each task attempted only with its best
configuration: sum of 1 / p_best over the cheapest tasks) and of hindsight best-rate-first (the
configurations swept in the order of their TRUE pass rates: a bound that uses knowledge no scheduler
has), the mean tasks per job, and the default's time per proposal at 24, 134 and 300 configurations
x 500 tasks.

The default's few priors were tuned on seeds 0-9; the tables use seeds 100 and up
(held out: no variant was chosen on them).

    .venv/bin/python bench/scheduler_efficiency.py [--seeds N] [--settings a,b] [--write]

`--write` replaces the `## scheduler_efficiency` section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import random
import statistics
import sys
import time
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime

from results import replace_section  # bench/results.py (scripts run from bench/)

from rsi.scheduler import AttemptFact, Budget, Scheduler, ScheduleRequest, ThompsonScheduler, make_scheduler
from rsi.simulate import (
    MatrixSpec,
    PassMatrix,
    RankedSpec,
    StochasticSpec,
    coverage_goal,
    generate_matrix,
    generate_ranked,
    generate_stochastic,
    hindsight_after_probes,
    hindsight_best_rate_first,
    simulate,
)

SECTION = "## scheduler_efficiency"
FIRST_SEED = 100  # seeds 0-9 were used to tune the default
FRACTIONS = (0.9, 0.95, 1.0)
SURE_JOBS = "thompson-sure-jobs"  # the default with jobs as long as the choice is sure (not adopted; bench only)
EXPLORE_ONE = "thompson-explore-one"  # registered: one-task jobs where only a draw picks the configuration
SCHEDULERS = ["thompson", SURE_JOBS, EXPLORE_ONE, "thompson-tags", "round-robin", "config-major", "random", "best-single"]
# Run on some settings only, to keep the benchmark within ~30 minutes on a loaded 2-core machine:
# the previous default `thompson-tags` is pure Python per (configuration, task) (`thompson` hands over to
# it on specialist worlds), and the two job-length variants only act where the ranking model decides.
RANKING_MODEL = ("ranked", "ranked-no-tags", "ranked-tags", "ranked-sampled", "mixture", "no-structure")
SLOW = {"thompson-tags": ("default",), SURE_JOBS: RANKING_MODEL, EXPLORE_ONE: RANKING_MODEL}
PAIRED_SEEDS = 24  # more held-out seeds for a setting whose held-out means put the default behind config-major
HINDSIGHT = "hindsight"
HINDSIGHT_PROBES = "hindsight+probes"  # the default's probes (4 tasks per configuration), then hindsight
# The cheapest examination issue 15 item 4 allows (one task per configuration), then hindsight: what the
# 1.1x target leaves for learning the ranking, which this bound is given.
HINDSIGHT_PROBE_ONE = "hindsight+1-probes"
BOUNDS = (HINDSIGHT, HINDSIGHT_PROBES, HINDSIGHT_PROBE_ONE)
SETTINGS: dict[str, tuple[str, MatrixSpec | RankedSpec]] = {
    "default": ("specialists: 122 tasks x 12 configs, 12 tags, 1-2 specialties per config", MatrixSpec()),
    "diffuse": (
        "specialists: 8 tags (broader, weaker specialists), p_best floor 0.2",
        MatrixSpec(n_tags=8, specialist_logit=4.5, min_best_p=0.2),
    ),
    "easier": ("specialists: stronger, p_best floor 0.5", MatrixSpec(specialist_logit=7.5, min_best_p=0.5, difficulty_sd=0.5)),
    "harder": (
        "specialists: more task difficulty and cell noise, p_best floor 0.15",
        MatrixSpec(min_best_p=0.15, difficulty_sd=1.2, cell_sd=0.9),
    ),
    "fewer-configs": ("specialists: 4 configs, 4 tags", MatrixSpec(n_configs=4, n_tags=4)),
    "correlated": ("specialists: configs in families of 3 sharing specialties", MatrixSpec(family_size=3, n_tags=6)),
    "noisy-tags": ("specialists: 30% of tasks show a wrong tag", MatrixSpec(tag_noise=0.3)),
    "no-structure": ("abilities independent of tags (tags useless)", MatrixSpec(structured=False)),
    "larger": ("specialists: 300 tasks x 24 configs, 24 tags", MatrixSpec(n_tasks=300, n_configs=24, n_tags=24)),
    "ranked": ("ranking: 300 tasks x 24 configs, deterministic, 13% unreachable, weak tags", RankedSpec()),
    "ranked-no-tags": ("ranking: as `ranked`, tasks carry no tags", RankedSpec(show_tags=False)),
    "ranked-tags": ("ranking: as `ranked`, informative tags", RankedSpec(tag_sd=1.5)),
    "ranked-sampled": (
        "ranking: as `ranked`, sampled outcomes, 15% unreachable",
        RankedSpec(deterministic=False, unreachable=0.15),
    ),
    "mixture": ("ranking + a third of the configs specialists, informative tags", RankedSpec(specialists=0.33, tag_sd=1.0)),
    # The scale issue 15's speed target names (134 configurations x 500 tasks, a public leaderboard's size): a
    # probe of 4 tasks for every configuration is then more than the whole suite.
    "ranked-many": ("ranking: as `ranked`, 500 tasks x 134 configs", RankedSpec(n_tasks=500, n_configs=134)),
    "stochastic": (
        "stochastic: 122 tasks x 12 configs, Bernoulli, rates 1-21% (long-tailed), families shown as tags",
        StochasticSpec(),
    ),
    "stochastic-no-tags": ("stochastic: as `stochastic`, tasks carry no tags", StochasticSpec(show_tags=False)),
}
RANKED = ("ranked", "ranked-no-tags", "ranked-tags", "ranked-sampled", "ranked-many")
# What was measured on the tuning seeds to get here (written under the tables; the tables are held out).
NOTES = [
    "Measured on the tuning seeds on 2026-12-04 (x hindsight at 95% / 100%), not adopted: probes on the open tasks "
    "that the fewest configurations have failed (at least one; fresh tasks after them), so that a probe meets a "
    "task of known, moderate difficulty. Seeds 0-5: `ranked` 1.53 / 1.87 against the default's 1.47 / 1.66, "
    "`ranked-tags` 1.28 / 1.43 against 1.41 / 1.51, `mixture` 1.27 / 1.32 against 1.28 / 1.33, `ranked-sampled` "
    "1.10 / 0.69 against 1.16 / 0.65; `ranked-many` (seeds 0-3) 2.45 / 7.78 against 1.99 / 5.53. Probes on tasks "
    "failed exactly once: worse on every ranked setting but `ranked-sampled`. (A subclass of `ThompsonScheduler` "
    "overriding `_probe`; not kept.)",
    "",
    "Measured on the tuning seeds this round (2026-12-03; seeds 0-9 unless said; x hindsight at 95%, then 100%, on "
    "`ranked` / `ranked-no-tags` / `ranked-tags` / `mixture` / `ranked-sampled`), with the default's variants built "
    "from `ThompsonScheduler` fields:",
    "",
    "- One-task exploration jobs (`explore_tasks=1`, the `thompson-explore-one` column, registered under that name): "
    "where the posterior means would choose another configuration than the tempered draw did, the job holds one "
    "task. Tuning seeds: 1.49 / 1.47 / 1.30 / 1.27 / 1.17 against the default's 1.50 / 1.56 / 1.40 / 1.39 / 1.30 at "
    "95%, 1.58 / 1.59 / 1.34 / 1.30 / 0.59 against 1.58 / 1.58 / 1.60 / 1.34 / 0.68 at 100%; the specialist settings "
    "within 3% either way (seeds 0-5); 2.6-3.2 tasks per job against 7.2. Held out (the tables, seeds 100-109; "
    "ranked settings in the order above): 1.47 / 1.47 / 1.35 / 1.15 / 1.07 against 1.49 / 1.52 / 1.43 / 1.37 / 1.31 "
    "at 95% (`ranked-sampled` inside the 1.1x target), but at 100% worse on `ranked` (1.73 against 1.63), 3-4% "
    "behind config-major on `no-structure` (the early jobs, before the check sees no structure), and jobs of "
    "2.6-3.4 tasks. On seeds 100-102 alone it had looked better on `ranked` at 95% and far worse at 100% (2.34 "
    "against 1.60): 3 seeds do not tell these variants apart, so the tables now use 10. Why it helps (traced on `ranked` seed 0): after the best "
    "configuration's sweep the open tasks are hard for every configuration, so a failure there hardly lowers a weak "
    "configuration's fitted ability and its draws keep winning; with full jobs each such guess costs 8 attempts. Not "
    "the default: issue 15 item 2 asks for full jobs (a job's fixed cost shared by more attempts), and it would put "
    "the default behind config-major on `no-structure`; for runs that stop at a coverage target and whose jobs "
    "cost little beyond their attempts it is the better choice.",
    "- Exploration jobs of 2 and 4 tasks: 1.44 / 1.50 / 1.26 / 1.27 / 1.31 and 1.54 / 1.54 / 1.25 / 1.24 / 1.32 at "
    "95% (the gain needs one-task guesses). Keeping only the job tasks whose posterior-mean estimate is at least 0.5 "
    "or 0.8 of their best (in every job, or only in exploration jobs): no consistent change. No probes first (each "
    "configuration first tried when its draw wins; seeds 0-5): worse, 1.69 against 1.45 on `ranked`, 1.43-1.52 with "
    "one-task exploration.",
    "- `ranked-many` (new this round: 134 configurations x 500 tasks, the scale issue 15's speed target names; "
    "tuning seeds 0-5, attempts to 95% summed over the seeds, x hindsight): the default 2.21x; probes of 1 task "
    "2.20x, of 2 tasks 2.28x; probes of 1 with one-task guesses 1.98x (but up to 250 s of scheduling per run, and "
    "at 100% from 0.2x to 3.9x the default's attempts seed by seed). Hindsight after probes of 4 tasks costs 2.02x "
    "and after probes of 1 task 1.25x (seeds 0-1): examining 134 configurations costs about a quarter of hindsight's "
    "attempts even at one task each, so at this scale even hindsight needs 1.25x once item 4's probes are paid. Per seed the default ranges "
    "from 1.86x to 3.01x. Successive probes (one task each, then up to 4 for the configurations whose upper bound, "
    "1 or 2 sd, reaches the leader's lower bound): 2.23x.",
    "- Challenger jobs during the best configuration's sweep (every 3rd or 4th job to the other configuration with "
    "the highest upper bound, 1 or 2 sd; seeds 0-9): 1.50 / 1.51 / 1.41 / 1.31 / 1.23 at 95% against the default's "
    "1.50 / 1.56 / 1.40 / 1.39 / 1.30, but 1.51 against 1.34 on `mixture` at 100%; not adopted.",
    "- `no-structure`: keeping the fitted ranking where the check finds no structure (instead of preferring no "
    "configuration): 1.16-1.19x config-major (seeds 0-11); `cannot_prior` 0.5 or 0.7: no change. Seed by seed the "
    "default and config-major differ by -7% to +10% (seeds 0-3), so the means of 3 seeds cannot tell a 1% gap: the "
    "targets row now decides on the paired ratio over the held-out seeds and 24 more, with its 95% bootstrap interval.",
    "- The 1.5x-of-the-oracle target on `default`: (oracle + finding each tag's able configuration tag by tag) / "
    "oracle is 1.65 on seeds 100-109 (the targets row; `PassMatrix.tag_search_attempts`), before any probe: the "
    "target is below what a learner of each tag on its own can reach; only structure across tags could do better. "
    "Traced on `default` seeds 0-2: 250-350 of the default's attempts go to a (configuration, task) pair with at "
    "least half the task's best rate (the oracle: 263-294 attempts) and 220-310 to pairs below 10% (the tag-by-tag "
    "search: 180-210).",
    "",
    "From the rounds before (2026-12-01; same default, same held-out seeds 100-102):",
    "",
    "- Where the default loses on the ranked settings: traced on `ranked` seeds 0-4, the best configuration is "
    "found within the first jobs and sweeps; the excess comes after its sweep, when the tasks it failed need the "
    "second best, which 4 probe attempts per configuration barely rank (fitted abilities after 4 random "
    "attempts each correlate 0.5-0.7 with the true ones), so jobs of 8 go to one plausible configuration after "
    "another (seed 0: 178 attempts after the sweep, hindsight 67; seed 1: ranks 2, 15, 18, 13, 7, ... in turn).",
    "- Jobs as long as the choice of configuration is sure (`sure_jobs`, the `thompson-sure-jobs` column: "
    "job_size x P(its ability is above the strongest other one's), at least 2): 1.47 / 1.27 / 1.18 / 1.17 "
    "against the default's 1.47 / 1.41 / 1.28 / 1.16 at 95%, but 1.75 / 1.64 / 1.23 / 0.75 against 1.66 / 1.51 / "
    "1.33 / 0.65 at 100%, `no-structure` 1.015 / 1.007 / 1.015 against 1.003 / 1.001 / 1.012, and 2.6-4.0 tasks "
    "per job against 7.2-7.5. At least 4 tasks: 1.64 / 1.28 / 1.22 / 1.09 (worse on `ranked`). At least 1, "
    "P above every other configuration (seeds 0-9): 1.57 / 1.18 / 1.14 / 1.19 against 1.52 / 1.41 / 1.34 / 1.25, "
    "1.3-2.2 tasks per job. Not adopted: it trades the 100% column and the size of jobs (issue 15 item 2: jobs "
    "are filled up to job_size) for the 95% one, and the trade is not consistent.",
    "- Probes of 1 task instead of 4 (seeds 0-9 with short jobs; seeds 0-5 alone): worse on `ranked` (1.59 "
    "against 1.47), the probes' information is what the later choices live on. Fitted spreads: 12 EM sweeps "
    "instead of 5, or a prior spread of 2 logits instead of 1, or tempered draws at 0.25 or 1.0 instead of 0.5: "
    "each better on one or two settings and worse on others by 5-20% (seeds 0-5), none adopted.",
    "- Proposal time: the ability model's fit and prediction no longer go through BLAS products or `np.add.at`. A (configurations x tags) by (tags x tasks) product went through OpenBLAS's thread pool, whose threads spin against the other jobs: 40-70 ms of wall time for that one product at load 8. Now 20 ms CPU at 134 x 500 (26 ms before). Wall time is CPU time plus waiting for a core: this run was at `nice -n 19` with a load of 9-10, so the process mostly waited (95 ms at 134 configurations, 277 ms at 24); a separate measurement at `nice -n 19`, load 8, gave 25 ms wall at 134 x 500 (`proposal_times()` in this script).",
    '- 1.1x of hindsight on the ranked settings: NOT MET (1.30-1.47x). The `hindsight+probes` column is hindsight after the same probes the default makes (4 tasks for every configuration before any is exploited, item 4 of issue 15): 1.14-1.25x with the ranking known. On the tuning seeds 0-2 (`ranked`), hindsight after probes of 1, 2 and 4 tasks costs 1.05x, 1.10x and 1.19x: the 1.1x target leaves room only for 1-task probes and an almost perfect ranking. The rest of the gap is the order of the other configurations: once the best one has swept, hindsight hands its failures to the second and third best; the run knows those from 4 attempts each, so the hard remainder goes to weak configurations (seed 1 of `ranked`: 310 attempts for its last 31 tasks to 95%).',
    "- Variants measured on the tuning seeds 0-9 (x hindsight at 95% on `ranked` / `ranked-tags` / `ranked-sampled` / `mixture`); none was adopted: the default 1.50 / 1.40 / 1.30 / 1.39; probes on the tasks failed most (hard tasks) 1.50 / 1.36 / 1.20 / 1.39 but worse at 100% (1.86 against 1.58 on `ranked`, 1.56 against 1.34 on `mixture`); probes of 2 tasks 1.64 / 1.41 / 1.27 / 1.39; jobs of 1 task for a configuration with fewer than 12 attempts 1.49 / 1.29 / 1.24 / 1.41, worse at 100% (1.69, 1.47) and smaller jobs; adaptive probes (1 task each, more for those whose upper bound reaches the leader's lower bound) 1.53 / 1.45 / 1.37 / 1.39. On seeds 0-2 (`ranked`, default 1.51): probes of 1 task 1.54, posterior means instead of tempered draws 1.66, configurations swept in the estimated order (means 1.67, upper bounds 1.68), top-two Thompson challengers 1.49-1.73.",
    "- 1.5x of the oracle on `default`: NOT MET (2.27x). A learner that finds each tag's able configuration tag by tag needs about 1.64x there (the `(oracle + search) / oracle` analysis), before the probes.",
    '- No setting worse than `config-major`: NOT MET on `no-structure`, by 0-1% (6.53 / 6.69 / 6.53 against 6.47 / 6.69 / 6.53; on tuning seeds 0-5: 1.03 / 1.02 / 1.03x). Cause: while the leave-one-out check still sees a weak ranking (the first quarter of the run), the ranking path retries pairs that failed, where a sweep would try a fresh pair. Requiring 1 nat of leave-one-out gain before a ranking or tags are used fixes it (0.99 / 0.98 / 0.99x of config-major, seeds 0-5) but costs 5-11% on `correlated`, `larger` and `default` at 100% (seeds 0-2), so it was not adopted.',
    '- Jobs: 7.0-7.5 tasks per job on the ranked settings (jobs of 8); 3.6-5.9 on the specialist settings, where the per-tag model holds at most one task per (configuration, tag) cell not yet known able in a job (more would mostly confirm that a configuration cannot do a tag).',
]


@dataclass
class Runs:
    """One scheduler on one setting, over the seeds."""

    to: dict[float, list[int | None]]  # attempts to each fraction of the reachable tasks (None: never)
    tasks_per_job: list[float]
    seconds: float


def _matrix(spec: MatrixSpec | RankedSpec | StochasticSpec, seed: int) -> PassMatrix:
    if isinstance(spec, StochasticSpec):
        return generate_stochastic(spec, seed)
    return generate_ranked(spec, seed) if isinstance(spec, RankedSpec) else generate_matrix(spec, seed)


def _cap(matrix: PassMatrix) -> int:
    if matrix.configs[0].max_tries_per_task == 1:
        return len(matrix.configs) * len(matrix.tasks)  # every pair once: every scheduler can finish
    return int(20 * matrix.oracle_attempts())


def run_setting(spec: MatrixSpec | RankedSpec, seeds: range, names: list[str]) -> dict:
    matrices = [_matrix(spec, s) for s in seeds]
    out: dict = {
        "oracle": {f: statistics.mean(m.oracle_attempts(f) for m in matrices) for f in FRACTIONS},
        "unreachable": statistics.mean(1 - m.reachable() / len(m.tasks) for m in matrices),
        "cap": statistics.mean(_cap(m) for m in matrices),
        "runs": {},
    }
    if isinstance(spec, MatrixSpec) and spec.structured:
        # What finding each tag's able configuration tag by tag costs (failed attempts), on top of the oracle.
        out["search"] = statistics.mean(m.tag_search_attempts() for m in matrices)
    for name in [*names, *BOUNDS]:
        started = time.perf_counter()
        runs = Runs({f: [] for f in FRACTIONS}, [], 0.0)
        for s, m in zip(seeds, matrices, strict=True):
            scheduler = _scheduler(name, m)
            result = simulate(scheduler, m, seed=s, max_attempts=_cap(m))
            for f in FRACTIONS:
                runs.to[f].append(result.attempts_to(coverage_goal(m.reachable(), f)))
            runs.tasks_per_job.append(result.attempts / max(result.jobs, 1))
        runs.seconds = time.perf_counter() - started
        out["runs"][name] = runs
    return out


def _scheduler(name: str, matrix: PassMatrix) -> Scheduler:
    if name == HINDSIGHT:
        return hindsight_best_rate_first(matrix)
    if name == HINDSIGHT_PROBES:
        return hindsight_after_probes(matrix)
    if name == HINDSIGHT_PROBE_ONE:
        return replace(hindsight_after_probes(matrix, probe_tasks=1), name=HINDSIGHT_PROBE_ONE)
    if name == SURE_JOBS:
        return ThompsonScheduler(name=SURE_JOBS, sure_jobs=True)
    return make_scheduler(name)


def _mean(values: list[int | None], cap: float) -> tuple[float, int]:
    """Mean attempts, a run that never got there counted at the cap; and how many did not."""
    missing = sum(v is None for v in values)
    return statistics.mean(cap if v is None else v for v in values), missing


@dataclass(frozen=True)
class Paired:
    """The default against config-major seed by seed: geometric mean of the per-seed ratios of attempts
    to a coverage share, with a 95% bootstrap interval (seeded) over the seeds."""

    seeds: range
    ratio: float
    low: float
    high: float

    @property
    def worse(self) -> bool:
        return self.low > 1.0  # behind on the whole interval, not only on the mean of a few seeds


def paired_versus_config_major(
    spec: MatrixSpec | RankedSpec, held: dict, held_seeds: range, extra_seeds: range
) -> dict[float, Paired]:
    """`thompson` / `config-major` per seed (same worlds, same outcomes), per coverage share: the held-out
    seeds from their runs in `held` (`run_setting`'s result), `extra_seeds` simulated here."""
    logs: dict[float, list[float]] = {f: [] for f in FRACTIONS}
    for i, s in enumerate(held_seeds):
        for f in FRACTIONS:
            a, b = held["runs"]["thompson"].to[f][i], held["runs"]["config-major"].to[f][i]
            if not (a and b):
                cap = _cap(_matrix(spec, s))  # a run that never got there counts at the cap
                a, b = a or cap, b or cap
            logs[f].append(math.log(a / b))
    for s in extra_seeds:
        m = _matrix(spec, s)
        mine, theirs = (simulate(_scheduler(n, m), m, seed=s, max_attempts=_cap(m)) for n in ("thompson", "config-major"))
        for f in FRACTIONS:
            goal = coverage_goal(m.reachable(), f)
            a, b = mine.attempts_to(goal) or _cap(m), theirs.attempts_to(goal) or _cap(m)
            logs[f].append(math.log(a / b))
    seeds = range(held_seeds.start, extra_seeds.stop)
    rng = random.Random("paired")
    out = {}
    for f, values in logs.items():
        means = sorted(statistics.mean(rng.choices(values, k=len(values))) for _ in range(10_000))
        out[f] = Paired(seeds, math.exp(statistics.mean(values)), math.exp(means[250]), math.exp(means[9_749]))
    return out


def _cell(runs: Runs, f: float, reference: float, cap: float) -> str:
    mean, missing = _mean(runs.to[f], cap)
    return f"> {mean / reference:.2f}" if missing else f"{mean / reference:.2f}"


def proposal_times(sizes: tuple[int, ...] = (24, 134, 300), n_tasks: int = 500, history: int = 2000) -> list[dict]:
    """Median seconds of one `thompson` proposal on a ranked world after `history` counted attempts
    (round-robin's, so every configuration has some), and of the specialist path (`thompson-tags`,
    which the default hands over to when tags explain more than the ranking)."""
    rows = []
    for n_configs in sizes:
        matrix = generate_ranked(RankedSpec(n_tasks=n_tasks, n_configs=n_configs), 7)
        facts: list[AttemptFact] = []
        rr = make_scheduler("round-robin")
        base = ScheduleRequest(configs=matrix.configs, tasks=matrix.tasks, job_size=8)
        index = {t.key: i for i, t in enumerate(matrix.tasks)}
        job = 0
        while len(facts) < history:
            proposal = rr.propose(replace(base, history=facts, job_index=job))
            assert proposal is not None
            c = job % n_configs
            facts += [AttemptFact(proposal.config_hash, k, matrix.p[c][index[k]] > 0.5) for k in proposal.task_keys]
            job += 1
        request = replace(base, history=facts, job_index=job, budget=Budget(attempts=10_000))
        row = {"configs": n_configs, "tasks": n_tasks, "history": len(facts)}
        for name, reps in (("thompson", 5), ("thompson-tags", 1)):
            scheduler = make_scheduler(name)
            scheduler.propose(request)  # warm up: the first call imports numpy
            times, cpu = [], []
            for _ in range(reps):
                started, used = time.perf_counter(), time.process_time()
                scheduler.propose(request)
                times.append(time.perf_counter() - started)
                cpu.append(time.process_time() - used)
            row[name] = statistics.median(times)
            row[f"{name} cpu"] = statistics.median(cpu)
        rows.append(row)
    return rows


def render(
    results: dict[str, dict], seeds: range, names: list[str], times: list[dict], paired: dict[str, dict[float, Paired]]
) -> str:
    head = "| setting | " + " | ".join([*names, *BOUNDS]) + " |"
    rule = "| --- |" + " ---: |" * (len(names) + len(BOUNDS))
    lines = [
        f"Seeds {seeds.start}-{seeds.stop - 1} ({len(seeds)} per setting, held out: the default was tuned on seeds 0-9). "
        "Jobs of 8 tasks, 1 attempt each. Each cell: attempts to cover 90% / 95% / 100% of the reachable tasks, "
        "mean over the seeds. `>` marks a mean that counts runs stopped at the cap (20x the oracle; deterministic "
        "worlds: every pair once) as the cap. `-`: not run (`thompson-tags`, the previous default, is pure Python "
        "per pair; it runs on `default` only, to keep the benchmark short; `thompson` hands over to it where "
        "tags explain more than the ranking; `thompson-sure-jobs` is the default with each job as long as the "
        "choice of its configuration is sure, 2 to 8 tasks, a variant not adopted, and `thompson-explore-one` (registered) "
        "the default with one-task jobs where only the draw chose the configuration; both run where the ranking model "
        "decides). Three bounds use the true pass rates, which no scheduler has: "
        "`hindsight` sweeps the configurations configuration-major in the order of their true rates; "
        "`hindsight+probes` first gives every configuration the default's probe (4 tasks), then does the same: "
        "it prices the rule that every configuration is examined before any is exploited; `hindsight+1-probes` "
        "does the same after probes of one task each, the least that rule allows.",
        "",
        "**In multiples of the oracle** (sum of 1 / p_best over the cheapest tasks that reach the share):",
        "",
        head,
        rule,
    ]
    for setting, r in results.items():
        cells = []
        for name in [*names, *BOUNDS]:
            if name not in r["runs"]:
                cells.append("-")
                continue
            cap = r["cap"]
            cells.append(" / ".join(_cell(r["runs"][name], f, r["oracle"][f], cap) for f in FRACTIONS))
        lines.append(f"| {setting} | " + " | ".join(cells) + " |")
    lines += ["", "**In multiples of hindsight best-rate-first** (a bound: it knows the true pass rates):", "", head, rule]
    for setting, r in results.items():
        cells = []
        for name in [*names, *BOUNDS]:
            if name not in r["runs"]:
                cells.append("-")
                continue
            cap = r["cap"]
            ref = {f: _mean(r["runs"][HINDSIGHT].to[f], cap)[0] for f in FRACTIONS}
            cells.append(" / ".join(_cell(r["runs"][name], f, ref[f], cap) for f in FRACTIONS))
        lines.append(f"| {setting} | " + " | ".join(cells) + " |")
    lines += ["", "**Mean tasks per job** (attempts / jobs over the whole run; at most 8):", "", head, rule]
    for setting, r in results.items():
        cells = [f"{statistics.mean(r['runs'][n].tasks_per_job):.1f}" if n in r["runs"] else "-" for n in [*names, *BOUNDS]]
        lines.append(f"| {setting} | " + " | ".join(cells) + " |")
    lines += ["", "Settings:", ""]
    for setting, r in results.items():
        desc, spec = SETTINGS[setting]
        default = asdict(type(spec)())
        changed = {k: v for k, v in asdict(spec).items() if v != default[k]}
        args = ", ".join(f"{k}={v!r}" for k, v in changed.items())
        lines.append(f"- `{setting}`: {desc} (`{type(spec).__name__}({args})`; unreachable {r['unreachable']:.0%})")
    lines += [
        "",
        f"**Time per proposal** (median; a ranked world of 500 tasks after {times[0]['history'] if times else 0} "
        "counted attempts by round-robin):",
        "",
        "CPU time is what one proposal costs; wall time adds the waiting of a process on a shared machine "
        "(see the load average above).",
        "",
        "| configurations x tasks | thompson (ranking path): CPU / wall | thompson-tags (the specialist path): CPU / wall |",
        "| --- | ---: | ---: |",
    ]
    for row in times:
        lines.append(f"| {row['configs']} x {row['tasks']} | {row['thompson cpu'] * 1000:.0f} / "
                     f"{row['thompson'] * 1000:.0f} ms | {row['thompson-tags cpu'] * 1000:.0f} / "
                     f"{row['thompson-tags'] * 1000:.0f} ms |")
    lines += ["", *targets(results, times, paired)]
    return "\n".join(lines)


def _mean_to(results: dict[str, dict], setting: str, name: str, f: float) -> float:
    """`name`'s mean attempts to the share `f` on `setting` (runs that never got there at the cap)."""
    r = results[setting]
    return _mean(r["runs"][name].to[f], r["cap"])[0]


def behind_config_major(results: dict[str, dict]) -> list[str]:
    """Settings where the default's mean over the seeds is above config-major's at some coverage share."""
    return [s for s in results
            if any(_mean_to(results, s, "thompson", f) > _mean_to(results, s, "config-major", f) for f in FRACTIONS)]


def targets(results: dict[str, dict], times: list[dict], paired: dict[str, dict[float, Paired]]) -> list[str]:
    rows = ["**Targets** (the default is `thompson`):", "", "| target | measured | verdict |", "| --- | --- | --- |"]
    for setting in (s for s in RANKED if s in results):
        hindsight = _mean_to(results, setting, HINDSIGHT, 0.95)
        ratio = _mean_to(results, setting, "thompson", 0.95) / hindsight
        probes = _mean_to(results, setting, HINDSIGHT_PROBES, 0.95) / hindsight
        probe_one = _mean_to(results, setting, HINDSIGHT_PROBE_ONE, 0.95) / hindsight
        rows.append(f"| `{setting}`: within 1.1x of hindsight best-rate-first at 95% | {ratio:.2f}x (hindsight "
                    f"after the same probes, the ranking known: {probes:.2f}x; after one-task probes: "
                    f"{probe_one:.2f}x) | "
                    f"{'MET' if ratio <= 1.1 else 'NOT MET'} |")
    if "default" in results:
        oracle = results["default"]["oracle"][1.0]
        ratio = _mean_to(results, "default", "thompson", 1.0) / oracle
        search = (oracle + results["default"]["search"]) / oracle
        rows.append(f"| `default` (specialists): within 1.5x of the oracle at 100% | {ratio:.2f}x (the oracle plus "
                    f"finding each tag's able configuration tag by tag, before any probe: {search:.2f}x) | "
                    f"{'MET' if ratio <= 1.5 else 'NOT MET'} |")
    behind = behind_config_major(results)
    worse = [f"{s} at {f:.0%}" for s in behind for f in FRACTIONS if paired[s][f].worse]

    def interval(setting: str) -> str:
        seeds = paired[setting][FRACTIONS[0]].seeds
        ratios = " / ".join(f"{p.ratio:.3f}x ({p.low:.3f}-{p.high:.3f})" for p in paired[setting].values())
        return f"`{setting}` over seeds {seeds.start}-{seeds.stop - 1}, paired: {ratios}"

    seen = "; ".join(interval(s) for s in behind)
    measured = ("behind on the mean of the held-out seeds on " + ", ".join(f"`{s}`" for s in behind) + "; " + seen
                if behind else "better or equal everywhere")
    rows.append(f"| no setting worse than configuration-major round-robin (at 90, 95, 100%; where the held-out means "
                f"are behind, the paired ratio over {PAIRED_SEEDS} more seeds with its 95% interval) | {measured} | "
                f"{'NOT MET: worse on ' + ', '.join(worse) if worse else 'MET' if not behind else 'MET within the noise'} |")
    at134 = [row for row in times if row["configs"] == 134]
    if at134:
        cpu_ms, wall_ms = at134[0]["thompson cpu"] * 1000, at134[0]["thompson"] * 1000
        rows.append(f"| a proposal under 50 ms at 134 configurations x 500 tasks (ranking path) | {cpu_ms:.0f} ms CPU "
                    f"({wall_ms:.0f} ms wall on the shared machine) | {'MET' if cpu_ms < 50 else 'NOT MET'} in CPU "
                    f"time, {'MET' if wall_ms < 50 else 'NOT MET'} in wall time |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=FIRST_SEED, help="0: the tuning seeds.")
    parser.add_argument("--settings", default=",".join(SETTINGS))
    parser.add_argument("--no-times", action="store_true", help="Skip the time-per-proposal measurement.")
    parser.add_argument("--write", action="store_true", help="Update bench/RESULTS.md.")
    args = parser.parse_args()
    names = [n for n in args.settings.split(",") if n]
    unknown = [n for n in names if n not in SETTINGS]
    if unknown:
        parser.error(f"unknown settings {unknown}; known: {', '.join(SETTINGS)}")
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    started = time.perf_counter()
    load = os.getloadavg()[0]
    results = {}
    for name in names:
        spec = SETTINGS[name][1]
        chosen = [s for s in SCHEDULERS if s not in SLOW or name in SLOW[s]]
        results[name] = run_setting(spec, seeds, chosen)
        print(f"{name}: done ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    extra = range(seeds.stop, seeds.stop + PAIRED_SEEDS)
    paired = {s: paired_versus_config_major(SETTINGS[s][1], results[s], seeds, extra) for s in behind_config_major(results)}
    print(f"paired checks: done ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    times = [] if args.no_times else proposal_times()
    body = render(results, seeds, SCHEDULERS, times, paired)
    print(body)
    if args.write:
        command = "python bench/scheduler_efficiency.py" + "".join(f" {a}" for a in sys.argv[1:])
        header = (
            f"Machine: {os.cpu_count()} cores ({platform.machine()}), Python {platform.python_version()}, shared "
            f"with other jobs; 1-minute load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; "
            f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {time.perf_counter() - started:.0f} s in all.\n\n"
        )
        notes = "\n".join(NOTES)
        replace_section(SECTION, f"{SECTION}\n\n{header}{body}\n\nReproduce: `nice -n 10 {command}`\n\n{notes}")


if __name__ == "__main__":
    main()
