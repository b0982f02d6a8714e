"""SIGKILL a real `rsi eval` at the orchestrator's write boundaries, resume it, and check nothing is lost or
doubled: the evaluation runs on the `rsi run` path, so the run's crash points apply to it.

The attempt is the no-op one (RSI_ATTEMPT_OVERRIDE testing hook), which logs every executed key: the
test proves that no attempt recorded before the kill runs again, that every planned attempt of every
side ends with exactly one row, and that both sides drew the same seed on each task.
"""

from __future__ import annotations

import json
import signal
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

HELDOUT = 3
EVAL_ARGS = ("eval", "default@r2", "--against", "default@r1", "--limit-heldout", str(HELDOUT), "--limit-covered", "0",
             "--workers", "2", "--dry-run", "--json")


def query(ws, sql: str, *params):
    with sqlite3.connect(ws.runs_dir / "rsi.sqlite", timeout=30) as conn:
        return conn.execute(sql, params).fetchall()


@pytest.fixture
def eval_ws(workspace, cli, monkeypatch):
    """A workspace whose default contract has a second revision (the candidate) beside the first (the parent)."""
    for var in ("RSI_DB", "RSI_ATTEMPT_OVERRIDE", "RSI_MODEL_OVERRIDE", "RSI_TEST_CRASH_AT"):
        monkeypatch.delenv(var, raising=False)
    done = cli("hcp", "revise", "default", "--set", "harness.max_turns=3", "-m", "candidate: three turns",
               cwd=workspace.root)
    assert done.returncode == 0, done.stderr
    return workspace


def executed(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


@pytest.mark.parametrize("point", ["run_created:1", "job_planned:2", "attempt_recorded:4"])
def test_sigkilled_evaluation_resumes_without_losing_or_repeating(eval_ws, cli, tmp_path, point) -> None:
    log = tmp_path / "executed.log"
    env = {"RSI_ATTEMPT_OVERRIDE": f"noop:0.5:0.05:{log}", "RSI_TEST_CRASH_AT": point}
    first = cli(*EVAL_ARGS, cwd=eval_ws.root, env=env)
    assert first.returncode == -signal.SIGKILL, (first.returncode, first.stderr[-2000:])
    [(eval_id, scheduler)] = query(eval_ws, "SELECT id, scheduler FROM runs")
    assert scheduler == "eval-paired"
    before = {k for (k,) in query(eval_ws, "SELECT idem_key FROM attempts WHERE run_id = ? AND counted", eval_id)}
    ran_before = len(executed(log))
    jobs_at_kill = len(query(eval_ws, "SELECT job_index FROM jobs WHERE run_id = ?", eval_id))
    if point == "run_created:1":
        assert not before and jobs_at_kill == 0  # the plan is in the run row only
    elif point == "job_planned:2":
        assert jobs_at_kill == 2  # killed right after the candidate's job was stored
    else:
        assert len(before) >= 4  # killed once 4 outcomes were recorded: these must not run again

    second = cli("eval", "--resume", eval_id, "--dry-run", "--json", cwd=eval_ws.root,
                 env={**env, "RSI_TEST_CRASH_AT": ""})
    assert second.returncode in (0, 1), second.stderr[-3000:]  # 1: the gate rejected (noop verdicts)
    outcome = json.loads(second.stdout)
    assert outcome["eval_id"] == eval_id and outcome["attempts"] == 2 * HELDOUT
    assert not before & set(executed(log)[ran_before:]), "an attempt recorded before the kill ran again"

    jobs = query(eval_ws, "SELECT job_index, planned_tasks, status FROM jobs WHERE run_id = ? ORDER BY job_index", eval_id)
    assert [j[0] for j in jobs] == [0, 1] and all(status == "done" for *_, status in jobs)
    assert json.loads(jobs[0][1]) == json.loads(jobs[1][1]) == outcome["heldout_tasks"]  # parent, candidate
    planned = Counter(f"{eval_id}|{j}|{t}|0" for j, tasks, _ in jobs for t in json.loads(tasks))
    rows = Counter(k for (k,) in query(eval_ws, "SELECT idem_key FROM attempts WHERE run_id = ?", eval_id))
    assert rows == planned, "each planned attempt has exactly one row"
    seeds = query(eval_ws, "SELECT task_key, COUNT(DISTINCT seed) FROM attempts WHERE run_id = ? GROUP BY task_key",
                  eval_id)
    assert len(seeds) == HELDOUT and all(n == 1 for _, n in seeds), "both sides draw the same seed per task"
    [(status,)] = query(eval_ws, "SELECT status FROM runs WHERE id = ?", eval_id)
    assert status == "done"
    # the attempts are laid out like any run's (rsi/run/layout.py)
    assert (eval_ws.run_dir(eval_id) / "eval.json").is_file()


def test_rsi_run_refuses_to_resume_an_evaluation(eval_ws, cli, tmp_path) -> None:
    env = {"RSI_ATTEMPT_OVERRIDE": "noop:0.5:0.0"}
    done = cli(*EVAL_ARGS, cwd=eval_ws.root, env=env)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    eval_id = json.loads(done.stdout)["eval_id"]
    resumed = cli("run", "--resume", eval_id, "--no-report", cwd=eval_ws.root, env=env)
    assert resumed.returncode == 2 and f"rsi eval --resume {eval_id}" in resumed.stderr, resumed.stderr[-2000:]
