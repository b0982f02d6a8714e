"""The orchestrator with a no-op attempt function: budgets, jobs, error retries, resume, determinism."""

from __future__ import annotations

import threading

import pytest

from rsi.errors import ExecutorError, UserInputError
from rsi.executors import AttemptResult, AttemptSpec
from rsi.executors.noop import NoopAttempt
from rsi.run.orchestrator import run_portfolio
from rsi.run.spec import RunSpec
from rsi.scheduler import SCHEDULERS
from rsi.store import open_store
from rsi.verdict import Verdict


def attempts_of(ws, run_id):
    with open_store(ws.db_url) as store:
        return store.list_attempts(run_id), store.list_jobs(run_id), store.get_run(run_id)


def test_spends_exactly_the_attempts_budget(mini_ws) -> None:
    outcome = run_portfolio(RunSpec(portfolio="mini", budget_attempts=21, limit_tasks=10, job_size=4), mini_ws,
                            attempt_fn=NoopAttempt(pass_rate=0.2))
    rows, jobs, run = attempts_of(mini_ws, outcome.run_id)
    assert outcome.status == "done" and run.status == "done"
    assert outcome.attempts == 21 == sum(1 for r in rows if r.counted)
    assert "attempts budget spent" in outcome.stop_reason
    assert all(len(j.planned_tasks) <= 4 for j in jobs)
    # Every planned key has exactly one row; every row belongs to a planned key.
    planned = {(j.job_index, t, i) for j in jobs for t in j.planned_tasks for i in range(j.attempts_per_task)}
    assert {(r.job_index, r.task_key, r.attempt_index) for r in rows} == planned
    assert all(j.status == "done" for j in jobs)
    assert outcome.passes == sum(1 for r in rows if r.passed)
    assert outcome.covered == len({r.task_key for r in rows if r.passed})
    assert not (mini_ws.run_dir(outcome.run_id) / "report.html").exists()  # `rsi run` writes it (test_figures)


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_every_registered_scheduler_runs_a_portfolio_through_the_orchestrator(mini_ws, name: str) -> None:
    """`rsi run --scheduler NAME` for each registered name: the run spends its budget in jobs of at most
    `job_size` tasks, and every job records which scheduler planned it and why."""
    outcome = run_portfolio(RunSpec(portfolio="mini", budget_attempts=21, limit_tasks=10, job_size=4, scheduler=name),
                            mini_ws, attempt_fn=NoopAttempt(pass_rate=0.2))
    rows, jobs, run = attempts_of(mini_ws, outcome.run_id)
    assert outcome.status == "done" and outcome.attempts == 21 == sum(1 for r in rows if r.counted)
    assert jobs and all(1 <= len(j.planned_tasks) <= 4 for j in jobs)
    assert all(j.details["scheduler"] == name and j.details["reason"] for j in jobs)


def test_stops_when_every_task_is_covered(mini_ws) -> None:
    outcome = run_portfolio(RunSpec(portfolio="mini", budget_attempts=100, limit_tasks=5), mini_ws,
                            attempt_fn=NoopAttempt(pass_rate=1.0))
    assert outcome.covered == outcome.tasks == 5
    assert outcome.attempts == 5  # one pass per task, nothing spent after full coverage
    assert "every target task covered" in outcome.stop_reason


def test_infrastructure_errors_are_retried_and_never_counted(mini_ws) -> None:
    failed_once: set[str] = set()
    lock = threading.Lock()

    def flaky(spec: AttemptSpec) -> AttemptResult:
        with lock:
            first = spec.task_key.endswith(("a", "e", "o")) and spec.key not in failed_once
            failed_once.add(spec.key)
        if first:
            raise ConnectionError("model backend went away")
        return AttemptResult(key=spec.key, verdict=Verdict.FAILED, tokens=10)

    outcome = run_portfolio(
        RunSpec(portfolio="mini", budget_attempts=12, limit_tasks=12, retry_backoff_s=0.01), mini_ws, attempt_fn=flaky
    )
    rows, _, _ = attempts_of(mini_ws, outcome.run_id)
    assert outcome.attempts == 12 and all(r.counted for r in rows)
    assert outcome.errors == sum(r.error_retries for r in rows) > 0
    assert outcome.tokens == 120  # errors spend no budget and no tokens


