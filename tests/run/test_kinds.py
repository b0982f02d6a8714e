"""The kinds of runs (rsi/run/kinds.py): what each counts as, how it resumes, and that run rows written
in the OLD untyped `args` format (before plans were typed: built here exactly as that code wrote them)
still read, resume and report. Real SQLite store, real workspace (shipped tasks, portfolios/mini.toml)."""

from __future__ import annotations

from typing import Any

import pytest

from rsi.errors import StoreError, UserInputError
from rsi.run.kinds import (
    EVAL_SCHEDULER,
    HARVEST_SCHEDULER,
    ROLLOUT_SCHEDULER,
    RUN_KINDS,
    SELECTION_SCHEDULER,
    EvalPlan,
    HarvestPlan,
    RolloutPlan,
    SearchPlan,
    kind_of_scheduler,
    non_search_schedulers,
    read_plan,
)
from rsi.run.setup import OpenedRun, open_new_run, open_stored_run, resume_command
from rsi.run.spec import RunSpec
from rsi.store import AttemptRecord, ConfigInfo, TaskInfo, open_store
from rsi.verdict import Verdict


def test_each_kind_is_pinned_what_it_counts_as_and_how_it_resumes() -> None:
    assert {name: (k.scheduler, k.counts_as_search) for name, k in RUN_KINDS.items()} == {
        "search": (None, True),  # `rsi run` under any registered scheduler: coverage search
        "harvest": ("harvest", False),  # more solutions of known train tasks
        "eval": ("eval-paired", False),  # a comparison on fixed tasks, heldout and covered train
        "rollouts": ("grpo-rollouts", False),  # a policy's training groups
        "selection": ("select-paired", True),  # the shortlist on the same train tasks: counted, as before
    }
    assert set(non_search_schedulers()) == {"harvest", "eval-paired", "grpo-rollouts"}
    assert [resume_command(s, "R") for s in ("thompson", HARVEST_SCHEDULER, EVAL_SCHEDULER, ROLLOUT_SCHEDULER,
                                             SELECTION_SCHEDULER)] == [
        "rsi run --resume R", "rsi harvest --resume R", "rsi eval --resume R",
        "the same `rsi train --method grpo` again", "the same `rsi generation` again"]
    for name, kind in RUN_KINDS.items():
        assert kind.name == name and kind.plan.model_fields["kind"].default == name
        if kind.scheduler is not None:
            assert kind_of_scheduler(kind.scheduler) is kind
    assert kind_of_scheduler("thompson") is kind_of_scheduler("ucb") is RUN_KINDS["search"]


def test_all_runs_reads_count_search_kinds_only_and_by_id_every_kind(tmp_path) -> None:
    """Each kind's run passes its own task: reads over all runs see the search kinds' tasks only."""
    with open_store(f"sqlite:///{tmp_path / 'rsi.db'}") as store:
        store.record_configurations([ConfigInfo("c1", "alpha")])
        schedulers = {"search": "thompson", **{n: k.scheduler for n, k in RUN_KINDS.items() if k.scheduler}}
        store.record_tasks([TaskInfo("s", name) for name in schedulers])
        run_of = {}
        for name, scheduler in schedulers.items():
            run = store.create_run(portfolio="p", suite="s", scheduler=str(scheduler))
            store.start_job(run.id, "c1", [f"s/{name}"])
            store.record_attempt(run.id, 0, AttemptRecord(task_key=f"s/{name}", verdict=Verdict.PASSED))
            run_of[name] = run.id
        counted = {f"s/{n}" for n, k in RUN_KINDS.items() if k.counts_as_search}
        assert counted == {"s/search", "s/selection"}
        assert store.covered_tasks("s", None) == counted
        assert set(store.coverage("s", None).covered) == counted
        assert {fact[1] for fact in store.attempt_history("s", None)} == counted
        assert {t.task_key for t in store.task_stats("s", None) if t.passes} == counted
        assert sum(c.attempts for c in store.configuration_stats("s", None)) == len(counted)
        for name, run_id in run_of.items():  # asked for by id, every kind is read
            assert store.covered_tasks("s", None, [run_id]) == {f"s/{name}"}


# -- rows in the old format ------------------------------------------------------------------------


