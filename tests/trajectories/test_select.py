"""Pure selection policy: train-only passing attempts, ranking, dedup by normalized code, caps, decontamination."""

from __future__ import annotations

import itertools

import pytest

from rsi.promotion.evidence import ScoredAttempt
from rsi.trajectories.select import (
    ContaminationError,
    SelectionPolicy,
    TrajectoryCandidate,
    check_decontaminated,
    normalize_code,
    select_trajectories,
)
from rsi.verdict import Verdict

_ids = itertools.count()


def cand(task: str, config: str = "a", verdict: str = "passed", split: str = "train", tokens: int = 100,
         turns: int = 2, code: str | None = None, task_hash: str | None = None) -> TrajectoryCandidate:
    n = next(_ids)
    record = ScoredAttempt(
        attempt_id=f"att{n:04d}", run_id="r", config_hash=f"h-{config}", config_name=config, task_key=f"s/{task}",
        task_hash=task_hash or f"c-{task}", split=split, verdict=Verdict(verdict), tags=("t",), tokens=tokens,
    )
    return TrajectoryCandidate(record, code if code is not None else f"def f():\n    return {n}\n", turns)


def test_normalize_code_ignores_comments_and_formatting() -> None:
    a = "def f(x):\n    # add one\n    return x+1\n"
    b = "def f( x ):\n\n    return (x + 1)  # same\n"
    assert normalize_code(a) == normalize_code(b)
    assert normalize_code("def f(x): return x+2") != normalize_code(a)
    assert normalize_code("this is not   python(") == "this is not python("


def test_only_passing_train_attempts_are_selected() -> None:
    pool = [
        cand("t1"), cand("t1", verdict="failed"), cand("t2", verdict="timeout"), cand("t3", verdict="error"),
        cand("h1", split="heldout"),
        cand("copy", task_hash="c-h1"),  # a train task whose content is a heldout task's
    ]
    out = select_trajectories(pool, heldout_hashes={"c-h1"})
    assert [c.record.task_key for c in out.selected] == ["s/t1"]
    assert out.dropped == {"heldout content hash": 1, "heldout split": 1, "not passed": 3}


def test_ranking_dedup_and_per_task_cap() -> None:
    same = "def f(x):\n    return x * 2\n"
    pool = [
        cand("t1", tokens=300, code=same),
        cand("t1", tokens=100, code="def f(x):\n    return x*2  # cheaper duplicate\n"),
        cand("t1", tokens=200),
        cand("t1", tokens=250),
        cand("t1", tokens=50, verdict="failed"),
    ]
    out = select_trajectories(pool, SelectionPolicy(max_per_task=2))
    assert [c.record.tokens for c in out.selected] == [100, 200]
    assert out.dropped["duplicate code"] == 1 and out.dropped["task cap"] == 1
    by_turns = select_trajectories(
        [cand("t2", tokens=10, turns=5), cand("t2", tokens=90, turns=1)], SelectionPolicy(rank_by="turns", max_per_task=1)
    )
    assert [c.turns for c in by_turns.selected] == [1]


def test_config_cap_is_spread_across_tasks() -> None:
    pool = [cand(f"t{i}", config="a", tokens=10 + j) for i in range(4) for j in range(3)]
    pool += [cand(f"t{i}", config="b", tokens=100) for i in range(4)]
    out = select_trajectories(pool, SelectionPolicy(max_per_task=2, max_per_config=4))
    per_config = out.per_config()
    assert per_config == {"h-a": 4, "h-b": 4}
    assert out.per_task() == {f"s/t{i}": 2 for i in range(4)}  # a's four went one per task, not two tasks' worth


def test_selection_is_order_independent() -> None:
    pool = [cand(f"t{i % 3}", config="ab"[i % 2], tokens=(i * 37) % 11) for i in range(12)]
    first = select_trajectories(pool, SelectionPolicy(max_per_task=2, max_per_config=3))
    second = select_trajectories(list(reversed(pool)), SelectionPolicy(max_per_task=2, max_per_config=3))
    assert [c.record.attempt_id for c in first.selected] == [c.record.attempt_id for c in second.selected]


def test_check_decontaminated_refuses_heldout_examples() -> None:
    clean = [cand("t1"), cand("t2")]
    check_decontaminated(clean, {"c-h9"})
    with pytest.raises(ContaminationError, match="s/t2"):
        check_decontaminated(clean, {"c-t2"})
    with pytest.raises(ContaminationError):
        check_decontaminated([cand("h", split="heldout")], set())
    with pytest.raises(ContaminationError):
        check_decontaminated(clean, set(), heldout_keys={"s/t1"})


def test_policy_rejects_nonsense_caps() -> None:
    with pytest.raises(ValueError):
        SelectionPolicy(max_per_task=0)
