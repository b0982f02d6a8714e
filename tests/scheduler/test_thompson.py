"""The default scheduler: probes every configuration, finds out which world it is in, spots
unreachable tasks, fills jobs, weighs costs."""

from __future__ import annotations

import statistics
from dataclasses import replace

import numpy as np

from rsi.scheduler import AttemptFact, Budget, ConfigOption, ScheduleRequest, TaskOption, make_scheduler
from rsi.scheduler.ability import fit
from rsi.scheduler.common import Evidence
from rsi.scheduler.thompson import ThompsonScheduler, _data
from rsi.scheduler.world import check_world
from rsi.simulate import MatrixSpec, RankedSpec, generate_matrix, generate_ranked, simulate


def _world(request: ScheduleRequest):
    data, _ = _data(request, Evidence.fold(request.history))
    return check_world(data.pc, data.pt, data.pn, data.ps, data.task_tags, data.n_configs)


def test_every_configuration_gets_a_probe_before_any_is_exploited():
    configs = [ConfigOption(f"c{i}", f"config-{i}") for i in range(6)]
    tasks = [TaskOption(f"s/t{t}", "train", ("x",)) for t in range(30)]
    request = ScheduleRequest(configs=configs, tasks=tasks, job_size=8)
    history: list[AttemptFact] = []
    chosen = []
    for job in range(6):
        proposal = make_scheduler("thompson").propose(replace(request, history=history, job_index=job))
        chosen.append(proposal.config_hash)
        assert "probe" in proposal.reason
        # c0 passes everything it tries: a greedy rule would keep choosing it
        history += [AttemptFact(proposal.config_hash, k, proposal.config_hash == "c0") for k in proposal.task_keys]
    assert chosen == [c.config_hash for c in configs]
    after = make_scheduler("thompson").propose(replace(request, history=history, job_index=6))
    assert "probe" not in after.reason and after.config_hash == "c0"


def test_a_budget_too_small_to_probe_every_configuration_says_which_go_unexamined():
    configs = [ConfigOption(f"c{i}", f"config-{i}") for i in range(5)]
    tasks = [TaskOption(f"s/t{t}") for t in range(10)]
    request = ScheduleRequest(configs=configs, tasks=tasks, budget=Budget(attempts=3))
    proposal = make_scheduler("thompson").propose(request)
    assert proposal.config_hash == "c0"
    assert "config-3, config-4 will go unexamined" in proposal.reason


def test_the_world_check_tells_specialists_from_a_ranking():
    """Specialists: each configuration passes only its own tag. Ranking: a passes everything, c nothing,
    whatever the tag. The leave-one-out comparison must tell them apart."""
    configs = [ConfigOption(c) for c in "abc"]
    tasks = [TaskOption(f"s/{g}{i}", "train", (g,)) for g in "xyz" for i in range(12)]
    special = [AttemptFact(c, t.key, t.tags[0] == {"a": "x", "b": "y", "c": "z"}[c]) for c in "abc" for t in tasks[::2]]
    ranked = [AttemptFact(c, t.key, {"a": True, "b": i % 2 == 0, "c": False}[c])
              for c in "abc" for i, t in enumerate(tasks[::2])]
    special_world = _world(ScheduleRequest(configs=configs, tasks=tasks, history=special))
    ranked_world = _world(ScheduleRequest(configs=configs, tasks=tasks, history=ranked))
    assert special_world.specialists and special_world.tag_gain > 10
    assert not ranked_world.specialists and ranked_world.ranking_gain > 10 and ranked_world.tag_gain < 2
    assert "specialists by tag" in special_world.describe() and "one ranking" in ranked_world.describe()


def test_a_task_every_strong_configuration_failed_looks_unreachable():
    """a and b pass nearly everything they try; both failed t_hard. c failed t_soft. t_hard must look
    far less reachable than t_soft (a weak configuration's failure says little)."""
    configs = [ConfigOption(c, max_tries_per_task=1) for c in "abc"]
    tasks = [TaskOption(f"s/t{i}") for i in range(40)] + [TaskOption("s/hard"), TaskOption("s/soft")]
    history = [AttemptFact(c, f"s/t{i}", True) for c in "ab" for i in range(0, 40, 2)]
    history += [AttemptFact("c", f"s/t{i}", i % 4 == 0) for i in range(1, 40, 2)]
    history += [AttemptFact("a", "s/hard", False), AttemptFact("b", "s/hard", False), AttemptFact("c", "s/soft", False)]
    request = ScheduleRequest(configs=configs, tasks=tasks, history=history)
    data, index = _data(request, Evidence.fold(history))
    model = fit(data)
    assert model.reach[index["s/hard"]] < 0.5 < model.reach[index["s/soft"]]


