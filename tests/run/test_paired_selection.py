"""Paired selection: shortlisted configurations attempt the same drawn train tasks with the same seeds, through
the real orchestrator, harness, sandbox and verifier (scripted model replies)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from rsi.errors import ExecutorError
from rsi.promotion.decision import shortlist
from rsi.promotion.evidence import ScoredAttempt, collect_evidence
from rsi.run.paired_selection import SELECTION_SCHEDULER, draw_train_tasks, run_paired_selection
from rsi.verdict import Verdict


def scripted_module():
    spec = importlib.util.spec_from_file_location("scripted", Path(__file__).with_name("scripted.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_draw_is_seeded_train_only_and_sorted(mini_ws) -> None:
    from rsi.tasks.load import load_suite

    tasks = load_suite(mini_ws, "pyfuncs")
    first, again, other = (draw_train_tasks(tasks, 6, seed) for seed in (3, 3, 4))
    assert [t.key for t in first] == [t.key for t in again] != [t.key for t in other]
    assert all(t.spec.split == "train" for t in first) and [t.key for t in first] == sorted(t.key for t in first)
    assert len(draw_train_tasks(tasks, 10_000, 0)) == sum(t.spec.split == "train" for t in tasks)


def test_the_shortlist_is_the_ranking_head_plus_the_parent() -> None:
    def rec(config: str, task: str, passed: bool) -> ScoredAttempt:
        return ScoredAttempt(attempt_id=f"{config}-{task}", run_id="r", config_hash=config, config_name=config,
                             task_key=f"s/{task}", task_hash=task, split="train",
                             verdict=Verdict.PASSED if passed else Verdict.FAILED)

    records = [rec("strong", f"t{i}", i < 6) for i in range(8)] + [rec("weak", f"u{i}", i < 1) for i in range(8)]
    records += [rec("parent", f"v{i}", i < 2) for i in range(8)] + [rec("middle", f"w{i}", i < 3) for i in range(8)]
    evidence = collect_evidence(records)
    assert shortlist(evidence, "parent", 2) == ["parent", "strong", "middle"]
    assert shortlist(evidence, "parent", 9) == ["parent", "strong", "middle", "weak"]


def test_each_configuration_attempts_the_same_tasks_with_the_same_seeds(mini_ws, tmp_path, monkeypatch) -> None:
    from rsi.portfolio import resolve_portfolio
    from rsi.store import open_store
    from rsi.tasks.load import load_suite

    script = tmp_path / "script.json"
    scripted_module().write_script(mini_ws, script, count=100)
    monkeypatch.setenv("RSI_MODEL_OVERRIDE", f"scripted:{script}")
    configs = resolve_portfolio(mini_ws, "mini").configurations
    tasks = draw_train_tasks(load_suite(mini_ws, "pyfuncs"), 3, seed=1)
    created: list[str] = []
    run_id = run_paired_selection(mini_ws, configs, tasks, seed=1, workers=2, sandbox="local", on_created=created.append)
    assert created == [run_id]
    store = open_store(mini_ws.db_url)
    try:
        run, rows = store.get_run(run_id), store.list_attempts(run_id)
    finally:
        store.close()
    assert run.scheduler == SELECTION_SCHEDULER and run.split == "train"
    by_job = {job: {r.task_key: r.seed for r in rows if r.job_index == job} for job in (0, 1)}
    assert set(by_job[0]) == set(by_job[1]) == {t.key for t in tasks}
    assert by_job[0] == by_job[1]  # paired: the configuration is the only difference
    assert {r.configuration_hash for r in rows} == {c.config_hash for c in configs}


def test_a_heldout_task_is_refused(mini_ws) -> None:
    from rsi.portfolio import resolve_portfolio
    from rsi.tasks.load import load_suite

    heldout = [t for t in load_suite(mini_ws, "pyfuncs") if t.spec.split == "heldout"][:1]
    with pytest.raises(ExecutorError, match="heldout task"):
        run_paired_selection(mini_ws, resolve_portfolio(mini_ws, "mini").configurations, heldout, seed=0,
                             workers=1, sandbox="local")
