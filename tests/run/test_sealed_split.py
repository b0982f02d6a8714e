"""The sealed test split is never a run's target: `--split all` leaves it out, the one opener of every kind of
run refuses a plan that names a test task (nothing is written), and `rsi attempt` refuses one. Real workspace,
suite and SQLite store; no model is called (every refusal comes first)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rsi.errors import UserInputError
from rsi.portfolio import load_portfolio
from rsi.run.kinds import SearchPlan
from rsi.run.setup import record_run, resolve_run, select_tasks
from rsi.run.spec import RunSpec
from rsi.store import new_run_id, open_store
from rsi.tasks.load import load_suite


def seal(workspace, key: str) -> None:
    suite, task = key.split("/")
    path = Path(workspace.root) / "tasks" / suite / task / "task.toml"
    path.write_text(re.sub(r'(?m)^split = "\w+"', 'split = "test"', path.read_text(encoding="utf-8")), encoding="utf-8")


def test_a_run_never_targets_a_sealed_test_task(workspace, cli) -> None:
    train = sorted(t.key for t in load_suite(workspace, "pyfuncs") if t.spec.split == "train")
    sealed_key = train[0]
    seal(workspace, sealed_key)
    tasks = load_suite(workspace, "pyfuncs")
    sealed = next(t for t in tasks if t.key == sealed_key)
    assert sealed.spec.split == "test"
    every = select_tasks(tasks, "all", None)
    assert sealed_key not in {t.key for t in every} and len(every) == len(tasks) - 1
    assert sealed_key not in {t.key for t in select_tasks(tasks, "train", None)}

    configs = list(load_portfolio(workspace, "default"))
    plan = SearchPlan(resolved=resolve_run(RunSpec(split="all"), configs), configs=[c.config_hash for c in configs],
                      tasks=[sealed_key, train[1]])
    store = open_store(workspace.db_url)
    try:
        with pytest.raises(UserInputError, match=f"{sealed_key} is a sealed test task .*never targets the test split"):
            record_run(store, new_run_id(), plan, configs, [sealed, next(t for t in tasks if t.key == train[1])])
        assert store.list_runs() == [] and store.list_tasks("pyfuncs") == []  # refused before anything is written
    finally:
        store.close()

    attempt = cli("attempt", "default", sealed_key, cwd=workspace.root, env={"RSI_WORKSPACE": str(workspace.root)})
    assert attempt.returncode == 2 and "sealed test task" in attempt.stderr and "Traceback" not in attempt.stderr
    run = cli("run", "--split", "test", "--budget-attempts", "1", cwd=workspace.root,
              env={"RSI_WORKSPACE": str(workspace.root)})
    assert run.returncode == 2 and "Traceback" not in run.stderr