def test_an_attempt_out_of_retries_stays_an_error_and_the_budget_is_still_spent(mini_ws) -> None:
    def broken_add_two(spec: AttemptSpec) -> AttemptResult:
        if spec.task_key == "pyfuncs/add-two":
            raise OSError("disk full")
        return AttemptResult(key=spec.key, verdict=Verdict.FAILED)

    outcome = run_portfolio(
        RunSpec(portfolio="mini", budget_attempts=9, limit_tasks=6, max_error_retries=1, retry_backoff_s=0.01),
        mini_ws, attempt_fn=broken_add_two,
    )
    rows, _, _ = attempts_of(mini_ws, outcome.run_id)
    errors = [r for r in rows if not r.counted]
    assert errors and all(r.task_key == "pyfuncs/add-two" and r.verdict == "error" for r in errors)
    assert all(r.error_retries == 1 for r in errors)  # one retry, then left as an error
    assert outcome.attempts == 9  # later jobs spent the budget the errors did not


def test_a_job_of_only_errors_stops_the_run(mini_ws) -> None:
    def down(spec: AttemptSpec) -> AttemptResult:
        raise ConnectionError("everything is down")

    with pytest.raises(ExecutorError, match="infrastructure errors"):
        run_portfolio(RunSpec(portfolio="mini", budget_attempts=10, limit_tasks=3, max_error_retries=0), mini_ws,
                      attempt_fn=down)
    with open_store(mini_ws.db_url) as store:
        [run] = store.list_runs()
        assert run.status == "failed"


