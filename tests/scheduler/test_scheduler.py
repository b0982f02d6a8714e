"""Scheduler properties, for every registered scheduler, driven through the simulator."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rsi.scheduler import (
    SCHEDULERS,
    AttemptFact,
    Budget,
    ConfigOption,
    JobProposal,
    ScheduleRequest,
    TaskOption,
    make_scheduler,
)
from rsi.simulate import MatrixSpec, generate_matrix, simulate

NAMES = sorted(SCHEDULERS)
SMALL = MatrixSpec(n_tasks=40, n_configs=6, n_tags=6)


class Checked:
    """Wraps a scheduler and checks every proposal it makes against the request."""

    def __init__(self, inner, include_covered: bool = False) -> None:
        self.inner = inner
        self.name = inner.name
        self.include_covered = include_covered
        self.proposals = 0

    def propose(self, request: ScheduleRequest) -> JobProposal | None:
        request = replace(request, include_covered=self.include_covered)
        proposal = self.inner.propose(request)
        if proposal is None:
            return None
        self.proposals += 1
        covered = {f.task_key for f in map(AttemptFact._make, request.history) if f.passed}
        in_split = {t.key for t in request.tasks if t.split == request.split}
        assert proposal.config_hash in {c.config_hash for c in request.configs}
        assert 1 <= len(proposal.task_keys) <= request.job_size
        assert len(set(proposal.task_keys)) == len(proposal.task_keys)
        assert set(proposal.task_keys) <= in_split
        if not self.include_covered:
            assert not set(proposal.task_keys) & covered, "proposed a covered task"
        assert proposal.attempts <= request.budget.attempts
        return proposal


@pytest.mark.parametrize("name", NAMES)
def test_never_targets_a_covered_task_and_stops_at_full_coverage(name):
    matrix = generate_matrix(SMALL, seed=3)
    checked = Checked(make_scheduler(name))
    result = simulate(checked, matrix, seed=3, max_attempts=4000)
    assert checked.proposals > 3
    assert result.full_coverage, f"{name} stopped at {result.covered}/{len(matrix.tasks)}"
    assert result.curve[-1] == len(matrix.tasks) and len(result.curve) == result.attempts
    # Full coverage reached: the scheduler now declines to propose anything.
    history = [AttemptFact(matrix.configs[0].config_hash, t.key, True) for t in matrix.tasks]
    request = ScheduleRequest(configs=matrix.configs, tasks=matrix.tasks, history=history)
    assert make_scheduler(name).propose(request) is None
    assert make_scheduler(name).propose(replace(request, include_covered=True)) is None


@pytest.mark.parametrize("name", NAMES)
def test_respects_the_budget(name):
    matrix = generate_matrix(SMALL, seed=1)
    result = simulate(Checked(make_scheduler(name)), matrix, seed=1, max_attempts=37)
    assert result.attempts <= 37 and not result.full_coverage
    # Greedy configurations: the default's probes then hold 4 tasks at once (sampled ones start with 1).
    greedy = [replace(c, max_tries_per_task=1) for c in matrix.configs]
    base = ScheduleRequest(configs=greedy, tasks=matrix.tasks, attempts_per_task=2, job_size=8)
    scheduler = make_scheduler(name)
    assert len(scheduler.propose(replace(base, budget=Budget(attempts=5))).task_keys) == 2
    assert scheduler.propose(replace(base, budget=Budget(attempts=1))) is None
    assert scheduler.propose(replace(base, budget=Budget(attempts=0))) is None
    assert scheduler.propose(replace(base, budget=Budget(tokens=0))) is None
    assert scheduler.propose(replace(base, budget=Budget(wall_s=0.0))) is None
    capped = replace(base, budget=Budget(tokens=1000), tokens_per_attempt=200.0)  # 5 attempts = 2 tasks x 2
    assert len(scheduler.propose(capped).task_keys) == 2
    walled = replace(base, budget=Budget(wall_s=60.0), wall_s_per_attempt=10.0)  # 6 attempts = 3 tasks x 2
    assert len(scheduler.propose(walled).task_keys) == 3
    assert scheduler.propose(replace(base, configs=[])) is None


@pytest.mark.parametrize("name", NAMES)
def test_deterministic_under_a_seed(name):
    matrix = generate_matrix(SMALL, seed=2)
    first = simulate(make_scheduler(name), matrix, seed=5, max_attempts=300)
    again = simulate(make_scheduler(name), matrix, seed=5, max_attempts=300)
    assert first == again and first.curve == again.curve


@pytest.mark.parametrize("name", ["random", "thompson-draws"])
def test_randomised_schedulers_depend_on_the_seed(name):
    matrix = generate_matrix(SMALL, seed=2)
    runs = {simulate(make_scheduler(name), matrix, seed=s, max_attempts=200).curve for s in range(4)}
    assert len(runs) > 1


@pytest.mark.parametrize("name", NAMES)
def test_covered_tasks_only_when_asked(name):
    configs = [ConfigOption("a")]
    tasks = [TaskOption("s/t1", "train", ("x",)), TaskOption("s/t2", "train", ("y",)), TaskOption("s/h", "heldout")]
    history = [AttemptFact("a", "s/t1", True)]
    request = ScheduleRequest(configs=configs, tasks=tasks, history=history, job_size=4)
    assert make_scheduler(name).propose(request).task_keys == ("s/t2",)
    asked = make_scheduler(name).propose(replace(request, include_covered=True))
    assert asked.task_keys == ("s/t1", "s/t2")  # still only the target split
    heldout = make_scheduler(name).propose(replace(request, split="heldout"))
    assert heldout.task_keys == ("s/h",)


def test_tag_model_learns_which_configuration_solves_a_tag():
    configs = [ConfigOption("a"), ConfigOption("b"), ConfigOption("c")]
    tasks = [TaskOption(f"s/x{i}", "train", ("x",)) for i in range(12)]
    tasks += [TaskOption(f"s/y{i}", "train", ("y",)) for i in range(12)]
    history = []
    for i in range(6):  # b solves half of the x tasks it tried; a and c solve none
        history += [AttemptFact("b", f"s/x{i}", i % 2 == 0), AttemptFact("a", f"s/x{i}", False)]
        history += [AttemptFact("c", f"s/x{i}", False), AttemptFact("a", f"s/y{i}", i % 3 == 0)]
    proposal = make_scheduler("thompson-tags").propose(ScheduleRequest(configs=configs, tasks=tasks, history=history))
    covered = {f.task_key for f in history if f.passed}
    assert proposal.config_hash == "b"
    assert set(proposal.task_keys) <= {t.key for t in tasks if t.key.startswith("s/x")} - covered
    assert len(proposal.task_keys) == 8


def test_tag_model_moves_on_from_a_configuration_that_keeps_failing_a_task():
    configs = [ConfigOption("a"), ConfigOption("b")]
    tasks = [TaskOption(f"s/x{i}", "train", ("x",)) for i in range(10)]
    # a is able at x (it solved five tasks) but failed the last open task many times.
    history = [AttemptFact("a", f"s/x{i}", True) for i in range(9)]
    request = ScheduleRequest(configs=configs, tasks=tasks, history=history)
    assert make_scheduler("thompson-tags").propose(request).config_hash == "a"
    history += [AttemptFact("a", "s/x9", False)] * 25
    proposal = make_scheduler("thompson-tags").propose(replace(request, history=history))
    assert (proposal.config_hash, proposal.task_keys) == ("b", ("s/x9",))


def test_unknown_scheduler_name():
    with pytest.raises(ValueError, match="round-robin"):
        make_scheduler("nope")


def test_a_greedy_configuration_is_not_retried_on_a_task_it_failed() -> None:
    """max_tries_per_task=1 (greedy decoding): a failed task goes to another configuration, and once
    every configuration has used its tries on every open task the scheduler stops."""
    from rsi.scheduler import AttemptFact, ConfigOption, ScheduleRequest, TaskOption, make_scheduler

    greedy = ConfigOption("g", "greedy", max_tries_per_task=1)
    sampled = ConfigOption("s", "sampled")
    tasks = [TaskOption(f"suite/t{i}", "train", ("x",)) for i in range(4)]
    history = [AttemptFact("g", t.key, False) for t in tasks]
    scheduler = make_scheduler("thompson")
    proposal = scheduler.propose(ScheduleRequest(configs=[greedy, sampled], tasks=tasks, history=history, job_size=4))
    assert proposal is not None and proposal.config_hash == "s"

    only_greedy = scheduler.propose(ScheduleRequest(configs=[greedy], tasks=tasks, history=history, job_size=4))
    assert only_greedy is None

    partly = history[:2]
    fresh = scheduler.propose(ScheduleRequest(configs=[greedy], tasks=tasks, history=partly, job_size=4))
    assert fresh is not None and set(fresh.task_keys) == {"suite/t2", "suite/t3"}


def test_a_tag_nobody_can_do_yet_goes_to_the_configuration_with_no_known_strength() -> None:
    """a is known able at x and b at y; c has passed nothing. All three failed z once. Every
    configuration is in the portfolio for a reason, so c is the likeliest specialist of z."""
    from rsi.scheduler import TagMixtureScheduler

    configs = [ConfigOption("a"), ConfigOption("b"), ConfigOption("c")]
    tasks = [TaskOption(f"s/{g}{i}", "train", (g,)) for g in "xyz" for i in range(6)]
    history = [AttemptFact("a", f"s/x{i}", True) for i in range(5)]
    history += [AttemptFact("b", f"s/y{i}", True) for i in range(5)]
    history += [AttemptFact(c, "s/z0", False) for c in "abc"]
    # Leave only the z tasks open: x5 and y5 passed too.
    history += [AttemptFact("a", "s/x5", True), AttemptFact("b", "s/y5", True)]
    request = ScheduleRequest(configs=configs, tasks=tasks, history=history)
    proposal = make_scheduler("thompson-tags").propose(request)
    assert proposal is not None and proposal.config_hash == "c"
    # The same evidence without the "able at some tag" prior cannot tell c from a and b.
    blind = TagMixtureScheduler(assume_useful=False).propose(request)
    assert blind is not None and blind.config_hash == "a"


def test_with_costs_known_the_most_passes_per_unit_of_cost_wins() -> None:
    """slow passes 3 of 4 x tasks, fast 2 of 4: slow is likelier to pass, but at 60 s an attempt
    against 5 s, fast gives more passes per second of a time budget."""
    tasks = [TaskOption(f"s/x{i}", "train", ("x",)) for i in range(12)]
    history = [AttemptFact("slow", f"s/x{i}", i < 3) for i in range(4)]
    history += [AttemptFact("fast", f"s/x{i}", i < 6) for i in range(4, 8)]

    def pick(slow_cost, fast_cost):
        configs = [ConfigOption("slow", cost=slow_cost), ConfigOption("fast", cost=fast_cost)]
        proposal = make_scheduler("thompson-tags").propose(ScheduleRequest(configs=configs, tasks=tasks, history=history))
        assert proposal is not None
        return proposal.config_hash

    assert pick(None, None) == "slow"  # attempts are the only currency
    assert pick(60.0, 5.0) == "fast"
    assert pick(60.0, None) == "slow"  # an unmeasured configuration costs the median of the measured ones
