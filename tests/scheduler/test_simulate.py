"""The simulator: matrices with the intended shape, seeded outcomes, and the oracle bound."""

from __future__ import annotations

import statistics
from dataclasses import replace

import pytest

from rsi.scheduler import make_scheduler
from rsi.simulate import MatrixSpec, PassMatrix, generate_matrix, simulate


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_default_matrix_matches_the_report_scale(seed):
    matrix = generate_matrix(MatrixSpec(), seed)
    assert (len(matrix.configs), len(matrix.tasks)) == (12, 122)
    assert all(len(row) == 122 for row in matrix.p)
    rates = matrix.config_rates()
    # single configurations pass 3-10% of the tasks on average...
    assert all(0.03 <= r <= 0.10 for r in rates), rates
    # ...while the union covers everything: every task has a configuration at least min_best_p good.
    assert min(matrix.best_p(t) for t in range(122)) >= MatrixSpec().min_best_p
    assert len({t.key for t in matrix.tasks}) == 122 and all(t.tags for t in matrix.tasks)


def test_matrices_are_deterministic_in_the_seed():
    assert generate_matrix(MatrixSpec(), 4) == generate_matrix(MatrixSpec(), 4)
    assert generate_matrix(MatrixSpec(), 4).p != generate_matrix(MatrixSpec(), 5).p


def test_tags_carry_the_structure():
    """A configuration's pass rate differs far more across tags than within a tag."""
    matrix = generate_matrix(MatrixSpec(), 0)
    spread = []
    for row in matrix.p:
        by_tag: dict[str, list[float]] = {}
        for t, task in enumerate(matrix.tasks):
            if len(task.tags) == 1:
                by_tag.setdefault(task.tags[0], []).append(row[t])
        means = [statistics.mean(v) for v in by_tag.values()]
        spread.append(max(means) / max(min(means), 1e-6))
    assert statistics.median(spread) > 20


def test_simulation_is_seeded_and_consistent():
    matrix = generate_matrix(MatrixSpec(n_tasks=30, n_configs=4, n_tags=4), 1)
    a = simulate(make_scheduler("random"), matrix, seed=3)
    b = simulate(make_scheduler("random"), matrix, seed=3)
    assert a == b and a.full_coverage
    assert len(a.curve) == a.attempts and a.curve[-1] == a.covered == 30
    assert all(x <= y for x, y in zip(a.curve, a.curve[1:], strict=False))
    capped = simulate(make_scheduler("random"), matrix, seed=3, max_attempts=10)
    assert capped.attempts <= 10 and not capped.full_coverage and capped.attempts_to_full is None


def test_a_certain_matrix_needs_exactly_one_attempt_per_task():
    # Config i passes only the tasks i, i+3, ... with certainty: the oracle needs one attempt each.
    from rsi.scheduler import ConfigOption, TaskOption

    tasks = tuple(TaskOption(f"s/t{t}", "train", (f"g{t % 3}",)) for t in range(12))
    configs = tuple(ConfigOption(f"c{c}") for c in range(3))
    p = tuple(tuple(1.0 if t % 3 == c else 0.0 for t in range(12)) for c in range(3))
    matrix = PassMatrix(configs, tasks, p)
    assert matrix.oracle_attempts() == 12
    result = simulate(make_scheduler("thompson"), matrix, seed=0)
    assert result.full_coverage and 12 <= result.attempts <= 24


@pytest.mark.slow
def test_oracle_bounds_every_scheduler_and_thompson_beats_round_robin():
    """Sanity on the default setting (4 seeds): oracle <= each scheduler on average, and the
    default scheduler needs at most half the attempts of round-robin (the benchmark's target)."""
    seeds = range(4)
    matrices = [generate_matrix(MatrixSpec(), s) for s in seeds]
    oracle = statistics.mean(m.oracle_attempts() for m in matrices)
    mean = {}
    for name in ("thompson", "round-robin", "random"):
        runs = [simulate(make_scheduler(name), m, seed=s, max_attempts=10_000) for s, m in zip(seeds, matrices, strict=True)]
        assert all(r.full_coverage for r in runs), name
        mean[name] = statistics.mean(r.attempts for r in runs)
        assert mean[name] >= oracle, (name, mean[name], oracle)
    assert mean["thompson"] * 2 <= mean["round-robin"], mean


@pytest.mark.parametrize(("rate", "expected"), [(1.0, 1.5), (0.5, 4.5)])
def test_tag_search_attempts_matches_the_sweep_search_in_closed_form(rate, expected):
    """One tag, four configurations, one able at `rate`: a random-order sweep loses (N-1)/2 attempts
    in the round that finds it and N-1 in each earlier round, (N-1)(1-q)/q + (N-1)/2 in all."""
    from rsi.scheduler import ConfigOption, TaskOption

    matrix = PassMatrix(
        configs=tuple(ConfigOption(f"c{i}") for i in range(4)),
        tasks=(TaskOption("sim/t0", "train", ("g",)),),
        p=((rate,), (0.0,), (0.01,), (0.0,)),
    )
    assert matrix.able_cells() == {("c0", "g")}
    assert matrix.tag_search_attempts(reps=20_000) == pytest.approx(expected, abs=0.1)


