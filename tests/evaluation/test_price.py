"""The price of a lift: per-side costs on the heldout tasks (prompt and completion tokens, check seconds), the
gate's price bounds (on by default: 10x), and the first line."""

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
KEPT = RetentionEstimate(4, 4, 4, 4, split="heldout")


def costs(candidate_tokens: float, parent_tokens: float = 80.0, candidate_prompt: float = 0.0,
          parent_prompt: float = 0.0) -> dict[str, SideCost]:
    return {"parent": SideCost(tasks=20, pass_rate=0.1, completion_tokens_per_task=parent_tokens, seconds_per_task=2.0,
                               prompt_tokens_per_task=parent_prompt),
            "candidate": SideCost(tasks=20, pass_rate=0.6, completion_tokens_per_task=candidate_tokens,
                                  seconds_per_task=9.0, prompt_tokens_per_task=candidate_prompt,
                                  check_seconds_per_task=0.42)}


def test_without_price_bounds_the_price_never_decides():
    assert decide_adapter(STRONG, KEPT, GatePolicy(max_token_ratio=None), costs(8000.0)).promote


def test_the_default_gate_rejects_a_12x_candidate_with_its_price_in_the_reason():
    from rsi.contracts.schema import GateSpec

    assert GateSpec().max_token_ratio == GatePolicy().max_token_ratio == 10.0  # on unless a contract says otherwise
    refused = decide_adapter(STRONG, KEPT, GatePolicy(), costs(960.0))
    assert not refused.promote
    assert "price 12.00x the parent's completion tokens per heldout task (960 vs 80) is above max_token_ratio 10" \
        in refused.reason
    assert decide_adapter(STRONG, KEPT, GatePolicy(), costs(790.0)).promote


def test_a_token_ratio_above_the_bound_is_refused_and_says_by_how_much():
    gate = GatePolicy(max_token_ratio=10.0)
    assert decide_adapter(STRONG, KEPT, gate, costs(790.0)).promote
    refused = decide_adapter(STRONG, KEPT, gate, costs(810.0))
    assert not refused.promote and "10.12x" in refused.reason and "max_token_ratio 10" in refused.reason
    assert refused.gate.max_token_ratio == 10.0


def test_prompt_tokens_are_priced_on_their_own():
    # the same completions, but twelve times the prompt (repair turns, exemplars): refused for the prompt
    refused = decide_adapter(STRONG, KEPT, GatePolicy(), costs(80.0, candidate_prompt=3600.0, parent_prompt=300.0))
    assert not refused.promote and "12.00x the parent's prompt tokens per heldout task (3600 vs 300)" in refused.reason
    # a parent that recorded no prompt tokens (an old record) leaves the ratio unmeasured, never free or infinite
    assert decide_adapter(STRONG, KEPT, GatePolicy(), costs(80.0, candidate_prompt=3600.0)).promote


def test_lift_per_extra_thousand_tokens_uses_the_lifts_lower_end():
    # 720 extra tokens per task; lift 0.5 but CI95 lower end 0.222: 0.309 per extra 1k tokens, not the point's 0.694
    assert round(STRONG.ci.low, 3) == 0.222 and STRONG.lift == 0.5
    assert decide_adapter(STRONG, KEPT, GatePolicy(min_lift_per_1k_tokens=0.3), costs(800.0)).promote
    refused = decide_adapter(STRONG, KEPT, GatePolicy(min_lift_per_1k_tokens=0.4), costs(800.0))
    # the point estimate (0.694 per 1k) would clear 0.4: the lower end does not
    assert not refused.promote and "+0.309" in refused.reason and "lower end +0.222" in refused.reason
    # the extra counts prompt tokens too: 720 extra completion + 280 extra prompt = 1000 extra tokens -> 0.222
    both = decide_adapter(STRONG, KEPT, GatePolicy(min_lift_per_1k_tokens=0.25),
                          costs(800.0, candidate_prompt=580.0, parent_prompt=300.0))
    assert not both.promote and "+0.222" in both.reason and "1000 extra prompt and completion tokens" in both.reason
    # a candidate that spends fewer tokens is never refused for its price per token
    assert decide_adapter(STRONG, KEPT, GatePolicy(min_lift_per_1k_tokens=5.0), costs(40.0)).promote


def test_side_costs_count_heldout_tasks_only():
    plan = SimpleNamespace(heldout=["a", "b"])
    ran = _Solved(by_side={PARENT: {"a": True, "b": False, "covered": True}, CANDIDATE: {"a": True, "b": True}, CONTROL: {}},
                  spent={}, tokens=0, served={},
                  completion={PARENT: {"a": 50, "b": 70, "covered": 9999}, CANDIDATE: {"a": 60, "b": 900}},
                  seconds={PARENT: {"a": 1.0, "b": 3.0}, CANDIDATE: {"a": 2.0, "b": 20.0}},
                  prompt={PARENT: {"a": 300, "b": 300, "covered": 9999}, CANDIDATE: {"a": 300, "b": 900}},
                  checks={CANDIDATE: {"a": 0.5, "b": 1.5}})
    got = side_costs(plan, ran)
    assert set(got) == {"parent", "candidate"}
    assert got["parent"] == SideCost(tasks=2, pass_rate=0.5, completion_tokens_per_task=60.0, seconds_per_task=2.0,
                                     prompt_tokens_per_task=300.0, check_seconds_per_task=0.0)
    assert got["candidate"].completion_tokens_per_task == 480.0 and got["candidate"].pass_rate == 1.0
    assert (got["candidate"].prompt_tokens_per_task, got["candidate"].check_seconds_per_task) == (600.0, 1.0)
    assert price_text(got) == ("at 8.0x the parent's completion tokens (480 vs 60), 2.0x its prompt tokens (600 vs 300) "
                               "and 1.00 vs 0.00 check seconds per heldout task")
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


def test_the_first_line_of_an_evaluation_names_its_three_prices():
    side = {"name": "default", "revision": 2, "ref": "default@r2", "content_hash": "c", "config_hash": "h"}
    priced = costs(800.0, candidate_prompt=450.0, parent_prompt=300.0)
    outcome = EvalOutcome(eval_id="e", suite="s", candidate=side, parent=side, heldout_tasks=["a"], covered_tasks=[],
                          lift=STRONG.summary(), retention=KEPT.summary(), per_task={}, costs=priced,
                          decision=decide_adapter(STRONG, KEPT, GatePolicy(), priced))
    first = eval_lines(outcome)[0]
    assert "lift +0.500" in first and ("at 10.0x the parent's completion tokens (800 vs 80), 1.5x its prompt tokens "
                                       "(450 vs 300) and 0.42 vs 0.00 check seconds per heldout task") in first
    assert any("candidate: pass rate 0.600, 800 completion tokens, 450 prompt tokens, 0.42 check seconds and 9.0 s per "
               "heldout task" in line for line in eval_lines(outcome))
