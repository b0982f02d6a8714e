"""The coverage store facade: open a database, write a run's progress, answer coverage queries.

Only the orchestrator writes (one process per run); any number of readers may query meanwhile.

    store = open_store(workspace.db_url)          # creates / migrates the schema
    run = store.create_run(portfolio="p", suite="pyfuncs", budget={"attempts": 450}, seed=0)
    store.record_configurations(configs)           # rsi.config.Configuration or ConfigInfo
    store.record_tasks(tasks)                      # rsi.tasks.spec.Task or TaskInfo
    job = store.start_job(run.id, config_hash, task_keys, attempts_per_task=2)
    store.record_attempts(run.id, job.job_index, [AttemptRecord(...), ...])   # one transaction
    store.finish_job(run.id, job.job_index)
    store.finish_run(run.id, "done")

Resume after a crash: `open_jobs(run_id)` lists jobs still running; `missing_attempts(run_id, job)`
lists the planned (task, attempt index) pairs with no counted outcome yet. Recording is idempotent
by (run, job index, task, attempt index): re-recording a counted attempt is ignored, re-recording an
error replaces it (errors are infrastructure, retried, never counted).
"""

from __future__ import annotations

import secrets
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from sqlalchemy import Connection, Engine, Table, and_, case, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from rsi.errors import StoreError
from rsi.plugins import non_search_schedulers
from rsi.scheduler import AttemptFact
from rsi.store.engine import make_engine
from rsi.store.migrate import migrate
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
from rsi.store.rows import (
    AttemptRow,
    AttemptStatsRow,
    ConfigurationRow,
    JobRow,
    RunRow,
    TaskRow,
    TaskTagRow,
)
from rsi.store.types import utc_now
from rsi.verdict import Verdict

RUN_STATUSES = ("running", "done", "stopped", "failed")
JOB_STATUSES = ("running", "done", "failed", "cancelled")

A: Table = AttemptRow.__table__  # type: ignore[attr-defined]
S: Table = AttemptStatsRow.__table__  # type: ignore[attr-defined]
T: Table = TaskRow.__table__  # type: ignore[attr-defined]
TT: Table = TaskTagRow.__table__  # type: ignore[attr-defined]
J: Table = JobRow.__table__  # type: ignore[attr-defined]
R: Table = RunRow.__table__  # type: ignore[attr-defined]
C: Table = ConfigurationRow.__table__  # type: ignore[attr-defined]


def open_store(url: str) -> Store:
    """Open (creating or migrating) the store at a SQLAlchemy URL, e.g. `Workspace.db_url`."""
    engine = make_engine(url)
    try:
        migrate(engine)
    except SQLAlchemyError as exc:
        engine.dispose()
        raise StoreError(f"cannot open the coverage store at {engine.url!r}: {exc}") from exc
    return Store(engine)


def idem_key(run_id: str, job_index: int, task_key: str, attempt_index: int) -> str:
    """The idempotency key of one planned attempt."""
    return f"{run_id}|{job_index}|{task_key}|{attempt_index}"


def new_run_id() -> str:
    return f"{utc_now().strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)}"


class _SpecLike(Protocol):
    """What the store reads of `rsi.tasks.spec.TaskSpec` (read-only, so any sequence of tags fits)."""

    @property
    def id(self) -> str: ...
    @property
    def split(self) -> str: ...
    @property
    def tags(self) -> Sequence[str]: ...


class TaskLike(Protocol):
    """`rsi.tasks.spec.Task` as the store sees it: declared here so the store does not import the task layer."""

    @property
    def suite(self) -> str: ...
    @property
    def spec(self) -> _SpecLike: ...
    @property
    def content_hash(self) -> str: ...