def _old_row(store: Any, scheduler: str, args: dict[str, Any], budget: dict[str, Any]) -> str:
    """A run row as the code before typed plans wrote it (its own `args` dict), stopped."""
    resolved = args["resolved"]
    row = store.create_run(portfolio=resolved["portfolio"], suite=resolved["suite"], split=resolved["split"],
                           budget=budget, seed=resolved["seed"], scheduler=scheduler, args=args)
    store.finish_run(row.id, "stopped")
    return str(row.id)


def _old_search(store: Any, new: OpenedRun, spec: RunSpec) -> str:
    """rsi/run/setup.py open_new_run's old row."""
    r = new.resolved
    return _old_row(store, r.scheduler, {
        "spec": spec.model_dump(mode="json"), "resolved": r.model_dump(mode="json"),
        "configs": [c.config_hash for c in new.configs], "tasks": [t.key for t in new.tasks],
    }, {"attempts": r.budget_attempts, "tokens": r.budget_tokens, "minutes": r.budget_minutes})


def _old_harvest(store: Any, new: OpenedRun, source: str) -> str:
    """rsi/run/harvest.py open_harvest_run's old row (train tasks only)."""
    tasks = [t.key for t in new.tasks if t.spec.split == "train"]
    resolved = new.resolved.model_copy(update={"portfolio": f"harvest of {source}", "split": "train",
                                               "budget_attempts": 7, "budget_tokens": None, "budget_minutes": None,
                                               "attempts_per_task": 1, "job_size": 3, "scheduler": "harvest",
                                               "limit_tasks": None})
    return _old_row(store, "harvest", {
        "resolved": resolved.model_dump(mode="json"), "configs": [c.config_hash for c in new.configs],
        "tasks": tasks, "harvest": {"source_runs": [source], "per_task": 3, "known_solutions": {tasks[0]: 1}},
    }, {"attempts": 7, "tokens": None, "minutes": None})


def _old_eval_args(new: OpenedRun) -> dict[str, Any]:
    """rsi/evaluation/execute.py _EvalRun.open's old args (parent and candidate: the mini portfolio's two)."""
    keys = [t.key for t in new.tasks]
    resolved = new.resolved.model_copy(update={"portfolio": "eval:b@r1-vs-a@r1", "split": "all", "scheduler": "eval-paired",
                                               "seeding": "paired", "budget_attempts": 2 * len(keys)})
    spec = {"candidate": "b", "parent": "a", "workers": 3, "suite": new.resolved.suite}
    return {"eval": {"spec": spec, "heldout": keys[:1], "covered": keys[1:], "transfer": [], "best_of_n": None},
            "resolved": resolved.model_dump(mode="json"), "configs": [c.config_hash for c in new.configs],
            "tasks": keys}


def _old_rollouts_args(new: OpenedRun) -> dict[str, Any]:
    """rsi/run/planned.py PlannedRun.open's old args for rsi/training/rollouts.py's step."""
    train = [t.key for t in new.tasks if t.spec.split == "train"]
    resolved = new.resolved.model_copy(update={"portfolio": "grpo-rollouts:a step 2", "split": "train",
                                               "scheduler": "grpo-rollouts", "job_size": 1})
    return {"rollouts": {"step": 2, "group_size": 4, "reuse_key": "k-2", "groups": train},
            "resolved": resolved.model_dump(mode="json"), "configs": [new.configs[0].config_hash], "tasks": train}


@pytest.fixture
def stored(mini_ws) -> Any:
    """The mini workspace's store with a new run (today's format) and its old-format rows of every kind."""
    store = open_store(mini_ws.db_url)
    spec = RunSpec(portfolio="mini", limit_tasks=4, split="all")
    new = open_new_run(store, mini_ws, spec)
    store.finish_run(new.run_id, "stopped")
    rows = {"new": new.run_id, "search": _old_search(store, new, spec), "harvest": _old_harvest(store, new, new.run_id),
            "eval": _old_row(store, "eval-paired", _old_eval_args(new), {"attempts": 8}),
            "rollouts": _old_row(store, "grpo-rollouts", _old_rollouts_args(new), {"attempts": 8})}
    yield store, mini_ws, new, rows
    store.close()