@pytest.fixture
def ctrl_c_raises():
    """SIGINT raises KeyboardInterrupt, as at an interactive terminal. A shell starts background jobs with
    SIGINT ignored and Python keeps that (bench/fresh_proof.py's `make test` ran so): the test's own Ctrl-C
    would then be lost and the interrupted run would simply finish."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_resume_finishes_an_interrupted_job_without_repeating_work(mini_ws, ctrl_c_raises) -> None:
    import os
    import signal

    calls: list[str] = []
    stop_after = 3

    def noop(spec: AttemptSpec) -> AttemptResult:
        # The scheduler weighs configurations by their measured seconds per attempt: a fixed wall time keeps
        # the plan a pure function of the seed and the outcomes, as the comparison with a fresh run needs.
        return NoopAttempt(pass_rate=0.3)(spec).model_copy(update={"wall_s": 1.0})

    def interrupted(spec: AttemptSpec) -> AttemptResult:
        if len(calls) == stop_after:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C in the middle of a job (reaches the main thread)
        calls.append(spec.key)
        return noop(spec)

    # One job at a time: the plan is then a pure function of the seed (checked against a fresh run below).
    spec = RunSpec(portfolio="mini", budget_attempts=16, limit_tasks=8, job_size=8, workers=1, overlap_jobs=False)
    with pytest.raises(KeyboardInterrupt):
        run_portfolio(spec, mini_ws, attempt_fn=interrupted)
    with open_store(mini_ws.db_url) as store:
        [run] = store.list_runs()
        assert run.status == "stopped"
        recorded = {r.idem_key for r in store.list_attempts(run.id)}
        # Results that finished but were not recorded yet when the run stopped are simply run again.
        assert recorded <= set(calls) and len(recorded) < 16
    resumed_calls: list[str] = []

    def counting(spec: AttemptSpec) -> AttemptResult:
        resumed_calls.append(spec.key)
        return noop(spec)

    outcome = run_portfolio(RunSpec(resume=run.id, overlap_jobs=False), mini_ws, attempt_fn=counting)
    assert not set(resumed_calls) & recorded  # nothing recorded is executed again
    rows, jobs, run_row = attempts_of(mini_ws, run.id)
    assert run_row.status == "done" and outcome.attempts == 16 == len(rows)
    assert len({r.idem_key for r in rows}) == len(rows)

    # Same seed, no interruption: the same jobs (configurations and tasks) in the same order.
    fresh = run_portfolio(spec.model_copy(update={"workers": None}), mini_ws, attempt_fn=noop)
    _, fresh_jobs, _ = attempts_of(mini_ws, fresh.run_id)
    assert [(j.configuration_hash, j.planned_tasks) for j in jobs] == [
        (j.configuration_hash, j.planned_tasks) for j in fresh_jobs
    ]


def test_bad_names_are_user_errors(mini_ws) -> None:
    with pytest.raises(UserInputError):
        run_portfolio(RunSpec(portfolio="nope"), mini_ws, attempt_fn=NoopAttempt())
    with pytest.raises(UserInputError, match="no run"):
        run_portfolio(RunSpec(resume="20990101T000000Z-000000"), mini_ws, attempt_fn=NoopAttempt())


def test_time_budget_stops_planning_and_sizes_the_last_job(mini_ws) -> None:
    import time

    started = time.monotonic()
    outcome = run_portfolio(
        RunSpec(portfolio="mini", budget_attempts=500, budget_minutes=0.05, limit_tasks=20, job_size=4, workers=2,
                report=False),
        mini_ws, attempt_fn=NoopAttempt(pass_rate=0.0, sleep_s=0.4),
    )
    elapsed = time.monotonic() - started
    assert "time budget" in outcome.stop_reason, outcome.stop_reason
    assert 2 <= outcome.attempts < 500
    assert elapsed < 3.0 + 2.5  # 3 s of budget; the last job was sized to what was left


def test_difficulty_and_limit_select_the_slice(mini_ws) -> None:
    from rsi.tasks.load import load_suite

    trivial = sorted(t.key for t in load_suite(mini_ws, "pyfuncs") if t.spec.difficulty == "trivial"
                     and t.spec.split == "train")
    outcome = run_portfolio(RunSpec(portfolio="mini", difficulty=["trivial"], limit_tasks=3, budget_attempts=6,
                                    report=False), mini_ws, attempt_fn=NoopAttempt(pass_rate=0.0))
    rows, _, run = attempts_of(mini_ws, outcome.run_id)
    assert run.args["tasks"] == trivial[:3]
    assert {r.task_key for r in rows} <= set(trivial[:3]) and outcome.tasks == 3


class _PricedAttempt(NoopAttempt):
    """The no-op agent, but the 'baseline' configuration spends 20x the tokens of 'short'."""

    def __call__(self, spec: AttemptSpec) -> AttemptResult:
        result = super().__call__(spec)
        return result.model_copy(update={"tokens": 400 if spec.config.name == "baseline" else 20})


@pytest.mark.parametrize(("budget", "unit"), [({"budget_tokens": 100_000}, "tokens"), ({}, "wall_s")])
def test_the_scheduler_is_told_what_an_attempt_of_each_configuration_costs(mini_ws, monkeypatch, budget, unit):
    """Under a token-only budget every proposal request carries each measured configuration's mean tokens
    per attempt (the scheduler then weighs passes per token); with attempts only, its mean seconds per
    attempt (an attempts budget is still paid in time)."""
    import rsi.scheduler as scheduling

    requests = []

    class Recording(scheduling.ThompsonScheduler):
        def propose(self, request):
            requests.append(request)
            return super().propose(request)

    monkeypatch.setitem(scheduling.SCHEDULERS, "thompson", Recording)
    outcome = run_portfolio(
        RunSpec(portfolio="mini", budget_attempts=24, limit_tasks=12, job_size=4, report=False, **budget),
        mini_ws, attempt_fn=_PricedAttempt(pass_rate=0.3),
    )
    assert outcome.attempts == 24 or outcome.covered == 12
    names = {c.config_hash: c.name for c in requests[0].configs}
    assert all(c.cost is None for c in requests[0].configs)  # nothing measured before the first job
    measured = {names[config_hash] for config_hash, _, _ in requests[-1].history}
    assert measured  # the last request came after some attempts
    costs = {names[c.config_hash]: c.cost for c in requests[-1].configs}
    assert {name for name, cost in costs.items() if cost is not None} == measured
    if unit == "tokens":
        price = {"baseline": 400.0, "short": 20.0}
        assert costs == {name: price[name] if name in measured else None for name in names.values()}
    else:  # the measured wall time per attempt, not the tokens
        rows, _, _ = attempts_of(mini_ws, outcome.run_id)
        for name in measured:
            mine = [r.wall_s for r in rows if names[r.configuration_hash] == name and r.counted]
            # a mean of its attempts' seconds (those counted when the last request was made)
            assert min(mine) - 1e-9 <= costs[name] <= max(mine) + 1e-9 and costs[name] > 0


def test_attempt_costs_are_per_configuration_means_in_the_binding_unit() -> None:
    from rsi.run.totals import RunTotals, attempt_costs

    counters = RunTotals()
    counters.count("a", "t1", True, wall_s=2.0, tokens=100)
    counters.count("a", "t2", False, wall_s=4.0, tokens=300)
    counters.count("b", "t1", False, wall_s=1.0, tokens=0)
    assert (counters.attempts, counters.passes, counters.tokens, counters.covered) == (3, 1, 400, {"t1"})
    assert attempt_costs(counters.spent, "wall_s") == {"a": 3.0, "b": 1.0}
    assert attempt_costs(counters.spent, "tokens") == {"a": 200.0}  # b spent no tokens: unknown, not free
    assert attempt_costs(counters.spent, None) == {}


def test_a_coverage_target_ends_the_run_and_is_recorded_as_the_reason(mini_ws) -> None:
    import json

    outcome = run_portfolio(
        RunSpec(portfolio="mini", budget_attempts=200, limit_tasks=10, job_size=2, target_coverage=0.5, report=False,
                overlap_jobs=False),  # one job at a time: the job that reached the target is the last one
        mini_ws, attempt_fn=NoopAttempt(pass_rate=0.5),
    )
    assert outcome.status == "done" and outcome.stop_reason.startswith("target coverage reached"), outcome
    assert 5 <= outcome.covered < 10 and outcome.attempts < 200
    state = json.loads((mini_ws.run_dir(outcome.run_id) / "state.json").read_text())
    assert (state["status"], state["end_reason"]) == ("done", outcome.stop_reason)
    rows, jobs, _ = attempts_of(mini_ws, outcome.run_id)
    # Planning stopped at the target: the job whose passes made coverage reach 5 was the last one.
    first_pass_job: dict[str, int] = {}
    for r in rows:
        if r.passed:
            first_pass_job[r.task_key] = min(first_pass_job.get(r.task_key, r.job_index), r.job_index)
    reached_by = sorted(first_pass_job.values())[4]
    assert max(j.job_index for j in jobs) == reached_by


def test_budget_holds_back_attempts_in_flight_and_the_target_rounds_up() -> None:
    from rsi.run.session import budget_left, target_reached
    from rsi.run.setup import OpenedRun
    from rsi.run.spec import ResolvedRun
    from rsi.run.totals import RunTotals

    resolved = ResolvedRun(portfolio="p", suite="s", split="train", budget_attempts=10, budget_tokens=None,
                           budget_minutes=None, attempts_per_task=1, job_size=4, seed=0, limit_tasks=None,
                           max_error_retries=2, retry_backoff_s=1.0)
    opened = OpenedRun("r", resolved, [], [])
    totals = RunTotals()
    for i in range(6):
        totals.count("c", f"t{i}", False, 1.0, 0)
    budget, _ = budget_left(opened, totals, 0.0, reserved=3)
    assert budget is not None and budget.attempts == 1  # 10 - 6 counted - 3 in flight
    budget, why = budget_left(opened, totals, 0.0, reserved=4)
    assert budget is None and "4 in flight" in why
    assert target_reached(0.95, 155, 164) == "" and target_reached(0.95, 156, 164)  # 0.95 x 164 = 155.8 -> 156
    assert target_reached(None, 164, 164) == ""


def test_unset_workers_fill_the_embedded_batch_and_an_explicit_count_wins(mini_ws, monkeypatch) -> None:
    """The mini portfolio runs the embedded model ([serving] max_batch 16 by default): without --workers,
    on an idle machine, the local executor keeps 16 attempts in flight (rsi.models.embedded.tuning.run_workers),
    not its per-core count."""
    import rsi.models.embedded.tuning as tuning

    monkeypatch.setattr(tuning, "current_load", lambda *a, **k: 0.0)  # an idle machine, whatever runs beside
    class Recorder:
        def __init__(self) -> None:
            self.messages: list[str] = []

        def update(self, progress, event=None) -> None:
            if event is not None and event.kind == "run_started":
                self.messages.append(event.message)

    for workers, expected in ((None, "(16 at once"), (3, "(3 at once")):
        recorder = Recorder()
        run_portfolio(RunSpec(portfolio="mini", budget_attempts=2, limit_tasks=2, workers=workers), mini_ws,
                      display=recorder, attempt_fn=NoopAttempt(pass_rate=0.0))
        assert len(recorder.messages) == 1 and expected in recorder.messages[0], recorder.messages
