"""One session of a run: plan jobs, keep the executor busy, record results, stop when told.

Jobs are planned and recorded in chronological order (job indexes grow, each job's plan is written
before any of its attempts starts), but their execution overlaps: the next job is planned from
what has been recorded so far as soon as the executor has a free slot, while the previous job's
last attempts still run. For the scheduler those unfinished attempts are in flight, not failures:
their tasks are left out of the request (no task is planned twice at once), and their attempts
are reserved out of the budget (the run never plans past it). With `overlap_jobs=False` a job is
planned only when the last one has ended, and the plan is a pure function of the seed.

Results are recorded as they arrive, each group in its own transaction (idempotent by key).
Infrastructure errors are retried after an exponential backoff, per attempt, while other attempts
run; a key out of retries quarantines its task for the rest of the session. A job is marked done
when none of its keys is open. A stop request ends planning, drops queued attempts, gives started
ones `stop_grace_s` to finish and be recorded, and cancels the rest: their keys stay planned and
open, so `--resume` runs them.
"""

from __future__ import annotations

import math
import shutil
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rsi.atomic import write_json_atomic
from rsi.crashpoint import crash_point
from rsi.display import Display, RunEvent, RunProgress
from rsi.errors import ExecutorError, StoreError
from rsi.executors import AttemptResult, AttemptSpec, Executor
from rsi.run.jobs import JobInFlight, build_specs
from rsi.run.layout import RunLayout
from rsi.run.setup import STATE_FILE, OpenedRun, resume_command
from rsi.run.spec import RunOutcome, RunSpec, describe_budgets
from rsi.run.stop import StopRequest
from rsi.run.totals import RecentRate, RunTotals, attempt_costs
from rsi.verdict import Verdict

if TYPE_CHECKING:
    from rsi.models.embedded.tuning import WorkerFollower
    from rsi.scheduler import Budget, Scheduler, ScheduleRequest
    from rsi.scheduler.retire import Retirement
    from rsi.store import JobRow, Store

POLL_S = 0.5  # longest wait for results before the loop looks at stop requests and due retries again


def budget_left(opened: OpenedRun, totals: RunTotals, elapsed_s: float, reserved: int) -> tuple[Budget | None, str]:
    """What the budget still allows, with `reserved` attempts in flight held back; (None, why) when spent."""
    from rsi.scheduler import Budget

    r, t = opened.resolved, totals
    attempts = None if r.budget_attempts is None else r.budget_attempts - t.attempts - reserved
    tokens_per_attempt = t.tokens / t.attempts if t.attempts else 0.0
    tokens = None if r.budget_tokens is None else r.budget_tokens - t.tokens - reserved * tokens_per_attempt
    wall_s = None if r.budget_minutes is None else r.budget_minutes * 60.0 - elapsed_s
    held = f" ({reserved} in flight)" if reserved else ""
    if attempts is not None and attempts <= 0:
        return None, f"attempts budget spent ({t.attempts}{held}/{r.budget_attempts})"
    if tokens is not None and tokens <= 0:
        return None, f"tokens budget spent ({t.tokens}/{r.budget_tokens}{held})"
    if wall_s is not None and wall_s <= 0:
        return None, f"time budget spent ({elapsed_s / 60:.1f}/{r.budget_minutes} min)"
    return Budget(attempts=attempts, tokens=None if tokens is None else int(tokens), wall_s=wall_s), ""


def cost_unit(budget_minutes: float | None, budget_tokens: int | None) -> str:
    """The currency the scheduler weighs configurations in and the retirement rule judges them by:
    tokens when only a token budget is set, else seconds (wall_s). An attempts-only budget is still
    paid in time: on a 2-core machine an attempt of 200 s takes the place of five of 40 s, so a
    configuration five times slower must pass five times as often to be worth its attempts."""
    return "tokens" if budget_tokens is not None and budget_minutes is None else "wall_s"


def retired_in(jobs: list[JobRow]) -> dict[str, Retirement]:
    """The retirements a run's job rows recorded (`details["retired"]`), by configuration hash."""
    from rsi.scheduler.retire import recorded

    return recorded(j.details or {} for j in sorted(jobs, key=lambda j: j.job_index))


