"""The price of a lift: per-side costs on the heldout tasks, the gate's price bounds, and the first line."""

from __future__ import annotations

from types import SimpleNamespace

from rsi.cli.render_eval import eval_lines
from rsi.evaluation import (
    CANDIDATE,
    CONTROL,
    PARENT,
    EvalOutcome,
    RetentionEstimate,
    SideCost,
    _Solved,
    decide_adapter,
    price_text,
    side_costs,
)
from rsi.promotion.decision import GatePolicy, paired_lift

STRONG = paired_lift({f"t{i}": i < 12 for i in range(20)}, {f"t{i}": i < 2 for i in range(20)})
KEPT = RetentionEstimate(4, 4, 4, 4)


def costs(candidate_tokens: float, parent_tokens: float = 80.0) -> dict[str, SideCost]:
    return {"parent": SideCost(tasks=20, pass_rate=0.1, completion_tokens_per_task=parent_tokens, seconds_per_task=2.0),
            "candidate": SideCost(tasks=20, pass_rate=0.6, completion_tokens_per_task=candidate_tokens,
                                  seconds_per_task=9.0)}


def test_without_price_bounds_the_price_never_decides():
    assert decide_adapter(STRONG, KEPT, GatePolicy(), costs(8000.0)).promote


def test_a_token_ratio_above_the_bound_is_refused_and_says_by_how_much():
    gate = GatePolicy(max_token_ratio=10.0)
    assert decide_adapter(STRONG, KEPT, gate, costs(790.0)).promote
    refused = decide_adapter(STRONG, KEPT, gate, costs(810.0))
    assert not refused.promote and "10.12x" in refused.reason and "max_token_ratio 10.0" in refused.reason
    assert refused.gate.max_token_ratio == 10.0


def test_lift_per_extra_thousand_tokens():
    # lift 0.5 for 720 extra tokens per task: 0.694 per extra 1k tokens
    assert decide_adapter(STRONG, KEPT, GatePolicy(min_lift_per_1k_tokens=0.6), costs(800.0)).promote
    refused = decide_adapter(STRONG, KEPT, GatePolicy(min_lift_per_1k_tokens=0.8), costs(800.0))
    assert not refused.promote and "+0.694" in refused.reason
    # a candidate that spends fewer tokens is never refused for its price per token
    assert decide_adapter(STRONG, KEPT, GatePolicy(min_lift_per_1k_tokens=5.0), costs(40.0)).promote


def test_side_costs_count_heldout_tasks_only():
    plan = SimpleNamespace(heldout=["a", "b"])
    ran = _Solved(by_side={PARENT: {"a": True, "b": False, "covered": True}, CANDIDATE: {"a": True, "b": True}, CONTROL: {}},
                  spent={}, tokens=0, served={},
                  completion={PARENT: {"a": 50, "b": 70, "covered": 9999}, CANDIDATE: {"a": 60, "b": 900}},
                  seconds={PARENT: {"a": 1.0, "b": 3.0}, CANDIDATE: {"a": 2.0, "b": 20.0}})
    got = side_costs(plan, ran)
    assert set(got) == {"parent", "candidate"}
    assert got["parent"] == SideCost(tasks=2, pass_rate=0.5, completion_tokens_per_task=60.0, seconds_per_task=2.0)
    assert got["candidate"].completion_tokens_per_task == 480.0 and got["candidate"].pass_rate == 1.0
    assert price_text(got) == "at 8.0x the parent's completion tokens per heldout task (480 vs 60)"
    assert got["parent"].k_needed is None  # no candidate was checked on either side


def test_k_needed_is_the_mean_position_of_the_submitted_candidate_over_solved_heldout_tasks():
    plan = SimpleNamespace(heldout=["a", "b", "c"])
    ran = _Solved(by_side={PARENT: {"a": True, "b": True, "c": False}, CANDIDATE: {"a": True, "b": True, "c": True}},
                  spent={}, tokens=0, served={}, completion={}, seconds={},
                  depth={PARENT: {"a": 4, "b": 2, "covered": 1}, CANDIDATE: {"a": 1, "b": 1, "c": 2}})
    got = side_costs(plan, ran)
    assert (got["parent"].k_needed, got["candidate"].k_needed) == (3.0, 1.33)


def test_the_submitted_depth_is_read_from_the_trajectorys_check_records():
    from rsi.evaluation import submitted_depth
    from rsi.harness.trajectory import CheckRecord

    def steps(*checks):
        return SimpleNamespace(steps=[SimpleNamespace(check=c) for c in (None, *checks)])

    checked = [CheckRecord(candidate=i, passed=i == 3, total=1, selected=i == 3) for i in (1, 2, 3)]
    assert submitted_depth(steps(*checked)) == 3
    assert submitted_depth(steps()) is None  # nothing checked: no depth to speak of
    unmarked = [CheckRecord(candidate=i, passed=0, total=1) for i in (1, 2)]
    assert submitted_depth(steps(*unmarked)) == 2  # none marked submitted: every checked candidate was needed


def test_the_first_line_of_an_evaluation_names_its_price():
    side = {"name": "default", "revision": 2, "ref": "default@r2", "content_hash": "c", "config_hash": "h"}
    outcome = EvalOutcome(eval_id="e", suite="s", candidate=side, parent=side, heldout_tasks=["a"], covered_tasks=[],
                          lift=STRONG.summary(), retention=KEPT.summary(), per_task={}, costs=costs(800.0),
                          decision=decide_adapter(STRONG, KEPT, GatePolicy(), costs(800.0)))
    first = eval_lines(outcome)[0]
    assert "lift +0.500" in first and "at 10.0x the parent's completion tokens per heldout task" in first
    assert any("candidate: pass rate 0.600, 800 completion tokens and 9.0 s per heldout task" in line
               for line in eval_lines(outcome))
