"""Pure cores: evidence (Wilson, marginal coverage, tags) and the promotion decision with its gate."""

from __future__ import annotations

import pytest

from rsi.promotion.decision import (
    GatePolicy,
    bootstrap_mean_interval,
    choose_candidate,
    decide_promotion,
    newcombe_paired_interval,
    paired_lift,
    route_by_tag,
)
from rsi.promotion.evidence import ScoredAttempt, collect_evidence, wilson_interval
from rsi.verdict import Verdict

_counter = iter(range(10**6))


def rec(config: str, task: str, verdict: str, split: str = "train", tags: tuple[str, ...] = (), tokens: int = 100,
        run: str = "run1") -> ScoredAttempt:
    return ScoredAttempt(
        attempt_id=f"a{next(_counter)}", run_id=run, config_hash=f"h-{config}", config_name=config,
        task_key=f"s/{task}", task_hash=f"c-{task}", split=split, verdict=Verdict(verdict), tags=tags, tokens=tokens,
    )


def test_wilson_known_values() -> None:
    # Reference values (Wilson 1927; e.g. statsmodels proportion_confint method="wilson").
    ci = wilson_interval(7, 10)
    assert ci.low == pytest.approx(0.39676, abs=1e-4)
    assert ci.high == pytest.approx(0.89221, abs=1e-4)
    assert wilson_interval(0, 10).low == 0.0
    assert wilson_interval(10, 10).high == 1.0
    assert wilson_interval(0, 0).low == 0.0 and wilson_interval(0, 0).high == 1.0
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def test_evidence_counts_marginal_and_tags() -> None:
    records = [
        rec("a", "t1", "passed", tags=("str",)), rec("a", "t1", "failed", tags=("str",)),
        rec("a", "t2", "passed", tags=("math",)),
        rec("b", "t2", "passed", tags=("math",)), rec("b", "t3", "passed", tags=("math",)),
        rec("b", "t1", "error", tags=("str",)),  # infrastructure: not an attempt, not a failure
        rec("c", "t4", "failed", tags=("str",)),
        rec("a", "t9", "passed", split="heldout"),
    ]
    ev = collect_evidence(records, "train")
    a, b, c = (ev.get(f"h-{n}") for n in "abc")
    assert a and b and c
    assert (a.attempts, a.passes, a.errors) == (3, 2, 0)
    assert (b.attempts, b.passes, b.errors) == (2, 2, 1)
    assert a.marginal == ("s/t1",) and b.marginal == ("s/t3",) and c.marginal == ()
    assert "s/t9" not in ev.tasks  # heldout left out of train evidence
    assert ev.covered == ("s/t1", "s/t2", "s/t3")
    assert a.tag("str").solved == 1 and a.tag("math").solved == 1
    assert b.tag("math").rate == 1.0 and b.tag("str") is None  # its only str attempt was an error
    assert a.pass_ci.low < a.pass_rate < a.pass_ci.high


def test_candidate_ranks_by_wilson_lower_bound_not_raw_rate() -> None:
    lucky = [rec("lucky", "t1", "passed")]  # 1/1: rate 1.0 but wide interval
    steady = [rec("steady", f"t{i}", "passed") for i in range(9)] + [rec("steady", "t9", "failed")]
    ev = collect_evidence(lucky + steady)
    assert choose_candidate(ev).config_name == "steady"


def test_routing_sends_each_tag_to_its_best_configuration() -> None:
    records = [
        rec("a", "s1", "passed", tags=("str",)), rec("a", "s2", "passed", tags=("str",)),
        rec("a", "m1", "failed", tags=("math",)), rec("a", "m2", "failed", tags=("math",)),
        rec("b", "s1", "failed", tags=("str",)), rec("b", "s2", "failed", tags=("str",)),
        rec("b", "m1", "passed", tags=("math",)), rec("b", "m2", "failed", tags=("math",)),
    ]
    routes = {r.tag: r.config_name for r in route_by_tag(collect_evidence(records))}
    assert routes == {"str": "a", "math": "b"}


def test_newcombe_paired_interval_matches_published_example() -> None:
    # Fagerland, Lydersen & Laake, "Statistical Analysis of Contingency Tables", ch. 8: the paired
    # table [[59, 6], [16, 80]] has Newcombe square-and-add estimate -0.0621, 95% CI (-0.1186, -0.0046).
    ci = newcombe_paired_interval(59, 6, 16, 80)
    assert ci.low == pytest.approx(-0.1186, abs=1e-4)
    assert ci.high == pytest.approx(-0.0046, abs=1e-4)


