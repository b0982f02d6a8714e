"""A workspace made by the previous release (112f886) still reads, resumes and reports with today's code.

tests/fixtures/workspace-112f886.tar.gz was made by tests/fixtures/make_workspace_112f886.sh with that release's
code: a finished run (scripted model, real sandbox and verifier), a dry-run evaluation, and a run SIGKILLed after
its 5th recorded attempt (no-op attempts). Beside the workspace, expected/ holds what the old `rsi runs`,
`rsi status` and `rsi coverage` printed; today's commands must say the same, through the real CLI (a subprocess),
on a copy of the old store (which today's code migrates when it opens it).
"""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import sys
import tarfile
from collections import Counter
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "workspace-112f886.tar.gz"
NUMBERS = ("attempts", "passes", "errors", "covered", "tasks", "jobs")  # what every summary shows


class OldWorkspace:
    def __init__(self, root: Path) -> None:
        self.root = root / "ws"
        self.expected = root / "expected"
        self.runs = json.loads((self.expected / "runs.json").read_text())

    def expected_json(self, name: str) -> dict:
        return json.loads((self.expected / name).read_text())

    def run_id(self, portfolio: str, state: str) -> str:
        [run_id] = [r["run_id"] for r in self.runs if r["portfolio"] == portfolio and r["state"] == state]
        return run_id

    def query(self, sql: str, *params: object) -> list:
        with sqlite3.connect(self.root / "runs" / "rsi.sqlite", timeout=30) as conn:
            return conn.execute(sql, params).fetchall()


