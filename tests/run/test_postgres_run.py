"""`rsi run --db postgresql://...`: the same crash-safe protocol on PostgreSQL (.ci/services/30-postgres.sh)."""

from __future__ import annotations

import os
import signal

import pytest

from rsi.store import open_store
from tests.conftest import need

pytestmark = pytest.mark.slow


@pytest.fixture
def pg_url() -> str:
    url = os.environ.get("RSI_TEST_POSTGRES_URL", "")
    need(bool(url), "PostgreSQL (.ci/services/30-postgres.sh exports RSI_TEST_POSTGRES_URL)")
    return url


def test_sigkill_and_resume_on_postgres(mini_ws, cli, pg_url, tmp_path) -> None:
    log = tmp_path / "executed.log"
    env = {"RSI_ATTEMPT_OVERRIDE": f"noop:0.3:0.01:{log}", "RSI_TEST_CRASH_AT": "attempt_recorded:5"}
    args = ("run", "-p", "mini", "--budget-attempts", "12", "--limit-tasks", "8", "--job-size", "4",
            "--db", pg_url, "--no-report")
    first = cli(*args, cwd=mini_ws.root, env=env)
    assert first.returncode == -signal.SIGKILL, first.stderr[-2000:]
    with open_store(pg_url) as store:
        run = max(store.list_runs(), key=lambda r: r.created)
        assert run.portfolio == "mini" and run.status == "running"
        before = {r.idem_key for r in store.list_attempts(run.id) if r.counted}
    ran = len(log.read_text().split())
    second = cli("run", "--resume", run.id, "--db", pg_url, "--no-report", cwd=mini_ws.root,
                 env={**env, "RSI_TEST_CRASH_AT": ""})
    assert second.returncode == 0, second.stderr[-3000:]
    assert not before & set(log.read_text().split()[ran:])
    with open_store(pg_url) as store:
        rows = store.list_attempts(run.id)
        jobs = store.list_jobs(run.id)
        assert store.get_run(run.id).status == "done"
    planned = {f"{run.id}|{j.job_index}|{t}|{i}" for j in jobs for t in j.planned_tasks for i in range(j.attempts_per_task)}
    assert sorted(r.idem_key for r in rows) == sorted(planned)
    assert sum(1 for r in rows if r.counted) == 12
