"""The orchestrator: `run_portfolio(spec, workspace, display)`, the one core function behind `rsi run`.

A run is a sequence of jobs under a budget. The write protocol makes it survive SIGKILL at any
instant and resume without losing or repeating work:

1. configurations and tasks are recorded, then the run row (with the fully resolved spec and the
   configuration hashes and task keys it targets) — a crash before the run row leaves nothing to
   resume, after it everything needed to resume is in the store;
2. each job is written (configuration, planned tasks, attempts per task: the planned idempotency
   keys `<run>|<job>|<task>|<attempt index>`) BEFORE any of its attempts starts;
3. each result is recorded as it arrives, in its own transaction (recording is idempotent by key;
   a counted outcome is never overwritten, an infrastructure error is replaced by its retry);
4. a job is marked done only when every planned key has a counted outcome or ran out of retries.

`--resume RUN` re-plans nothing that was planned: it re-executes the planned keys of open jobs that
have no counted outcome (errors included), then asks the scheduler for more. The scheduler is a
pure function of (seed, job index, history), and history is order-free counts, so a resumed run
continues exactly as an uninterrupted one would have.

Infrastructure errors (verdict `error`) are retried with exponential backoff up to
`max_error_retries` times, counted apart, and never count as coverage, failures or budget.
Only this process writes the store; executors' workers never touch it.

Testing hook: `RSI_TEST_CRASH_AT=<point>:<n>` SIGKILLs this process the n-th time it passes
`<point>` (run_created, job_planned, attempt_recorded, job_finished), so crash tests can kill a
real `rsi run` deterministically at the boundaries between writes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rsi.atomic import write_json_atomic
from rsi.config import Configuration
from rsi.display import Display, NullDisplay
from rsi.errors import ExecutorError, StoreError, UserInputError
from rsi.executors import AttemptFn, AttemptResult, AttemptSpec, Executor, make_executor
from rsi.run.spec import ResolvedRun, RunEvent, RunOutcome, RunProgress, RunSpec
from rsi.verdict import Verdict
from rsi.workspace import Workspace

STATE_FILE = "state.json"
LOCK_FILE = ".lock"


@dataclass
class _Counters:
    """This run's running totals (rebuilt from the store on resume)."""

    attempts: int = 0
    passes: int = 0
    errors: int = 0
    tokens: int = 0
    covered: set[str] = field(default_factory=set)
    history: list[tuple[str, str, bool]] = field(default_factory=list)  # the scheduler's input
    quarantined: set[str] = field(default_factory=set)  # tasks with an attempt out of error retries
    spent: dict[str, _Spent] = field(default_factory=dict)  # per configuration: what its attempts cost

    def count(self, config_hash: str, task_key: str, passed: bool, wall_s: float, tokens: int) -> None:
        """One counted attempt (passed, failed or timeout) into every total."""
        self.history.append((config_hash, task_key, passed))
        self.attempts += 1
        self.tokens += tokens
        spent = self.spent.setdefault(config_hash, _Spent())
        spent.attempts += 1
        spent.wall_s += wall_s
        spent.tokens += tokens
        if passed:
            self.passes += 1
            self.covered.add(task_key)


@dataclass
class _Spent:
    """One configuration's counted attempts and what they cost."""

    attempts: int = 0
    wall_s: float = 0.0
    tokens: int = 0


def attempt_costs(spent: dict[str, _Spent], unit: str | None) -> dict[str, float]:
    """Mean cost of one attempt per configuration, in `unit` ("wall_s" or "tokens"); {} for None.
    A configuration that spent nothing in that unit is left out (unknown, not free)."""
    if unit not in ("wall_s", "tokens"):
        return {}
    return {config: getattr(s, unit) / s.attempts for config, s in spent.items() if s.attempts and getattr(s, unit) > 0}


_crash_counts: dict[str, int] = {}