def _dead_pid() -> int:
    """The pid of a process that has ended (what a killed run's owner file names after a reboot)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


@pytest.fixture
def old(tmp_path: Path, git_identity: None, monkeypatch: pytest.MonkeyPatch) -> OldWorkspace:
    for var in ("RSI_DB", "RSI_WORKSPACE", "RSI_MODEL_OVERRIDE", "RSI_ATTEMPT_OVERRIDE", "RSI_TEST_CRASH_AT"):
        monkeypatch.delenv(var, raising=False)
    with tarfile.open(FIXTURE) as archive:
        archive.extractall(tmp_path, filter="data")
    workspace = OldWorkspace(tmp_path)
    # The killed run's owner file names the fixture maker's host and pid: make it this host and an ended process,
    # or a reader here could not tell that nothing runs it.
    for owner in (workspace.root / "runs").glob("*/owner.json"):
        data = json.loads(owner.read_text())
        owner.write_text(json.dumps({**data, "host": socket.gethostname(), "pid": _dead_pid()}))
    return workspace


def _json(cli, old: OldWorkspace, *args: str, env: dict[str, str] | None = None) -> object:
    result = cli(*args, "--json", cwd=old.root, env=env)
    assert result.returncode == 0, (args, result.stderr[-3000:])
    return json.loads(result.stdout)


def test_runs_status_and_coverage_say_what_the_old_release_said(old: OldWorkspace, cli) -> None:
    listed = _json(cli, old, "runs")
    assert listed == old.runs  # every field: ids, times, states, figures, end reasons
    assert sorted(r["state"] for r in listed) == ["done", "done", "interrupted"]
    for run in old.runs:
        run_id = run["run_id"]
        status, expected = _json(cli, old, "status", run_id), old.expected_json(f"status-{run_id}.json")
        # Issue 37 redefined wall_s as the sessions' wall time (the run folder's state) and kept the old
        # figure, the attempts' summed wall time, as attempt_s: the same number under its new name.
        assert status["attempt_s"] == expected["wall_s"] and status["wall_s"] > 0
        # what the old release said, key for key; a configuration line may say more now (e.g. `retired`, issue 48)
        lines = [{k: line[k] for k in old_line} for line, old_line in zip(status["config_lines"], expected["config_lines"], strict=True)]
        assert lines == expected["config_lines"]
        assert {k: status[k] for k in expected if k not in ("wall_s", "config_lines")} == {
            k: v for k, v in expected.items() if k not in ("wall_s", "config_lines")}
        coverage = _json(cli, old, "coverage", run_id, "--png", str(old.root / f"{run_id}.png"))
        before = old.expected_json(f"coverage-{run_id}.json")
        # Every key the old release printed says the same (the curve's file is where each was asked to go);
        # today's may add keys (`split`).
        configs = [{k: c[k] for k in old_c} for c, old_c in zip(coverage["configurations"], before["configurations"], strict=True)]
        assert configs == before["configurations"]
        assert {k: coverage[k] for k in before if k not in ("png", "configurations")} == {
            k: v for k, v in before.items() if k not in ("png", "configurations")}


def test_the_stored_plans_read_as_typed_records(old: OldWorkspace) -> None:
    from rsi.run.kinds import EvalPlan, read_plan
    from rsi.store import open_store
    from rsi.workspace import Workspace

    store = open_store(Workspace(old.root).db_url)
    try:
        plans = {run.id: read_plan(run) for run in store.list_runs()}
    finally:
        store.close()
    finished = old.run_id("mini", "done")
    killed = old.run_id("mini", "interrupted")
    assert plans[finished].kind == plans[killed].kind == "search"
    assert plans[finished].resolved.budget_attempts == 6 and plans[killed].resolved.budget_attempts == 12
    [evaluation] = [plan for plan in plans.values() if isinstance(plan, EvalPlan)]
    assert (len(evaluation.eval.heldout), len(evaluation.eval.covered)) == (2, 1)
    assert evaluation.eval.spec["candidate"] == "default@r2" and evaluation.eval.spec["parent"] == "default@r1"
    assert {plan.version for plan in plans.values()} == {0}  # untyped rows, read as version 0


def test_the_report_of_an_old_run_is_written(old: OldWorkspace, cli) -> None:
    finished = old.run_id("mini", "done")
    path = Path(_json(cli, old, "report", finished)["report"])
    html = path.read_text(encoding="utf-8")
    tried = {task for (task,) in old.query("SELECT DISTINCT task_key FROM attempts WHERE run_id = ?", finished)}
    assert len(tried) == 4 and all(task in html for task in tried)


def test_the_killed_run_resumes_without_repeating_a_stored_attempt(old: OldWorkspace, cli, tmp_path: Path) -> None:
    killed = old.run_id("mini", "interrupted")
    before = {k for (k,) in old.query("SELECT idem_key FROM attempts WHERE run_id = ? AND counted", killed)}
    # The release was SIGKILLed at its 5th `attempt_recorded` point (a batch may record one more first).
    assert len(before) == old.expected_json(f"status-{killed}.json")["attempts"] >= 5
    log = tmp_path / "executed.log"
    resumed = cli("run", "--resume", killed, "--no-report", cwd=old.root,
                  env={"RSI_ATTEMPT_OVERRIDE": f"noop:0.3:0.01:{log}"})
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    executed = Counter(log.read_text().split() if log.exists() else [])
    assert not before & set(executed), "an attempt stored by the old release ran again"
    jobs = old.query("SELECT job_index, planned_tasks, attempts_per_task, status FROM jobs WHERE run_id = ?", killed)
    planned = Counter(f"{killed}|{index}|{task}|{i}" for index, tasks, per_task, _ in jobs
                      for task in json.loads(tasks) for i in range(per_task))
    # No-op attempts never fail as infrastructure: each planned attempt not stored ran exactly once.
    assert executed == planned - Counter(before)
    assert Counter(k for (k,) in old.query("SELECT idem_key FROM attempts WHERE run_id = ?", killed)) == planned
    assert all(status == "done" for *_, status in jobs)
    status = _json(cli, old, "status", killed)
    assert status["state"] == "done" and (status["attempts"] == 12 or status["covered"] == status["tasks"])