class ConfigLike(Protocol):
    """`rsi.config.Configuration` as the store sees it (the store sits below the config layer)."""

    @property
    def config_hash(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def contract_ref(self) -> str: ...
    @property
    def parents(self) -> Sequence[str]: ...
    def model_dump(self, *, mode: str = ...) -> dict[str, Any]: ...


def _task_info(task: TaskInfo | TaskLike) -> TaskInfo:
    if isinstance(task, TaskInfo):
        return task
    return TaskInfo(task.suite, task.spec.id, task.spec.split, tuple(task.spec.tags), task.content_hash)


def _config_info(config: ConfigInfo | ConfigLike) -> ConfigInfo:
    if isinstance(config, ConfigInfo):
        return config
    # rsi.config.Configuration
    return ConfigInfo(
        config.config_hash, config.name, config.contract_ref, tuple(config.parents), config.model_dump(mode="json")
    )


class Store:
    """A handle on one coverage store. Cheap to keep open; `close()` disposes the engine."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @property
    def url(self) -> str:
        return self.engine.url.render_as_string(hide_password=True)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transactions -------------------------------------------------------------------------

    def _write(self):  # type: ignore[no-untyped-def]
        return _Tx(self.engine, write=True)

    def _read(self):  # type: ignore[no-untyped-def]
        return _Tx(self.engine, write=False)

    # -- writes -------------------------------------------------------------------------------

    def create_run(
        self,
        *,
        portfolio: str,
        suite: str,
        split: str = "train",
        budget: dict[str, Any] | None = None,
        seed: int = 0,
        scheduler: str = "",
        args: dict[str, Any] | None = None,
        run_id: str | None = None,
    ) -> RunRow:
        row = RunRow(
            id=run_id or new_run_id(),
            portfolio=portfolio,
            suite=suite,
            split=split,
            budget=dict(budget or {}),
            seed=seed,
            scheduler=scheduler,
            args=dict(args or {}),
        )
        with self._write() as conn:
            conn.execute(insert(R).values(**row.model_dump()))
        return row

    def record_configurations(self, configs: Iterable[ConfigInfo | ConfigLike]) -> int:
        """Insert configurations not stored yet (content-addressed: a stored hash never changes)."""
        infos = {info.config_hash: info for info in map(_config_info, configs)}
        with self._write() as conn:
            known = set(conn.execute(select(C.c.config_hash).where(C.c.config_hash.in_(list(infos)))).scalars())
            fresh = [
                ConfigurationRow(
                    config_hash=i.config_hash,
                    name=i.name,
                    contract_ref=i.contract_ref,
                    parents=list(i.parents),
                    resolved=i.resolved,
                ).model_dump()
                for h, i in infos.items()
                if h not in known
            ]
            if fresh:
                conn.execute(insert(C), fresh)
        return len(fresh)

    def record_tasks(self, tasks: Iterable[TaskInfo | TaskLike]) -> int:
        """Insert or update task identities (split, tags, content hash may change between runs)."""
        infos = {info.key: info for info in map(_task_info, tasks)}
        now = utc_now()
        with self._write() as conn:
            stored = {
                r.key: r
                for r in conn.execute(select(T.c.key, T.c.split, T.c.tags, T.c.content_hash).where(T.c.key.in_(list(infos))))
            }
            fresh: list[dict[str, Any]] = []
            changed: list[tuple[str, dict[str, Any]]] = []
            for key, i in infos.items():
                values = {"split": i.split, "tags": list(i.tags), "content_hash": i.content_hash, "updated": now}
                old = stored.get(key)
                if old is None:
                    fresh.append({"key": key, "suite": i.suite, "task_id": i.task_id, **values})
                elif (old.split, list(old.tags), old.content_hash) != (i.split, list(i.tags), i.content_hash):
                    changed.append((key, values))
            if fresh:
                conn.execute(insert(T), fresh)
            for key, values in changed:
                conn.execute(update(T).where(T.c.key == key).values(**values))
                conn.execute(delete(TT).where(TT.c.task_key == key))
            tag_rows = [
                {"task_key": key, "tag": tag}
                for key in [f["key"] for f in fresh] + [k for k, _ in changed]
                for tag in dict.fromkeys(infos[key].tags)
            ]
            if tag_rows:
                conn.execute(insert(TT), tag_rows)
        return len(fresh) + len(changed)

    def start_job(
        self,
        run_id: str,
        configuration_hash: str,
        task_keys: Sequence[str],
        attempts_per_task: int = 1,
        *,
        job_index: int | None = None,
        details: dict[str, Any] | None = None,
    ) -> JobRow:
        """Open the run's next job (or the given `job_index`; reopening an identical plan returns it)."""
        if attempts_per_task < 1:
            raise StoreError(f"attempts_per_task must be >= 1, got {attempts_per_task}")
        with self._write() as conn:
            self._require_run(conn, run_id)
            if job_index is None:
                last = conn.execute(select(func.max(J.c.job_index)).where(J.c.run_id == run_id)).scalar()
                job_index = 0 if last is None else int(last) + 1
            else:
                existing = conn.execute(select(J).where(J.c.run_id == run_id, J.c.job_index == job_index)).first()
                if existing is not None:
                    job = JobRow.model_validate(dict(existing._mapping))
                    plan = (job.configuration_hash, job.planned_tasks, job.attempts_per_task)
                    if plan != (configuration_hash, list(task_keys), attempts_per_task):
                        raise StoreError(f"run {run_id} job {job_index} exists with a different plan")
                    return job
            row = JobRow(
                run_id=run_id,
                job_index=job_index,
                configuration_hash=configuration_hash,
                planned_tasks=list(task_keys),
                attempts_per_task=attempts_per_task,
                details=dict(details or {}),
            )
            try:
                conn.execute(insert(J).values(**row.model_dump()))
            except IntegrityError as exc:
                raise StoreError(
                    f"cannot start job {job_index} of run {run_id}: unknown configuration {configuration_hash}?",
                    hint="record_configurations() before start_job()",
                ) from exc
        return row

    def record_attempt(self, run_id: str, job_index: int, record: AttemptRecord) -> RecordOutcome:
        return self.record_attempts(run_id, job_index, [record])

    def record_attempts(self, run_id: str, job_index: int, records: Sequence[AttemptRecord]) -> RecordOutcome:
        """Record a batch of outcomes of one job in one transaction (idempotent, see module doc)."""
        if not records:
            return RecordOutcome()
        with self._write() as conn:
            job = conn.execute(select(J).where(J.c.run_id == run_id, J.c.job_index == job_index)).first()
            if job is None:
                raise StoreError(f"run {run_id} has no job {job_index}", hint="start_job() first")
            config_hash = job.configuration_hash
            by_key: dict[str, AttemptRecord] = {}
            for rec in records:  # the last outcome of a duplicate within the batch wins
                by_key[idem_key(run_id, job_index, rec.task_key, rec.attempt_index)] = rec
            stored = {
                r.idem_key: r
                for r in conn.execute(
                    select(A.c.id, A.c.idem_key, A.c.verdict, A.c.error_retries).where(A.c.idem_key.in_(list(by_key)))
                )
            }
            now = utc_now()
            fresh: list[dict[str, Any]] = []
            deltas: dict[str, list[Any]] = defaultdict(lambda: [0, 0, 0, 0, 0.0, None])
            inserted = replaced = ignored = 0
            for key, rec in by_key.items():
                old = stored.get(key)
                if old is not None and old.verdict != Verdict.ERROR.value:
                    ignored += 1
                    continue
                values = {
                    "run_id": run_id,
                    "job_index": job_index,
                    "configuration_hash": config_hash,
                    "task_key": rec.task_key,
                    "task_hash": rec.task_hash,
                    "seed": rec.seed,
                    "attempt_index": rec.attempt_index,
                    "verdict": rec.verdict.value,
                    "counted": rec.verdict.counts_as_attempt,
                    "passed": rec.verdict is Verdict.PASSED,
                    "reason": rec.reason,
                    "error_class": rec.error_class,
                    "tokens": rec.tokens,
                    "cache_hits": rec.cache_hits,
                    "cache_misses": rec.cache_misses,
                    "tokens_not_spent": rec.tokens_not_spent,
                    "wall_s": rec.wall_s,
                    "trajectory_path": rec.trajectory_path,
                    "final_code_hash": rec.final_code_hash,
                    "started": rec.started,
                    "finished": rec.finished,
                    "recorded": now,
                }
                if old is None:
                    fresh.append({"idem_key": key, "error_retries": 0, **values})
                    inserted += 1
                else:
                    conn.execute(update(A).where(A.c.id == old.id).values(error_retries=old.error_retries + 1, **values))
                    replaced += 1
                d = deltas[rec.task_key]
                if rec.verdict.counts_as_attempt:
                    d[0] += 1
                    d[3] += rec.tokens
                    d[4] += rec.wall_s
                else:
                    d[2] += 1
                if rec.verdict is Verdict.PASSED:
                    d[1] += 1
                    d[5] = job_index
            try:
                if fresh:
                    conn.execute(insert(A), fresh)
                self._apply_stats(conn, run_id, config_hash, deltas)
            except IntegrityError as exc:
                raise StoreError(
                    f"cannot record attempts of run {run_id} job {job_index}: unknown task? ({exc.orig})",
                    hint="record_tasks() before recording attempts",
                ) from exc
        return RecordOutcome(inserted=inserted, replaced=replaced, ignored=ignored)

    @staticmethod
    def _apply_stats(conn: Connection, run_id: str, config_hash: str, deltas: dict[str, list[Any]]) -> None:
        """Fold a batch into attempt_stats (portable UPDATE-then-INSERT; one writer per run)."""
        for task_key, (attempts, passes, errors, tokens, wall_s, pass_job) in deltas.items():
            where = and_(S.c.run_id == run_id, S.c.configuration_hash == config_hash, S.c.task_key == task_key)
            first: Any = S.c.first_pass_job
            if pass_job is not None:
                first = case((S.c.first_pass_job.is_(None), pass_job), (S.c.first_pass_job > pass_job, pass_job), else_=S.c.first_pass_job)
            done = conn.execute(
                update(S)
                .where(where)
                .values(
                    attempts=S.c.attempts + attempts,
                    passes=S.c.passes + passes,
                    errors=S.c.errors + errors,
                    tokens=S.c.tokens + tokens,
                    wall_s=S.c.wall_s + wall_s,
                    first_pass_job=first,
                )
            )
            if done.rowcount == 0:
                conn.execute(
                    insert(S).values(
                        run_id=run_id,
                        configuration_hash=config_hash,
                        task_key=task_key,
                        attempts=attempts,
                        passes=passes,
                        errors=errors,
                        tokens=tokens,
                        wall_s=wall_s,
                        first_pass_job=pass_job,
                    )
                )

    def finish_job(self, run_id: str, job_index: int, status: str = "done") -> None:
        if status not in JOB_STATUSES:
            raise StoreError(f"job status must be one of {JOB_STATUSES}, got {status!r}")
        with self._write() as conn:
            done = conn.execute(
                update(J).where(J.c.run_id == run_id, J.c.job_index == job_index).values(status=status, finished=utc_now())
            )
            if done.rowcount == 0:
                raise StoreError(f"run {run_id} has no job {job_index}")

    def finish_run(self, run_id: str, status: str = "done") -> None:
        if status not in RUN_STATUSES:
            raise StoreError(f"run status must be one of {RUN_STATUSES}, got {status!r}")
        with self._write() as conn:
            done = conn.execute(update(R).where(R.c.id == run_id).values(status=status, finished=utc_now()))
            if done.rowcount == 0:
                raise StoreError(f"no run {run_id} in the store")

    def reopen_run(self, run_id: str) -> RunRow:
        """Mark a run running again (resume) and return it."""
        with self._write() as conn:
            self._require_run(conn, run_id)
            conn.execute(update(R).where(R.c.id == run_id).values(status="running", finished=None))
        return self.get_run(run_id)

    def rebuild_stats(self) -> int:
        """Recompute attempt_stats from attempts (repair, bulk loads). Returns the summary's row count."""
        with self._write() as conn:
            conn.execute(delete(S))
            pass_job = case((A.c.passed, A.c.job_index), else_=None)
            counted = case((A.c.counted, 1), else_=0)
            agg = (
                select(
                    A.c.run_id,
                    A.c.configuration_hash,
                    A.c.task_key,
                    func.sum(counted),
                    func.sum(case((A.c.passed, 1), else_=0)),
                    func.sum(case((A.c.counted, 0), else_=1) + A.c.error_retries),
                    func.sum(case((A.c.counted, A.c.tokens), else_=0)),
                    func.sum(case((A.c.counted, A.c.wall_s), else_=0.0)),
                    func.min(pass_job),
                )
                .group_by(A.c.run_id, A.c.configuration_hash, A.c.task_key)
            )
            conn.execute(
                insert(S).from_select(
                    ["run_id", "configuration_hash", "task_key", "attempts", "passes", "errors", "tokens", "wall_s", "first_pass_job"],
                    agg,
                )
            )
            return int(conn.execute(select(func.count()).select_from(S)).scalar() or 0)

    # -- reads: runs and jobs -------------------------------------------------------------------

    @staticmethod
    def _require_run(conn: Connection, run_id: str) -> None:
        if conn.execute(select(R.c.id).where(R.c.id == run_id)).first() is None:
            raise StoreError(f"no run {run_id} in the store", hint="`rsi status` lists runs")

    def get_run(self, run_id: str) -> RunRow:
        with self._read() as conn:
            row = conn.execute(select(R).where(R.c.id == run_id)).first()
        if row is None:
            raise StoreError(f"no run {run_id} in the store", hint="`rsi status` lists runs")
        return RunRow.model_validate(dict(row._mapping))

    def list_runs(self, suite: str | None = None) -> list[RunRow]:
        """Runs, oldest first."""
        query = select(R).order_by(R.c.created, R.c.id)
        if suite is not None:
            query = query.where(R.c.suite == suite)
        with self._read() as conn:
            return [RunRow.model_validate(dict(r._mapping)) for r in conn.execute(query)]

    def list_jobs(self, run_id: str) -> list[JobRow]:
        with self._read() as conn:
            rows = conn.execute(select(J).where(J.c.run_id == run_id).order_by(J.c.job_index))
            return [JobRow.model_validate(dict(r._mapping)) for r in rows]

    def open_jobs(self, run_id: str) -> list[JobRow]:
        """Jobs of the run still marked running (interrupted ones, on resume)."""
        return [job for job in self.list_jobs(run_id) if job.status == "running"]

    def missing_attempts(self, run_id: str, job_index: int, *, retry_errors: bool = True) -> list[MissingAttempt]:
        """Planned attempts of a job without an outcome (errors count as missing when `retry_errors`)."""
        with self._read() as conn:
            job = conn.execute(select(J).where(J.c.run_id == run_id, J.c.job_index == job_index)).first()
            if job is None:
                raise StoreError(f"run {run_id} has no job {job_index}")
            query = select(A.c.task_key, A.c.attempt_index, A.c.verdict).where(
                A.c.run_id == run_id, A.c.job_index == job_index
            )
            done = {
                (r.task_key, r.attempt_index)
                for r in conn.execute(query)
                if not (retry_errors and r.verdict == Verdict.ERROR.value)
            }
        return [
            MissingAttempt(task_key, index)
            for task_key in job.planned_tasks
            for index in range(job.attempts_per_task)
            if (task_key, index) not in done
        ]

    def list_attempts(self, run_id: str, job_index: int | None = None) -> list[AttemptRow]:
        """A run's attempts (errors included) in chronological order."""
        query = select(A).where(A.c.run_id == run_id)
        if job_index is not None:
            query = query.where(A.c.job_index == job_index)
        query = query.order_by(A.c.job_index, A.c.finished, A.c.id)
        with self._read() as conn:
            return [AttemptRow.model_validate(dict(r._mapping)) for r in conn.execute(query)]

    def list_configurations(self, hashes: Iterable[str] | None = None) -> list[ConfigurationRow]:
        query = select(C).order_by(C.c.created, C.c.config_hash)
        if hashes is not None:
            query = query.where(C.c.config_hash.in_(list(hashes)))
        with self._read() as conn:
            return [ConfigurationRow.model_validate(dict(r._mapping)) for r in conn.execute(query)]

    def list_tasks(self, suite: str, split: str | None = None) -> list[TaskInfo]:
        query = select(T).where(T.c.suite == suite).order_by(T.c.key)
        if split is not None:
            query = query.where(T.c.split == split)
        with self._read() as conn:
            return [TaskInfo(r.suite, r.task_id, r.split, tuple(r.tags), r.content_hash) for r in conn.execute(query)]

    # -- reads: coverage --------------------------------------------------------------------------

    def _stats_scope(self, suite: str, split: str | None, run_ids: Sequence[str] | None) -> Any:
        cond = [T.c.suite == suite]
        if split is not None:
            cond.append(T.c.split == split)
        cond.append(S.c.run_id.in_(list(run_ids)) if run_ids is not None else S.c.run_id.not_in(_non_search_runs()))
        return and_(*cond)

    def covered_tasks(self, suite: str, split: str | None = "train", run_ids: Sequence[str] | None = None) -> set[str]:
        """Keys of tasks with at least one passing attempt (across all coverage-search runs, or only `run_ids`)."""
        with self._read() as conn:
            return self._covered(conn, suite, split, run_ids)

    @staticmethod
    def _covered(conn: Connection, suite: str, split: str | None, run_ids: Sequence[str] | None) -> set[str]:
        # Straight off attempts: ix_attempts_task_passed answers with one index seek per task.
        cond = [A.c.passed, T.c.suite == suite]
        if split is not None:
            cond.append(T.c.split == split)
        cond.append(A.c.run_id.in_(list(run_ids)) if run_ids is not None else A.c.run_id.not_in(_non_search_runs()))
        query = select(A.c.task_key).distinct().join(T, T.c.key == A.c.task_key).where(*cond)
        return set(conn.execute(query).scalars())

    def coverage(self, suite: str, split: str | None = "train", run_ids: Sequence[str] | None = None) -> CoverageResult:
        keys_query = select(T.c.key).where(T.c.suite == suite)
        if split is not None:
            keys_query = keys_query.where(T.c.split == split)
        with self._read() as conn:
            keys = frozenset(conn.execute(keys_query).scalars())
            covered = frozenset(self._covered(conn, suite, split, run_ids))
        return CoverageResult(suite, split, keys, covered)

    def task_stats(self, suite: str, split: str | None = None, run_ids: Sequence[str] | None = None) -> list[TaskStats]:
        """Per task (attempted or not): counted attempts, passes, errors, first passing (run, job)."""
        scope = self._stats_scope(suite, split, run_ids)
        totals_query = (
            select(S.c.task_key, func.sum(S.c.attempts), func.sum(S.c.passes), func.sum(S.c.errors))
            .join(T, T.c.key == S.c.task_key)
            .where(scope)
            .group_by(S.c.task_key)
        )
        first_query = (
            select(S.c.task_key, R.c.created, S.c.run_id, func.min(S.c.first_pass_job))
            .join(T, T.c.key == S.c.task_key)
            .join(R, R.c.id == S.c.run_id)
            .where(scope, S.c.first_pass_job.is_not(None))
            .group_by(S.c.task_key, S.c.run_id, R.c.created)
        )
        tasks_query = select(T.c.key, T.c.split, T.c.tags).where(T.c.suite == suite).order_by(T.c.key)
        if split is not None:
            tasks_query = tasks_query.where(T.c.split == split)
        with self._read() as conn:
            tasks = list(conn.execute(tasks_query))
            totals = {r[0]: (int(r[1] or 0), int(r[2] or 0), int(r[3] or 0)) for r in conn.execute(totals_query)}
            first: dict[str, tuple[Any, str, int]] = {}
            for key, created, run_id, job in conn.execute(first_query):
                candidate = (created, run_id, int(job))
                if key not in first or candidate < first[key]:
                    first[key] = candidate
        out = []
        for t in tasks:
            attempts, passes, errors = totals.get(t.key, (0, 0, 0))
            f = first.get(t.key)
            out.append(
                TaskStats(t.key, t.split, tuple(t.tags), attempts, passes, errors, f[1] if f else None, f[2] if f else None)
            )
        return out

    def configuration_stats(
        self, suite: str, split: str | None = None, run_ids: Sequence[str] | None = None
    ) -> list[ConfigurationStats]:
        """Per configuration: counted attempts, passes, errors, distinct tasks solved, tokens, wall."""
        solved = func.count(func.distinct(case((S.c.passes > 0, S.c.task_key), else_=None)))
        query = (
            select(
                S.c.configuration_hash,
                C.c.name,
                func.sum(S.c.attempts),
                func.sum(S.c.passes),
                func.sum(S.c.errors),
                solved,
                func.sum(S.c.tokens),
                func.sum(S.c.wall_s),
            )
            .join(T, T.c.key == S.c.task_key)
            .join(C, C.c.config_hash == S.c.configuration_hash)
            .where(self._stats_scope(suite, split, run_ids))
            .group_by(S.c.configuration_hash, C.c.name)
            .order_by(S.c.configuration_hash)
        )
        with self._read() as conn:
            return [
                ConfigurationStats(r[0], r[1], int(r[2] or 0), int(r[3] or 0), int(r[4] or 0), int(r[5] or 0), int(r[6] or 0), float(r[7] or 0.0))
                for r in conn.execute(query)
            ]

    def tag_stats(self, suite: str, split: str | None = None, run_ids: Sequence[str] | None = None) -> list[ConfigTagStats]:
        """Per (configuration, tag): counted attempts, passes, distinct tasks solved."""
        solved = func.count(func.distinct(case((S.c.passes > 0, S.c.task_key), else_=None)))
        query = (
            select(S.c.configuration_hash, TT.c.tag, func.sum(S.c.attempts), func.sum(S.c.passes), solved)
            .join(T, T.c.key == S.c.task_key)
            .join(TT, TT.c.task_key == S.c.task_key)
            .where(self._stats_scope(suite, split, run_ids))
            .group_by(S.c.configuration_hash, TT.c.tag)
            .order_by(S.c.configuration_hash, TT.c.tag)
        )
        with self._read() as conn:
            return [ConfigTagStats(r[0], r[1], int(r[2] or 0), int(r[3] or 0), int(r[4] or 0)) for r in conn.execute(query)]

    def coverage_curve(self, run_id: str, *, include_prior: bool = False) -> list[int]:
        """Cumulative unique covered tasks (of the run's suite and split) after each counted attempt.

        Chronological order: job index, then finish time, then recording order. With
        `include_prior`, the curve starts from the tasks earlier runs of the suite already covered.
        """
        run = self.get_run(run_id)
        query = (
            select(A.c.task_key, A.c.passed)
            .join(T, T.c.key == A.c.task_key)
            .where(A.c.run_id == run_id, A.c.counted, T.c.split == run.split)
            .order_by(A.c.job_index, A.c.finished, A.c.id)
        )
        covered: set[str] = set()
        if include_prior:
            non_search = non_search_schedulers()
            prior = [r.id for r in self.list_runs(run.suite)
                     if (r.created, r.id) < (run.created, run.id) and r.scheduler not in non_search]
            covered = self.covered_tasks(run.suite, run.split, prior) if prior else set()
        curve = []
        with self._read() as conn:
            for r in conn.execute(query):
                if r.passed:
                    covered.add(r.task_key)
                curve.append(len(covered))
        return curve

    def attempt_history(
        self, suite: str, split: str | None = None, run_ids: Sequence[str] | None = None
    ) -> list[AttemptFact]:
        """(configuration hash, task key, passed) of every counted attempt, chronological per run:
        the scheduler's `history`. Runs that are not coverage search (`non_search_schedulers`) are left
        out unless named in `run_ids`."""
        cond = [T.c.suite == suite, A.c.counted]
        if split is not None:
            cond.append(T.c.split == split)
        cond.append(A.c.run_id.in_(list(run_ids)) if run_ids is not None else R.c.scheduler.not_in(non_search_schedulers()))
        query = (
            select(A.c.configuration_hash, A.c.task_key, A.c.passed)
            .join(T, T.c.key == A.c.task_key)
            .join(R, R.c.id == A.c.run_id)
            .where(*cond)
            .order_by(R.c.created, A.c.run_id, A.c.job_index, A.c.finished, A.c.id)
        )
        with self._read() as conn:
            return [AttemptFact(r[0], r[1], bool(r[2])) for r in conn.execute(query)]


def _non_search_runs() -> Any:
    """Ids of the runs that are not coverage search, as a subquery. Which kinds of run those are is the
    kinds' registry's answer (`counts_as_search`; harvests, evaluations, GRPO rollouts): reads over all
    runs (run_ids=None) leave them out, so coverage, statistics and the scheduler's history never count
    them; asked for by id, they are read like any run. The kinds are entry points (rsi/plugins.py),
    loaded at call time: the store imports nothing of the run package above it."""
    return select(R.c.id).where(R.c.scheduler.in_(non_search_schedulers()))


class _Tx:
    """A connection in one transaction; SQLAlchemy errors become StoreError."""

    def __init__(self, engine: Engine, *, write: bool) -> None:
        self.engine = engine
        self.write = write

    def __enter__(self) -> Connection:
        self.conn = self.engine.connect().execution_options(rsi_write=self.write)
        self.tx = self.conn.begin()
        return self.conn

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            if exc_type is None:
                self.tx.commit()
            else:
                self.tx.rollback()
        finally:
            self.conn.close()
        if isinstance(exc, SQLAlchemyError) and not isinstance(exc, StoreError):
            raise StoreError(f"coverage store error: {exc}") from exc