def test_on_a_ranked_world_it_finds_the_strong_configuration_and_fills_its_jobs():
    seeds = range(2)
    worlds = [generate_ranked(RankedSpec(n_tasks=120, n_configs=8), s) for s in seeds]
    mine = [simulate(make_scheduler("thompson"), m, seed=s) for s, m in zip(seeds, worlds, strict=True)]
    sweep = [simulate(make_scheduler("config-major"), m, seed=s) for s, m in zip(seeds, worlds, strict=True)]
    assert all(r.full_coverage for r in mine + sweep)
    assert statistics.mean(r.attempts for r in mine) < statistics.mean(r.attempts for r in sweep)
    assert statistics.mean(r.attempts / r.jobs for r in mine) > 5  # jobs mostly full (8 tasks at most)


def test_on_a_specialist_world_it_hands_over_to_the_tag_model():
    matrix = generate_matrix(MatrixSpec(n_tasks=60, n_configs=6, n_tags=6), 1)
    reasons = []

    class Recording:
        name = "recording"

        def __init__(self):
            self.inner = make_scheduler("thompson")

        def propose(self, request):
            proposal = self.inner.propose(request)
            if proposal is not None:
                reasons.append(proposal.reason)
            return proposal

    result = simulate(Recording(), matrix, seed=1)
    assert result.full_coverage
    assert any("specialists by tag" in r for r in reasons[-5:])


def test_with_costs_known_the_most_passes_per_unit_of_cost_wins():
    tasks = [TaskOption(f"s/x{i}", "train", ("x",)) for i in range(12)]
    history = [AttemptFact("slow", f"s/x{i}", i < 3) for i in range(4)]
    history += [AttemptFact("fast", f"s/x{i}", i < 6) for i in range(4, 8)]

    def pick(slow_cost, fast_cost):
        configs = [ConfigOption("slow", cost=slow_cost), ConfigOption("fast", cost=fast_cost)]
        proposal = make_scheduler("thompson").propose(ScheduleRequest(configs=configs, tasks=tasks, history=history))
        return proposal.config_hash

    assert pick(None, None) == "slow"  # attempts are the only currency
    assert pick(60.0, 5.0) == "fast"


def test_the_model_is_pure_and_its_prediction_well_formed():
    matrix = generate_ranked(RankedSpec(n_tasks=50, n_configs=6), 3)
    history = [AttemptFact(c.config_hash, t.key, matrix.p[i][j] > 0.5)
               for i, c in enumerate(matrix.configs) for j, t in enumerate(matrix.tasks) if (i + j) % 3 == 0]
    request = ScheduleRequest(configs=matrix.configs, tasks=matrix.tasks, history=history)
    data, _ = _data(request, Evidence.fold(history))
    first, again = fit(data), fit(data)
    assert np.array_equal(first.a, again.a) and first.pi == again.pi
    rates = np.array(matrix.config_rates())
    assert np.corrcoef(first.a, rates)[0, 1] > 0.6  # the fitted abilities follow the true ranking


def _exploit_after_probes(histories: dict[str, list[bool]], job_size: int = 8, sure_jobs: bool = True,
                          job_index: int = 0, **fields):
    """The default's first job after every configuration's probe, `histories` saying how each probe went."""
    configs = [ConfigOption(c, max_tries_per_task=1) for c in histories]
    tasks = [TaskOption(f"s/t{i}") for i in range(60)]
    history, i = [], 0
    for c, outcomes in histories.items():
        for passed in outcomes:
            history.append(AttemptFact(c, f"s/t{i}", passed))
            i += 1
    request = ScheduleRequest(configs=configs, tasks=tasks, history=history, job_size=job_size, job_index=job_index)
    return ThompsonScheduler(sure_jobs=sure_jobs, **fields).propose(request)


def test_with_sure_jobs_a_job_is_as_long_as_the_choice_of_its_configuration_is_sure():
    """The variant (`sure_jobs`, off by default): two configurations with the same record make the choice
    a coin toss, so the job is short (a wrong pick costs few attempts); one far ahead: its job is full.
    The default fills the job either way (issue 15: jobs are filled up to job_size)."""
    tied = _exploit_after_probes({"a": [True, False, True, False], "b": [True, False, True, False]})
    clear = _exploit_after_probes({"a": [True] * 12, "b": [False] * 12})
    assert "probe" not in tied.reason and "probe" not in clear.reason
    assert 2 <= len(tied.task_keys) <= 5
    assert clear.config_hash == "a" and len(clear.task_keys) == 8
    assert f"{len(tied.task_keys)} of 8 tasks (how sure the choice is)" in tied.reason
    default = _exploit_after_probes({"a": [True, False, True, False], "b": [True, False, True, False]}, sure_jobs=False)
    assert len(default.task_keys) == 8


