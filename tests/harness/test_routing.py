"""Per-turn specialist routing and per-specialist context building (pure functions)."""

from __future__ import annotations

from rsi.contracts.schema import RoutingRuleSpec, RoutingSpec
from rsi.harness.routing import (
    TurnRecord,
    approx_tokens,
    build_context,
    choose_specialist,
    summarize,
    turn_kind,
)
from rsi.models.base import ChatMessage

OPENING = [ChatMessage(role="system", content="sys"), ChatMessage(role="user", content="task")]


def rules(*entries: tuple[str, str, str]) -> RoutingSpec:
    return RoutingSpec(
        policy="rules", rules=[RoutingRuleSpec(turn=t, pattern=p, specialist=s) for t, p, s in entries]
    )


def test_fixed_policy_picks_the_same_specialist_every_turn_and_empty_means_base():
    spec = RoutingSpec(policy="fixed", specialist="coder")
    for kind in ("first", "after_error", "after_output"):
        decision = choose_specialist(spec, kind, "anything")
        assert (decision.specialist, decision.turn_kind, decision.reason) == ("coder", kind, "fixed")
    assert choose_specialist(RoutingSpec(), "first", "").specialist is None


def test_rules_match_by_turn_kind_first_match_wins():
    spec = rules(("first", "", "planner"), ("after_error", "", "debugger"), ("any", "", "coder"))
    assert choose_specialist(spec, "first", "x").specialist == "planner"
    assert choose_specialist(spec, "after_error", "x").specialist == "debugger"
    decision = choose_specialist(spec, "after_output", "x")
    assert (decision.specialist, decision.reason) == ("coder", "rule 3")


def test_rules_match_by_pattern_over_the_last_observation():
    spec = rules(("any", r"(Syntax|Indentation)Error", "fixer"), ("after_error", "", "debugger"))
    assert choose_specialist(spec, "after_error", "SyntaxError: invalid syntax").specialist == "fixer"
    assert choose_specialist(spec, "after_error", "ZeroDivisionError").specialist == "debugger"
    assert choose_specialist(spec, "after_output", "ZeroDivisionError").specialist is None


def test_no_matching_rule_means_the_bare_base_with_a_reason():
    decision = choose_specialist(rules(("after_error", "", "debugger")), "first", "task text")
    assert decision.specialist is None
    assert decision.reason == "no rule matched"


def test_turn_kind_follows_the_previous_turn():
    assert turn_kind(None) == "first"
    assert turn_kind(TurnRecord(None, "r", "o", error=True)) == "after_error"
    assert turn_kind(TurnRecord(None, "r", "o", error=False)) == "after_output"


def test_summaries_cap_other_specialists_turns_and_keep_own_turns_full():
    long_reply = "x" * 1000
    long_obs = "y" * 800
    turns = [
        TurnRecord("a", long_reply, long_obs, error=False),
        TurnRecord("b", "short b", "obs b", error=True),
        TurnRecord("a", "second a", "obs a2", error=False),
    ]
    seen_by_a = build_context(OPENING, turns, "a", summary_tokens=10)
    assert [m.role for m in seen_by_a] == ["system", "user"] + ["assistant", "user"] * 3
    assert seen_by_a[2].content == long_reply and seen_by_a[3].content == long_obs
    assert seen_by_a[4].content.startswith("[turn 2 by b, summarized]")

    seen_by_b = build_context(OPENING, turns, "b", summary_tokens=10)
    summary = seen_by_b[2].content
    assert summary.startswith("[turn 1 by a, summarized] " + "x" * 40)
    assert "x" * 41 not in summary and "more tokens" in summary
    assert seen_by_b[3].content.startswith("y" * 40) and "y" * 41 not in seen_by_b[3].content
    assert seen_by_b[4].content == "short b"  # its own turn, in full


def test_base_turns_are_summarized_for_a_specialist_and_zero_tokens_omits():
    turns = [TurnRecord(None, "base reply", "base obs", error=False)]
    seen = build_context(OPENING, turns, "coder", summary_tokens=0)
    assert seen[2].content == "[turn 1 by base, summarized] (omitted)"
    assert seen[3].content == "(omitted)"


def test_approximate_tokens_are_characters_over_four():
    assert approx_tokens("") == 0 and approx_tokens("abcd") == 1 and approx_tokens("abcde") == 2
    assert summarize("abc", 5) == "abc"
    assert summarize("a" * 30, 2) == "a" * 8 + " …[6 more tokens]"
