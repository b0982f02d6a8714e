"""Baselines: every scheduler respects max_tries_per_task (a property test over random small worlds),
configuration-major sweeps, and the hindsight bound stays out of the run registry."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rsi.scheduler import (
    SCHEDULERS,
    AttemptFact,
    ConfigMajorScheduler,
    ConfigOption,
    ScheduleRequest,
    TaskOption,
    make_scheduler,
    scheduler_name,
)
from rsi.simulate import RankedSpec, generate_ranked, hindsight_best_rate_first

BASELINES = ["round-robin", "config-major", "random", "best-single"]


def _drive(scheduler, configs, tasks, pass_rate: float, seed: int, jobs: int = 40) -> list[tuple[str, str]]:
    """Run `scheduler` for up to `jobs` proposals with random outcomes; return every proposed pair and
    check, before each proposal is applied, that no pair goes past its configuration's limit."""
    rng = random.Random(seed)
    limits = {c.config_hash: c.max_tries_per_task for c in configs}
    history: list[AttemptFact] = []
    tries: dict[tuple[str, str], int] = {}
    proposed = []
    base = ScheduleRequest(configs=configs, tasks=tasks, job_size=3, seed=seed)
    for job in range(jobs):
        proposal = scheduler.propose(replace(base, history=list(history), job_index=job))
        if proposal is None:
            break
        for key in proposal.task_keys:
            for _ in range(proposal.attempts_per_task):
                pair = (proposal.config_hash, key)
                limit = limits[proposal.config_hash]
                assert limit is None or tries.get(pair, 0) < limit, f"{scheduler.name} re-proposed {pair} past {limit}"
                tries[pair] = tries.get(pair, 0) + 1
                history.append(AttemptFact(proposal.config_hash, key, rng.random() < pass_rate))
                proposed.append(pair)
    return proposed


@settings(max_examples=40, deadline=None)
@given(
    name=st.sampled_from(BASELINES + ["hindsight"]),
    limits=st.lists(st.sampled_from([1, 2, None]), min_size=1, max_size=4),
    n_tasks=st.integers(min_value=1, max_value=10),
    pass_rate=st.sampled_from([0.0, 0.1, 0.5]),
    seed=st.integers(min_value=0, max_value=10_000),
)
def test_no_baseline_proposes_a_pair_past_max_tries_per_task(name, limits, n_tasks, pass_rate, seed):
    configs = [ConfigOption(f"c{i}", max_tries_per_task=limit) for i, limit in enumerate(limits)]
    tasks = [TaskOption(f"s/t{t}", "train", (f"g{t % 2}",)) for t in range(n_tasks)]
    if name == "hindsight":  # the bound is a configuration-major sweep in a given order
        scheduler = ConfigMajorScheduler(name="hindsight", order=[c.config_hash for c in reversed(configs)])
    else:
        scheduler = make_scheduler(name)
    _drive(scheduler, configs, tasks, pass_rate, seed)


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_every_scheduler_stops_once_every_pair_is_used_up_under_deterministic_outcomes(name):
    """Greedy configurations that fail everything: each pair is tried exactly once, then the scheduler stops."""
    configs = [ConfigOption(f"c{i}", max_tries_per_task=1) for i in range(3)]
    tasks = [TaskOption(f"s/t{t}", "train", (f"g{t % 2}",)) for t in range(5)]
    proposed = _drive(make_scheduler(name), configs, tasks, pass_rate=0.0, seed=1, jobs=100)
    assert sorted(proposed) == sorted({(c.config_hash, t.key) for c in configs for t in tasks})


def test_config_major_sweeps_one_configuration_before_the_next():
    configs = [ConfigOption("a"), ConfigOption("b")]
    tasks = [TaskOption(f"s/t{t}") for t in range(5)]
    scheduler = make_scheduler("config-major")
    request = ScheduleRequest(configs=configs, tasks=tasks, job_size=3)
    first = scheduler.propose(request)
    assert first.config_hash == "a" and first.task_keys == ("s/t0", "s/t1", "s/t2")
    history = [AttemptFact("a", k, False) for k in first.task_keys]
    second = scheduler.propose(replace(request, history=history))
    # the rest of a's sweep, topped up with the first task of its next sweep
    assert second.config_hash == "a" and second.task_keys == ("s/t0", "s/t3", "s/t4")
    history += [AttemptFact("a", k, False) for k in second.task_keys]
    third = scheduler.propose(replace(request, history=history))
    assert third.config_hash == "b" and third.task_keys == ("s/t0", "s/t1", "s/t2")


def test_hindsight_is_a_bound_of_the_simulator_not_a_run_scheduler():
    matrix = generate_ranked(RankedSpec(n_tasks=40, n_configs=5), 0)
    bound = hindsight_best_rate_first(matrix)
    rates = matrix.config_rates()
    assert [matrix.configs[rates.index(max(rates))].config_hash] == list(bound.order[:1])
    assert "hindsight" not in SCHEDULERS
    with pytest.raises(ValueError, match="unknown scheduler 'hindsight'"):
        scheduler_name("hindsight")


def test_run_spec_accepts_exactly_the_registered_names():
    from rsi.errors import ValidationError
    from rsi.run.spec import validate_run_spec

    for name in SCHEDULERS:
        assert validate_run_spec({"scheduler": name}).scheduler == name
    with pytest.raises(ValidationError, match="unknown scheduler"):
        validate_run_spec({"scheduler": "hindsight"})
