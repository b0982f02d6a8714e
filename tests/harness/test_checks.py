"""Execution feedback: public checks, candidate selection and repair turns, end to end with the real sandbox
and the real hidden verifier (the scripted model writes the candidates)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from rsi.contracts.schema import HarnessSpec
from rsi.harness.attempt import run_attempt
from rsi.harness.checks import run_public_checks
from rsi.harness.selection import choose_candidate
from rsi.harness.trajectory import CheckRecord, read_trajectory
from rsi.models.scripted import ScriptedModel
from rsi.tasks.spec import PublicChecksSpec, PublicExampleSpec
from rsi.verdict import Verdict

CORRECT = "```python\ndef add(a, b):\n    return a + b\n```"
MINUS = "```python\ndef add(a, b):\n    return a - b\n```"
ALWAYS_FIVE = "```python\ndef add(a, b):\n    return 5\n```"
# The same wrong candidate as MINUS with many more tokens (so every candidate's tokens can be told apart).
WORDY_MINUS = "```python\ndef add(a, b):\n    # the difference of a and b, which is not what was asked for\n    return a - b\n```"
ANSWERS_SIX = "```python\ndef add(a, b):\n    return 6 if (a, b) == (2, 3) else 0\n```"


def with_public(task, *examples: tuple[str, str], script: str = ""):
    public = PublicChecksSpec(examples=[PublicExampleSpec(call=c, expected=e) for c, e in examples], script=script)
    return task.model_copy(update={"spec": task.spec.model_copy(update={"public": public})})


def text_config(config_factory, check="first-pass", samples=2, **extra):
    sampling = {"samples": samples, "temperature": 0.5, **extra.pop("sampling", {})}
    return config_factory(harness={"substrate": "text", "max_turns": 1, "check": check, "sampling": sampling, **extra})


def attempt(config, task, model, sandbox, open_tmp: Path):
    outcome = run_attempt(config, task, model, sandbox, open_tmp / "attempt", seed=3)
    return outcome, read_trajectory(outcome.trajectory_path)


def agent_steps(trajectory):
    return [step for step in trajectory.steps if step.source == "agent"]


def test_a_candidate_that_passes_the_hidden_tests_but_fails_a_public_check_is_not_chosen(
    config_factory, pyfuncs, sandbox, open_tmp
):
    # The planted public example is wrong on purpose: only the public checks may decide, never the verifier.
    task = with_public(pyfuncs["add-two"], ("add(2, 3)", "6"))
    outcome, trajectory = attempt(text_config(config_factory), task, ScriptedModel([CORRECT, ANSWERS_SIX]), sandbox, open_tmp)
    steps = agent_steps(trajectory)
    assert [(s.check.passed, s.check.total, s.check.selected) for s in steps] == [(0, 1, False), (1, 1, True)]
    assert outcome.final_code == ANSWERS_SIX.split("\n", 1)[1].rsplit("```", 1)[0]
    assert outcome.verdict is Verdict.FAILED
    assert steps[0].check.examples[0].got == "5" and "not used" in steps[0].observation


def test_a_candidate_that_passes_the_public_checks_is_chosen_though_the_hidden_tests_fail_it(
    config_factory, pyfuncs, sandbox, open_tmp
):
    task = with_public(pyfuncs["add-two"], ("add(2, 3)", "5"))
    for rule in ("first-pass", "most-passed"):
        folder = open_tmp / rule
        outcome, trajectory = attempt(text_config(config_factory, rule), task, ScriptedModel([ALWAYS_FIVE, CORRECT]),
                                      sandbox, folder)
        assert outcome.verdict is Verdict.FAILED, rule
        assert [s.check.selected for s in agent_steps(trajectory)] == [True, False]


def test_checking_picks_a_later_passing_candidate_where_no_checks_would_submit_the_first(
    config_factory, pyfuncs, sandbox, open_tmp
):
    task = with_public(pyfuncs["add-two"], ("add(2, 3)", "5"), ("add(-1, 1)", "0"))
    checked, on = attempt(text_config(config_factory), task, ScriptedModel([WORDY_MINUS, CORRECT]), sandbox,
                          open_tmp / "on")
    unchecked, trajectory = attempt(text_config(config_factory, "off"), task, ScriptedModel([WORDY_MINUS, CORRECT]),
                                    sandbox, open_tmp / "off")
    assert (checked.verdict, unchecked.verdict) == (Verdict.PASSED, Verdict.FAILED)
    assert all(step.check is None for step in agent_steps(trajectory))
    # Every candidate's tokens count, whichever was written: the two candidates' counts differ, so a total of
    # only the written one (CORRECT when checked, WORDY_MINUS when not) or only the first would not match.
    for outcome, record in ((checked, on), (unchecked, trajectory)):
        tokens = [step.metrics.completion_tokens for step in agent_steps(record)]
        assert len(tokens) == 2 and tokens[0] > tokens[1] > 0
        assert outcome.completion_tokens == sum(tokens)
    assert checked.completion_tokens == unchecked.completion_tokens


def test_greedy_first_asks_for_samples_only_when_the_greedy_reply_fails(config_factory, pyfuncs, sandbox, open_tmp):
    task = with_public(pyfuncs["add-two"], ("add(2, 3)", "5"))
    config = text_config(config_factory, samples=3, sampling={"greedy_first": True})
    solved = ScriptedModel([CORRECT])
    outcome, _ = attempt(config, task, solved, sandbox, open_tmp / "greedy")
    assert outcome.verdict is Verdict.PASSED and [(r.n, r.temperature) for r in solved.requests] == [(1, 0.0)]
    missed = ScriptedModel([MINUS, MINUS, CORRECT, MINUS])
    outcome, trajectory = attempt(config, task, missed, sandbox, open_tmp / "sampled")
    assert [(r.n, r.temperature) for r in missed.requests] == [(1, 0.0), (3, 0.5)]
    assert outcome.verdict is Verdict.PASSED and len(agent_steps(trajectory)) == 4


def test_a_repair_turn_shows_the_failing_public_check_and_nothing_hidden(config_factory, pyfuncs, sandbox, open_tmp):
    task = with_public(pyfuncs["add-two"], ("add(2, 3)", "5"))
    model = ScriptedModel([MINUS, CORRECT])
    config = text_config(config_factory, samples=1, repair_turns=2)
    outcome, trajectory = attempt(config, task, model, sandbox, open_tmp)
    assert outcome.verdict is Verdict.PASSED
    shown = model.requests[1].messages[-1].content
    assert "add(2, 3) returned -1, expected 5" in shown
    hidden = [str(v) for v in (3345678, 1000000, -15, 0.75)]  # values only the hidden cases hold
    assert not any(value in message.content for message in model.requests[1].messages for value in hidden)
    assert [m.role for m in model.requests[1].messages][-2:] == ["assistant", "user"]
    steps = agent_steps(trajectory)
    assert [s.turn for s in steps] == [1, 2] and steps[1].check.selected and steps[1].check.all_passed


def test_a_repair_that_does_not_help_leaves_the_better_candidate(config_factory, pyfuncs, sandbox, open_tmp):
    task = with_public(pyfuncs["add-two"], ("add(2, 3)", "5"), ("add(-1, 1)", "0"))
    model = ScriptedModel([ALWAYS_FIVE, "no code this time", MINUS])
    outcome, trajectory = attempt(text_config(config_factory, samples=1, repair_turns=3), task, model, sandbox, open_tmp)
    steps = agent_steps(trajectory)
    assert len(model.requests) == 2  # a repair reply without code ends the repairs
    assert steps[0].check.selected and outcome.final_code.strip().endswith("return 5")


def test_the_repl_substrate_answers_a_failing_submit_with_the_check_and_goes_on(config_factory, pyfuncs, sandbox, open_tmp):
    task = with_public(pyfuncs["add-two"], ("add(2, 3)", "5"))
    write = "```python\nopen('solution.py', 'w').write('def add(a, b):\\n    return a {} b\\n')\nsubmit()\n```"
    model = ScriptedModel([write.format("-"), write.format("+")])
    config = config_factory(harness={"max_turns": 1, "repair_turns": 1, "check": "most-passed"})
    outcome, trajectory = attempt(config, task, model, sandbox, open_tmp)
    assert (outcome.verdict, outcome.ended_by, outcome.turns) == (Verdict.PASSED, "submit", 2)
    steps = agent_steps(trajectory)
    assert "add(2, 3) returned -1, expected 5" in steps[0].observation
    assert (steps[0].check.passed, steps[1].check.passed, steps[1].check.selected) == (0, 1, True)


def test_the_repl_substrate_leaves_the_best_submitted_version(config_factory, pyfuncs, sandbox, open_tmp):
    task = with_public(pyfuncs["add-two"], ("add(2, 3)", "5"), ("add(-1, 1)", "0"))
    write = "```python\nopen('solution.py', 'w').write('def add(a, b):\\n    return {}\\n')\nsubmit()\n```"
    model = ScriptedModel([write.format("a + b if a > 0 else 9"), write.format("7")])
    config = config_factory(harness={"max_turns": 1, "repair_turns": 1, "check": "most-passed"})
    outcome, trajectory = attempt(config, task, model, sandbox, open_tmp)
    assert [s.check.passed for s in agent_steps(trajectory)] == [1, 0]
    assert "a + b if a > 0 else 9" in outcome.final_code


@pytest.mark.parametrize("body", [
    "import os\nos._exit(0)\n",                      # exits at import: no answer at all
    "while True:\n    pass\n",                        # hangs at import
    "def add(a, b):\n    raise SystemExit(0)\n",      # escapes the call
    "def add(a, b):\n    print('5')\n    return 4\n",  # prints the expected value
])
def test_a_candidate_that_fights_its_checks_only_loses_them(body, pyfuncs, sandbox, open_tmp):
    task = with_public(pyfuncs["add-two"], ("add(2, 3)", "5"))
    work = open_tmp / "w"
    work.mkdir()
    (work / "solution.py").write_text(body)
    record = run_public_checks(task, work, sandbox)
    assert (record.passed, record.total) == (0, 1) and not record.examples[0].passed


def test_a_public_script_counts_as_one_check(pyfuncs, sandbox, open_tmp):
    work = open_tmp / "w"
    (work / "public").mkdir(parents=True)
    (work / "public" / "check.py").write_text("from solution import add\nassert add(2, 3) == 5, 'add(2, 3)'\n")
    (work / "solution.py").write_text("def add(a, b):\n    return a * b\n")
    task = with_public(pyfuncs["add-two"], ("add(2, 2)", "4"), script="check.py")
    record = run_public_checks(task, work, sandbox)
    assert (record.passed, record.total, record.script_exit) == (1, 2, 1)
    assert "add(2, 3)" in record.first_failure


def test_selection_rules_are_pure_and_ties_go_to_the_earliest():
    def rec(i, passed, total=3):
        return CheckRecord(candidate=i, passed=passed, total=total)

    assert choose_candidate("first-pass", [None, rec(2, 1), rec(3, 3), rec(4, 3)]) == 2
    assert choose_candidate("first-pass", [None, rec(2, 1), rec(3, 2)]) == 1  # none passes: the earliest with code
    assert choose_candidate("most-passed", [None, rec(2, 1), rec(3, 2), rec(4, 2)]) == 2
    assert choose_candidate("most-passed", [None, None]) is None


def test_check_keys_are_validated_and_leave_old_hashes_alone(config_factory):
    with pytest.raises(ValidationError, match="unknown check selection rule 'best'"):
        HarnessSpec(check="best")
    with pytest.raises(ValidationError):
        HarnessSpec(repair_turns=-1)
    plain = config_factory(harness={"substrate": "text"})
    spelled = config_factory(harness={"substrate": "text", "check": "off", "repair_turns": 0,
                                      "sampling": {"greedy_first": False}})
    checked = config_factory(harness={"substrate": "text", "check": "first-pass"})
    assert plain.config_hash == spelled.config_hash != checked.config_hash


def test_an_unordered_public_example_accepts_any_order(pyfuncs, sandbox, open_tmp):
    task = pyfuncs["subsets"]
    assert task.spec.public.compare == "unordered"
    work = open_tmp / "w"
    work.mkdir()
    (work / "solution.py").write_text("def subsets(xs):\n    return [[1, 2], [2], [1], []] if xs else [[]]\n")
    assert run_public_checks(task, work, sandbox).all_passed
    (work / "solution.py").write_text("def subsets(xs):\n    return [[1, 2], [2], [1]] if xs else [[]]\n")
    assert not run_public_checks(task, work, sandbox).all_passed


def _nest(top: Path, depth: int, name: str, leaf: str) -> None:
    """`depth` folders called `name` under `top`, a file `leaf` at the bottom (through descriptors: no path limit)."""
    import os

    top.mkdir()
    fd = os.open(top, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir(name, dir_fd=fd)
        child = os.open(name, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(os.open(leaf, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    os.close(fd)


def test_a_workdir_nested_past_our_limits_costs_the_check_nothing_and_the_note_says_what_was_left_out(
    pyfuncs, sandbox, open_tmp
):
    """2000 nested folders (a recursive copy dies of RecursionError) and a file whose path is past PATH_MAX (a copy
    by path fails): the candidate is still checked, on the copy the verifier's rules allow, and the note names both."""
    from rsi.harness.checks import CandidateChecker
    from rsi.verifier.tree import remove_tree

    task = with_public(pyfuncs["add-two"], ("add(2, 3)", "5"))
    workdir = open_tmp / "workdir"
    workdir.mkdir()
    (workdir / "data.txt").write_text("kept\n")
    _nest(workdir / "deep", 2000, "d", "bottom.py")
    _nest(workdir / "long", 20, "p" * 250, "far.py")
    checker = CandidateChecker(task, sandbox, workdir, open_tmp / "checks")
    try:
        record = checker.check(CORRECT.split("\n", 1)[1].rsplit("```", 1)[0])
        assert (record.passed, record.total) == (1, 1)
        assert "workdir nests deeper than 32 folders (1 left out)" in record.note
        assert "path longer than PATH_MAX (4096 bytes) (1 left out)" in record.note
        assert not (open_tmp / "checks" / "c1").exists()  # the scratch copy is gone, however deep it was
    finally:
        remove_tree(workdir)  # the fixture's own cleanup walks recursively
