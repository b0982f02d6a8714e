"""The retirement rule (rsi.scheduler.retire): a pure function of counted attempts and costs."""

from __future__ import annotations

import pytest

from rsi.scheduler import ConfigOption, ScheduleRequest, TaskOption
from rsi.scheduler.retire import (
    MIN_ATTEMPTS,
    CostStats,
    Retirement,
    cost_stats,
    recorded,
    retirements,
    wilson,
    without_retired,
)


def test_wilson_bounds_at_the_edges():
    assert wilson(0, 0) == (0.0, 1.0)  # no attempts: nothing known
    low, high = wilson(0, 16)
    assert low == 0.0 and high == pytest.approx(1.96**2 / (16 + 1.96**2))  # zero passes: upper bound stays > 0
    assert wilson(16, 16)[1] == 1.0 and wilson(16, 16)[0] > 0.75
    with pytest.raises(ValueError):
        wilson(3, 2)


def test_a_dead_dear_configuration_loses_to_a_live_cheap_one_with_its_figures():
    dead = CostStats("r", "repl", 16, 0, 200.0)
    live = CostStats("t", "text", 16, 6, 40.0)
    [ret] = retirements([dead, live])
    assert (ret.config_hash, ret.lost_to, ret.passes, ret.attempts, ret.cost, ret.lost_to_cost) == ("r", "t", 0, 16, 200.0, 40.0)
    assert ret.high == pytest.approx(wilson(0, 16)[1] / 200) and ret.lost_to_low == pytest.approx(wilson(6, 16)[0] / 40)
    assert ret.high < ret.lost_to_low
    text = ret.describe()
    assert "0/16" in text and "6/16" in text and "text" in text and "200 s/attempt" in text
    assert Retirement.from_json(ret.to_json()) == ret


def test_zero_attempts_or_too_few_are_never_judged():
    live = CostStats("t", "text", 16, 6, 40.0)
    assert retirements([CostStats("r", "repl", 0, 0, None), live]) == []
    assert retirements([CostStats("r", "repl", MIN_ATTEMPTS - 1, 0, 200.0), live]) == []
    assert retirements([CostStats("r", "repl", 16, 0, None), live]) == []  # cost unknown: not judged
    assert retirements([live]) == []  # alone: nobody to lose to


def test_equal_costs_retire_nobody_and_a_configuration_that_passed_is_kept():
    strong = CostStats("a", "a", 16, 15, 10.0)
    assert retirements([CostStats("b", "b", 16, 0, 10.0), strong]) == []  # equal cost: the scheduler's estimates decide
    assert retirements([CostStats("b", "b", 16, 1, 100.0), strong]) == []  # it passed once: not dead
    assert [r.config_hash for r in retirements([CostStats("b", "b", 16, 0, 10.5), strong])] == ["b"]


def test_close_figures_do_not_retire():
    # 0/16 at 2x the cost: upper bound 0.19 / 2 = 0.096 against 2/16 (lower 0.035): the bounds overlap.
    assert retirements([CostStats("b", "b", 16, 0, 2.0), CostStats("a", "a", 16, 2, 1.0)]) == []


def test_the_winner_and_the_already_retired_are_left_alone():
    stats = [CostStats("a", "a", 16, 8, 1.0), CostStats("b", "b", 16, 0, 9.0), CostStats("c", "c", 16, 0, 9.0)]
    assert {r.config_hash for r in retirements(stats)} == {"b", "c"}
    assert {r.config_hash for r in retirements(stats, retired={"b"})} == {"c"}
    # the retired winner judges nobody: with "a" retired, b and c are equal and dead, nobody lost to a live one
    assert retirements(stats, retired={"a"}) == []


def test_cost_stats_judge_each_configuration_on_its_first_attempts():
    history = [("a", f"t{i}", False) for i in range(16)] + [("a", "t99", True)] * 5 + [("b", "t1", True)]
    stats = {s.config_hash: s for s in cost_stats(history, {"a": 3.0}, {"a": "A"})}
    assert (stats["a"].attempts, stats["a"].passes, stats["a"].cost, stats["a"].name) == (16, 0, 3.0, "A")
    assert (stats["b"].attempts, stats["b"].passes, stats["b"].cost) == (1, 1, None)
    assert cost_stats(history, {}, window=0)[0].attempts == 21


def test_without_retired_keeps_the_history():
    request = ScheduleRequest(configs=[ConfigOption("a"), ConfigOption("b")], tasks=[TaskOption("t")],
                              history=[("b", "t", False)])
    out = without_retired(request, {"b"})
    assert [c.config_hash for c in out.configs] == ["a"] and list(out.history) == [("b", "t", False)]
    assert without_retired(request, set()) is request


def test_recorded_reads_the_first_record_of_each_configuration():
    [ret] = retirements([CostStats("r", "repl", 16, 0, 200.0), CostStats("t", "text", 16, 6, 40.0)])
    later = Retirement(**{**ret.to_json(), "attempts": 99})
    found = recorded([{"reason": "x"}, {"retired": [ret.to_json()]}, {"retired": [later.to_json()]}])
    assert found == {"r": ret}