def target_reached(target: float | None, covered: int, tasks: int) -> str:
    """Why the run may stop at its coverage target ("" while it is not reached, or there is none)."""
    if target is None or not tasks:
        return ""
    needed = math.ceil(target * tasks - 1e-9)
    if covered < needed:
        return ""
    return f"target coverage reached ({covered}/{tasks} = {covered / tasks:.1%} >= {target:.0%})"


class RunSession:
    """Executes one opened run against one store and one executor. See the module docstring."""

    def __init__(
        self, opened: OpenedRun, spec: RunSpec, store: Store, executor: Executor, run_dir: Path,
        display: Display, clock: Callable[[], float] = time.monotonic, stop: StopRequest | None = None,
        scheduler: Scheduler | None = None, workers_follow: WorkerFollower | None = None,
    ) -> None:
        """`scheduler` replaces the registry's one named by the run (a harvest plans its own jobs);
        `workers_follow` re-chooses the executor's worker count as the load changes (rsi.models.embedded.tuning)."""
        from rsi.scheduler import TaskOption, make_scheduler

        r = opened.resolved
        self.opened, self.spec, self.store, self.executor = opened, spec, store, executor
        self.workers_follow = workers_follow
        self.run_id, self.run_dir, self.display, self.clock, self.stop = opened.run_id, run_dir, display, clock, stop
        self._resume = resume_command(opened.resolved.scheduler, opened.run_id)  # what a stopped run tells
        self.layout = RunLayout(run_dir)
        self.scheduler = scheduler or make_scheduler(r.scheduler)
        self.target_keys = {t.key for t in opened.tasks if r.split == "all" or t.spec.split == r.split}
        self.tasks_by_key = {t.key: t for t in opened.tasks}
        self.by_hash = {c.config_hash: c for c in opened.configs}  # the hash is costly: computed once
        self.task_options = [TaskOption(t.key, t.spec.split, tuple(t.spec.tags)) for t in opened.tasks]
        self.totals = self._load_totals()
        self.jobs: dict[int, JobInFlight] = {}
        self.in_flight: dict[str, tuple[int, AttemptSpec]] = {}  # key -> (job index, latest try)
        stored_jobs = store.list_jobs(self.run_id)
        self.next_job_index = len(stored_jobs)
        # Configurations retired earlier in this run (rsi.scheduler.retire), read back from the jobs that
        # recorded them: a resume never plans them again. New ones wait in `retiring` for the next job row.
        self.retired = retired_in(stored_jobs)
        self.retiring: list[Retirement] = []
        self.stopped = False
        self.session_start = clock()
        self.rate = RecentRate()  # the live attempt and completion-token rates, and the ETA's
        self.busy_s = 0.0  # wall time with attempts in flight, and the attempts counted in it
        self.session_counted = 0
        self.last_state_write = 0.0
        self.ended_s: float | None = None
        self.progress = RunProgress(
            run_id=self.run_id, portfolio=r.portfolio, suite=r.suite, budget_attempts=r.budget_attempts,
            budget_s=None if r.budget_minutes is None else r.budget_minutes * 60.0,
            tasks=len(self.target_keys), started=datetime.now(UTC),
            jobs_done=sum(1 for j in stored_jobs if j.status != "running"),
        )

    # -- totals and progress ----------------------------------------------------------------------

    def _load_totals(self) -> RunTotals:
        """Totals of this run so far, from the store (so a resumed run's display and budget are exact)."""
        # Quarantine starts empty in every session: a resume usually follows a fix of the cause.
        totals = RunTotals()
        for row in self.store.list_attempts(self.run_id):
            totals.cache.add(row.cache_hits, row.cache_misses, row.tokens_not_spent)
            if row.counted:
                totals.count(row.configuration_hash, row.task_key, row.passed, row.wall_s, row.tokens)
            else:
                totals.errors += 1
            totals.errors += row.error_retries
        return totals

    def covered(self) -> int:
        return len(self.totals.covered & self.target_keys)

    def elapsed_s(self) -> float:
        return self.opened.elapsed_before_s + (self.clock() - self.session_start)

    def save_state(self, force: bool = False, ended: tuple[str, str] | None = None) -> None:
        """The run folder's state file: elapsed time (a resume continues the time budget from it) and,
        once the session ends, its status and why it ended (the store keeps only the status)."""
        now = self.clock()
        if not force and now - self.last_state_write < 5.0:
            return
        self.last_state_write = now
        state: dict[str, Any] = {"elapsed_s": self.elapsed_s(), "updated": datetime.now(UTC)}
        if ended is not None:
            state.update(status=ended[0], end_reason=ended[1])
            self.ended_s = state["elapsed_s"]  # the run's wall time, as `rsi status` will read it back
        write_json_atomic(self.run_dir / STATE_FILE, state)

    def emit(self, kind: str | None = None, message: str = "", **job: Any) -> None:
        t = self.totals
        rates = self.rate.rates(self.clock())
        self.progress = self.progress.model_copy(update={
            "attempts": t.attempts, "passes": t.passes, "errors": t.errors, "tokens": t.tokens,
            "covered": self.covered(), "elapsed_s": self.elapsed_s(), "rate_window_s": self.rate.span_s(self.clock()),
            "rate_per_min": rates[0] if rates else None, "completion_tokens_per_s": rates[1] if rates else None, **job,
        })
        event = RunEvent(kind=kind, message=message) if kind else None  # type: ignore[arg-type]
        self.display.update(self.progress, event)

    def outcome(self, status: str, reason: str) -> RunOutcome:
        t = self.totals
        return RunOutcome(
            run_id=self.run_id, status=status, stop_reason=reason,  # type: ignore[arg-type]
            jobs=len(self.store.list_jobs(self.run_id)), attempts=t.attempts, passes=t.passes, errors=t.errors,
            covered=self.covered(), tasks=len(self.target_keys), tokens=t.tokens,
            elapsed_s=self.ended_s if self.ended_s is not None else self.elapsed_s(),
            split=self.opened.resolved.split, budget=describe_budgets(self.opened.resolved),
            cache_hits=t.cache.hits, cache_misses=t.cache.misses, tokens_not_spent=t.cache.tokens_not_spent,
        )

    # -- the loop ---------------------------------------------------------------------------------

    def execute(self) -> str:
        """Finish the open jobs (a resume), then plan and run jobs until the budget, the scheduler, the
        coverage target or a stop request ends the run. Returns why it ended."""
        for row in self.store.open_jobs(self.run_id):
            self._start_job(row, resumed=True)
        ended, replan = "", True
        while True:
            if self.stop is not None and self.stop.requested:
                return self._stop_gracefully(self.stop.describe())
            if self._past_deadline():
                why = self._stop_gracefully(f"the time budget ({self.opened.resolved.budget_minutes:g} min)")
                self.stopped = self._open_keys() > 0  # resumable only while planned attempts are left
                return why
            if replan:
                ended, replan = self._plan_while_room(), False
            if not self.jobs:
                return ended or "the scheduler proposed no further job"
            self._follow_load()
            self._start_due_retries()
            results = self._collect()
            if results:
                self._handle(results)
                replan = True

    def _past_deadline(self) -> bool:
        """Whether the time budget has run out in this session. Planning stops before it (the last job is
        sized to the time left), but attempts already planned would otherwise all run: on a machine that
        slowed down midway a 25-minute run took 28 and more (bench/RESULTS.md, "## shared CPU run"). A
        resume that starts past the deadline was asked for by the user: it finishes what was planned."""
        minutes = self.opened.resolved.budget_minutes
        if minutes is None or self.opened.elapsed_before_s >= minutes * 60.0:
            return False
        return self.elapsed_s() >= minutes * 60.0

    def _follow_load(self) -> None:
        """A new worker count once the load level has moved and held (a no-op without a follower)."""
        new = self.workers_follow.poll() if self.workers_follow is not None else None
        if new is not None:
            now = self.executor.resize(int(new.value))
            self.emit("note", f"workers now {now}: {new.why}")

    def _room(self) -> bool:
        if not self.spec.overlap_jobs:
            return not self.jobs
        return self.executor.in_flight() < self.executor.slots

    def _plan_while_room(self) -> str:
        """Plan and start jobs while the executor has a free slot; why planning stopped ("" if for room)."""
        while self._room():
            why = self._plan_one()
            if why:
                return why
        return ""

    def _request(self, budget: Budget) -> ScheduleRequest:
        from rsi.scheduler import ConfigOption, ScheduleRequest

        r, t = self.opened.resolved, self.totals
        costs = attempt_costs(t.spent, cost_unit(r.budget_minutes, r.budget_tokens))
        configs = [
            ConfigOption(c.config_hash, c.name, cost=costs.get(c.config_hash),
                         max_tries_per_task=1 if c.spec.harness.sampling.temperature == 0 else None)
            for c in self.opened.configs if c.config_hash not in self.retired
        ]
        # Quarantined tasks (out of error retries: the scheduler knows nothing of errors and would
        # pick the same broken task forever) and tasks in flight (an attempt may still pass) are left out.
        busy = set(t.quarantined).union(*(job.task_keys for job in self.jobs.values()))
        tasks = [o for o in self.task_options if o.key not in busy] if busy else self.task_options
        return ScheduleRequest(
            configs=configs, tasks=tasks, history=list(t.history), budget=budget, seed=r.seed,
            job_index=self.next_job_index, job_size=r.job_size, attempts_per_task=r.attempts_per_task,
            split=None if r.split == "all" else r.split,
            tokens_per_attempt=(t.tokens / t.attempts) if t.attempts and t.tokens else None,
            # Observed wall time per attempt, parallelism included: sizes the last job to the time left.
            wall_s_per_attempt=(self.busy_s / self.session_counted) if self.session_counted else None,
            # What running jobs have planned: the default counts their configurations as examined, so
            # overlapping jobs do not probe one again while its first probe runs.
            in_flight=sorted((job.config.config_hash, key) for job in self.jobs.values() for key in job.task_keys),
        )

    def _retire(self) -> None:
        """Retire the configurations the rule (rsi.scheduler.retire) now finds worse per unit of cost
        than another, whatever the scheduler: they are left out of every later request."""
        from rsi.scheduler.retire import cost_stats, retirements

        r, t = self.opened.resolved, self.totals
        if not r.retire:
            return
        unit = cost_unit(r.budget_minutes, r.budget_tokens)
        names = {c.config_hash: c.name for c in self.opened.configs}
        stats = cost_stats(t.history, attempt_costs(t.spent, unit), names)
        for retirement in retirements(stats, self.retired, unit):
            self.retired[retirement.config_hash] = retirement
            self.retiring.append(retirement)
            self.emit("note", f"{retirement.name}: {retirement.describe()}; not planned again in this run")

    def _plan_one(self) -> str:
        """Plan one job and start it; "" when one started, else why none was planned."""
        r = self.opened.resolved
        reserved = sum(len(job.open_keys) for job in self.jobs.values())
        budget, why = budget_left(self.opened, self.totals, self.elapsed_s(), reserved)
        if budget is None:
            return why
        reached = target_reached(r.target_coverage, self.covered(), len(self.target_keys))
        if reached:
            return reached
        self._retire()
        request = self._request(budget)
        proposal = self.scheduler.propose(request) if request.tasks else None
        if proposal is None:
            covered = self.covered()
            if covered >= len(self.target_keys):
                return f"every target task covered ({covered}/{len(self.target_keys)})"
            per_attempt = request.wall_s_per_attempt
            if budget.wall_s is not None and per_attempt and budget.wall_s < per_attempt * r.attempts_per_task:
                return f"time budget nearly spent ({budget.wall_s:.0f}s left, an attempt takes about {per_attempt:.0f}s)"
            return "the scheduler proposed no further job"
        details: dict[str, Any] = {"reason": proposal.reason, "scheduler": self.scheduler.name}
        if self.retiring:  # recorded with the first job planned without them
            details["retired"] = [x.to_json() for x in self.retiring]
        row = self.store.start_job(
            self.run_id, proposal.config_hash, list(proposal.task_keys), proposal.attempts_per_task,
            job_index=self.next_job_index, details=details,
        )
        self.retiring = []
        self.next_job_index += 1
        crash_point("job_planned")
        self._start_job(row, resumed=False)
        return ""

    # -- jobs -------------------------------------------------------------------------------------

    def _start_job(self, row: JobRow, resumed: bool) -> None:
        r = self.opened.resolved
        config = self.by_hash.get(row.configuration_hash)
        if config is None:
            raise StoreError(f"run {self.run_id}: job uses configuration {row.configuration_hash}, not in the run")
        planned = len(row.planned_tasks) * row.attempts_per_task
        if resumed:
            missing = self.store.missing_attempts(self.run_id, row.job_index, retry_errors=True)
            rows = self.store.list_attempts(self.run_id, row.job_index)
            earlier_errors = {(a.task_key, a.attempt_index): a.error_retries + 1 for a in rows if not a.counted}
            passed_before = sum(1 for a in rows if a.counted and a.passed)
            # Half-written attempt folders of the killed run: never renamed into place, so never read.
            for stale in self.layout.stale_staging(row.job_index):
                shutil.rmtree(stale, ignore_errors=True)
        else:  # a job planned just now has no outcome yet: skip three queries per job
            from rsi.store import MissingAttempt

            missing = [MissingAttempt(t, i) for t in row.planned_tasks for i in range(row.attempts_per_task)]
            earlier_errors, passed_before = {}, 0
        specs = build_specs(self.run_id, self.layout, r.seed, row, config, self.tasks_by_key, missing, earlier_errors,
                            r.seeding)
        # Keys already out of retries stay errors; they hold no budget and the job can finish.
        runnable = [s for s in specs if s.try_index <= r.max_error_retries]
        self.totals.quarantined.update(s.task_key for s in specs if s.try_index > r.max_error_retries)
        job = JobInFlight(row=row, config=config, specs=specs, open_keys={s.key: s.task_key for s in runnable},
                          planned=planned, done=planned - len(missing), passed=passed_before,
                          run_counted_at_start=self.session_counted)
        self.jobs[job.index] = job
        self.emit(
            "job_started",
            f"job {job.index}{' (resumed)' if resumed else ''}: {config.name} on {len(row.planned_tasks)} tasks "
            f"x {row.attempts_per_task}, {len(missing)} to run",
            **self._job_fields(job),
        )
        for spec in runnable:
            self.in_flight[spec.key] = (job.index, spec)
        self.executor.start(runnable)
        if job.finished:
            self._finish_job(job, stopping=False)

    @staticmethod
    def _job_fields(job: JobInFlight) -> dict[str, Any]:
        return {"job_index": job.index, "job_config": job.config.name, "job_planned": job.planned,
                "job_done": job.done, "job_passed": job.passed}

    def _finish_job(self, job: JobInFlight, stopping: bool) -> None:
        failed = bool(job.specs) and job.counted == 0
        self.store.finish_job(self.run_id, job.index, "failed" if failed else "done")
        crash_point("job_finished")
        del self.jobs[job.index]
        self.save_state()
        self.emit("job_finished", f"job {job.index}: {job.config.name} passed {job.passed}/{job.done}",
                  jobs_done=self.progress.jobs_done + 1, **self._job_fields(job))
        if failed and not stopping and self.session_counted == job.run_counted_at_start:
            # Every attempt of the job ended in an infrastructure error even after retries, and no
            # other job counted one meanwhile: more jobs would spin without spending budget. Stop;
            # `--resume` continues once the cause is fixed. (One broken task among working ones is
            # only quarantined.)
            raise ExecutorError(
                f"job {job.index}: all {len(job.specs)} attempts ended in infrastructure errors",
                hint=f"see `rsi status {self.run_id}`; fix the cause, then `{self._resume}`",
            )

    # -- results ----------------------------------------------------------------------------------

    def _collect(self) -> list[AttemptResult]:
        due = [at for job in self.jobs.values() for at, _ in job.retries]
        wait_s = POLL_S if not due else max(0.0, min(POLL_S, min(due) - self.clock()))
        if not self.executor.in_flight():
            time.sleep(wait_s)  # only retries waiting out their backoff
            return []
        started = self.clock()
        results = self.executor.collect(wait_s)
        self.busy_s += self.clock() - started
        return results

    def _start_due_retries(self) -> None:
        now = self.clock()
        for job in self.jobs.values():
            due = [spec for at, spec in job.retries if at <= now]
            if due:
                job.retries = [(at, spec) for at, spec in job.retries if at > now]
                for spec in due:
                    self.in_flight[spec.key] = (job.index, spec)
                self.executor.start(due)

    def _handle(self, results: list[AttemptResult], stopping: bool = False) -> None:
        """Record results (one transaction per job), schedule retries, finish jobs with no open key."""
        groups: dict[int, list[tuple[AttemptSpec, AttemptResult]]] = defaultdict(list)
        for result in results:
            entry = self.in_flight.pop(result.key, None)
            if entry is None:
                raise ExecutorError(f"executor returned a result for an unknown key {result.key!r}")
            groups[entry[0]].append((entry[1], result))
        for index, pairs in groups.items():
            job = self.jobs[index]
            self._record(job, pairs)
            for spec, result in pairs:
                if result.verdict is not Verdict.ERROR:
                    job.open_keys.pop(spec.key, None)
                    job.counted += 1
                elif not stopping:
                    self._after_error(job, spec, result)
                # Stopping: an errored key stays open and planned; `--resume` retries it.
            if job.finished:
                self._finish_job(job, stopping)

    def _after_error(self, job: JobInFlight, spec: AttemptSpec, result: AttemptResult) -> None:
        r = self.opened.resolved
        if spec.try_index >= r.max_error_retries:
            job.open_keys.pop(spec.key, None)
            self.totals.quarantined.add(spec.task_key)
            self.emit("note", f"{spec.task_key}: infrastructure errors after {spec.try_index} retries; "
                              "not scheduled again in this run")
            return
        retry = spec.model_copy(update={"try_index": spec.try_index + 1})
        delay = min(r.retry_backoff_s * (2 ** (retry.try_index - 1)), 60.0)
        job.retries.append((self.clock() + delay, retry))
        self.emit("retry", f"{spec.task_key}#{spec.attempt_index} try {retry.try_index} "
                           f"after infrastructure error: {result.reason.splitlines()[0][:200] if result.reason else ''}")

    def _record(self, job: JobInFlight, pairs: list[tuple[AttemptSpec, AttemptResult]]) -> None:
        """Record results that finished together, in one transaction (idempotent by key)."""
        from rsi.store import AttemptRecord

        records = [
            AttemptRecord(
                task_key=spec.task_key, attempt_index=spec.attempt_index, verdict=result.verdict, seed=spec.seed,
                reason=result.reason, error_class=result.error_class, tokens=result.tokens, wall_s=result.wall_s,
                cache_hits=result.cache_hits, cache_misses=result.cache_misses,
                tokens_not_spent=result.tokens_not_spent,
                trajectory_path=result.trajectory_path, final_code_hash=result.final_code_hash,
                started=result.started, finished=result.finished,
            )
            for spec, result in pairs
        ]
        outcome = self.store.record_attempts(self.run_id, job.index, records)
        for _ in pairs:
            crash_point("attempt_recorded")
        if outcome.ignored:
            # Some key already had a counted outcome (cannot happen with one orchestrator per run,
            # which the run lock ensures); trust the store rather than double count.
            quarantined = self.totals.quarantined
            self.totals = self._load_totals()
            self.totals.quarantined = quarantined
        for spec, result in pairs:
            counts = result.verdict.counts_as_attempt
            passed = result.verdict is Verdict.PASSED
            if not outcome.ignored:
                self.totals.cache.add(result.cache_hits, result.cache_misses, result.tokens_not_spent)
                if counts:
                    self.totals.count(job.row.configuration_hash, spec.task_key, passed, result.wall_s, result.tokens)
                    self.session_counted += 1
                    self.rate.add(self.clock(), result.completion_tokens)
                else:
                    self.totals.errors += 1
            job.done += counts
            job.passed += passed
            self.emit("attempt", f"{spec.task_key}#{spec.attempt_index} {result.verdict.value} "
                                 f"({result.wall_s:.1f}s, {result.tokens} tok)", **self._job_fields(job))
        self.save_state()

    # -- stopping ---------------------------------------------------------------------------------

    def _open_keys(self) -> int:
        return sum(len(job.open_keys) for job in self.jobs.values())

    def _stop_gracefully(self, what: str) -> str:
        """No new job or retry; queued attempts dropped; started ones get `stop_grace_s` to finish.
        `what` asked for it: a signal, or the time budget running out."""
        self.stopped = True
        dropped = self.executor.drop_queued()
        for job in self.jobs.values():
            job.retries.clear()
        self.emit("note", f"{what}: stopping; {self.executor.in_flight()} started attempts get up to "
                          f"{self.spec.stop_grace_s:.0f}s to finish ({dropped} queued dropped)")
        deadline = self.clock() + self.spec.stop_grace_s
        while self.executor.in_flight() and (left := deadline - self.clock()) > 0:
            results = self.executor.collect(min(left, POLL_S))
            if results:
                self._handle(results, stopping=True)
        self.executor.cancel()
        open_keys = self._open_keys()
        return (f"stopped by {what}; {open_keys} planned attempts left for `{self._resume}`" if open_keys
                else f"stopped by {what}")
