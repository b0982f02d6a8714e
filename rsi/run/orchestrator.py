"""The orchestrator: `run_portfolio(spec, workspace, display)`, the one core function behind `rsi run`.

A run is a sequence of jobs under a budget. The write protocol makes it survive SIGKILL at any
instant and resume without losing or repeating work:

1. configurations and tasks are recorded, then the run row (with the fully resolved spec and the
   configuration hashes and task keys it targets) — a crash before the run row leaves nothing to
   resume, after it everything needed to resume is in the store (`rsi/run/setup.py`);
2. each job is written (configuration, planned tasks, attempts per task: the planned idempotency
   keys `<run>|<job>|<task>|<attempt index>`) BEFORE any of its attempts starts;
3. each result is recorded as it arrives, in its own transaction (recording is idempotent by key;
   a counted outcome is never overwritten, an infrastructure error is replaced by its retry);
4. a job is marked done only when every planned key has a counted outcome or ran out of retries.

Jobs overlap in execution (the next is planned while the last one's attempts finish; see
`rsi/run/session.py`), so several jobs may be open when a run is killed. `--resume RUN` re-plans
nothing that was planned: it re-executes the planned keys of every open job that have no counted
outcome (errors included), then asks the scheduler for more. With `overlap_jobs=False` the plan is
a pure function of (seed, job index, history) and a resumed run continues exactly as an
uninterrupted one would have; with overlap the plan also depends on when results arrived, and the
guarantees above (nothing lost, nothing recorded run again) are what a resume keeps.

Infrastructure errors (verdict `error`) are retried with exponential backoff up to
`max_error_retries` times, counted apart, and never count as coverage, failures or budget.
Only this process writes the store; executors' workers never touch it. One process runs a run at
a time (`rsi/run/liveness.py`: the run lock, and the owner file `rsi status` reads).

Testing hook: `RSI_TEST_CRASH_AT=<point>:<n>` (`rsi/crashpoint.py`).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from rsi.crashpoint import crash_point
from rsi.display import Display, NullDisplay
from rsi.errors import RsiError, StoreError, UserInputError
from rsi.executors import AttemptFn, make_executor
from rsi.run.layout import RunLayout
from rsi.run.liveness import RunLock
from rsi.run.session import RunSession
from rsi.run.setup import OpenedRun, open_new_run, open_stored_run, resume_command
from rsi.run.spec import RunOutcome, RunSpec, describe_budgets
from rsi.run.stop import StopRequest
from rsi.workspace import Workspace

if TYPE_CHECKING:
    from rsi.run.attempt_fn import ModelFor
    from rsi.scheduler import Scheduler
    from rsi.store import Store


class Orchestrator:
    """One run (new or resumed) against one store and one executor. See the module docstring."""

    def __init__(
        self,
        spec: RunSpec,
        workspace: Workspace,
        display: Display | None = None,
        attempt_fn: AttemptFn | None = None,
        clock: Callable[[], float] = time.monotonic,
        stop: StopRequest | None = None,
        opener: Callable[[Store], OpenedRun] | None = None,
        scheduler_for: Callable[[OpenedRun, Store], Scheduler] | None = None,
        model_for: ModelFor | None = None,
    ) -> None:
        """`opener` records and opens the run instead of `open_new_run` (its configurations and tasks
        need not come from a portfolio file; with `spec.resume` it reopens the stored run instead of
        `open_stored_run`), and `scheduler_for` gives the session its scheduler: the hooks a harvest
        (rsi/harvest.py), an evaluation (rsi/evaluation/) and GRPO's rollouts
        (rsi/training/rollouts.py) use to run a plan of their own on this same path. `model_for` gives
        each attempt a live model of this process instead of the contract's (the policy GRPO trains;
        rsi/run/attempt_fn.py), so it needs the local executor."""
        self.spec = spec
        self.workspace = workspace
        self.display = display or NullDisplay()
        self.attempt_fn = attempt_fn
        self.clock = clock
        self.stop = stop
        self.opener = opener
        self.scheduler_for = scheduler_for
        self.model_for = model_for

    def run(self) -> RunOutcome:
        from rsi.run.attempt_fn import make_attempt_fn
        from rsi.store import open_store

        # Built first: a bad testing hook or sandbox setting is refused before a run row exists.
        if self.model_for is not None and self.spec.executor != "local":
            raise UserInputError(f"a live model runs attempts in this process: executor {self.spec.executor!r} "
                                 "cannot reach it", hint="use the local executor")
        fn = self.attempt_fn or make_attempt_fn(self.workspace.root, self.spec.sandbox, self.model_for)
        store = open_store(self.spec.db or self.workspace.db_url)
        try:
            if self.spec.resume:
                opened = self.opener(store) if self.opener else open_stored_run(store, self.workspace, self.spec.resume)
                kind = "run_resumed"
            else:
                opened = self.opener(store) if self.opener else open_new_run(store, self.workspace, self.spec)
                kind = "run_started"
                crash_point("run_created")
            run_dir = self.workspace.run_dir(opened.run_id)
            run_dir.mkdir(parents=True, exist_ok=True)
            # One orchestrator per run: a second `--resume` of a live run must not write beside it.
            with RunLock(run_dir, opened.run_id):
                return self._run_locked(store, opened, kind, fn)
        finally:
            store.close()

    def _run_locked(self, store: Store, opened: OpenedRun, kind: str, fn: AttemptFn) -> RunOutcome:
        from rsi.run.attempt_fn import close_shared, shared_model_use

        r, run_dir = opened.resolved, self.workspace.run_dir(opened.run_id)
        from rsi.models.embedded.tuning import (
            follow_workers,  # unset --workers: fill the embedded model's batch
        )

        # ... at the load of the start, then at each new load level while the run lasts (a --workers stays).
        follow = None if self.spec.workers else follow_workers(self.spec.executor, (c.spec.serving for c in opened.configs))
        workers = self.spec.workers or (int(follow.choice.value) if follow is not None else None)
        executor = make_executor(self.spec.executor, fn, RunLayout(run_dir).slurm_dir, workers=workers,
                                 slurm=self.spec.slurm)
        scheduler = self.scheduler_for(opened, store) if self.scheduler_for else None
        session = RunSession(opened, self.spec, store, executor, run_dir, self.display, self.clock, self.stop, scheduler,
                             follow)
        session.emit(kind, f"{opened.run_id}: portfolio {r.portfolio} ({len(opened.configs)} configurations) on "
                           f"{len(opened.tasks)} {r.split} tasks of {r.suite}, {describe_budgets(r)}, "
                           f"executor {self.spec.executor} ({executor.slots} at once, "
                           f"{'overlapping jobs' if self.spec.overlap_jobs else 'one job at a time'})")
        _note_weak_isolation(session, fn)
        if kind == "run_resumed":
            stale = executor.cancel_stale()  # attempts a killed orchestrator left running on a cluster
            if stale:
                session.emit("note", f"cancelled {len(stale)} job arrays left by the interrupted run")
        status, reason, model_use = "failed", "interrupted", list[str]()
        try:
            reason = session.execute()
            status = "stopped" if session.stopped else "done"
        except KeyboardInterrupt:
            status, reason = "stopped", f"interrupted (resume with `{resume_command(opened.resolved.scheduler, opened.run_id)}`)"
            executor.cancel()
            raise
        except Exception as error:
            reason = f"{type(error).__name__}: {error}"
            executor.cancel()
            raise
        finally:
            # Record the end first: closing workers and models may be slow (a model mid-generation).
            session.save_state(force=True, ended=(status, reason))
            with contextlib.suppress(StoreError):  # the store failed: the original error is the one to report
                session.store.finish_run(opened.run_id, status)
            session.emit("run_finished", f"{status}: {reason}", job_index=None)
            executor.close()
            if self.attempt_fn is None:
                model_use = shared_model_use()  # whether the run kept its model fed
                for line in model_use:
                    session.emit("note", line, job_index=None)
                _close_models(close_shared, max(1.0, self.spec.stop_grace_s) if status == "stopped" else 120.0)
        return session.outcome(status, reason).model_copy(update={"model_use": model_use})


def _note_weak_isolation(session: RunSession, fn: AttemptFn) -> None:
    """One line at start when the attempts' sandbox is weak (rlimits only): its evidence is refused by
    `rsi promote` and `rsi trajectories export` without --allow-weak-isolation."""
    from rsi.run.attempt_fn import HarnessAttempt

    if not isinstance(fn, HarnessAttempt):
        return  # a replaced attempt (tests, benchmarks) runs no agent code in a sandbox
    try:
        isolation = fn.isolation()
    except RsiError as error:  # each attempt will meet (and record) the same problem as an error
        session.emit("note", f"sandbox not checked: {error.message}")
        return
    if isolation.weak:
        session.emit("note", f"sandbox {isolation.backend} is WEAK (no network, PID or file-system isolation; "
                             "recorded on every attempt): `rsi promote` and `rsi trajectories export` refuse this "
                             "run's evidence without --allow-weak-isolation; `rsi doctor` says why")


def _close_models(close_shared: Callable[..., None], timeout_s: float) -> None:
    """Release the process's models, waiting at most `timeout_s`: a stopped run must exit within
    seconds, and closing can wait on a model still loading in an attempt's thread. An embedded model
    ends its worker at the next decoding step; whatever is still inside torch when this gives up is
    waited for, or outlived by `os._exit`, at the process's exit (rsi.models.embedded.native, rsi.cli.app)."""
    closer = threading.Thread(target=close_shared, kwargs={"timeout_s": timeout_s}, name="rsi-close", daemon=True)
    closer.start()
    closer.join(timeout_s + 1.0)


def run_portfolio(
    spec: RunSpec, workspace: Workspace, display: Display | None = None, attempt_fn: AttemptFn | None = None,
    stop: StopRequest | None = None,
) -> RunOutcome:
    """Run (or resume, with `spec.resume`) a portfolio on a task suite under a budget. See the module doc.

    `attempt_fn` replaces the real attempt (model + sandbox + harness) — for benchmarks and tests
    of the orchestration only; `rsi run` never passes it. `stop` (set by the CLI's signal handlers)
    ends the run gracefully as `stopped`.
    """
    return Orchestrator(spec, workspace, display, attempt_fn, stop=stop).run()
