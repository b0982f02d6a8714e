"""`rsi nightly` as cron runs it: real processes, a real file lock, real SIGKILLs, resume without redoing work.

Scenario, all through the real entry point on a small slice of the shipped suite (scripted model in the
run and evaluation stages, real peft training):

1. nightly A starts and is SIGKILLed in the middle of its run (after the 2nd recorded attempt);
   while A holds the lock (frozen with SIGSTOP, so the timing is certain), nightly B starts, finds the
   lock held, prints one line and exits 0;
2. nightly C resumes the same generation and the same run, and is SIGKILLed after the first training step;
3. nightly D resumes and completes the generation: the run was resumed, never restarted (one run id,
   every planned attempt recorded exactly once), and the steps that had finished were not started again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

ARGS = ("--limit-tasks", "3", "--budget-attempts", "6", "--workers", "1", "--max-steps", "2", "--threads", "1",
        "--max-length", "384", "--limit-heldout", "2", "--limit-covered", "1")


def _state(workspace):
    return json.loads((workspace.runs_dir / "generations" / "g0001" / "state.json").read_text())


def _attempt_rows(workspace, run_id):
    from rsi.store import open_store

    store = open_store(workspace.db_url)
    try:
        return store.list_attempts(run_id)
    finally:
        store.close()


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_nightly_lock_sigkill_and_resume(workspace, helpers, shim, scripted_env) -> None:
    env = {**os.environ, **scripted_env, "RSI_TEST_CRASH_AT": "attempt_recorded:2"}
    nightly_a = subprocess.Popen([sys.executable, "-c", helpers.CLI_SHIM, "nightly", *ARGS], cwd=workspace.root,
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    assert nightly_a.stdout is not None
    for line in nightly_a.stdout:  # wait until A holds the lock and is inside the run step
        lines.append(line)
        if "g0001 run: started" in line:
            break
    # Freeze A while it holds the lock (a stopped process keeps its lock), so B surely meets a running nightly.
    os.kill(nightly_a.pid, signal.SIGSTOP)
    try:
        second = shim("nightly", *ARGS, cwd=workspace.root, env=scripted_env)
    finally:
        os.kill(nightly_a.pid, signal.SIGCONT)
    assert second.returncode == 0, second.stdout + second.stderr
    assert second.stdout.strip().startswith("another rsi nightly is running") and len(second.stdout.strip().splitlines()) == 1
    rest, _ = nightly_a.communicate(timeout=900)
    assert nightly_a.returncode == -signal.SIGKILL, "".join(lines) + rest
    state = _state(workspace)
    assert state["steps"]["run"]["status"] == "running" and state["steps"]["run"]["tries"] == 1
    run_id = state["steps"]["run"]["outputs"]["run_id"]  # recorded as soon as the run existed
    assert len([r for r in _attempt_rows(workspace, run_id) if r.counted]) == 2

    crashed = shim("nightly", *ARGS, cwd=workspace.root, env={**scripted_env, "RSI_TEST_CRASH_AT": "gen:train:step1"})
    assert crashed.returncode == -signal.SIGKILL, crashed.stdout + crashed.stderr
    assert "g0001: resuming (no step finished)" in crashed.stdout
    assert f"run: {run_id}: portfolio default" in crashed.stdout  # the same run, resumed
    state = _state(workspace)
    assert [state["steps"][s]["status"] for s in ("run", "promote", "propose", "export", "train")] == \
        ["done", "done", "done", "done", "running"]
    assert state["steps"]["run"]["tries"] == 2 and state["steps"]["train"]["tries"] == 1
    assert state["steps"]["run"]["outputs"]["run_id"] == run_id

    started = time.monotonic()
    final = shim("nightly", *ARGS, cwd=workspace.root, env=scripted_env)
    assert final.returncode == 0, final.stdout + final.stderr
    assert "g0001: resuming (run, promote, propose, harvest, export finished)" in final.stdout
    assert "train: resuming from the checkpoint in .train-" in final.stdout  # killed after step 1
    summary = [line for line in final.stdout.splitlines() if " summary: g0001 done: " in line]
    assert len(summary) == 1 and "lift +0.000" in summary[0] and "retention" in summary[0], final.stdout
    for line in final.stdout.splitlines():  # plain timestamped lines, no progress bars or colour codes
        assert line[:4].isdigit() and line[19:21] == "Z " and "\x1b" not in line
    state = _state(workspace)
    assert state["status"] == "done"
    tries = {name: step["tries"] for name, step in state["steps"].items()}
    # harvest: skipped (no --harvest-per-task), so never started
    assert tries == {"run": 2, "promote": 1, "propose": 1, "harvest": 0, "export": 1, "train": 2, "evaluate": 1,
                     "promote_adapter": 1}
    rows = _attempt_rows(workspace, run_id)
    keys = [(r.job_index, r.task_key, r.attempt_index) for r in rows if r.counted]
    assert len(keys) == len(set(keys)) == state["steps"]["run"]["outputs"]["attempts"]  # nothing recorded twice
    from rsi.store import open_store

    store = open_store(workspace.db_url)
    try:
        runs = [r.id for r in store.list_runs()]
    finally:
        store.close()
    assert sorted(runs) == sorted([run_id, state["steps"]["evaluate"]["outputs"]["eval_id"]])
    assert state["steps"]["train"]["outputs"]["resumed_from_step"] == 1  # step 1 was not trained twice
    assert list(workspace.adapters_dir.iterdir())[0].name == state["steps"]["train"]["outputs"]["adapter_id"]
    assert not list(workspace.adapters_dir.glob(".train-*"))  # the killed training's folder was cleaned up
    assert time.monotonic() - started < 900

    idle = shim("nightly", *ARGS, "--budget-attempts", "3", cwd=workspace.root,
                env={**scripted_env, "RSI_MODEL_OVERRIDE": "scripted:/nonexistent.json"})
    assert idle.returncode == 2 and "nightly: bad-input" in idle.stdout  # a configuration error: a human must act
