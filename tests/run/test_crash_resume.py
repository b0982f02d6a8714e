"""SIGKILL a real `rsi run` subprocess at several points, resume it, and check nothing is lost or doubled.

The attempt is the no-op one (RSI_ATTEMPT_OVERRIDE testing hook) so the test is fast and exact: it
logs every executed key, which lets the test prove that no attempt recorded before the kill runs
again. Kill points are the boundaries between writes (RSI_TEST_CRASH_AT hook) plus a kill at a
random moment mid-job, and a run killed twice.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

BUDGET = 20
TASKS = 10  # --limit-tasks below: a run that covers all of them ends before its budget
RUN_ARGS = ("run", "-p", "mini", "--budget-attempts", str(BUDGET), "--limit-tasks", str(TASKS), "--job-size", "4",
            "--workers", "2", "--no-report")


def db_path(ws) -> Path:
    return ws.runs_dir / "rsi.sqlite"


def query(ws, sql: str, *params):
    with sqlite3.connect(db_path(ws), timeout=30) as conn:
        return conn.execute(sql, params).fetchall()


def latest_run(ws) -> str:
    [(run_id,)] = query(ws, "SELECT id FROM runs ORDER BY created DESC LIMIT 1")
    return run_id


def recorded_keys(ws, run_id: str) -> set[str]:
    return {k for (k,) in query(ws, "SELECT idem_key FROM attempts WHERE run_id = ? AND counted", run_id)}


def executed(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def check_complete(ws, run_id: str) -> None:
    """Every planned key recorded exactly once, the budget spent exactly (or every task covered first),
    the database intact."""
    assert query(ws, "PRAGMA integrity_check") == [("ok",)]
    jobs = query(ws, "SELECT job_index, planned_tasks, attempts_per_task, status FROM jobs WHERE run_id = ?", run_id)
    import json

    planned = Counter(
        f"{run_id}|{index}|{task}|{i}" for index, tasks, per_task, _ in jobs for task in json.loads(tasks)
        for i in range(per_task)
    )
    rows = Counter(k for (k,) in query(ws, "SELECT idem_key FROM attempts WHERE run_id = ?", run_id))
    assert rows == planned, "each planned idempotency key has exactly one row"
    assert all(status == "done" for *_, status in jobs)
    [(counted,)] = query(ws, "SELECT COUNT(*) FROM attempts WHERE run_id = ? AND counted", run_id)
    [(covered,)] = query(ws, "SELECT COUNT(DISTINCT task_key) FROM attempts WHERE run_id = ? AND passed", run_id)
    # The no-op attempt's outcomes follow the run's seed, so now and then the run covers all its tasks
    # before the budget is spent, and stops there (as it should): then fewer attempts are counted.
    assert counted == BUDGET or (covered == TASKS and counted < BUDGET), (counted, covered)
    [(status,)] = query(ws, "SELECT status FROM runs WHERE id = ?", run_id)
    assert status == "done"
    # The coverage summary agrees with the attempts table.
    [(stat_attempts,)] = query(ws, "SELECT SUM(attempts) FROM attempt_stats WHERE run_id = ?", run_id)
    assert stat_attempts == counted


@pytest.mark.parametrize(
    "point",
    ["run_created:1", "job_planned:1", "attempt_recorded:6", "job_finished:2", "attempt_recorded:19"],
)
def test_sigkill_at_a_write_boundary_then_resume(mini_ws, cli, tmp_path, point) -> None:
    log = tmp_path / "executed.log"
    env = {"RSI_ATTEMPT_OVERRIDE": f"noop:0.3:0.01:{log}", "RSI_TEST_CRASH_AT": point}
    first = cli(*RUN_ARGS, cwd=mini_ws.root, env=env)
    assert first.returncode == -signal.SIGKILL, (first.returncode, first.stderr[-2000:])
    run_id = latest_run(mini_ws)
    before = recorded_keys(mini_ws, run_id)
    ran_before = len(executed(log))

    second = cli("run", "--resume", run_id, "--no-report", cwd=mini_ws.root, env={**env, "RSI_TEST_CRASH_AT": ""})
    assert second.returncode == 0, second.stderr[-3000:]
    after_resume = executed(log)[ran_before:]
    assert not before & set(after_resume), "an attempt recorded before the kill ran again"
    check_complete(mini_ws, run_id)


def test_sigkill_at_a_random_moment_twice_then_resume(mini_ws, cli, tmp_path) -> None:
    log = tmp_path / "executed.log"
    env = {**os.environ, "RSI_ATTEMPT_OVERRIDE": f"noop:0.3:0.1:{log}"}
    exe = str(Path(os.sys.executable).parent / "rsi")

    def start_and_kill(args: tuple[str, ...], at_least: int) -> None:
        proc = subprocess.Popen([exe, *args], cwd=mini_ws.root, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                [(n,)] = query(mini_ws, "SELECT COUNT(*) FROM attempts")
            except sqlite3.OperationalError:
                n = 0  # the schema is not there yet
            if n >= at_least:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the run ended before it could be killed"
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(10) == -signal.SIGKILL

    start_and_kill(RUN_ARGS, at_least=3)
    run_id = latest_run(mini_ws)
    start_and_kill(("run", "--resume", run_id, "--no-report"), at_least=len(recorded_keys(mini_ws, run_id)) + 5)
    before = recorded_keys(mini_ws, run_id)
    ran_before = len(executed(log))
    final = subprocess.run([exe, "run", "--resume", run_id, "--no-report"], cwd=mini_ws.root, env=env, capture_output=True,
                           text=True, timeout=120)
    assert final.returncode == 0, final.stderr[-3000:]
    assert not before & set(executed(log)[ran_before:])
    check_complete(mini_ws, run_id)


# Open jobs none of whose attempts is recorded yet: planned moments ago, so not about to close.
FRESH_OPEN_JOBS = """SELECT job_index FROM jobs j WHERE status = 'running' AND NOT EXISTS
                     (SELECT 1 FROM attempts a WHERE a.run_id = j.run_id AND a.job_index = j.job_index)"""


def test_sigkill_while_two_jobs_are_in_flight_then_resume(mini_ws, cli, tmp_path) -> None:
    """Overlapping jobs: the next job is planned while the last one's attempts run. Killed while two
    jobs are open (both planned, their attempts in flight), a resume runs every open job's missing
    keys once and nothing recorded again."""
    log = tmp_path / "executed.log"
    # 1.5 s attempts, and the loop below waits for two open jobs none of whose attempts has ended yet,
    # after some attempt of the run has: a wave of jobs just planned, which stays open about 1.5 s more,
    # long past the kill. (Waiting only for two open jobs let CI catch the first wave closing in between.)
    env = {**os.environ, "RSI_ATTEMPT_OVERRIDE": f"noop:0.3:1.5:{log}"}
    exe = str(Path(os.sys.executable).parent / "rsi")
    args = ("run", "-p", "mini", "--budget-attempts", str(BUDGET), "--limit-tasks", str(TASKS), "--job-size", "2",
            "--workers", "4", "--no-report")
    proc = subprocess.Popen([exe, *args], cwd=mini_ws.root, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    open_jobs: list[int] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            open_jobs = [j for (j,) in query(mini_ws, FRESH_OPEN_JOBS)]
            [(recorded,)] = query(mini_ws, "SELECT COUNT(*) FROM attempts")
        except sqlite3.OperationalError:
            open_jobs, recorded = [], 0  # the schema is not there yet
        if len(open_jobs) >= 2 and recorded >= 1:
            break
        time.sleep(0.01)
    assert proc.poll() is None, "the run ended before two jobs were in flight"
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(10) == -signal.SIGKILL
    run_id = latest_run(mini_ws)
    still_open = [j for (j,) in query(mini_ws, "SELECT job_index FROM jobs WHERE run_id = ? AND status = 'running'",
                                      run_id)]
    assert len(still_open) >= 2, still_open
    before = recorded_keys(mini_ws, run_id)
    ran_before = executed(log)
    # A job is planned only when a worker is free, so its attempts were in flight when the process died
    # (the log records an attempt when it ends, so it cannot show them started).
    resumed = cli("run", "--resume", run_id, "--no-report", cwd=mini_ws.root, env={"RSI_ATTEMPT_OVERRIDE": env["RSI_ATTEMPT_OVERRIDE"]})
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    after = executed(log)[len(ran_before):]
    assert not before & set(after), "an attempt recorded before the kill ran again"
    assert len(after) == len(set(after)), "an attempt ran twice in the resumed session"
    check_complete(mini_ws, run_id)


def test_resume_of_a_finished_run_does_nothing(mini_ws, cli, tmp_path) -> None:
    log = tmp_path / "executed.log"
    env = {"RSI_ATTEMPT_OVERRIDE": f"noop:0.3:0:{log}"}
    assert cli(*RUN_ARGS, cwd=mini_ws.root, env=env).returncode == 0
    run_id = latest_run(mini_ws)
    ran = len(executed(log))
    again = cli("run", "--resume", run_id, "--json", cwd=mini_ws.root, env=env)
    assert again.returncode == 0, again.stderr
    assert len(executed(log)) == ran
    check_complete(mini_ws, run_id)


def test_resume_refuses_plan_flags_with_exit_2(mini_ws, cli) -> None:
    result = cli("run", "--resume", "x", "--budget-attempts", "5", cwd=mini_ws.root)
    assert result.returncode == 2
    assert "--budget-attempts" in result.stderr and "Traceback" not in result.stderr


def test_sigkill_with_the_real_harness_then_resume(mini_ws, cli, tmp_path) -> None:
    """Same protocol through the real harness, sandbox and verifier (scripted model replies)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("scripted", Path(__file__).with_name("scripted.py"))
    scripted = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scripted)
    script = tmp_path / "script.json"
    expected = scripted.write_script(mini_ws, script, count=4)
    env = {"RSI_MODEL_OVERRIDE": f"scripted:{script}", "RSI_TEST_CRASH_AT": "attempt_recorded:2"}
    args = ("run", "-p", "mini", "--budget-attempts", "6", "--limit-tasks", "4", "--job-size", "4", "--no-report",
            "--sandbox", "local")
    first = cli(*args, cwd=mini_ws.root, env=env)
    assert first.returncode == -signal.SIGKILL, first.stderr[-2000:]
    run_id = latest_run(mini_ws)
    second = cli("run", "--resume", run_id, "--no-report", cwd=mini_ws.root, env={**env, "RSI_TEST_CRASH_AT": ""})
    assert second.returncode == 0, second.stderr[-3000:]
    assert query(mini_ws, "PRAGMA integrity_check") == [("ok",)]
    rows = query(mini_ws, "SELECT task_key, verdict, trajectory_path FROM attempts WHERE run_id = ?", run_id)
    assert len(rows) == 6 and len({r for r in rows}) == 6
    for task_key, verdict, trajectory in rows:
        assert verdict == ("passed" if expected[task_key] else "failed"), (task_key, verdict)
        assert Path(trajectory).is_file() and "/.tmp-" not in trajectory
    assert not list(mini_ws.run_dir(run_id).glob("attempts/*/*/.tmp-*"))


