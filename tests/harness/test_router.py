"""The learned router (rsi/harness/router.py): features, fit and predict, and its choice recorded per turn."""

from __future__ import annotations

from rsi.harness.attempt import run_attempt
from rsi.harness.router import (
    Example,
    RouterEvidence,
    RouterRecord,
    fit,
    parse_router,
    predict,
    score,
    turn_features,
)
from rsi.harness.routing import TaskView, choose_specialist
from rsi.harness.trajectory import read_trajectory
from rsi.models.scripted import ScriptedModel
from rsi.verdict import Verdict

GOOD_ADD = "```python\nopen('solution.py', 'w').write('def add(a, b):\\n    return a + b\\n')\n```"
SUBMIT = "```python\nsubmit()\n```"
SPECIALISTS = (None, "debugger", "planner")


def examples() -> list[Example]:
    """Planner passes first turns of math tasks; the debugger passes turns after a ZeroDivisionError."""
    first = ("tag:math", "word:add", "kind:first")
    after = ("kind:after_error", "obs:zerodivisionerror")
    rows = []
    for i in range(4):
        rows += [Example("planner", f"s/m{i}", first, True), Example("debugger", f"s/m{i}", first, False),
                 Example("debugger", f"s/e{i}", after, True), Example("planner", f"s/e{i}", after, False),
                 Example(None, f"s/m{i}", first, i == 0), Example(None, f"s/e{i}", after, False)]
    return rows


def router(revision: int = 1) -> RouterRecord:
    return RouterRecord(contract="test", revision=revision, specialists=fit(examples(), SPECIALISTS),
                        evidence=RouterEvidence(runs=["r"], tasks=["s/m0"], attempts=len(examples())))


def test_features_name_tags_instruction_words_turn_kind_and_observation_words():
    first = turn_features(["math", "math"], "Add the two numbers a and b.", "first", "ignored on a first turn")
    assert first == ["tag:math", "word:add", "word:two", "word:numbers", "kind:first"]
    later = turn_features([], "", "after_error", "ZeroDivisionError: division by zero")
    assert later == ["kind:after_error", "obs:zerodivisionerror", "obs:division", "obs:zero"]


def test_predict_is_the_argmax_with_a_reason_naming_scores_and_top_features_and_is_deterministic():
    record = router(2)
    features = turn_features(["math"], "add", "first", "")
    choice, reason = predict(record, features)
    assert choice == "planner"
    assert reason.startswith("learned r2: planner 0.") and "tag math" in reason and " > " in reason
    assert all(predict(parse_router(record.to_json()), features) == (choice, reason) for _ in range(3))
    assert predict(record, turn_features([], "", "after_error", "ZeroDivisionError"))[0] == "debugger"


def test_the_prior_keeps_a_feature_seen_once_from_dominating():
    rows = [Example("a", f"t{i}", ("word:x",), False) for i in range(20)] + [Example("a", "lucky", ("word:rare",), True)]
    stats = fit(rows, ["a"])[0]
    p_rare, _ = score(stats, ["word:rare"])
    prior = 2 / 23  # (passes + 1) / (attempts + 2)
    assert abs(p_rare - (1 + 2 * prior) / 3) < 1e-9 and p_rare < 0.5  # 1/1 raw, pulled toward the prior
    p_none, parts = score(stats, ["word:unseen"])
    assert parts == [] and abs(p_none - 2 / 23) < 1e-9  # unseen features: the specialist's smoothed pass rate


def test_learned_choice_is_recorded_per_turn_in_the_trajectory(config_factory, pyfuncs, sandbox, open_tmp):
    record = router()
    config = config_factory(
        specialists=["planner", "debugger"],
        routing={"policy": "learned", "router": "routers/test-r1.json", "router_sha256": "0" * 64,
                 "summary_tokens": 8},
        harness={"max_turns": 4},
    ).model_copy(update={"router_text": record.to_json()})
    model = ScriptedModel(["Plan.\n```python\nratio = 1 / 0\n```", GOOD_ADD, SUBMIT])
    outcome = run_attempt(config, pyfuncs["add-two"], model, sandbox, open_tmp / "attempt", seed=7)
    assert outcome.verdict is Verdict.PASSED, outcome.reason
    routed = [s.routing for s in read_trajectory(outcome.trajectory_path).steps if s.source == "agent"]
    assert [r.specialist for r in routed] == [r.specialist for r in model.requests][:len(routed)]
    assert [(r.specialist, r.turn_kind) for r in routed[:2]] == [("planner", "first"), ("debugger", "after_error")]
    task = pyfuncs["add-two"]
    view = TaskView(record, tuple(task.spec.tags), task.instruction)
    assert routed[0].reason == choose_specialist(config.spec.routing, "first", task.instruction, view).reason
    assert all(r.reason.startswith("learned r1: ") for r in routed)
    # A switch mid-attempt: the debugger sees the planner's turn only as a capped summary.
    assert model.requests[1].messages[2].content.startswith("[turn 1 by planner, summarized] Plan.")
