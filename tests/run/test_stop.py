"""Ctrl-C / SIGTERM to a real `rsi run`: the run ends `stopped` within seconds, resumable, nothing lost;
`rsi status` and `rsi runs` show a live run as running (not as one to resume) while it runs.

The attempts are real (harness, sandbox, verifier) with scripted model replies, so the stop lands
while sandboxes and verifiers are at work, as a user's Ctrl-C does.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.run.scripted import write_script

RUN = ("run", "-p", "mini", "--budget-attempts", "60", "--limit-tasks", "4", "--job-size", "2", "--workers", "2",
       "--no-report", "--sandbox", "local", "--stop-grace-s", "3")


def query(ws, sql: str, *params):
    with sqlite3.connect(ws.runs_dir / "rsi.sqlite", timeout=30) as conn:
        return conn.execute(sql, params).fetchall()


def recorded(ws) -> int:
    try:
        [(n,)] = query(ws, "SELECT COUNT(*) FROM attempts WHERE counted")
    except sqlite3.OperationalError:
        return 0  # the schema is not there yet
    return n


def start_run(ws, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    exe = str(Path(os.sys.executable).parent / "rsi")
    # Its own process group, so the signal can go to the whole group as a terminal's Ctrl-C does.
    return subprocess.Popen([exe, *args], cwd=ws.root, env={**os.environ, **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def wait_for(proc: subprocess.Popen[str], ready, timeout_s: float = 240) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None and not ready():
        time.sleep(0.05)
    assert proc.poll() is None, f"the run ended first: {proc.communicate()[1][-2000:]}"


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_run_within_seconds_and_resume_finishes_it(mini_ws, cli, tmp_path, signum, code) -> None:
    # Each scripted reply takes 1 s, so the 60 attempts outlast the checks below even on a loaded machine (with
    # instant replies a run finished its budget before the signal: exit -15, status "done"); the resume replies
    # at once.
    slow, script = tmp_path / "slow.json", tmp_path / "script.json"
    write_script(mini_ws, slow, count=4, delay_s=1.0)
    write_script(mini_ws, script, count=4)
    env = {"RSI_MODEL_OVERRIDE": f"scripted:{script}"}
    proc = start_run(mini_ws, {"RSI_MODEL_OVERRIDE": f"scripted:{slow}"}, *RUN)
    wait_for(proc, lambda: recorded(mini_ws) >= 2)

    # While it runs: shown as running, by this process, not as a run to resume.
    status = cli("status", "--json", cwd=mini_ws.root)
    assert status.returncode == 0, status.stderr
    live = json.loads(status.stdout)
    assert (live["state"], live["live"], live["pid"]) == ("running", True, proc.pid)
    text = cli("status", cwd=mini_ws.root).stdout
    assert "running" in text and f"process {proc.pid}" in text and "--resume" not in text
    [listed] = json.loads(cli("runs", "--json", cwd=mini_ws.root).stdout)
    assert (listed["run_id"], listed["state"]) == (live["run_id"], "running")

    assert proc.poll() is None, "the run spent its budget before the signal: the test cannot stop it mid-run"
    sent = time.monotonic()
    os.killpg(proc.pid, signum)
    _, stderr = proc.communicate(timeout=60)
    took = time.monotonic() - sent
    assert proc.returncode == code, stderr[-3000:]
    assert took < 20, f"{took:.1f}s from the signal to the exit"  # grace 3 s, plus a loaded machine's teardown
    run_id = live["run_id"]
    [(stored,)] = query(mini_ws, "SELECT status FROM runs WHERE id = ?", run_id)
    assert stored == "stopped"
    after = json.loads(cli("status", "--json", cwd=mini_ws.root).stdout)
    assert (after["state"], after["live"]) == ("stopped", False) and "stopped by" in after["end_reason"]
    assert query(mini_ws, "PRAGMA integrity_check") == [("ok",)]
    keys_before = {k for (k,) in query(mini_ws, "SELECT idem_key FROM attempts WHERE run_id = ? AND counted", run_id)}

    resumed = cli("run", "--resume", run_id, "--no-report", "--json", cwd=mini_ws.root, env=env)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert json.loads(resumed.stdout)["status"] == "done"
    jobs = query(mini_ws, "SELECT job_index, planned_tasks, attempts_per_task, status FROM jobs WHERE run_id = ?", run_id)
    planned = Counter(f"{run_id}|{j}|{t}|{i}" for j, tasks, n, _ in jobs for t in json.loads(tasks) for i in range(n))
    rows = Counter(k for (k,) in query(mini_ws, "SELECT idem_key FROM attempts WHERE run_id = ?", run_id))
    assert rows == planned, "every planned attempt recorded exactly once: nothing lost, nothing doubled"
    assert all(status == "done" for *_, status in jobs)
    assert keys_before <= set(rows)
    [(state,)] = query(mini_ws, "SELECT status FROM runs WHERE id = ?", run_id)
    assert state == "done"
    table = cli("status", "--all", cwd=mini_ws.root)  # the same listing as `rsi runs`
    assert table.returncode == 0 and run_id in table.stdout and " done " in table.stdout, table.stdout