@pytest.mark.parametrize("seed", [0, 1])
def test_ranked_worlds_have_a_ranking_an_unreachable_share_and_deterministic_outcomes(seed):
    from rsi.simulate import RankedSpec, generate_ranked

    spec = RankedSpec(n_tasks=200, n_configs=12, unreachable=0.15)
    matrix = generate_ranked(spec, seed)
    assert {v for row in matrix.p for v in row} <= {0.0, 1.0}
    assert all(c.max_tries_per_task == 1 for c in matrix.configs)
    assert matrix.reachable() == 200 - round(0.15 * 200)
    assert matrix.oracle_attempts() == matrix.reachable()  # one attempt per coverable task
    assert matrix.oracle_attempts(0.5) == 85  # ceil(0.5 * 170)
    rates = matrix.config_rates()
    assert max(rates) > 3 * min(rates)
    # one ranking: the best configuration overall is among the best three on (nearly) every large tag
    best = rates.index(max(rates))
    large = [r for g, r in matrix.tag_rates().items() if sum(g in t.tags for t in matrix.tasks) >= 10]
    assert sum(sorted(r, reverse=True).index(r[best]) < 3 for r in large) >= 0.8 * len(large)
    assert all(len(t.tags) == 1 for t in matrix.tasks)
    sampled = generate_ranked(RankedSpec(n_tasks=100, n_configs=6, deterministic=False, show_tags=False), seed)
    assert all(t.tags == () for t in sampled.tasks) and all(c.max_tries_per_task is None for c in sampled.configs)
    assert min(sampled.best_p(t) for t in range(100) if sampled.best_p(t) > 0) >= 0.2


def test_coverage_counts_reachable_tasks_and_the_curve_gives_attempts_to_a_share():
    from rsi.simulate import RankedSpec, coverage_goal, generate_ranked, hindsight_best_rate_first

    matrix = generate_ranked(RankedSpec(n_tasks=60, n_configs=5), 2)
    result = simulate(hindsight_best_rate_first(matrix), matrix, seed=2)
    assert result.full_coverage and result.covered == matrix.reachable() < 60
    goal = coverage_goal(matrix.reachable(), 0.9)
    at = result.attempts_to(goal)
    assert at is not None and result.curve[at - 1] >= goal > result.curve[at - 2]
    assert result.attempts_to(0) == 0 and result.attempts_to(61) is None


def test_hindsight_after_probes_examines_every_configuration_then_sweeps_in_the_true_order():
    from rsi.scheduler import AttemptFact, ScheduleRequest
    from rsi.simulate import RankedSpec, generate_ranked, hindsight_after_probes

    matrix = generate_ranked(RankedSpec(n_tasks=40, n_configs=5), 3)
    bound = hindsight_after_probes(matrix, probe_tasks=3)
    history: list[AttemptFact] = []
    chosen = []
    for job in range(7):
        proposal = bound.propose(ScheduleRequest(configs=matrix.configs, tasks=matrix.tasks, history=history, job_index=job))
        chosen.append((proposal.config_hash, len(proposal.task_keys), "probe" in proposal.reason))
        c = [x.config_hash for x in matrix.configs].index(proposal.config_hash)
        t_index = {t.key: i for i, t in enumerate(matrix.tasks)}
        history += [AttemptFact(proposal.config_hash, k, matrix.p[c][t_index[k]] > 0.5) for k in proposal.task_keys]
    assert [c for c, _, _ in chosen[:5]] == [c.config_hash for c in matrix.configs]
    assert all(n == 3 and probe for _, n, probe in chosen[:5])
    rates = matrix.config_rates()
    best = max(range(5), key=lambda c: (rates[c], -c))
    assert chosen[5][0] == matrix.configs[best].config_hash and not chosen[5][2]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_stochastic_worlds_have_long_tailed_rates_of_1_to_21_percent_and_an_oracle_of_about_2(seed):
    from rsi.simulate import StochasticSpec, generate_stochastic

    matrix = generate_stochastic(StochasticSpec(), seed)
    assert (len(matrix.configs), len(matrix.tasks)) == (12, 122)
    rates = matrix.config_rates()
    assert all(0.0099 <= r <= 0.2101 for r in rates), rates  # single configurations pass 1-21% per attempt
    assert statistics.median(rates) < statistics.mean(rates) and max(rates) > 2 * statistics.median(rates)  # long tail
    assert 1.6 <= matrix.oracle_attempts() / len(matrix.tasks) <= 2.3  # about 2 attempts per task
    assert matrix.reachable() == len(matrix.tasks)
    assert all(c.max_tries_per_task is None for c in matrix.configs)  # Bernoulli: every attempt may be retried
    assert len({v for row in matrix.p for v in row if 0 < v < 1}) > 0 and all(len(t.tags) == 1 for t in matrix.tasks)
    hidden = generate_stochastic(StochasticSpec(show_tags=False), seed)
    assert hidden.p == matrix.p and all(t.tags == () for t in hidden.tasks)
    assert generate_stochastic(StochasticSpec(), seed) == matrix


