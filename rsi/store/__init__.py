"""The coverage store: runs, jobs, configurations, tasks and attempts in SQL (SQLite or any URL).

Public API (see store.py for the write protocol, migrate.py for schema versions):
`open_store(url) -> Store`, `Store` (writes: create_run, record_configurations, record_tasks,
start_job, record_attempt(s), finish_job, finish_run, reopen_run; resume: open_jobs,
missing_attempts; queries: coverage, covered_tasks, task_stats, configuration_stats, tag_stats,
coverage_curve, attempt_history, list_runs/jobs/attempts), and the plain records in records.py.
"""

from rsi.store.records import (
    AttemptRecord,
    ConfigInfo,
    ConfigTagStats,
    ConfigurationStats,
    CoverageResult,
    MissingAttempt,
    RecordOutcome,
    TaskInfo,
    TaskStats,
)
from rsi.store.rows import AttemptRow, ConfigurationRow, JobRow, RunRow, TaskRow
from rsi.store.store import Store, idem_key, new_run_id, open_store

__all__ = [
    "AttemptRecord",
    "AttemptRow",
    "ConfigInfo",
    "ConfigTagStats",
    "ConfigurationRow",
    "ConfigurationStats",
    "CoverageResult",
    "JobRow",
    "MissingAttempt",
    "RecordOutcome",
    "RunRow",
    "Store",
    "TaskInfo",
    "TaskRow",
    "TaskStats",
    "idem_key",
    "new_run_id",
    "open_store",
]