def test_paired_lift_methods_agree_on_direction() -> None:
    cand = {f"t{i}": i < 18 for i in range(20)}
    parent = {f"t{i}": i < 4 for i in range(20)}
    for method in ("newcombe", "bootstrap"):
        lift = paired_lift(cand, parent, method=method, seed=7)
        assert lift.lift == pytest.approx(0.7)
        assert lift.ci.excludes_zero() and lift.ci.low > 0.3, method
    same = paired_lift(parent, parent)
    assert same.lift == 0 and not same.ci.excludes_zero()


def test_bootstrap_is_seeded() -> None:
    values = [1, 0, 0, 1, -1, 1, 0, 1, 0, 0]
    assert bootstrap_mean_interval(values, 500, 3) == bootstrap_mean_interval(values, 500, 3)


def _gate_records(cand_heldout_passes: int, parent_heldout_passes: int, tasks: int = 12) -> list[ScoredAttempt]:
    records = [rec("cand", f"t{i}", "passed") for i in range(6)] + [rec("parent", f"t{i}", "passed") for i in range(2)]
    records += [rec("parent", f"t{i}", "failed") for i in range(2, 6)]
    for i in range(tasks):
        records.append(rec("cand", f"h{i}", "passed" if i < cand_heldout_passes else "failed", split="heldout"))
        records.append(rec("parent", f"h{i}", "passed" if i < parent_heldout_passes else "failed", split="heldout"))
    return records


def test_decision_promotes_when_heldout_lift_excludes_zero() -> None:
    decision = decide_promotion(_gate_records(10, 1), "default", "h-parent")
    assert decision.promote, decision.reason
    assert decision.candidate.config_name == "cand"
    assert decision.lift.tasks == 12 and decision.lift.lift == pytest.approx(9 / 12)
    assert decision.selection_split == "train"
    assert len(decision.decision_hash) == 16


def test_decision_refuses_when_candidate_not_better_on_heldout() -> None:
    decision = decide_promotion(_gate_records(3, 3), "default", "h-parent")
    assert not decision.promote
    assert "does not lie above min_lift" in decision.reason
    assert decision.candidate.config_name == "cand"


def test_decision_refuses_on_retention() -> None:
    records = _gate_records(0, 0, tasks=0)
    # candidate solves 20 new heldout tasks but loses 2 of the parent's 4
    for i in range(30):
        records.append(rec("cand", f"h{i}", "passed" if 2 <= i < 24 else "failed", split="heldout"))
        records.append(rec("parent", f"h{i}", "passed" if i < 4 else "failed", split="heldout"))
    decision = decide_promotion(records, "default", "h-parent", GatePolicy(min_lift=0.0, retention_min=0.9))
    assert not decision.promote and "retention" in decision.reason
    lenient = decide_promotion(records, "default", "h-parent", GatePolicy(retention_min=0.0))
    assert lenient.promote, lenient.reason


def test_decision_without_heldout_refuses_with_hint() -> None:
    records = [r for r in _gate_records(10, 1) if r.split == "train"]
    decision = decide_promotion(records, "default", "h-parent")
    assert not decision.promote
    assert "no heldout tasks" in decision.reason and "--split heldout" in decision.hint
    assert decide_promotion(records, "default", "h-parent", GatePolicy(enabled=False)).promote


def test_decision_when_parent_is_best_or_nothing_passed() -> None:
    records = _gate_records(10, 1)
    assert "already the configuration" in decide_promotion(records, "default", "h-cand").reason
    failed = [rec("a", "t1", "failed"), rec("b", "t1", "timeout")]
    nothing = decide_promotion(failed, "default", "h-a")
    assert not nothing.promote and "no configuration passed" in nothing.reason


def test_decision_hash_ignores_parent_but_tracks_evidence() -> None:
    records = _gate_records(10, 1)
    first = decide_promotion(records, "default", "h-parent")
    # After promotion the parent is the candidate; the decision identity must not change with it.
    assert decide_promotion(records, "default", "h-cand").decision_hash == first.decision_hash
    more = records + [rec("cand", "t7", "failed")]
    assert decide_promotion(more, "default", "h-parent").decision_hash != first.decision_hash
    assert decide_promotion(records, "other", "h-parent").decision_hash != first.decision_hash


def test_decision_with_a_parent_that_solved_no_heldout_task_says_no_tasks() -> None:
    decision = decide_promotion(_gate_records(10, 0), "default", "h-parent")
    assert decision.promote and decision.lift.retention is None
    assert "retention no tasks (vacuous: the parent solved none of them)" in decision.reason
    assert decision.summary()["heldout"]["retention"] is None


