"""Reopening a stored run: every resume (rsi run, rsi harvest, a planned run) goes through
`reopen_stored_run`; `rsi run` and `rsi harvest` read their plan back with `stored_plan`.
Real SQLite store, real workspace (shipped tasks, portfolios/mini.toml)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rsi.errors import StoreError, UserInputError
from rsi.harvest import reopen_harvest_run
from rsi.run.kinds import read_plan
from rsi.run.planned import PlannedRun
from rsi.run.setup import STATE_FILE, OpenedRun, open_new_run, open_stored_run
from rsi.run.spec import RunSpec
from rsi.store import open_store
from rsi.tasks.load import load_suite


def _stopped_run(store: Any, ws: Any, elapsed_s: float | None) -> OpenedRun:
    """A recorded `rsi run` of three tasks, stopped, with `elapsed_s` in its state file (none: no file)."""
    new = open_new_run(store, ws, RunSpec(portfolio="mini", limit_tasks=3))
    store.finish_run(new.run_id, "stopped")
    if elapsed_s is not None:
        ws.run_dir(new.run_id).mkdir(parents=True, exist_ok=True)
        (ws.run_dir(new.run_id) / STATE_FILE).write_text(json.dumps({"elapsed_s": elapsed_s}))
    return new


def _copy_run(store: Any, new: OpenedRun, scheduler: str = "thompson", **args: Any) -> str:
    """Another run row like `new`'s, its args changed by `args` (None drops a key); stopped."""
    stored = store.get_run(new.run_id)
    changed = {k: v for k, v in {**stored.args, **args}.items() if v is not None}
    row = store.create_run(portfolio=stored.portfolio, suite=stored.suite, split=stored.split, budget=stored.budget,
                           seed=stored.seed, scheduler=scheduler, args=changed)
    store.finish_run(row.id, "stopped")
    return str(row.id)


def test_a_resumed_run_gets_its_stored_plan_and_earlier_wall_time(mini_ws) -> None:
    with open_store(mini_ws.db_url) as store:
        new = _stopped_run(store, mini_ws, 12.5)
        # Today's portfolio file no longer matters: the resume runs the configurations as recorded.
        (mini_ws.portfolios_dir / "mini.toml").write_text("not toml at all [")
        opened = open_stored_run(store, mini_ws, new.run_id)
        assert store.get_run(new.run_id).status == "running"
    assert opened.run_id == new.run_id and opened.resolved == new.resolved
    assert [c.config_hash for c in opened.configs] == [c.config_hash for c in new.configs]
    assert [t.key for t in opened.tasks] == [t.key for t in new.tasks] and len(opened.tasks) == 3
    assert opened.elapsed_before_s == 12.5 and new.elapsed_before_s == 0.0


def test_a_planned_run_reopens_with_the_plan_it_rebuilt(mini_ws) -> None:
    with open_store(mini_ws.db_url) as store:
        new = _stopped_run(store, mini_ws, None)  # no state file: no earlier wall time
        stored = read_plan(store.get_run(new.run_id))
        planned = PlannedRun(mini_ws, new.run_id, stored, jobs=[], tasks=new.tasks[:2], resume=True)
        opened = planned.open(store)
        assert store.get_run(new.run_id).status == "running"
    assert opened.tasks == new.tasks[:2] and opened.configs == [] and opened.elapsed_before_s == 0.0


def test_a_plan_that_cannot_run_again_is_refused_by_kind_and_the_run_stays_stopped(mini_ws) -> None:
    with open_store(mini_ws.db_url) as store:
        new = _stopped_run(store, mini_ws, 3.0)
        lacking = _copy_run(store, new, configs=None)
        with pytest.raises(StoreError, match=rf"^run {lacking} was not written by `rsi run` \(args lack 'configs'\)"):
            open_stored_run(store, mini_ws, lacking)
        unknown = _copy_run(store, new, configs=["f" * 64])
        with pytest.raises(StoreError, match=rf"^run {unknown}: configurations \['f+'\] are missing from the store"):
            open_stored_run(store, mini_ws, unknown)
        gone = _copy_run(store, new, tasks=[*store.get_run(new.run_id).args["tasks"], "pyfuncs/no-such-task"])
        with pytest.raises(UserInputError, match=rf"^run {gone}: tasks pyfuncs/no-such-task are no longer in suite") as error:
            open_stored_run(store, mini_ws, gone)
        assert error.value.hint == "restore them, or start a new run"
        # A harvest names itself and its command in the same errors.
        harvest_gone = _copy_run(store, new, scheduler="harvest", tasks=["pyfuncs/no-such-task"])
        with pytest.raises(UserInputError, match=rf"^harvest {harvest_gone}: tasks pyfuncs/no-such-task") as error:
            reopen_harvest_run(store, mini_ws, harvest_gone)
        assert error.value.hint == "restore them, or start a new harvest"
        harvest_lacking = _copy_run(store, new, scheduler="harvest", resolved=None)
        with pytest.raises(StoreError, match=r"was not written by `rsi harvest` \(args lack 'resolved'\)"):
            reopen_harvest_run(store, mini_ws, harvest_lacking)
        assert {store.get_run(r).status for r in (lacking, unknown, gone, harvest_gone, harvest_lacking)} == {"stopped"}


def test_a_harvest_reopens_train_tasks_only(mini_ws) -> None:
    with open_store(mini_ws.db_url) as store:
        new = _stopped_run(store, mini_ws, 4.0)
        heldout = sorted(t.key for t in load_suite(mini_ws, new.resolved.suite) if t.spec.split == "heldout")[:1]
        assert heldout, "the shipped suite has heldout tasks"
        harvest = _copy_run(store, new, scheduler="harvest", tasks=heldout)
        with pytest.raises(UserInputError, match="refusing to harvest 1 non-train task"):
            reopen_harvest_run(store, mini_ws, harvest)
        assert store.get_run(harvest).status == "stopped"
        train = [t.key for t in new.tasks if t.spec.split == "train"]
        harvest = _copy_run(store, new, scheduler="harvest", tasks=train)
        opened = reopen_harvest_run(store, mini_ws, harvest)
        assert store.get_run(harvest).status == "running"
    assert [t.key for t in opened.tasks] == train and opened.elapsed_before_s == 0.0
