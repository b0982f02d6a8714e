"""A generation's harvest step survives SIGKILL, and with `accumulate` its evaluation measures the pooled runs.

The crash test drives the real `rsi generation` (real orchestrator, harness, sandbox, verifier and store; the
scripted model writes each task's reference solution plus `_variant = <0..9>` drawn inside the sandbox, so
repeated attempts yield distinct passing solutions) and kills it three times through RSI_TEST_CRASH_AT: as
the harvest step starts, mid-harvest after its 2nd recorded attempt, and once the harvest step is done (so no
training runs). The scope test writes synthetic generation records over real runs (no-op attempts) and runs
the real evaluate step.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.run.mini import MINI_PORTFOLIO

HARVEST_BUDGET = 6
ARGS = ("--portfolio", "mini", "--limit-tasks", "3", "--budget-attempts", "6", "--workers", "2", "--harvest-per-task",
        "3", "--harvest-budget", str(HARVEST_BUDGET), "--json")


def _variant_script(workspace, path: Path) -> Path:
    from rsi.tasks.load import load_suite

    replies = {}
    for task in load_suite(workspace, "pyfuncs"):
        source = (task.solution_dir / task.spec.solution_file).read_text()
        code = (f"import random\nopen({task.spec.solution_file!r}, 'w').write({source!r} + "
                f"'\\n_variant = %d\\n' % random.randrange(10))\nsubmit()")
        replies[task.id] = [f"```python\n{code}\n```"]
    path.write_text(json.dumps({"tasks": replies}))
    return path


def _state(workspace) -> dict:
    return json.loads((workspace.runs_dir / "generations" / "g0001" / "state.json").read_text())


def _harvest_rows(workspace) -> tuple[list, dict]:
    """The store's harvest runs, and each counted attempt's trajectory (inode, mtime, bytes) by key."""
    from rsi.store import open_store

    store = open_store(workspace.db_url)
    try:
        harvests = [r for r in store.list_runs() if r.scheduler == "harvest"]
        rows = [a for r in harvests for a in store.list_attempts(r.id) if a.counted]
    finally:
        store.close()
    files = {}
    for row in rows:
        path = Path(row.trajectory_path)
        path = path if path.is_absolute() else workspace.runs_dir / path
        files[row.idem_key] = (path.stat().st_ino, path.stat().st_mtime_ns, path.read_bytes())
    return harvests, files


@pytest.mark.timeout(900)
def test_a_killed_harvest_step_resumes_its_harvest(workspace, shim, scripted_env, tmp_path) -> None:
    (workspace.portfolios_dir / "mini.toml").write_text(MINI_PORTFOLIO)
    env = {**scripted_env, "RSI_MODEL_OVERRIDE": f"scripted:{_variant_script(workspace, tmp_path / 'variants.json')}"}

    first = shim("generation", *ARGS, cwd=workspace.root, env={**env, "RSI_TEST_CRASH_AT": "gen:harvest:started"})
    assert first.returncode == -9, first.stderr[-3000:]
    assert _state(workspace)["steps"]["harvest"]["status"] == "running" and not _harvest_rows(workspace)[0]

    mid = shim("generation", "--json", cwd=workspace.root, env={**env, "RSI_TEST_CRASH_AT": "attempt_recorded:2"})
    assert mid.returncode == -9, mid.stderr[-3000:]
    recorded = _state(workspace)["steps"]["harvest"]["outputs"]
    harvests, before = _harvest_rows(workspace)
    # The harvest's id and sources were recorded as its run row was written, before any attempt ran.
    assert [r.id for r in harvests] == [recorded["run_id"]] and len(before) >= 2
    run_id = _state(workspace)["steps"]["run"]["outputs"]["run_id"]
    assert recorded["source_runs"] == [run_id]

    last = shim("generation", "--json", cwd=workspace.root, env={**env, "RSI_TEST_CRASH_AT": "gen:harvest:done"})
    assert last.returncode == -9, last.stderr[-3000:]
    assert "g0001 harvest: started (try 3)" in last.stderr
    step = _state(workspace)["steps"]["harvest"]
    harvests, after = _harvest_rows(workspace)
    assert step["status"] == "done" and step["tries"] == 3
    assert [r.id for r in harvests] == [recorded["run_id"]], "the re-entered step started a second harvest"
    assert step["outputs"]["run_id"] == recorded["run_id"] and step["outputs"]["source_runs"] == [run_id]
    assert {k: after[k] for k in before} == before, "an attempt recorded before the kill ran again"
    # Both sessions together spent the harvest's one budget; every planned attempt has exactly one row.
    assert step["outputs"]["attempts"] == len(after) <= HARVEST_BUDGET and harvests[0].status == "done"
    from rsi.store import open_store

    store = open_store(workspace.db_url)
    try:
        jobs, rows = store.list_jobs(recorded["run_id"]), store.list_attempts(recorded["run_id"])
    finally:
        store.close()
    planned = Counter(f"{recorded['run_id']}|{j.job_index}|{t}|0" for j in jobs for t in j.planned_tasks)
    assert Counter(a.idem_key for a in rows) == planned and all(j.status == "done" for j in jobs)


# -- the evaluation's scope with `accumulate` --------------------------------------------------------------


def _write_generation(workspace, number: int, run_id: str, accumulate: bool, trained: bool) -> Any:
    from rsi.generation.outputs import RunOutput, TrainOutput
    from rsi.generation.state import GenerationState, now_utc, write_state

    spec = {"contract": "default", "accumulate": accumulate, "limit_heldout": 2, "workers": 2}
    state = GenerationState(id=f"g{number:04d}", number=number, created=now_utc(), updated=now_utc(), spec=spec,
                            inputs={"contract": "default", "revision": 1, "portfolio": "mini"},
                            status="running" if trained else "done")
    state.step("run").status = "done"
    state.step("run").outputs = RunOutput(run_id=run_id).model_dump(mode="json", exclude_unset=True)
    if trained:
        state.step("train").status = "done"
        state.step("train").outputs = TrainOutput(candidate_ref="default@r2", parent_ref="default@r1").model_dump(
            mode="json", exclude_unset=True)
    return write_state(workspace, state)


def _covered_run(cli, workspace, limit: int, env: dict[str, str]) -> str:
    done = cli("run", "-p", "mini", "--limit-tasks", str(limit), "--budget-attempts", str(limit), "--job-size",
               str(limit), "--no-report", "--json", cwd=workspace.root, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = json.loads(done.stdout)
    assert outcome["covered"] == limit  # every no-op attempt passes: the run covers each of its tasks
    return outcome["run_id"]


@pytest.mark.parametrize("accumulate", [True, False])
def test_retention_and_transfer_use_the_pooled_runs_with_accumulate(workspace, cli, monkeypatch, accumulate) -> None:
    """Generation 1's run covered 5 train tasks, generation 2's own run 2 of them: with `accumulate` the
    evaluation's retention and transfer sets are the 5 tasks the pooled runs cover, without it the 2."""
    from rsi.generation.generation import Generation
    from rsi.generation.outputs import EvaluateOutput
    from rsi.store import open_store

    for var in ("RSI_DB", "RSI_MODEL_OVERRIDE", "RSI_TEST_CRASH_AT"):
        monkeypatch.delenv(var, raising=False)
    (workspace.portfolios_dir / "mini.toml").write_text(MINI_PORTFOLIO)
    env = {"RSI_ATTEMPT_OVERRIDE": "noop:1.0:0"}
    earlier, own = _covered_run(cli, workspace, 5, env), _covered_run(cli, workspace, 2, env)
    # The candidate revision, made after the runs (mini's `short` variant would equal it as its base).
    revised = cli("hcp", "revise", "default", "--set", "harness.max_turns=5", "-m", "candidate", cwd=workspace.root)
    assert revised.returncode == 0, revised.stderr
    _write_generation(workspace, 1, earlier, accumulate, trained=False)
    state = _write_generation(workspace, 2, own, accumulate, trained=True)

    monkeypatch.setenv("RSI_ATTEMPT_OVERRIDE", "noop:0.5:0")
    generation = Generation(workspace, state, note=lambda _m: None)
    assert generation.evaluation_runs() == ([earlier, own] if accumulate else [own])
    generation.step_evaluate()
    measured = generation.state.outputs(EvaluateOutput)
    store = open_store(workspace.db_url)
    try:
        pooled = store.covered_tasks("pyfuncs", "train", generation.evaluation_runs())
        stored = store.get_run(measured.eval_id).args["eval"]
    finally:
        store.close()
    assert len(pooled) == (5 if accumulate else 2)
    assert measured.retention_in_sample is not None and measured.transfer is not None
    assert measured.retention_in_sample.covered == measured.transfer.portfolio_covered == len(pooled)
    assert set(stored["covered"]) == set(stored["transfer"]) == pooled
    assert stored["spec"]["covered_runs"] == stored["spec"]["transfer_runs"] == generation.evaluation_runs()