def test_in_the_stochastic_regime_the_default_covers_everything_well_ahead_of_a_sweep():
    from rsi.simulate import StochasticSpec, generate_stochastic

    matrix = generate_stochastic(StochasticSpec(), 5)
    mine = simulate(make_scheduler("thompson"), matrix, seed=5, max_attempts=5000)
    sweep = simulate(make_scheduler("config-major"), matrix, seed=5, max_attempts=5000)
    assert mine.full_coverage and sweep.full_coverage
    assert mine.attempts * 2 < sweep.attempts


def test_hindsight_after_probes_examines_the_same_sample_as_the_default_in_a_large_portfolio():
    from rsi.scheduler import AttemptFact, ScheduleRequest
    from rsi.scheduler.common import examined
    from rsi.simulate import RankedSpec, generate_ranked, hindsight_after_probes

    matrix = generate_ranked(RankedSpec(n_tasks=60, n_configs=30), 4)
    request = ScheduleRequest(configs=matrix.configs, tasks=matrix.tasks, seed=4)
    sample = examined(request)
    assert len(sample) == 24 and sample == examined(request) and sample != examined(replace(request, seed=5))
    result_configs = []
    bound = hindsight_after_probes(matrix, probe_tasks=1)
    history: list[AttemptFact] = []
    for job in range(24):
        proposal = bound.propose(replace(request, history=list(history), job_index=job))
        result_configs.append(proposal.config_hash)
        history += [AttemptFact(proposal.config_hash, k, False) for k in proposal.task_keys]
    assert result_configs == [matrix.configs[i].config_hash for i in sample]


def test_without_structure_tags_tell_nothing_about_a_configuration():
    """`no-structure` (MatrixSpec(structured=False)): a configuration's rates across tags differ by the
    sampling noise of ~10 tasks per tag only, far less than in the same world with specialists."""

    def spread(structured: bool) -> float:
        matrix = generate_matrix(MatrixSpec(structured=structured), 0)
        rates = zip(*matrix.tag_rates().values(), strict=True)
        return statistics.median(max(r) / max(min(r), 1e-6) for r in rates)

    assert spread(False) < 20 and spread(True) > 5 * spread(False)


@pytest.mark.parametrize("seed", [0, 1])
def test_informative_tags_make_a_configuration_vary_across_tags_far_more_than_weak_tags(seed):
    """The `ranked-tags` regime (RankedSpec(tag_sd=1.5)): still one ranking, but a configuration's rate
    differs across the large tags about twice as much as with the weak tags of `ranked` (tag_sd=0.3)."""
    from rsi.simulate import RankedSpec, generate_ranked

    def spread(tag_sd: float) -> float:
        matrix = generate_ranked(RankedSpec(tag_sd=tag_sd), seed)
        by_tag, rates = matrix.tag_rates(), matrix.config_rates()
        large = [g for g in by_tag if sum(g in t.tags for t in matrix.tasks) >= 20]
        return statistics.mean(statistics.pstdev([by_tag[g][c] for g in large]) / rates[c] for c in range(len(rates)))

    assert spread(1.5) > 1.5 * spread(0.3)
    informative = generate_ranked(RankedSpec(tag_sd=1.5), seed)
    assert informative.reachable() == generate_ranked(RankedSpec(), seed).reachable() == 300 - round(0.13 * 300)


def test_ranked_many_worlds_have_a_leaderboards_size_and_the_default_examines_a_sample_of_them():
    """The `ranked-many` regime (134 configurations x 500 tasks): more configurations than the 24 examined
    whole, a wide ranking, 13% unreachable; the default's first probes go to its seeded sample only."""
    from rsi.scheduler import ScheduleRequest
    from rsi.scheduler.common import examined
    from rsi.simulate import RankedSpec, generate_ranked

    matrix = generate_ranked(RankedSpec(n_tasks=500, n_configs=134), 0)
    assert (len(matrix.configs), len(matrix.tasks), matrix.reachable()) == (134, 500, 500 - 65)
    rates = matrix.config_rates()
    assert max(rates) > 10 * min(rates)
    request = ScheduleRequest(configs=matrix.configs, tasks=matrix.tasks, seed=3)
    first = make_scheduler("thompson").propose(request)
    sample = examined(request)
    assert first is not None and len(sample) == 24
    assert first.config_hash == matrix.configs[sample[0]].config_hash and "110 are not examined" in first.reason