def test_both_sides_count_equal_attempts_per_heldout_task() -> None:
    """Three candidate attempts against one parent attempt per task: only the candidate's first counts."""
    records = [rec("cand", f"t{i}", "passed") for i in range(6)] + [rec("parent", f"t{i}", "failed") for i in range(6)]
    for i in range(12):
        records += [rec("cand", f"h{i}", v, split="heldout") for v in ("failed", "failed", "passed")]
        records.append(rec("parent", f"h{i}", "failed", split="heldout"))
    decision = decide_promotion(records, "default", "h-parent")
    # any-pass over three tries against one would read as a lift of 1.0; with equal attempts there is none
    assert decision.lift.tasks == 12 and decision.lift.lift == 0.0 and not decision.promote
    assert decision.unequal_attempts == 24
    # the candidate's error attempts are not attempts: they never count, nor unbalance
    errors = [r for r in records if not (r.config_name == "cand" and r.split == "heldout")]
    for i in range(12):
        errors += [rec("cand", f"h{i}", "error", split="heldout"), rec("cand", f"h{i}", "passed", split="heldout")]
    balanced = decide_promotion(errors, "default", "h-parent")
    assert balanced.unequal_attempts == 0 and balanced.lift.lift == 1.0 and balanced.promote


def test_the_heldout_fallback_never_gates_on_the_tasks_that_chose() -> None:
    """A run with heldout attempts only: a seeded half of its tasks chooses the candidate, the other half alone
    judges it. A candidate that wins only where it was chosen is refused."""
    from rsi.promotion.decision import split_heldout

    tasks = [f"s/h{i}" for i in range(40)]
    choosing, gating = split_heldout(tasks, seed=0)
    assert choosing and gating and not choosing & gating and choosing | gating == set(tasks)
    assert split_heldout(tasks, seed=0) == (choosing, gating) and split_heldout(tasks, seed=1) != (choosing, gating)
    records = []
    for key in tasks:
        name = key.partition("/")[2]
        wins = key in choosing  # strong where it is chosen, no better than the parent where it is judged
        records.append(rec("cand", name, "passed" if wins else "failed", split="heldout"))
        records.append(rec("parent", name, "failed", split="heldout"))
    decision = decide_promotion(records, "default", "h-parent")
    assert decision.selection_split == "heldout" and decision.candidate.config_name == "cand"
    assert decision.heldout_halves == (len(choosing), len(gating))
    assert set(decision.evidence.tasks) == choosing  # only the choosing half ranked the configurations
    assert decision.lift.tasks == len(gating) and decision.lift.lift == 0.0  # only the gating half judged
    assert not decision.promote and f"the other {len(gating)} judge it" in decision.reason
    # had it chosen and gated on the same 40 tasks, it would have passed: lift 0.5 with a CI above zero
    assert paired_lift({k: k in choosing for k in tasks}, {k: False for k in tasks}).ci.low > 0


def test_the_price_gates_a_promotion_by_default() -> None:
    """12x the parent's completion tokens per heldout task: refused by the default gate, the price in the reason;
    the per-1k rule reads the lift's lower end."""
    from rsi.promotion.price import AttemptCost

    records = _gate_records(10, 1)
    costs = {r.attempt_id: AttemptCost(prompt_tokens=300, completion_tokens=1200 if r.config_name == "cand" else 100,
                                       check_s=0.5 if r.config_name == "cand" else 0.0)
             for r in records if r.split == "heldout"}
    decision = decide_promotion(records, "default", "h-parent", costs=costs)
    assert not decision.promote
    assert ("price 12.00x the parent's completion tokens per heldout task (1200 vs 100) is above max_token_ratio 10"
            in decision.reason)
    assert decision.prices["candidate"].check_seconds_per_task == 0.5
    assert decision.summary()["gate"]["max_token_ratio"] == 10.0
    assert decide_promotion(records, "default", "h-parent", GatePolicy(max_token_ratio=12.5), costs=costs).promote
    # 1100 extra tokens per task; lift 0.75 but its CI95 lower end is about 0.36: 0.33 per 1k, not the point's 0.68
    low = decide_promotion(records, "default", "h-parent", GatePolicy(max_token_ratio=None, min_lift_per_1k_tokens=0.5),
                           costs=costs)
    assert not low.promote and "lower end +0.3" in low.reason and "1100 extra prompt and completion tokens" in low.reason
    # without trajectories the price is unmeasured: not applied, and the reason says so
    assert "price unmeasured" in decide_promotion(records, "default", "h-parent").reason
