"""An evaluation asked again is read from the response cache (rsi/models/cache.py) and says so: real harness,
sandbox, verifier and SQLite store; the model is a scripted one whose script declares itself exact (as float32
greedy replies are), so its replies may be kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi.cli.render_eval import eval_lines
from rsi.evaluation import EvalSpec, evaluate
from rsi.generation.lineage import LEDGER_COLUMNS
from tests.evaluation.test_evaluation import BySide, setup

__all__ = ["setup"]  # the fixture, shared from test_evaluation.py


def exact_copy(script: Path, folder: Path) -> Path:
    data = json.loads(script.read_text())
    target = folder / "exact.json"
    target.write_text(json.dumps({**data, "exact": True}))
    return target


@pytest.mark.slow
def test_an_evaluation_asked_again_is_served_by_the_cache_with_the_same_verdicts(workspace, setup, tmp_path) -> None:
    script = exact_copy(setup["solutions"], tmp_path)
    fn = BySide(workspace.root, script, script)
    spec = EvalSpec(candidate=setup["candidate"], parent="default@r2", limit_heldout=3, limit_covered=0)
    first = evaluate(workspace, spec, attempt_fn=fn)
    again = evaluate(workspace, spec.model_copy(update={"why": "asked again"}), attempt_fn=fn)
    assert first.eval_id != again.eval_id
    made = first.cache["parent"]
    assert made.hits == 0 and made.misses > 0  # the first evaluation made the parent's replies
    served = again.cache["parent"]
    assert (served.hits, served.misses) == (made.misses, 0) and served.share == 1.0
    assert served.made_by == [first.eval_id] and served.tokens_not_spent > 0
    # the candidate routes to its adapter, which a scripted model cannot name: never cached
    assert again.cache["candidate"].share is None and again.cache["candidate"].hits == 0
    assert again.per_task == first.per_task and again.lift == first.lift  # the same verdicts, every task
    line = next(line for line in eval_lines(again) if line.startswith("  cache: "))
    assert f"parent {served.hits}/{served.hits} replies from the cache (100%, made by {first.eval_id})" in line
    assert "candidate not cacheable" in line


def test_the_ledger_has_a_column_for_what_the_cache_served() -> None:
    assert "eval cache served" in LEDGER_COLUMNS