def _crash_point(name: str) -> None:
    """SIGKILL ourselves here if RSI_TEST_CRASH_AT says so (see the module docstring)."""
    wanted = os.environ.get("RSI_TEST_CRASH_AT")
    if not wanted:
        return
    point, _, count = wanted.partition(":")
    if point != name:
        return
    _crash_counts[name] = _crash_counts.get(name, 0) + 1
    if _crash_counts[name] == int(count or 1):
        os.kill(os.getpid(), signal.SIGKILL)


def _attempt_seed(seed: int, job_index: int, task_key: str, attempt_index: int) -> int:
    digest = hashlib.sha256(f"{seed}|{job_index}|{task_key}|{attempt_index}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1  # 31 bits: fits a signed 32-bit column (PostgreSQL INTEGER)


def _read_state(run_dir: Path) -> dict[str, Any]:
    try:
        return json.loads((run_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def resolve_run(spec: RunSpec, configs: Sequence[Configuration]) -> ResolvedRun:
    """Fill the spec's unset fields from the first configuration's `[evaluation]`."""
    evaluation = configs[0].spec.evaluation
    return ResolvedRun(
        portfolio=spec.portfolio,
        suite=spec.suite or evaluation.suite,
        split=spec.split or evaluation.split,
        budget_attempts=spec.budget_attempts or evaluation.attempts_budget,
        budget_tokens=spec.budget_tokens,
        budget_minutes=spec.budget_minutes,
        attempts_per_task=spec.attempts_per_task or evaluation.attempts_per_task,
        job_size=spec.job_size,
        scheduler=spec.scheduler,
        seed=spec.seed if spec.seed is not None else evaluation.seed,
        limit_tasks=spec.limit_tasks,
        difficulty=list(spec.difficulty) if spec.difficulty else None,
        max_error_retries=spec.max_error_retries,
        retry_backoff_s=spec.retry_backoff_s,
    )


def select_tasks(
    tasks: Sequence[Any], split: str, limit: int | None, difficulty: Sequence[str] | None = None
) -> list[Any]:
    """The run's tasks: the split asked for (all splits for 'all'), of the difficulties asked for,
    sorted by key, the first `limit`."""
    chosen = sorted(
        (t for t in tasks if (split == "all" or t.spec.split == split)
         and (not difficulty or t.spec.difficulty in difficulty)),
        key=lambda t: t.key,
    )
    return chosen[:limit] if limit else chosen


class Orchestrator:
    """One run (new or resumed) against one store and one executor. See the module docstring."""

    def __init__(
        self,
        spec: RunSpec,
        workspace: Workspace,
        display: Display | None = None,
        attempt_fn: AttemptFn | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.spec = spec
        self.workspace = workspace
        self.display = display or NullDisplay()
        self.attempt_fn = attempt_fn
        self.clock = clock
        self.counters = _Counters()
        self.progress = RunProgress(run_id="")
        self._elapsed_before_s = 0.0
        self._session_start = clock()
        self._jobs_wall_s = 0.0  # wall time spent in jobs this session, and the attempts they counted
        self._jobs_attempts = 0
        self._last_state_write = 0.0

    # -- setup ----------------------------------------------------------------------------------

    def _open(self) -> None:
        from rsi.store import open_store

        self.store = open_store(self.spec.db or self.workspace.db_url)

    def _new_run(self) -> None:
        from rsi.portfolio import load_portfolio
        from rsi.store import new_run_id
        from rsi.tasks.load import load_suite

        configs = list(load_portfolio(self.workspace, self.spec.portfolio))
        if not configs:
            raise UserInputError(f"portfolio {self.spec.portfolio!r} holds no configurations")
        resolved = resolve_run(self.spec, configs)
        tasks = select_tasks(load_suite(self.workspace, resolved.suite), resolved.split, resolved.limit_tasks,
                             resolved.difficulty)
        if not tasks:
            which = f"{'/'.join(resolved.difficulty)} " if resolved.difficulty else ""
            raise UserInputError(f"suite {resolved.suite!r} has no {which}{resolved.split} tasks")
        # Identities first, then the run row that names them: a crash in between leaves no run.
        self.store.record_configurations(configs)
        self.store.record_tasks(tasks)
        run_id = new_run_id()
        self.store.create_run(
            run_id=run_id,
            portfolio=resolved.portfolio,
            suite=resolved.suite,
            split=resolved.split,
            budget={
                "attempts": resolved.budget_attempts,
                "tokens": resolved.budget_tokens,
                "minutes": resolved.budget_minutes,
            },
            seed=resolved.seed,
            scheduler=resolved.scheduler,
            args={
                "spec": self.spec.model_dump(mode="json"),
                "resolved": resolved.model_dump(mode="json"),
                "configs": [c.config_hash for c in configs],
                "tasks": [t.key for t in tasks],
            },
        )
        self.run_id, self.resolved, self.configs, self.tasks = run_id, resolved, configs, tasks
        _crash_point("run_created")

    def _resume_run(self, run_id: str) -> None:
        from rsi.tasks.load import load_suite

        try:
            run = self.store.get_run(run_id)
        except StoreError as error:
            raise UserInputError(error.message, hint="`rsi status` lists runs") from error
        args = run.args
        try:
            resolved = ResolvedRun.model_validate(args["resolved"])
            hashes: list[str] = list(args["configs"])
            task_keys: list[str] = list(args["tasks"])
        except (KeyError, ValueError) as error:
            raise StoreError(f"run {run_id} was not written by `rsi run` (args lack {error})") from error
        rows = {row.config_hash: row for row in self.store.list_configurations(hashes)}
        missing = [h for h in hashes if h not in rows]
        if missing:
            raise StoreError(f"run {run_id}: configurations {missing} are missing from the store")
        # The stored resolved configurations, not today's portfolio file: a resume runs what was planned.
        configs = [Configuration.model_validate(rows[h].resolved) for h in hashes]
        by_key = {t.key: t for t in load_suite(self.workspace, resolved.suite)}
        gone = [k for k in task_keys if k not in by_key]
        if gone:
            raise UserInputError(
                f"run {run_id}: tasks {', '.join(gone[:5])} are no longer in suite {resolved.suite!r}",
                hint="restore them, or start a new run",
            )
        self.store.reopen_run(run_id)
        self.run_id, self.resolved, self.configs = run_id, resolved, configs
        self.tasks = [by_key[k] for k in task_keys]
        self._elapsed_before_s = float(_read_state(self.workspace.run_dir(run_id)).get("elapsed_s", 0.0))

    def _load_counters(self) -> None:
        """Totals of this run so far, from the store (so a resumed run's display and budget are exact)."""
        # Quarantine starts empty in every session: a resume usually follows a fix of the cause.
        c = _Counters()
        for row in self.store.list_attempts(self.run_id):
            if row.counted:
                c.count(row.configuration_hash, row.task_key, row.passed, row.wall_s, row.tokens)
            else:
                c.errors += 1
            c.errors += row.error_retries
        self.counters = c

    # -- progress -------------------------------------------------------------------------------

    def elapsed_s(self) -> float:
        return self._elapsed_before_s + (self.clock() - self._session_start)

    def _save_state(self, force: bool = False) -> None:
        now = self.clock()
        if not force and now - self._last_state_write < 5.0:
            return
        self._last_state_write = now
        write_json_atomic(self.run_dir / STATE_FILE, {"elapsed_s": self.elapsed_s(), "updated": datetime.now(UTC)})

    def _emit(self, kind: str | None = None, message: str = "", **job: Any) -> None:
        c = self.counters
        self.progress = self.progress.model_copy(
            update={
                "attempts": c.attempts,
                "passes": c.passes,
                "errors": c.errors,
                "tokens": c.tokens,
                "covered": len(c.covered & self._target_keys),
                "elapsed_s": self.elapsed_s(),
                **job,
            }
        )
        event = RunEvent(kind=kind, message=message) if kind else None  # type: ignore[arg-type]
        self.display.update(self.progress, event)

    # -- the run --------------------------------------------------------------------------------

    def run(self) -> RunOutcome:
        from filelock import FileLock, Timeout

        self._open()
        try:
            if self.spec.resume:
                self._resume_run(self.spec.resume)
                kind = "run_resumed"
            else:
                self._new_run()
                kind = "run_started"
            self.run_dir = self.workspace.run_dir(self.run_id)
            self.run_dir.mkdir(parents=True, exist_ok=True)
            # One orchestrator per run: a second `--resume` of a live run must not write beside it.
            lock = FileLock(str(self.run_dir / LOCK_FILE))
            try:
                lock.acquire(timeout=0)
            except Timeout as error:
                raise UserInputError(f"run {self.run_id} is being run by another process") from error
            try:
                return self._run_locked(kind)
            finally:
                lock.release()
        finally:
            self.store.close()

    def _run_locked(self, kind: str) -> RunOutcome:
        from rsi.run.attempt_fn import close_shared, make_attempt_fn

        r = self.resolved
        self._target_keys = {t.key for t in self.tasks if r.split == "all" or t.spec.split == r.split}
        self._tasks_by_key = {t.key: t for t in self.tasks}
        self._load_counters()
        jobs = self.store.list_jobs(self.run_id)
        self._next_job_index = len(jobs)
        self.progress = RunProgress(
            run_id=self.run_id, portfolio=r.portfolio, suite=r.suite, budget_attempts=r.budget_attempts,
            budget_s=None if r.budget_minutes is None else r.budget_minutes * 60.0,
            tasks=len(self._target_keys), started=datetime.now(UTC),
            jobs_done=sum(1 for j in jobs if j.status != "running"),
        )
        self._emit(kind, f"{self.run_id}: portfolio {r.portfolio} ({len(self.configs)} configurations) on "
                         f"{len(self.tasks)} {r.split} tasks of {r.suite}, budget {r.budget_attempts} attempts, "
                         f"executor {self.spec.executor}")
        fn = self.attempt_fn or make_attempt_fn(self.workspace.root, self.spec.sandbox)
        executor = make_executor(self.spec.executor, fn, self.run_dir / "slurm", workers=self.spec.workers,
                                 slurm=self.spec.slurm)
        status, reason = "failed", "interrupted"
        cancel_stale = getattr(executor, "cancel_stale", None)
        if kind == "run_resumed" and cancel_stale is not None:
            stale = cancel_stale()  # attempts a killed orchestrator left running on the cluster
            if stale:
                self._emit("note", f"cancelled {len(stale)} job arrays left by the interrupted run")
        try:
            for job in self.store.open_jobs(self.run_id):
                self._run_job(executor, job, resumed=True)
            reason = self._schedule(executor)
            status = "done"
        except KeyboardInterrupt:
            status, reason = "stopped", "interrupted (resume with `rsi run --resume " + self.run_id + "`)"
            executor.cancel()
            raise
        except Exception as error:
            reason = f"{type(error).__name__}: {error}"
            executor.cancel()
            raise
        finally:
            # Record the end first: closing workers and models may be slow (a model mid-generation).
            self._save_state(force=True)
            with contextlib.suppress(StoreError):  # the store failed: the original error is the one to report
                self.store.finish_run(self.run_id, status)
            self._emit("run_finished", f"{status}: {reason}", job_index=None)
            executor.close()
            if self.attempt_fn is None:
                close_shared()
        report_path = ""
        if self.spec.report:
            try:
                from rsi.report import write_report

                report_path = str(write_report(self.store, self.run_id, self.run_dir / "report.html"))
            except Exception as error:  # a report is a convenience; the run's data is already safe
                self._emit("note", f"report not written: {type(error).__name__}: {error}")
        c = self.counters
        return RunOutcome(
            run_id=self.run_id, status=status, stop_reason=reason,  # type: ignore[arg-type]
            jobs=len(self.store.list_jobs(self.run_id)), attempts=c.attempts, passes=c.passes, errors=c.errors,
            covered=len(c.covered & self._target_keys), tasks=len(self._target_keys), tokens=c.tokens,
            elapsed_s=self.elapsed_s(), report_path=report_path,
        )

    def _budget_left(self) -> tuple[Any, str]:
        from rsi.scheduler import Budget

        r, c = self.resolved, self.counters
        attempts = r.budget_attempts - c.attempts
        tokens = None if r.budget_tokens is None else r.budget_tokens - c.tokens
        wall_s = None if r.budget_minutes is None else r.budget_minutes * 60.0 - self.elapsed_s()
        if attempts <= 0:
            return None, f"attempts budget spent ({c.attempts}/{r.budget_attempts})"
        if tokens is not None and tokens <= 0:
            return None, f"tokens budget spent ({c.tokens}/{r.budget_tokens})"
        if wall_s is not None and wall_s <= 0:
            return None, f"time budget spent ({self.elapsed_s() / 60:.1f}/{r.budget_minutes} min)"
        return Budget(attempts=attempts, tokens=tokens, wall_s=wall_s), ""

    def _schedule(self, executor: Executor) -> str:
        from rsi.scheduler import ConfigOption, ScheduleRequest, TaskOption, make_scheduler

        r = self.resolved
        scheduler = make_scheduler(r.scheduler)
        # The currency the scheduler weighs configurations in: the budget that can run out first
        # besides attempts (time, else tokens); with attempts only, every attempt costs the same.
        unit = "wall_s" if r.budget_minutes is not None else "tokens" if r.budget_tokens is not None else None

        def options_now() -> list[ConfigOption]:
            costs = attempt_costs(self.counters.spent, unit)
            return [
                ConfigOption(c.config_hash, c.name, cost=costs.get(c.config_hash),
                             max_tries_per_task=1 if c.spec.harness.sampling.temperature == 0 else None)
                for c in self.configs
            ]

        all_options = [TaskOption(t.key, t.spec.split, tuple(t.spec.tags)) for t in self.tasks]
        while True:
            # A task whose attempt ran out of error retries is not proposed again in this run: the
            # scheduler knows nothing of errors and would pick the same broken task forever.
            quarantined = self.counters.quarantined
            options = [o for o in all_options if o.key not in quarantined] if quarantined else all_options
            budget, why = self._budget_left()
            if budget is None:
                return why
            job_index = self._next_job_index
            c = self.counters
            request = ScheduleRequest(
                configs=options_now(), tasks=options, history=list(c.history), budget=budget, seed=r.seed,
                job_index=job_index, job_size=r.job_size, attempts_per_task=r.attempts_per_task,
                split=None if r.split == "all" else r.split,
                tokens_per_attempt=(c.tokens / c.attempts) if c.attempts and c.tokens else None,
                # Observed wall time per attempt, parallelism included: sizes the last job to the time left.
                wall_s_per_attempt=(self._jobs_wall_s / self._jobs_attempts) if self._jobs_attempts else None,
            )
            proposal = scheduler.propose(request)
            if proposal is None:
                covered = len(c.covered & self._target_keys)
                if covered >= len(self._target_keys):
                    return f"every target task covered ({covered}/{len(self._target_keys)})"
                per_attempt = request.wall_s_per_attempt
                if budget.wall_s is not None and per_attempt and budget.wall_s < per_attempt * r.attempts_per_task:
                    return (f"time budget nearly spent ({budget.wall_s:.0f}s left, an attempt takes about "
                            f"{per_attempt:.0f}s)")
                return "the scheduler proposed no further job"
            job = self.store.start_job(
                self.run_id, proposal.config_hash, list(proposal.task_keys), proposal.attempts_per_task,
                job_index=job_index, details={"reason": proposal.reason, "scheduler": scheduler.name},
            )
            self._next_job_index += 1
            _crash_point("job_planned")
            self._run_job(executor, job, resumed=False)

    def _config(self, config_hash: str) -> Configuration:
        if not hasattr(self, "_by_hash"):
            self._by_hash = {c.config_hash: c for c in self.configs}  # the hash is costly: compute once
        config = self._by_hash.get(config_hash)
        if config is not None:
            return config
        raise StoreError(f"run {self.run_id}: job uses configuration {config_hash}, not in the run")

    def _run_job(self, executor: Executor, job: Any, resumed: bool) -> None:
        r = self.resolved
        config = self._config(job.configuration_hash)
        self._job_hash = {job.job_index: job.configuration_hash}
        tasks = self._tasks_by_key
        planned = len(job.planned_tasks) * job.attempts_per_task
        if resumed:
            missing = self.store.missing_attempts(self.run_id, job.job_index, retry_errors=True)
            rows = self.store.list_attempts(self.run_id, job.job_index)
            earlier_errors = {(r.task_key, r.attempt_index): r.error_retries + 1 for r in rows if not r.counted}
            passed_before = sum(1 for r in rows if r.counted and r.passed)
        else:  # a job planned just now has no outcome yet: skip three queries per job
            from rsi.store import MissingAttempt

            missing = [MissingAttempt(t, i) for t in job.planned_tasks for i in range(job.attempts_per_task)]
            earlier_errors, passed_before = {}, 0
        done_before = planned - len(missing)
        self._emit(
            "job_started",
            f"job {job.job_index}{' (resumed)' if resumed else ''}: {config.name} on {len(job.planned_tasks)} tasks "
            f"x {job.attempts_per_task}, {len(missing)} to run",
            job_index=job.job_index, job_config=config.name, job_planned=planned, job_done=done_before,
            job_passed=passed_before,
        )
        job_dir = self.run_dir / "attempts" / f"j{job.job_index:04d}"
        if resumed and job_dir.is_dir():
            # Half-written attempt folders of the killed run: never renamed into place, so never read.
            for stale in job_dir.glob("*/.tmp-*"):
                shutil.rmtree(stale, ignore_errors=True)
        specs = []
        for m in missing:
            task = tasks.get(m.task_key)
            if task is None:
                raise StoreError(f"run {self.run_id} job {job.job_index} plans {m.task_key}, not in the run")
            specs.append(
                AttemptSpec(
                    key=f"{self.run_id}|{job.job_index}|{m.task_key}|{m.attempt_index}",
                    run_id=self.run_id, job_index=job.job_index, task_key=m.task_key, task_dir=str(task.root),
                    attempt_index=m.attempt_index,
                    seed=_attempt_seed(r.seed, job.job_index, m.task_key, m.attempt_index),
                    config=config,
                    out_dir=str(job_dir / m.task_key.replace("/", "__") / f"a{m.attempt_index}"),
                    timeout_s=float(min(task.spec.agent_timeout_s, config.spec.harness.timeouts.agent_s))
                    + task.spec.verifier_timeout_s + 60.0,
                    try_index=earlier_errors.get((m.task_key, m.attempt_index), 0),
                )
            )
        counted_before = self.counters.attempts
        job_started_s = self.clock()
        queue = [s for s in specs if s.try_index <= r.max_error_retries]
        # Keys already out of retries stay errors; they hold no budget and the job can finish.
        while queue:
            retries: list[AttemptSpec] = []
            by_key = {s.key: s for s in queue}
            for batch in executor.submit_batches(queue):
                pairs = []
                for result in batch:
                    spec = by_key.get(result.key)
                    if spec is None:
                        raise ExecutorError(f"executor returned a result for an unknown key {result.key!r}")
                    pairs.append((spec, result))
                self._record(job.job_index, pairs)
                for spec, result in pairs:
                    if result.verdict is not Verdict.ERROR:
                        continue
                    if spec.try_index >= r.max_error_retries:
                        self.counters.quarantined.add(spec.task_key)
                        self._emit("note", f"{spec.task_key}: infrastructure errors after {spec.try_index} "
                                           "retries; not scheduled again in this run")
                    else:
                        retries.append(spec.model_copy(update={"try_index": spec.try_index + 1}))
                        self._emit("retry", f"{spec.task_key}#{spec.attempt_index} try {spec.try_index + 1} "
                                            f"after infrastructure error: {result.reason.splitlines()[0][:200]}")
            if retries:
                delay = r.retry_backoff_s * (2 ** (min(s.try_index for s in retries) - 1))
                time.sleep(min(delay, 60.0))
            queue = retries
        for spec in specs:
            if spec.try_index > r.max_error_retries:
                self.counters.quarantined.add(spec.task_key)
        failed = bool(specs) and self.counters.attempts == counted_before
        self._jobs_wall_s += self.clock() - job_started_s
        self._jobs_attempts += self.counters.attempts - counted_before
        self.store.finish_job(self.run_id, job.job_index, "failed" if failed else "done")
        _crash_point("job_finished")
        self._save_state()
        self._emit(
            "job_finished",
            f"job {job.job_index}: {config.name} passed {self.progress.job_passed}/{self.progress.job_done}",
            jobs_done=self.progress.jobs_done + 1,
        )
        if failed:
            # Every attempt ended in an infrastructure error even after retries: more jobs would
            # spin without spending budget. Stop; `--resume` continues once the cause is fixed.
            raise ExecutorError(
                f"job {job.job_index}: all {len(specs)} attempts ended in infrastructure errors",
                hint=f"see `rsi status {self.run_id}`; fix the cause, then `rsi run --resume {self.run_id}`",
            )

    def _record(self, job_index: int, pairs: list[tuple[AttemptSpec, AttemptResult]]) -> None:
        """Record results that finished together, in one transaction (idempotent by key)."""
        from rsi.store import AttemptRecord

        records = [
            AttemptRecord(
                task_key=spec.task_key,
                attempt_index=spec.attempt_index,
                verdict=result.verdict,
                seed=spec.seed,
                reason=result.reason,
                error_class=result.error_class,
                tokens=result.tokens,
                wall_s=result.wall_s,
                trajectory_path=result.trajectory_path,
                final_code_hash=result.final_code_hash,
                started=result.started,
                finished=result.finished,
            )
            for spec, result in pairs
        ]
        outcome = self.store.record_attempts(self.run_id, job_index, records)
        config_hash = self._job_hash[job_index]
        for _ in pairs:
            _crash_point("attempt_recorded")
        if outcome.ignored:
            # Some key already had a counted outcome (cannot happen with one orchestrator per run,
            # which the run lock ensures); trust the store rather than double count.
            self._load_counters()
        c = self.counters
        for spec, result in pairs:
            passed = result.verdict is Verdict.PASSED
            if not outcome.ignored:
                if result.verdict.counts_as_attempt:
                    c.count(config_hash, spec.task_key, passed, result.wall_s, result.tokens)
                else:
                    c.errors += 1
            p = self.progress
            self._emit(
                "attempt",
                f"{spec.task_key}#{spec.attempt_index} {result.verdict.value} ({result.wall_s:.1f}s, {result.tokens} tok)",
                job_done=p.job_done + (1 if result.verdict.counts_as_attempt else 0),
                job_passed=p.job_passed + (1 if passed else 0),
            )
        self._save_state()


def run_portfolio(
    spec: RunSpec, workspace: Workspace, display: Display | None = None, attempt_fn: AttemptFn | None = None
) -> RunOutcome:
    """Run (or resume, with `spec.resume`) a portfolio on a task suite under a budget. See the module doc.

    `attempt_fn` replaces the real attempt (model + sandbox + harness) — for benchmarks and tests
    of the orchestration only; `rsi run` never passes it.
    """
    return Orchestrator(spec, workspace, display, attempt_fn).run()
