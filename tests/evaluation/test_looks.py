"""The look ledger and the sealed test split, through real evaluations (real harness, sandbox, verifier and
SQLite store; only the model is scripted per side, as in test_evaluation.py).

- every evaluation that reads heldout verdicts records one look, and `rsi eval` shows the count;
- a final evaluation reads the sealed test split; a second look by the same candidate is refused before any
  attempt (exit 2, one line), and with `second_look` it runs and every figure is marked;
- no run targets a test task, and `rsi attempt` refuses one.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rsi.cli.render_eval import eval_lines
from rsi.errors import UserInputError
from rsi.evaluation import EvalSpec, evaluate
from rsi.evaluation.looks import SECOND_LOOK_TAG
from rsi.store import open_store
from rsi.store.looks import count_looks, list_looks
from tests.evaluation.test_evaluation import BySide, setup

__all__ = ["setup"]  # the fixture, shared from test_evaluation.py


def seal(workspace, keys: list[str]) -> None:
    """Move these tasks of the workspace's suite to the sealed test split (their task.toml says so)."""
    for key in keys:
        suite, task = key.split("/")
        path = Path(workspace.root) / "tasks" / suite / task / "task.toml"
        text = path.read_text(encoding="utf-8")
        path.write_text(re.sub(r'(?m)^split = "\w+"', 'split = "test"', text), encoding="utf-8")


@pytest.mark.slow
def test_every_heldout_evaluation_records_one_look_and_shows_the_count(workspace, setup) -> None:
    fn = BySide(workspace.root, setup["solutions"], setup["solutions"])
    spec = EvalSpec(candidate=setup["candidate"], parent="default@r2", limit_heldout=2, limit_covered=0, why="test one")
    first = evaluate(workspace, spec, attempt_fn=fn)
    assert (first.split, first.looks, first.candidate_looks, first.second_look) == ("heldout", 1, 1, False)
    again = evaluate(workspace, EvalSpec(candidate="-", parent="-", resume=first.eval_id), attempt_fn=fn)
    assert again.looks == 1  # re-reading one evaluation run is the same look
    second = evaluate(workspace, spec.model_copy(update={"why": "test two"}), attempt_fn=fn)
    assert (second.looks, second.candidate_looks) == (2, 2)
    store = open_store(workspace.db_url)
    try:
        rows = list_looks(store, "pyfuncs", "heldout")
        assert count_looks(store, "pyfuncs", "heldout") == 2 and count_looks(store, "pyfuncs", "test") == 0
    finally:
        store.close()
    assert [(r.eval_id, r.why, r.tasks, r.candidate_ref) for r in rows] == [
        (first.eval_id, "test one", 2, setup["candidate"]), (second.eval_id, "test two", 2, setup["candidate"])]
    assert all(r.candidate_hash == first.candidate.content_hash and r.command.startswith("rsi") for r in rows)
    assert "  heldout looks: 2 (this candidate: 2)" in eval_lines(second)
    # an explicit train slice reads no heldout verdict: no look
    train = sorted(t.key for t in setup["tasks"] if t.spec.split == "train")[:1]
    sliced = evaluate(workspace, EvalSpec(candidate=setup["candidate"], parent="default@r2", tasks=train,
                                          limit_covered=0), attempt_fn=fn)
    assert sliced.looks is None and not any("looks" in line for line in eval_lines(sliced))


@pytest.mark.slow
def test_a_second_look_at_the_sealed_split_is_refused_without_the_flag_and_marked_with_it(
        workspace, setup, shim, scripted_env) -> None:
    sealed = sorted(t.key for t in setup["tasks"] if t.spec.split == "heldout")[:2]
    seal(workspace, sealed)
    fn = BySide(workspace.root, setup["solutions"], setup["solutions"])
    final = EvalSpec(candidate=setup["candidate"], parent="default@r2", limit_covered=0, split="test")
    first = evaluate(workspace, final, attempt_fn=fn)
    assert first.heldout_tasks == sealed and {key for _side, key in fn.calls} == set(sealed)
    assert (first.split, first.looks, first.candidate_looks, first.second_look) == ("test", 1, 1, False)
    assert "  test (sealed) looks: 1 (this candidate: 1); a final evaluation promotes nothing" in eval_lines(first)
    calls = len(fn.calls)
    with pytest.raises(UserInputError, match=r"already looked at the sealed test split .* 1 time\(s\).*--second-look"):
        evaluate(workspace, final, attempt_fn=fn)
    assert len(fn.calls) == calls  # refused before any attempt
    # the CLI: exit 2, one line, no traceback
    refused = shim("eval", setup["candidate"], "--against", "default@r2", "--final", "--limit-covered", "0",
                   cwd=workspace.root, env=scripted_env)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert [line for line in refused.stderr.splitlines() if line.strip()][0].startswith("error: ")
    assert "--second-look" in refused.stderr and "1 time(s)" in refused.stderr

    again = evaluate(workspace, final.model_copy(update={"second_look": True}), attempt_fn=fn)
    assert again.second_look and (again.looks, again.candidate_looks) == (2, 2)
    assert again.decision.reason.startswith(SECOND_LOOK_TAG)
    assert all(SECOND_LOOK_TAG in line for line in eval_lines(again) if line.strip())
    stored = json.loads((workspace.run_dir(again.eval_id) / "eval.json").read_text())
    assert stored["second_look"] is True and stored["split"] == "test"
    store = open_store(workspace.db_url)
    try:
        assert [r.second_look for r in list_looks(store, "pyfuncs", "test")] == [False, True]
        assert count_looks(store, "pyfuncs", "heldout") == 0  # the sealed split's looks are its own
    finally:
        store.close()
    # a heldout evaluation never includes the sealed tasks
    heldout = evaluate(workspace, EvalSpec(candidate=setup["candidate"], parent="default@r2", limit_covered=0,
                                           limit_heldout=2), attempt_fn=fn)
    assert not set(heldout.heldout_tasks) & set(sealed)
