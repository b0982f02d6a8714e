"""`EvalSpec.tasks`: the lift measured on an explicit slice of TRAIN tasks (a validation slice for choosing a
training recipe, bench/recipe_sweep.py); heldout keys and unknown keys are refused before any attempt.

Same real harness, sandbox and verifier as test_evaluation.py; only the model is scripted per side.
"""

from __future__ import annotations

import pytest

from rsi.errors import UserInputError
from rsi.evaluation import EvalSpec, evaluate
from rsi.promotion.decision import PairTable
from tests.evaluation.test_evaluation import BySide, setup, wrong_script

__all__ = ["setup"]  # the fixture, shared from test_evaluation.py


def test_lift_is_measured_on_the_explicit_train_slice_only(workspace, setup, tmp_path) -> None:
    train = sorted(t.key for t in setup["tasks"] if t.spec.split == "train")
    heldout = {t.key for t in setup["tasks"] if t.spec.split == "heldout"}
    # the slice overlaps the parent's covered train tasks (the first two): each task is attempted once per side
    chosen = train[:3]
    fn = BySide(workspace.root, setup["solutions"], wrong_script(tmp_path / "wrong.json", [t.id for t in setup["tasks"]]))
    outcome = evaluate(workspace, EvalSpec(candidate=setup["candidate"], parent="default@r2", tasks=chosen,
                                           limit_covered=0), attempt_fn=fn)
    assert outcome.heldout_tasks == chosen  # the lift's tasks are the slice
    attempted = {key for _side, key in fn.calls}
    assert attempted == set(chosen) and not attempted & heldout
    assert sorted(fn.calls) == sorted([(side, k) for k in chosen for side in ("candidate", "parent")])
    assert outcome.lift.tasks == 3
    assert outcome.lift.table == PairTable(both=0, candidate_only=3, parent_only=0, neither=0)


def test_heldout_or_unknown_keys_in_the_slice_are_refused_before_any_attempt(workspace, setup, tmp_path) -> None:
    train = sorted(t.key for t in setup["tasks"] if t.spec.split == "train")
    heldout = sorted(t.key for t in setup["tasks"] if t.spec.split == "heldout")
    fn = BySide(workspace.root, setup["solutions"], setup["solutions"])
    with pytest.raises(UserInputError, match="not train tasks") as refused:
        evaluate(workspace, EvalSpec(candidate=setup["candidate"], parent="default@r2", tasks=[train[0], heldout[0]]),
                 attempt_fn=fn)
    assert heldout[0] in refused.value.message and train[0] not in refused.value.message
    with pytest.raises(UserInputError, match="not in suite"):
        evaluate(workspace, EvalSpec(candidate=setup["candidate"], parent="default@r2", tasks=["pyfuncs/no-such-task"]),
                 attempt_fn=fn)
    assert fn.calls == []
