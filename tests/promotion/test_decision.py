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
