"""Successor portfolios: dominated configurations dropped, kept ones justified, new variants valid with parents."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from rsi.config import Configuration, configuration_from_contract
from rsi.contracts.load import load_contract
from rsi.models.base import Completion, GenerationRequest, GenerationResult
from rsi.promotion.evidence import ScoredAttempt, collect_evidence
from rsi.promotion.propose import (
    FailureExample,
    parse_reflection,
    propose_successors,
    reflect_prompt,
    reflection_messages,
)
from rsi.verdict import Verdict

REPO = Path(__file__).resolve().parents[2]
_ids = itertools.count()


@pytest.fixture(scope="module")
def contract():
    return load_contract(REPO / "hcp" / "default.toml")


def config(contract, name: str, **overrides) -> Configuration:
    return configuration_from_contract(contract, name=name, overrides=overrides, parents=["default"])


def rec(cfg: Configuration, task: str, passed: bool, tags: tuple[str, ...] = ()) -> ScoredAttempt:
    return ScoredAttempt(
        attempt_id=f"a{next(_ids)}", run_id="r1", config_hash=cfg.config_hash, config_name=cfg.name,
        task_key=f"s/{task}", task_hash=f"c-{task}", split="train",
        verdict=Verdict.PASSED if passed else Verdict.FAILED, tags=tags,
    )


@pytest.fixture
def portfolio(contract):
    greedy = config(contract, "greedy")
    hot = config(contract, "hot", **{"harness.sampling.temperature": 0.7, "harness.prompt_style": "stepwise"})
    subset = config(contract, "subset", **{"harness.max_turns": 3})
    useless = config(contract, "useless", **{"harness.max_turns": 1})
    tagged = config(contract, "tagged", **{"harness.observation_chars": 800})
    records = []
    for task in ("a1", "a2", "a3"):
        records.append(rec(greedy, task, True, ("str",)))
    records += [rec(greedy, "m1", False, ("math",)), rec(greedy, "m2", False, ("math",))]
    records += [rec(hot, "a1", False, ("str",)), rec(hot, "x9", True, ("str",))]  # x9: marginal
    records += [rec(subset, "a1", True, ("str",)), rec(subset, "a2", True, ("str",)), rec(subset, "a3", False, ("str",))]
    records += [rec(useless, "a1", False, ("str",)), rec(useless, "m1", False, ("math",))]
    records += [rec(useless, task, False, ("str",)) for task in ("a2", "a3", "a1")]  # 5 counted: enough to judge
    # tagged: the only one to solve m1, so marginal and best on 'math'
    records += [rec(tagged, "m1", True, ("math",)), rec(tagged, "a1", False, ("str",))]
    configs = {c.config_hash: c for c in (greedy, hot, subset, useless, tagged)}
    return collect_evidence(records), configs


def test_dominated_dropped_and_kept_justified(portfolio) -> None:
    evidence, configs = portfolio
    outcome = propose_successors(evidence, configs, max_new=0)
    kept = {v.name: v for v in outcome.kept}
    dropped = {d.name: d for d in outcome.dropped}
    assert set(kept) == {"greedy", "hot", "tagged"}
    assert set(dropped) == {"subset", "useless"}
    assert "dominated by greedy" in dropped["subset"].reason
    assert "solved nothing" in dropped["useless"].reason
    assert "only it solved s/x9" in kept["hot"].reason
    assert "best on tag 'math'" in kept["tagged"].reason
    # subset solved 2 of 3 (rate 0.67 > greedy's 0.6 overall) but on fewer attempts: the Wilson ranking
    # puts greedy first, and greedy solved every task subset solved
    assert "best overall" in kept["greedy"].reason and "best on tag 'str'" in kept["greedy"].reason
    for variant in outcome.kept:  # every kept configuration carries evidence and its own lineage
        assert variant.reason and variant.parents == ("default",)
        assert variant.overrides == configs[variant.source_hash].overrides
    assert outcome.new == ()


def test_new_variants_validate_and_name_parents(portfolio, contract) -> None:
    evidence, configs = portfolio
    def identify(variant):
        return configuration_from_contract(contract, variant.name, variant.overrides).config_hash

    outcome = propose_successors(evidence, configs, max_new=12, prompt_files={"text": "prompts/text.md"},
                                 identify=identify)
    assert 6 <= len(outcome.new) <= 12
    operators = {v.operator for v in outcome.new}
    assert {"sampling", "prompt_style", "substrate", "recombine"} <= operators
    names = [v.name for v in outcome.variants]
    assert len(names) == len(set(names))
    kept_names = {v.name for v in outcome.kept}
    hashes = {c.config_hash for c in configs.values()}
    for variant in outcome.new:
        assert variant.parents and set(variant.parents) <= kept_names, variant
        resolved = configuration_from_contract(contract, variant.name, variant.overrides, list(variant.parents))
        assert resolved.config_hash not in hashes, f"{variant.name} duplicates an existing configuration"
        hashes.add(resolved.config_hash)
    greedy_t = next(v for v in outcome.new if v.name == "greedy.t07")
    assert greedy_t.overrides["harness.sampling.temperature"] == 0.7
    hot_greedy = next(v for v in outcome.new if v.name == "hot.greedy")
    assert hot_greedy.overrides["harness.sampling.temperature"] == 0.0
    assert hot_greedy.overrides["harness.prompt_style"] == "stepwise"  # the parent's own settings carried
    text = next(v for v in outcome.new if v.name == "greedy.text")
    assert text.overrides["harness.system_prompt_file"] == "prompts/text.md"
    cross = next(v for v in outcome.new if v.operator == "recombine")
    assert len(cross.parents) == 2


def test_round_robin_cap_spreads_over_winners(portfolio) -> None:
    evidence, configs = portfolio
    outcome = propose_successors(evidence, configs, max_new=3)
    assert len(outcome.new) == 3
    assert len({v.parents[0] for v in outcome.new}) == 3


class FixedReplyModel:
    """A ChatModel that answers every request with one fixed text (the reply a real model could give)."""

    name = "fixed-reply"

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.requests: list[GenerationRequest] = []

    def generate(self, request: GenerationRequest) -> GenerationResult:
        self.requests.append(request)
        return GenerationResult(completions=[Completion(text=self.reply)])

    def load_adapter(self, name: str, path: str) -> None: ...

    def unload_adapter(self, name: str) -> None: ...

    def close(self) -> None: ...


FAILURE = FailureExample("s/a3", "Write add(a, b).", "```python\nprint(1)\n```", "Output: 1", "failed: wrong value")


def test_reflection_request_and_parsing(contract) -> None:
    winner = config(contract, "greedy")
    messages = reflection_messages(winner.system_prompt, [FAILURE])
    assert "s/a3" in messages[1].content and winner.system_prompt.strip()[:40] in messages[1].content
    good = "<prompt>\nYou are careful. Always write solution.py, test it, then call submit().\n</prompt>"
    assert parse_reflection(good, winner.system_prompt)[0].startswith("You are careful")
    assert parse_reflection("no tags here", "x")[0] is None
    assert parse_reflection("<prompt>short</prompt>", "x")[1].startswith("the revised prompt is too short")


def test_reflect_prompt_makes_a_valid_variant(contract) -> None:
    winner = config(contract, "greedy")
    model = FixedReplyModel("<prompt>You are careful. Always write solution.py, test it, then call submit().</prompt>")
    variant, note = reflect_prompt(model, winner, [FAILURE])
    assert variant is not None, note
    assert variant.parents == ("greedy",) and variant.operator == "reflect"
    resolved = configuration_from_contract(contract, variant.name, variant.overrides, list(variant.parents))
    assert resolved.system_prompt.startswith("You are careful")
    assert resolved.config_hash != winner.config_hash
    assert model.requests[0].temperature == 0.0
    refused, why = reflect_prompt(FixedReplyModel("I cannot help"), winner, [FAILURE])
    assert refused is None and "no usable prompt" in why
    none, why = reflect_prompt(model, winner, [])
    assert none is None and "no failed attempts" in why


def test_untried_configurations_are_kept_and_named(portfolio, contract) -> None:
    """A configuration of the run that never made a counted attempt (not in the evidence, or only
    infrastructure errors) is kept, marked untried, and not used as a parent for new variants."""
    evidence, configs = portfolio
    never = config(contract, "never", **{"harness.max_turns": 7})
    broken = config(contract, "broken", **{"harness.max_turns": 9})
    errored = ScoredAttempt(
        attempt_id="e1", run_id="r1", config_hash=broken.config_hash, config_name=broken.name,
        task_key="s/a1", task_hash="c-a1", split="train", verdict=Verdict.ERROR,
    )
    from rsi.promotion.evidence import Evidence

    with_error = collect_evidence([errored])
    merged = Evidence(evidence.run_ids, evidence.split, evidence.configs + with_error.configs, evidence.tasks,
                      evidence.task_tags)
    everything = {**configs, never.config_hash: never, broken.config_hash: broken}
    outcome = propose_successors(merged, everything, max_new=6)
    kept = {v.name: v for v in outcome.kept}
    assert {"never", "broken"} <= set(kept)
    assert kept["never"].reason.startswith("untried: no counted attempt")
    assert "infrastructure errors" in kept["broken"].reason
    assert kept["never"].overrides == never.overrides and kept["never"].source_hash == never.config_hash
    assert not {d.name for d in outcome.dropped} & {"never", "broken"}
    assert all("never" not in v.parents and "broken" not in v.parents for v in outcome.new)
    assert outcome.new  # the tried winners still get variants


def test_too_few_counted_attempts_is_untried_not_useless(portfolio, contract) -> None:
    """Solving nothing in fewer than MIN_COUNTED_ATTEMPTS counted attempts (a run cut short, attempts
    lost to errors) is too little evidence: kept as untried, never a parent; at the threshold, dropped."""
    from rsi.promotion.evidence import Evidence
    from rsi.promotion.propose import MIN_COUNTED_ATTEMPTS

    evidence, configs = portfolio
    slow = config(contract, "slow", **{"harness.max_turns": 11})
    few = [rec(slow, "a1", False, ("str",)) for _ in range(MIN_COUNTED_ATTEMPTS - 1)]
    few.append(ScoredAttempt(
        attempt_id="e-slow", run_id="r1", config_hash=slow.config_hash, config_name=slow.name,
        task_key="s/a2", task_hash="c-a2", split="train", verdict=Verdict.ERROR,
    ))
    extra = collect_evidence(few)
    merged = Evidence(evidence.run_ids, evidence.split, evidence.configs + extra.configs, evidence.tasks,
                      evidence.task_tags)
    everything = {**configs, slow.config_hash: slow}
    outcome = propose_successors(merged, everything, max_new=6)
    kept = {v.name: v for v in outcome.kept}
    assert "slow" in kept and "slow" not in {d.name for d in outcome.dropped}
    assert kept["slow"].reason.startswith(f"untried: solved nothing in only {MIN_COUNTED_ATTEMPTS - 1} counted")
    assert "1 more lost to infrastructure errors" in kept["slow"].reason
    assert all("slow" not in v.parents for v in outcome.new)
    # the stated number is a parameter: at a threshold it meets, solving nothing drops it
    judged = propose_successors(merged, everything, max_new=0, min_attempts=MIN_COUNTED_ATTEMPTS - 1)
    assert {d.name: d.reason for d in judged.dropped}["slow"].startswith("solved nothing")


def test_the_feedback_operator_checks_unchecked_winners_and_varies_checked_ones(contract) -> None:
    text = config(contract, "text", **{"harness.substrate": "text", "harness.max_turns": 1})
    checked = config(contract, "checked", **{"harness.substrate": "text", "harness.max_turns": 1,
                                             "harness.check": "first-pass", "harness.sampling.samples": 8,
                                             "harness.sampling.temperature": 0.4, "harness.sampling.greedy_first": True})
    records = [rec(text, "a1", True), rec(checked, "b1", True)]
    outcome = propose_successors(collect_evidence(records), {c.config_hash: c for c in (text, checked)}, max_new=20)
    feedback = {v.name: v.overrides for v in outcome.new if v.operator == "feedback"}
    assert feedback["text.checked"] == {**text.overrides, "harness.check": "first-pass",
                                        "harness.sampling.greedy_first": True, "harness.sampling.samples": 4,
                                        "harness.sampling.temperature": 0.4, "harness.sampling.top_p": 0.95}
    assert feedback["checked.repair1"]["harness.repair_turns"] == 1
    assert feedback["checked.most-passed"]["harness.check"] == "most-passed"
    doubled = next(v for v in outcome.new if v.name == "checked.n16")  # a checked winner may sample 16
    assert doubled.overrides["harness.sampling.samples"] == 16
    # the feedback operator leads each winner's queue, so a small cap still proposes it
    capped = propose_successors(collect_evidence(records), {c.config_hash: c for c in (text, checked)}, max_new=2)
    assert {v.operator for v in capped.new} == {"feedback"}


def test_the_exemplars_operator_needs_a_library_and_varies_the_count_zero_included(contract) -> None:
    library = {"harness.experience": "r2", "harness.experience_sha256": "a" * 64}
    plain = config(contract, "plain")
    with_library = config(contract, "lib", **library)
    two = config(contract, "two", **library, **{"harness.exemplars": 2})
    three = config(contract, "three", **library, **{"harness.exemplars": 3})
    records = [rec(c, f"t{i}", True) for i, c in enumerate((plain, with_library, two, three))]
    outcome = propose_successors(collect_evidence(records), {c.config_hash: c for c in (plain, with_library, two, three)},
                                 max_new=40)
    exemplars = {v.name: v.overrides.get("harness.exemplars") for v in outcome.new if v.operator == "exemplars"}
    # none for plain (no library); two's ex0 and ex3 are lib and three themselves, so deduplicated away
    assert exemplars == {"lib.ex1": 1, "three.ex0": 0}
    alone = propose_successors(collect_evidence([rec(two, "t0", True)]), {two.config_hash: two}, max_new=40)
    assert {v.name: v.overrides["harness.exemplars"] for v in alone.new if v.operator == "exemplars"} == {
        "two.ex0": 0, "two.ex3": 3}
    assert all(v.parents == (v.name.split(".")[0],) for v in outcome.new if v.operator == "exemplars")
