"""The coverage store on real databases: round trips, idempotent recording, coverage queries."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError
from sqlalchemy import func, select, text

from rsi.errors import StoreError
from rsi.store import AttemptRecord, ConfigInfo, TaskInfo, open_store
from rsi.store.rows import AttemptRow
from rsi.verdict import Verdict

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

TASKS = [
    TaskInfo("s", "t1", "train", ("math",), "h1"),
    TaskInfo("s", "t2", "train", ("math", "strings"), "h2"),
    TaskInfo("s", "t3", "train", ("strings",), "h3"),
    TaskInfo("s", "t4", "train", (), "h4"),
    TaskInfo("s", "h1", "heldout", ("math",), "h5"),
    TaskInfo("other", "t1", "train", ("math",), "h6"),
]


def rec(task: str, verdict: Verdict, index: int = 0, minute: int = 0, **kw) -> AttemptRecord:
    return AttemptRecord(
        task_key=task,
        attempt_index=index,
        verdict=verdict,
        started=T0 + timedelta(minutes=minute),
        finished=T0 + timedelta(minutes=minute, seconds=30),
        **kw,
    )


@pytest.fixture
def populated(store):
    store.record_configurations([ConfigInfo("c1", "alpha", "hcp/a.toml"), ConfigInfo("c2", "beta", parents=("c1",))])
    store.record_tasks(TASKS)
    return store


def test_job_details_of_every_stored_shape_read_typed(populated):
    """Job rows as releases wrote them: none, a reason only, reason + scheduler, and keys no model declares;
    written straight into SQLite so the typed reader, not the writer, is what is tested."""
    store = populated
    run = store.create_run(portfolio="p", suite="s")
    shapes = [{}, {"reason": "explore"}, {"reason": "fill 3 gaps", "scheduler": "greedy"},
              {"scheduler": "bandit", "arm": 2, "ucb": [0.5, 0.9]}]
    with store.engine.begin() as conn:
        for index, details in enumerate(shapes):
            conn.execute(text("INSERT INTO jobs (run_id, job_index, configuration_hash, planned_tasks, "
                              "attempts_per_task, status, created, details) VALUES "
                              "(:r, :i, 'c1', '[]', 1, 'running', '2026-01-01 12:00:00.000000', :d)"),
                         {"r": run.id, "i": index, "d": json.dumps(details)})
    jobs = store.list_jobs(run.id)
    assert [j.job_details.reason for j in jobs] == ["", "explore", "fill 3 gaps", ""]
    assert [j.job_details.scheduler for j in jobs] == ["", "", "greedy", "bandit"]
    assert jobs[3].job_details.extras() == {"arm": 2, "ucb": [0.5, 0.9]}
    assert [j.details for j in jobs] == shapes  # the column itself is untouched


def test_run_job_attempt_round_trip(populated):
    store = populated
    run = store.create_run(portfolio="p", suite="s", budget={"attempts": 40, "tokens": None}, seed=7, args={"job_size": 8})
    got = store.get_run(run.id)
    assert (got.portfolio, got.suite, got.split, got.seed, got.status) == ("p", "s", "train", 7, "running")
    assert got.budget == {"attempts": 40, "tokens": None} and got.args == {"job_size": 8}
    assert got.created.tzinfo is not None and got.created.utcoffset() == timedelta(0)
    job0 = store.start_job(run.id, "c1", ["s/t1", "s/t2"], 2, details={"reason": "explore"})
    job1 = store.start_job(run.id, "c2", ["s/t3"])
    assert (job0.job_index, job1.job_index) == (0, 1)
    record = rec(
        "s/t1", Verdict.PASSED, 1, 3, seed=11, reason="ok", tokens=123, wall_s=4.5,
        trajectory_path="runs/x/t1.jsonl", final_code_hash="abc", task_hash="h1",
    )
    assert store.record_attempt(run.id, 0, record).inserted == 1
    (row,) = store.list_attempts(run.id)
    assert (row.job_index, row.configuration_hash, row.task_key, row.attempt_index) == (0, "c1", "s/t1", 1)
    assert (row.verdict, row.counted, row.passed, row.seed, row.tokens, row.wall_s) == ("passed", True, True, 11, 123, 4.5)
    assert (row.trajectory_path, row.final_code_hash, row.task_hash, row.reason) == ("runs/x/t1.jsonl", "abc", "h1", "ok")
    assert row.started == record.started and row.finished == record.finished
    assert row.started.tzinfo is not None
    jobs = store.list_jobs(run.id)
    assert [j.planned_tasks for j in jobs] == [["s/t1", "s/t2"], ["s/t3"]]
    assert jobs[0].details == {"reason": "explore"} and jobs[0].attempts_per_task == 2
    store.finish_job(run.id, 0)
    store.finish_run(run.id, "stopped")
    assert store.get_run(run.id).status == "stopped" and store.get_run(run.id).finished is not None
    assert [j.status for j in store.list_jobs(run.id)] == ["done", "running"]
    assert store.reopen_run(run.id).status == "running"
    configs = {c.config_hash: c for c in store.list_configurations()}
    assert configs["c2"].parents == ["c1"] and configs["c1"].contract_ref == "hcp/a.toml"


def test_record_attempts_is_idempotent(populated):
    store = populated
    run = store.create_run(portfolio="p", suite="s")
    job = store.start_job(run.id, "c1", ["s/t1", "s/t2"], 2)
    batch = [rec("s/t1", Verdict.FAILED, 0), rec("s/t1", Verdict.PASSED, 1), rec("s/t2", Verdict.TIMEOUT, 0)]
    first = store.record_attempts(run.id, job.job_index, batch)
    again = store.record_attempts(run.id, job.job_index, batch)
    # A resumed run re-reporting a different outcome for a counted attempt is still ignored.
    changed = store.record_attempts(run.id, job.job_index, [rec("s/t2", Verdict.PASSED, 0)])
    assert (first.inserted, again.ignored, again.inserted, changed.ignored) == (3, 3, 0, 1)
    assert len(store.list_attempts(run.id)) == 3
    (stats,) = store.configuration_stats("s")
    assert (stats.attempts, stats.passes, stats.tasks_solved) == (3, 1, 1)
    assert store.covered_tasks("s") == {"s/t1"}


def test_error_attempts_are_stored_but_never_counted(populated):
    store = populated
    run = store.create_run(portfolio="p", suite="s")
    job = store.start_job(run.id, "c1", ["s/t1", "s/t2"], 1)
    store.record_attempts(
        run.id, 0, [rec("s/t1", Verdict.ERROR, error_class="SandboxError", tokens=5), rec("s/t2", Verdict.FAILED)]
    )
    stats = {s.task_key: s for s in store.task_stats("s")}
    assert (stats["s/t1"].attempts, stats["s/t1"].errors, stats["s/t1"].passes) == (0, 1, 0)
    assert (stats["s/t2"].attempts, stats["s/t2"].errors) == (1, 0)
    (cstats,) = store.configuration_stats("s")
    assert (cstats.attempts, cstats.errors, cstats.tokens) == (1, 1, 0)
    assert [tuple(f) for f in store.attempt_history("s")] == [("c1", "s/t2", False)]
    assert store.coverage_curve(run.id) == [0]
    # The error is a missing attempt to retry; the retry replaces it and keeps the error count.
    assert [(m.task_key, m.attempt_index) for m in store.missing_attempts(run.id, 0)] == [("s/t1", 0)]
    assert store.missing_attempts(run.id, 0, retry_errors=False) == []
    retry = store.record_attempts(run.id, job.job_index, [rec("s/t1", Verdict.PASSED)])
    assert (retry.replaced, retry.inserted) == (1, 0)
    row = next(r for r in store.list_attempts(run.id) if r.task_key == "s/t1")
    assert (row.verdict, row.error_retries, row.error_class) == ("passed", 1, "")
    stats = {s.task_key: s for s in store.task_stats("s")}
    assert (stats["s/t1"].attempts, stats["s/t1"].passes, stats["s/t1"].errors) == (1, 1, 1)
    assert store.covered_tasks("s") == {"s/t1"}
    assert store.missing_attempts(run.id, 0) == []


def test_coverage_is_cumulative_across_jobs_and_runs(populated):
    store = populated
    r1 = store.create_run(portfolio="p", suite="s")
    store.start_job(r1.id, "c1", ["s/t1", "s/t2"])
    store.record_attempts(r1.id, 0, [rec("s/t1", Verdict.PASSED), rec("s/t2", Verdict.FAILED)])
    store.start_job(r1.id, "c2", ["s/t2", "s/h1"])
    store.record_attempts(r1.id, 1, [rec("s/t2", Verdict.FAILED), rec("s/h1", Verdict.PASSED)])
    r2 = store.create_run(portfolio="p", suite="s")
    store.start_job(r2.id, "c2", ["s/t3", "s/t1"])
    store.record_attempts(r2.id, 0, [rec("s/t3", Verdict.PASSED), rec("s/t1", Verdict.PASSED)])
    other = store.create_run(portfolio="p", suite="other")
    store.start_job(other.id, "c1", ["other/t1"])
    store.record_attempts(other.id, 0, [rec("other/t1", Verdict.PASSED)])

    assert store.covered_tasks("s") == {"s/t1", "s/t3"}
    assert store.covered_tasks("s", run_ids=[r2.id]) == {"s/t1", "s/t3"}
    assert store.covered_tasks("s", run_ids=[r1.id]) == {"s/t1"}
    assert store.covered_tasks("s", split="heldout") == {"s/h1"}
    assert store.covered_tasks("s", split=None) == {"s/t1", "s/t3", "s/h1"}
    cov = store.coverage("s")
    assert cov.task_keys == {"s/t1", "s/t2", "s/t3", "s/t4"} and cov.fraction == 0.5
    assert cov.uncovered == {"s/t2", "s/t4"}
    assert store.covered_tasks("other") == {"other/t1"}
    first = {s.task_key: (s.first_pass_run, s.first_pass_job) for s in store.task_stats("s")}
    assert first["s/t1"] == (r1.id, 0) and first["s/t3"] == (r2.id, 0) and first["s/t2"] == (None, None)
    # The scheduler's history: counted attempts of the suite's split, oldest run first.
    assert [tuple(f) for f in store.attempt_history("s", "train")] == [
        ("c1", "s/t1", True), ("c1", "s/t2", False), ("c2", "s/t2", False), ("c2", "s/t3", True), ("c2", "s/t1", True),
    ]


def test_configuration_and_tag_stats(populated):
    store = populated
    run = store.create_run(portfolio="p", suite="s")
    store.start_job(run.id, "c1", ["s/t1", "s/t2"], 2)
    store.record_attempts(run.id, 0, [
        rec("s/t1", Verdict.FAILED, 0, tokens=10, wall_s=1.0), rec("s/t1", Verdict.PASSED, 1, tokens=20, wall_s=2.0),
        rec("s/t2", Verdict.PASSED, 0, tokens=30), rec("s/t2", Verdict.PASSED, 1, tokens=40),
    ])
    store.start_job(run.id, "c2", ["s/t2", "s/t3"])
    store.record_attempts(run.id, 1, [rec("s/t2", Verdict.FAILED, tokens=5), rec("s/t3", Verdict.ERROR, tokens=99)])
    stats = {s.config_hash: s for s in store.configuration_stats("s")}
    assert (stats["c1"].name, stats["c1"].attempts, stats["c1"].passes, stats["c1"].tasks_solved) == ("alpha", 4, 3, 2)
    assert (stats["c1"].tokens, stats["c1"].wall_s, stats["c1"].pass_rate) == (100, 3.0, 0.75)
    assert (stats["c2"].attempts, stats["c2"].passes, stats["c2"].errors, stats["c2"].tokens) == (1, 0, 1, 5)
    tags = {(s.config_hash, s.tag): (s.attempts, s.passes, s.tasks_solved) for s in store.tag_stats("s")}
    assert tags == {
        ("c1", "math"): (4, 3, 2), ("c1", "strings"): (2, 2, 1),
        ("c2", "math"): (1, 0, 0), ("c2", "strings"): (1, 0, 0),
    }
    # Changing a task's tags (a new suite version) moves its stats to the new tags.
    store.record_tasks([TaskInfo("s", "t2", "train", ("lists",), "h2b")])
    tags = {(s.config_hash, s.tag): s.attempts for s in store.tag_stats("s")}
    assert tags[("c1", "lists")] == 2 and tags[("c1", "math")] == 2 and ("c1", "strings") not in tags
    assert {t.key: t.content_hash for t in store.list_tasks("s")}["s/t2"] == "h2b"


def test_coverage_curve_is_chronological(populated):
    store = populated
    earlier = store.create_run(portfolio="p", suite="s")
    store.start_job(earlier.id, "c1", ["s/t4"])
    store.record_attempts(earlier.id, 0, [rec("s/t4", Verdict.PASSED)])
    run = store.create_run(portfolio="p", suite="s")
    store.start_job(run.id, "c1", ["s/t1", "s/t2", "s/t3"])
    # Recorded out of order: the curve follows finish times within a job.
    store.record_attempts(run.id, 0, [
        rec("s/t2", Verdict.PASSED, minute=5), rec("s/t1", Verdict.FAILED, minute=1), rec("s/t3", Verdict.ERROR, minute=2),
    ])
    store.start_job(run.id, "c2", ["s/t1", "s/t4"], 2)
    store.record_attempts(run.id, 1, [
        rec("s/t1", Verdict.PASSED, 0, minute=6), rec("s/t1", Verdict.PASSED, 1, minute=7), rec("s/t4", Verdict.FAILED, 0, minute=8),
    ])
    assert store.coverage_curve(run.id) == [0, 1, 2, 2, 2]
    assert store.coverage_curve(run.id, include_prior=True) == [1, 2, 3, 3, 3]


def test_resume_helpers(populated):
    store = populated
    run = store.create_run(portfolio="p", suite="s")
    job = store.start_job(run.id, "c1", ["s/t1", "s/t2"], 2)
    store.record_attempts(run.id, 0, [rec("s/t1", Verdict.FAILED, 1), rec("s/t2", Verdict.PASSED, 0)])
    missing = [(m.task_key, m.attempt_index) for m in store.missing_attempts(run.id, 0)]
    assert missing == [("s/t1", 0), ("s/t2", 1)]
    assert [j.job_index for j in store.open_jobs(run.id)] == [0]
    # Re-planning the same job after a crash returns it; a different plan under its index is refused.
    assert store.start_job(run.id, "c1", ["s/t1", "s/t2"], 2, job_index=0) == job
    with pytest.raises(StoreError, match="different plan"):
        store.start_job(run.id, "c2", ["s/t1"], 1, job_index=0)
    store.finish_job(run.id, 0)
    assert store.open_jobs(run.id) == []
    assert store.start_job(run.id, "c2", ["s/t3"]).job_index == 1


def test_summary_matches_a_rebuild_from_attempts(populated):
    store = populated
    rng = random.Random(5)
    verdicts = [Verdict.PASSED, Verdict.FAILED, Verdict.FAILED, Verdict.TIMEOUT, Verdict.ERROR]
    keys = [t.key for t in TASKS if t.suite == "s"]
    for _ in range(2):
        run = store.create_run(portfolio="p", suite="s")
        for j in range(4):
            tasks = rng.sample(keys, 3)
            store.start_job(run.id, rng.choice(["c1", "c2"]), tasks, 2)
            batch = [rec(t, rng.choice(verdicts), k, tokens=rng.randrange(100)) for t in tasks for k in range(2)]
            store.record_attempts(run.id, j, batch)
            retry = [rec(b.task_key, rng.choice(verdicts), b.attempt_index) for b in batch if b.verdict is Verdict.ERROR]
            store.record_attempts(run.id, j, retry)
    before = (store.task_stats("s", None), store.configuration_stats("s", None), store.tag_stats("s", None))
    assert sum(s.attempts for s in before[1]) > 0 and sum(s.errors for s in before[1]) > 0
    store.rebuild_stats()
    after = (store.task_stats("s", None), store.configuration_stats("s", None), store.tag_stats("s", None))
    assert after == before
    rows = [r for run in store.list_runs("s") for r in store.list_attempts(run.id)]
    assert sum(s.attempts for s in after[1]) == sum(1 for r in rows if r.counted)


def test_bad_writes_raise_store_errors_and_leave_nothing(populated):
    store = populated
    run = store.create_run(portfolio="p", suite="s")
    with pytest.raises(StoreError, match="no job 0"):
        store.record_attempts(run.id, 0, [rec("s/t1", Verdict.PASSED)])
    with pytest.raises(StoreError, match="unknown configuration"):
        store.start_job(run.id, "nope", ["s/t1"])
    with pytest.raises(StoreError, match="no run"):
        store.start_job("missing-run", "c1", ["s/t1"])
    store.start_job(run.id, "c1", ["s/t1", "s/zzz"])
    with pytest.raises(StoreError, match="unknown task"):
        store.record_attempts(run.id, 0, [rec("s/t1", Verdict.PASSED), rec("s/zzz", Verdict.PASSED)])
    assert store.list_attempts(run.id) == [] and store.covered_tasks("s") == set()
    with pytest.raises(StoreError):
        store.finish_run(run.id, "exploded")
    with pytest.raises(ValidationError, match="timezone"):
        AttemptRecord(task_key="s/t1", verdict=Verdict.PASSED, started=datetime(2026, 1, 1))


def test_record_configurations_and_tasks_are_upserts(populated):
    store = populated
    assert store.record_configurations([ConfigInfo("c1", "renamed"), ConfigInfo("c3", "gamma")]) == 1
    names = {c.config_hash: c.name for c in store.list_configurations()}
    assert names == {"c1": "alpha", "c2": "beta", "c3": "gamma"}  # content-addressed: first name kept
    assert store.record_tasks(TASKS) == 0
    assert store.record_tasks([TaskInfo("s", "t4", "heldout", (), "h4")]) == 1
    assert [t.key for t in store.list_tasks("s", "heldout")] == ["s/h1", "s/t4"]


def test_sqlite_settings_and_a_reader_during_a_write(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs' / 'rsi.sqlite'}"
    store = open_store(url)
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 5000
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    store.record_configurations([ConfigInfo("c1", "alpha")])
    store.record_tasks(TASKS)
    run = store.create_run(portfolio="p", suite="s")
    store.start_job(run.id, "c1", ["s/t1"])
    reader = open_store(url)
    # A writer holds its transaction open; a second process-like reader still reads at once.
    with store.engine.connect().execution_options(rsi_write=True) as conn, conn.begin():
        conn.execute(AttemptRow.__table__.insert().values(
            idem_key="x", run_id=run.id, job_index=0, configuration_hash="c1", task_key="s/t1",
            verdict="passed", counted=True, passed=True, recorded=T0,
        ))
        assert reader.list_attempts(run.id) == []
    assert len(reader.list_attempts(run.id)) == 1
    reader.close()
    store.close()


def test_workspace_db_url_and_rsi_db(tmp_path, monkeypatch):
    from rsi.workspace import Workspace

    monkeypatch.delenv("RSI_DB", raising=False)
    (tmp_path / "ws").mkdir()  # a workspace exists; only its runs/ folder is created with the store
    ws = Workspace(tmp_path / "ws")
    with open_store(ws.db_url) as store:
        store.create_run(portfolio="p", suite="s")
    assert (tmp_path / "ws" / "runs" / "rsi.sqlite").is_file()
    monkeypatch.setenv("RSI_DB", f"sqlite:///{tmp_path / 'elsewhere.sqlite'}")
    with open_store(ws.db_url) as store:
        assert store.list_runs() == []
    assert (tmp_path / "elsewhere.sqlite").is_file()


def test_bad_database_url_is_a_store_error(tmp_path):
    with pytest.raises(StoreError):
        open_store("not a url")
    with pytest.raises(StoreError):
        open_store("nosuchdialect://x/y")


def test_indexes_exist(store):
    from sqlalchemy import inspect

    names = {ix["name"] for ix in inspect(store.engine).get_indexes("attempts")}
    assert {"ix_attempts_run_job", "ix_attempts_task_passed", "ix_attempts_config_task"} <= names
    with store.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(text("schema_version"))).scalar() == 1
