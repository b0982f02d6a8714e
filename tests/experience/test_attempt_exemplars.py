"""`harness.exemplars` in a real attempt: the retrieved worked examples precede the task, the choice is recorded
in the trajectory, and neither the task itself nor a heldout task is ever shown (scripted model, real sandbox)."""

from __future__ import annotations

import pytest

from rsi.experience.library import new_manifest, write_revision
from rsi.harness.attempt import run_attempt
from rsi.harness.trajectory import read_trajectory
from rsi.models.scripted import ScriptedModel
from rsi.verdict import Verdict
from tests.experience.conftest import entry
from tests.harness.conftest import make_config

GOOD_ADD = "```python\nopen('solution.py', 'w').write('def add(a, b):\\n    return a + b\\n')\nsubmit()\n```"


@pytest.fixture
def library(pyfuncs, tmp_path, monkeypatch):
    add = pyfuncs["add-two"]
    heldout = next(t for t in pyfuncs.values() if t.spec.split == "heldout")
    entries = [
        entry("add-two", add.instruction, "def add(a, b):\n    return a + b  # ITSELF\n").model_copy(
            update={"task_key": add.key, "task_hash": add.content_hash}),
        entry("sum-three", "Write add3(a, b, c) that returns the sum of the numbers a, b and c.",
              "def add3(a, b, c):\n    return a + b + c  # SIMILAR\n"),
        entry("upper", "Write shout(s) that returns s in upper case.", "def shout(s):\n    return s.upper()\n"),
        entry("h", "Return the sum of the numbers a and b, twice.", "def h(a, b):\n    return 2 * (a + b)  # HELDOUT\n"
              ).model_copy(update={"task_key": heldout.key, "task_hash": heldout.content_hash}),
    ]
    manifest, text = new_manifest("", [], entries, 0, set(), ["run-1"], {}, [heldout.key], [heldout.content_hash])
    revision, _ = write_revision(tmp_path / "experience", manifest, text)
    monkeypatch.setenv("RSI_EXPERIENCE_DIR", str(tmp_path / "experience"))
    return revision, manifest.content_sha256


def test_the_most_similar_other_train_task_is_shown_before_the_task_and_recorded(library, pyfuncs, sandbox, open_tmp):
    revision, digest = library
    config = make_config(harness={"max_turns": 2, "exemplars": 2, "experience": revision, "experience_sha256": digest})
    model = ScriptedModel([GOOD_ADD])
    outcome = run_attempt(config, pyfuncs["add-two"], model, sandbox, open_tmp / "a", seed=3)
    assert outcome.verdict is Verdict.PASSED, outcome.reason
    shown = model.requests[0].messages[-1].content
    assert "SIMILAR" in shown and "ITSELF" not in shown and "HELDOUT" not in shown
    assert shown.index("SIMILAR") < shown.index("Your task:") < shown.index(pyfuncs["add-two"].instruction.strip()[:20])
    trajectory = read_trajectory(outcome.trajectory_path)
    assert [e.task_key for e in trajectory.exemplars][0] == "s/sum-three"
    assert all(e.library == revision and e.score > 0 for e in trajectory.exemplars)
    assert trajectory.steps[1].message == shown  # the user step is what the model saw
    # the same attempt again retrieves the same examples
    again = ScriptedModel([GOOD_ADD])
    run_attempt(config, pyfuncs["add-two"], again, sandbox, open_tmp / "b", seed=3)
    assert again.requests[0].messages[-1].content == shown


def test_a_library_that_does_not_match_the_contract_pin_makes_the_attempt_an_error(library, pyfuncs, sandbox, open_tmp):
    revision, _ = library
    config = make_config(harness={"exemplars": 1, "experience": revision, "experience_sha256": "0" * 64})
    outcome = run_attempt(config, pyfuncs["add-two"], ScriptedModel([GOOD_ADD]), sandbox, open_tmp / "a", seed=1)
    assert outcome.verdict is Verdict.ERROR and "the contract" in outcome.reason


def test_without_exemplars_the_library_is_never_read(pyfuncs, sandbox, open_tmp, monkeypatch):
    monkeypatch.setenv("RSI_EXPERIENCE_DIR", str(open_tmp / "nowhere"))
    config = make_config(harness={"max_turns": 1, "experience": "r7"})
    outcome = run_attempt(config, pyfuncs["add-two"], ScriptedModel([GOOD_ADD]), sandbox, open_tmp / "a", seed=1)
    assert outcome.verdict is Verdict.PASSED and read_trajectory(outcome.trajectory_path).exemplars == []