CHECKED_PORTFOLIO = """schema_version = 1
[portfolio]
name = "checked"
base = "default"

[[variants]]
name = "checked"
[variants.overrides]
"harness.sampling.temperature" = 0.7
"harness.check" = "first-pass"
"""


def test_sigkill_during_public_checks_then_resume(mini_ws, cli, tmp_path) -> None:
    """Killed while a candidate's public checks run inside an attempt: the resume runs the unrecorded attempts
    once, records every planned attempt exactly once, and each verdict is still the hidden verifier's."""
    import importlib.util

    from rsi.harness.trajectory import read_trajectory

    spec = importlib.util.spec_from_file_location("scripted", Path(__file__).with_name("scripted.py"))
    scripted = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scripted)
    (mini_ws.portfolios_dir / "checked.toml").write_text(CHECKED_PORTFOLIO)
    script = tmp_path / "script.json"
    expected = scripted.write_script(mini_ws, script, count=4)
    env = {"RSI_MODEL_OVERRIDE": f"scripted:{script}", "RSI_TEST_CRASH_AT": "harness:check:3"}
    args = ("run", "-p", "checked", "--budget-attempts", "6", "--limit-tasks", "4", "--job-size", "4", "--workers", "1",
            "--no-report", "--sandbox", "local")
    first = cli(*args, cwd=mini_ws.root, env=env)
    assert first.returncode == -signal.SIGKILL, first.stderr[-2000:]
    run_id = latest_run(mini_ws)
    recorded = recorded_keys(mini_ws, run_id)
    assert len(recorded) == 2  # two attempts checked and recorded; the third died inside its check
    second = cli("run", "--resume", run_id, "--no-report", cwd=mini_ws.root, env={**env, "RSI_TEST_CRASH_AT": ""})
    assert second.returncode == 0, second.stderr[-3000:]
    check_complete_rows = query(mini_ws, "SELECT idem_key, task_key, verdict, trajectory_path FROM attempts "
                                "WHERE run_id = ?", run_id)
    assert len(check_complete_rows) == 6 and len({row[0] for row in check_complete_rows}) == 6
    assert recorded <= {row[0] for row in check_complete_rows}
    for _key, task_key, verdict, trajectory in check_complete_rows:
        assert verdict == ("passed" if expected[task_key] else "failed"), (task_key, verdict)
        [step] = [s for s in read_trajectory(Path(trajectory)).steps if s.source == "agent"]
        assert step.check is not None and step.check.all_passed == expected[task_key]
