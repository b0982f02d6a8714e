"""A real run retires a slow configuration that never passes, for the recorded reason, and never plans it again."""

from __future__ import annotations

from rsi.executors import AttemptResult, AttemptSpec
from rsi.executors.noop import NoopAttempt
from rsi.promotion.successor import retired_reasons
from rsi.run.orchestrator import run_portfolio
from rsi.run.session import retired_in
from rsi.run.spec import RunSpec
from rsi.run.summary import summarize_run
from rsi.scheduler.retire import cost_stats, retirements, wilson
from rsi.store import open_store
from rsi.verdict import Verdict


class _SlowDead(NoopAttempt):
    """'baseline' takes 200 s an attempt and never passes (issue 48's REPL configurations); 'short' takes
    40 s and passes as the no-op agent draws."""

    def __call__(self, spec: AttemptSpec) -> AttemptResult:
        result = super().__call__(spec)
        if spec.config.name == "baseline":
            return result.model_copy(update={"wall_s": 200.0, "verdict": Verdict.FAILED, "reason": "scripted: dead"})
        return result.model_copy(update={"wall_s": 40.0})


def test_a_slow_dead_configuration_is_retired_for_the_recorded_reason_and_never_replanned(mini_ws) -> None:
    # round-robin alternates the two configurations: only the retirement can stop it planning 'baseline'
    # (the rule works through the session for every scheduler). Jobs of 4 tasks x 4 attempts, one at a time.
    outcome = run_portfolio(
        RunSpec(portfolio="mini", scheduler="round-robin", budget_attempts=96, limit_tasks=24, job_size=4,
                attempts_per_task=4, overlap_jobs=False, report=False, retire=True),
        mini_ws, attempt_fn=_SlowDead(pass_rate=0.5),
    )
    with open_store(mini_ws.db_url) as store:
        jobs = sorted(store.list_jobs(outcome.run_id), key=lambda j: j.job_index)
        rows = store.list_attempts(outcome.run_id)
        summary = summarize_run(store, outcome.run_id)
        reasons = retired_reasons(store, [outcome.run_id])
    names = {c.config_hash: c.name for c in summary.config_lines}
    slow = next(h for h, n in names.items() if n == "baseline")
    marked = [j for j in jobs if j.details.get("retired")]
    assert len(marked) == 1, "one job row carries the retirement"
    [record] = marked[0].details["retired"]
    # the recorded reason is the rule applied to the attempts counted before that job was planned
    before = [(r.configuration_hash, r.task_key, r.passed) for r in rows if r.counted and r.job_index < marked[0].job_index]
    spent: dict[str, list[float]] = {}
    for r in rows:
        if r.counted and r.job_index < marked[0].job_index:
            spent.setdefault(r.configuration_hash, []).append(r.wall_s)
    costs = {h: sum(v) / len(v) for h, v in spent.items()}
    [expected] = retirements(cost_stats(before, costs, names), unit="wall_s")
    assert record == expected.to_json()
    assert (record["config_hash"], record["passes"], record["attempts"], record["cost"]) == (slow, 0, 16, 200.0)
    assert record["lost_to_name"] == "short" and record["lost_to_cost"] == 40.0
    assert record["high"] == wilson(0, 16)[1] / 200.0 < record["lost_to_low"]
    # never planned again: every job after the retirement is the other configuration's
    assert all(j.configuration_hash != slow for j in jobs if j.job_index >= marked[0].job_index)
    assert any(j.configuration_hash != slow for j in jobs if j.job_index > marked[0].job_index), \
        "the run went on after the retirement"
    # a resume rebuilds the retired set from the store
    assert set(retired_in(jobs)) == {slow}
    # the run's record (rsi status / coverage --json) and rsi propose's reasons carry the figures
    line = next(c for c in summary.config_lines if c.config_hash == slow)
    assert line.retired == record
    assert next(c for c in summary.config_lines if c.config_hash != slow).retired is None
    assert "0/16 passed at 200 s/attempt" in reasons[slow] and "short" in reasons[slow] and outcome.run_id in reasons[slow]


def test_retirement_is_off_unless_asked(mini_ws) -> None:
    """The default weighs configurations by cost but retires none (bench/RESULTS.md "scheduler_efficiency, by cost":
    retirement cost more to full coverage where configurations are complementary)."""
    outcome = run_portfolio(
        RunSpec(portfolio="mini", scheduler="round-robin", budget_attempts=96, limit_tasks=24, job_size=4,
                attempts_per_task=4, overlap_jobs=False, report=False),
        mini_ws, attempt_fn=_SlowDead(pass_rate=0.5),
    )
    with open_store(mini_ws.db_url) as store:
        jobs = sorted(store.list_jobs(outcome.run_id), key=lambda j: j.job_index)
    assert not retired_in(jobs) and not any(j.details.get("retired") for j in jobs)
    assert {j.configuration_hash for j in jobs[-2:]} == {j.configuration_hash for j in jobs}  # both still planned