def test_old_rows_read_as_their_kind_at_version_0_and_new_rows_at_the_current_version(stored) -> None:
    store, _, new, rows = stored
    plans = {name: read_plan(store.get_run(run_id)) for name, run_id in rows.items()}
    assert {name: (type(p), p.kind, p.version) for name, p in plans.items()} == {
        "new": (SearchPlan, "search", 1), "search": (SearchPlan, "search", 0), "harvest": (HarvestPlan, "harvest", 0),
        "eval": (EvalPlan, "eval", 0), "rollouts": (RolloutPlan, "rollouts", 0)}
    assert store.get_run(rows["new"]).args["kind"] == "search" and store.get_run(rows["new"]).args["version"] == 1
    old, typed = plans["search"], plans["new"]
    assert (old.resolved, old.configs, old.tasks) == (typed.resolved, typed.configs, typed.tasks) == (
        new.resolved, [c.config_hash for c in new.configs], [t.key for t in new.tasks])
    assert isinstance(old, SearchPlan) and isinstance(typed, SearchPlan) and old.spec == typed.spec
    harvest, rollouts = plans["harvest"], plans["rollouts"]
    assert isinstance(harvest, HarvestPlan) and harvest.harvest.source_runs == [new.run_id] and harvest.harvest.per_task == 3
    assert isinstance(rollouts, RolloutPlan) and rollouts.rollouts.reuse_key == "k-2" and rollouts.rollouts.group_size == 4
    # An old harvest row that lacks its section is refused by name, not read as something else.
    lacking = {k: v for k, v in store.get_run(rows["harvest"]).args.items() if k != "harvest"}
    bad = _old_row(store, "harvest", lacking, {})
    with pytest.raises(StoreError, match=rf"^harvest {bad} was not written by `rsi harvest` \(args lack 'harvest'\)"):
        read_plan(store.get_run(bad))


def test_old_rows_resume_through_their_own_commands(stored) -> None:
    from rsi.evaluation import EvalSpec, _resumed_plan
    from rsi.harvest import HarvestSpec, reopen_harvest_run, stored_harvest_spec
    from rsi.training.rollouts import reusable_run

    store, ws, new, rows = stored
    opened = open_stored_run(store, ws, rows["search"])  # `rsi run --resume` of an old row
    assert (opened.resolved, opened.configs, opened.tasks) == (new.resolved, new.configs, new.tasks)
    assert store.get_run(rows["search"]).status == "running"
    spec = stored_harvest_spec(store, HarvestSpec(source_runs=(), resume=rows["harvest"], workers=2))
    assert (spec.source_runs, spec.per_task, spec.budget_attempts, spec.job_size, spec.workers) == ((new.run_id,), 3, 7, 3, 2)
    reopened = reopen_harvest_run(store, ws, rows["harvest"])
    assert [t.key for t in reopened.tasks] == [t.key for t in new.tasks if t.spec.split == "train"]
    resumed, plan = _resumed_plan(store, EvalSpec(candidate="x", parent="y", resume=rows["eval"]))
    old = _old_eval_args(new)
    assert (resumed.candidate, resumed.parent, resumed.workers, resumed.resume) == ("b", "a", 3, rows["eval"])
    assert plan == {**old["eval"], "configs": old["configs"]}
    assert reusable_run(store, new.resolved.suite, "k-2") == rows["rollouts"]
    assert reusable_run(store, new.resolved.suite, "k-other") is None
    for name in ("harvest", "eval", "rollouts"):  # `rsi run --resume` names each kind's own command
        with pytest.raises(UserInputError) as refused:
            open_stored_run(store, ws, rows[name])
        assert RUN_KINDS[name].resume_command(rows[name]) in (refused.value.hint or "")


def test_old_rows_report_like_new_ones(stored) -> None:
    from rsi.report.write import load_run_report
    from rsi.run.summary import split_targets, summarize_run

    store, _, new, rows = stored
    reports = {name: load_run_report(store, run_id) for name, run_id in rows.items()}
    keys = [t.key for t in new.tasks]
    hashes = [c.config_hash for c in new.configs]
    for name in ("new", "search", "eval"):
        assert [line.key for line in reports[name].tasks] == keys
        assert [c.config_hash for c in reports[name].configs] == hashes
    assert [line.key for line in reports["harvest"].tasks] == [t.key for t in new.tasks if t.spec.split == "train"]
    assert [c.config_hash for c in reports["rollouts"].configs] == hashes[:1]
    assert summarize_run(store, rows["search"]).tasks == summarize_run(store, rows["new"]).tasks == len(keys)
    assert split_targets(store, [rows["search"]], "all") == split_targets(store, [rows["new"]], "all") == sorted(keys)