def test_with_explore_tasks_a_job_only_its_draw_chose_holds_that_many_tasks():
    """The variant (`explore_tasks`, off by default): where the posterior means would choose another
    configuration than the tempered draw did, the job is an exploration of `explore_tasks` tasks; where
    they agree it is full. Two configurations with the same record: the draws go either way."""
    tied = {"a": [True, False, True, False], "b": [True, False, True, False]}
    by_means = _exploit_after_probes(tied, sure_jobs=False, temperature=0.0).config_hash
    lengths: dict[bool, set[int]] = {True: set(), False: set()}
    for job in range(16):
        proposal = _exploit_after_probes(tied, sure_jobs=False, job_index=job, explore_tasks=1)
        explored = proposal.config_hash != by_means
        lengths[explored].add(len(proposal.task_keys))
        assert ("only its draw prefers" in proposal.reason) == explored
        assert len(_exploit_after_probes(tied, sure_jobs=False, job_index=job).task_keys) == 8  # off: full
    assert lengths == {True: {1}, False: {8}}
    clear = _exploit_after_probes({"a": [True] * 12, "b": [False] * 12}, sure_jobs=False, explore_tasks=1)
    assert clear.config_hash == "a" and len(clear.task_keys) == 8


def _probe_round(configs, tasks, outcome) -> tuple[list, list[AttemptFact]]:
    """Proposals while the default still probes; `outcome(config, task)` decides each attempt."""
    history: list[AttemptFact] = []
    proposals = []
    for job in range(3 * len(configs)):
        proposal = make_scheduler("thompson").propose(
            ScheduleRequest(configs=configs, tasks=tasks, history=list(history), job_index=job))
        proposals.append(proposal)
        if "probe" not in proposal.reason:
            break
        history += [AttemptFact(proposal.config_hash, k, outcome(proposal.config_hash, k)) for k in proposal.task_keys]
    return proposals, history


def test_sampled_configurations_get_one_task_probes_and_low_rates_hand_over_to_the_tag_model():
    """Sampled configurations (may retry): every configuration's first probe holds one task. The probes
    passed less than a quarter: no top-up, and the per-tag model decides from the next job on."""
    configs = [ConfigOption(f"c{i}", f"config-{i}") for i in range(6)]
    tasks = [TaskOption(f"s/t{t}", "train", (f"g{t % 3}",)) for t in range(30)]
    proposals, _ = _probe_round(configs, tasks, lambda c, k: c == "c0")
    assert [p.config_hash for p in proposals[:6]] == [c.config_hash for c in configs]
    assert all(len(p.task_keys) == 1 and "probe" in p.reason for p in proposals[:6])
    assert "probe" not in proposals[6].reason and "thompson-tags" in proposals[6].reason


def test_high_first_probe_rates_top_the_probes_up_and_greedy_configurations_probe_four_at_once():
    configs = [ConfigOption(f"c{i}", f"config-{i}") for i in range(4)]
    tasks = [TaskOption(f"s/t{t}", "train", ("x",)) for t in range(40)]
    proposals, history = _probe_round(configs, tasks, lambda c, k: c in ("c0", "c1"))  # half the probes pass
    first, topups = proposals[:4], [p for p in proposals[4:] if "probe" in p.reason]
    assert all(len(p.task_keys) == 1 for p in first)
    assert [p.config_hash for p in topups] == [c.config_hash for c in configs]
    assert all(len(p.task_keys) == 3 and "top-up" in p.reason for p in topups)
    assert "probe" not in proposals[-1].reason
    greedy = [ConfigOption(f"c{i}", f"config-{i}", max_tries_per_task=1) for i in range(4)]
    proposals, _ = _probe_round(greedy, tasks, lambda c, k: False)
    assert [len(p.task_keys) for p in proposals[:4]] == [4, 4, 4, 4] and "probe" not in proposals[4].reason


def test_a_portfolio_beyond_the_limit_is_examined_by_a_seeded_sample_and_names_the_rest():
    configs = [ConfigOption(f"c{i:02d}", f"config-{i}", max_tries_per_task=1) for i in range(30)]
    tasks = [TaskOption(f"s/t{t}") for t in range(200)]
    proposals, history = _probe_round(configs, tasks, lambda c, k: False)
    probes = [p for p in proposals if "probe" in p.reason]
    probed = [p.config_hash for p in probes]
    assert len(probed) == len(set(probed)) == 24 and "probe" not in proposals[-1].reason
    rest = sorted(c.name for c in configs if c.config_hash not in probed)
    assert len(rest) == 6 and all(name in probes[0].reason for name in rest)
    assert "a sample of 24" in probes[0].reason and "6 are not examined" in probes[1].reason
    again, _ = _probe_round(configs, tasks, lambda c, k: False)
    assert [p.config_hash for p in again] == [p.config_hash for p in proposals]  # pure: the same sample


def test_a_configuration_whose_first_probe_is_still_running_is_not_probed_again():
    """Overlapping jobs: the run plans the next job while c0's one-task probe runs (`in_flight`)."""
    configs = [ConfigOption(f"c{i}", f"config-{i}") for i in range(3)]
    tasks = [TaskOption(f"s/t{t}") for t in range(10)]
    request = ScheduleRequest(configs=configs, tasks=tasks[1:], in_flight=[("c0", "s/t0")])
    proposal = make_scheduler("thompson").propose(request)
    assert proposal.config_hash == "c1" and "probe" in proposal.reason
