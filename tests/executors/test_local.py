"""The local executor: concurrency, completion order, error capture, timeouts, cancellation."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

import pytest

from rsi.config import Configuration
from rsi.contracts.schema import BaseModelSpec, ContractSpec, HcpMeta
from rsi.executors import AttemptResult, AttemptSpec, make_executor
from rsi.executors.local import LocalExecutor
from rsi.executors.noop import NoopAttempt
from rsi.verdict import Verdict


def make_config(name: str = "c0") -> Configuration:
    spec = ContractSpec(
        hcp=HcpMeta(name="t", revision=1, created=datetime(2026, 1, 1, tzinfo=UTC)),
        base=BaseModelSpec(id="m", file="m.gguf"),
    )
    return Configuration(name=name, contract_ref="test", spec=spec)


def make_specs(n: int, tmp_path, timeout_s: float = 60.0) -> list[AttemptSpec]:
    config = make_config()
    return [
        AttemptSpec(
            key=f"r|0|s/t{i}|0", run_id="r", job_index=0, task_key=f"s/t{i}", task_dir=str(tmp_path),
            config=config, out_dir=str(tmp_path / f"a{i}"), timeout_s=timeout_s,
        )
        for i in range(n)
    ]


def test_runs_concurrently_and_yields_every_result(tmp_path) -> None:
    specs = make_specs(8, tmp_path)
    executor = LocalExecutor(NoopAttempt(sleep_s=0.3), workers=8)
    t0 = time.monotonic()
    results = list(executor.submit(specs))
    elapsed = time.monotonic() - t0
    executor.close()
    assert sorted(r.key for r in results) == sorted(s.key for s in specs)
    assert all(r.verdict in (Verdict.PASSED, Verdict.FAILED) for r in results)
    # 8 x 0.3 s sequentially would be 2.4 s; in parallel it is about 0.3 s.
    assert elapsed < 1.5, elapsed


def test_results_arrive_in_completion_order(tmp_path) -> None:
    specs = make_specs(3, tmp_path)
    delays = {specs[0].key: 0.6, specs[1].key: 0.05, specs[2].key: 0.3}

    def fn(spec: AttemptSpec) -> AttemptResult:
        time.sleep(delays[spec.key])
        return AttemptResult(key=spec.key, verdict=Verdict.PASSED)

    executor = LocalExecutor(fn, workers=3)
    order = [r.key for r in executor.submit(specs)]
    executor.close()
    assert order == [specs[1].key, specs[2].key, specs[0].key]


def test_exceptions_become_infrastructure_errors(tmp_path) -> None:
    specs = make_specs(4, tmp_path)
    fn = NoopAttempt(error_keys=frozenset({specs[1].key, specs[3].key}))
    executor = make_executor("local", fn, tmp_path, workers=2)
    results = {r.key: r for r in executor.submit(specs)}
    executor.close()
    assert results[specs[1].key].verdict is Verdict.ERROR
    assert results[specs[1].key].error_class == "RuntimeError"
    assert "scripted infrastructure failure" in results[specs[1].key].reason
    assert not results[specs[1].key].verdict.counts_as_attempt
    assert results[specs[0].key].verdict in (Verdict.PASSED, Verdict.FAILED)
    # A retry (try_index 1) of the same key succeeds.
    retried = list(executor.submit([specs[1].model_copy(update={"try_index": 1})]))
    assert retried[0].verdict in (Verdict.PASSED, Verdict.FAILED)


def test_a_wrong_return_type_is_an_error_not_a_crash(tmp_path) -> None:
    executor = LocalExecutor(lambda spec: "passed", workers=1)  # type: ignore[arg-type, return-value]
    [result] = list(executor.submit(make_specs(1, tmp_path)))
    assert result.verdict is Verdict.ERROR
    assert "returned str" in result.reason


def test_a_hung_attempt_is_abandoned_after_its_timeout(tmp_path) -> None:
    release = threading.Event()

    def fn(spec: AttemptSpec) -> AttemptResult:
        release.wait(10)
        return AttemptResult(key=spec.key, verdict=Verdict.PASSED)

    executor = LocalExecutor(fn, workers=1, grace_s=0.2)
    t0 = time.monotonic()
    [result] = list(executor.submit(make_specs(1, tmp_path, timeout_s=0.5)))
    assert time.monotonic() - t0 < 3.0
    release.set()
    executor.close()
    assert result.verdict is Verdict.ERROR
    assert "abandoned" in result.reason


def test_time_an_attempt_waits_for_the_model_is_not_held_against_it(tmp_path) -> None:
    """An attempt that spends 1.5 s waiting for a slow model (rsi.model_waits.waiting, as the harness's clock
    marks it) outlives its 0.5 s limit plus grace in wall time but not in its own time: it is not abandoned.
    The same attempt without the mark is (the test above)."""
    from rsi.model_waits import waiting

    def fn(spec: AttemptSpec) -> AttemptResult:
        with waiting():
            time.sleep(1.5)
        time.sleep(0.1)
        return AttemptResult(key=spec.key, verdict=Verdict.PASSED)

    executor = LocalExecutor(fn, workers=1, grace_s=0.2)
    [result] = list(executor.submit(make_specs(1, tmp_path, timeout_s=0.5)))
    executor.close()
    assert result.verdict is Verdict.PASSED, result.reason


def test_cancel_stops_yielding_queued_attempts(tmp_path) -> None:
    specs = make_specs(6, tmp_path)
    executor = LocalExecutor(NoopAttempt(sleep_s=0.2), workers=1)
    seen = []
    for result in executor.submit(specs):
        seen.append(result)
        executor.cancel()
    executor.close()
    assert len(seen) == 1


def test_unknown_executor_is_a_user_error(tmp_path) -> None:
    from rsi.errors import UserInputError

    with pytest.raises(UserInputError, match="unknown executor"):
        make_executor("ray", NoopAttempt(), tmp_path)
    with pytest.raises(Exception, match="at least 1"):
        LocalExecutor(NoopAttempt(), workers=0)


def test_attempts_added_while_others_run_share_the_slots(tmp_path) -> None:
    """Overlapping batches: a second `start` while the first batch runs queues behind it, never
    more than `workers` run at once, and every result comes back once, in completion order."""
    running, peak, lock = [0], [0], threading.Lock()

    def fn(spec: AttemptSpec) -> AttemptResult:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.2)
        with lock:
            running[0] -= 1
        return AttemptResult(key=spec.key, verdict=Verdict.PASSED)

    first, second = make_specs(3, tmp_path), [
        s.model_copy(update={"key": s.key.replace("r|0|", "r|1|"), "job_index": 1}) for s in make_specs(3, tmp_path)
    ]
    executor = LocalExecutor(fn, workers=2)
    executor.start(first)
    assert executor.slots == 2 and executor.in_flight() == 3
    seen: list[str] = []
    while len(seen) < 1:
        seen += [r.key for r in executor.collect(1.0)]
    executor.start(second)  # the next job, while the first one's last attempts still run
    while executor.in_flight():
        seen += [r.key for r in executor.collect(1.0)]
    executor.close()
    assert sorted(seen) == sorted(s.key for s in first + second)
    assert peak[0] == 2


def test_drop_queued_keeps_started_attempts(tmp_path) -> None:
    specs = make_specs(5, tmp_path)
    executor = LocalExecutor(NoopAttempt(sleep_s=0.3), workers=2)
    executor.start(specs)
    time.sleep(0.05)
    assert executor.drop_queued() == 3
    results = []
    while executor.in_flight():
        results += executor.collect(1.0)
    assert sorted(r.key for r in results) == sorted(s.key for s in specs[:2])
    assert executor.collect(0.01) == []


def test_cancelled_attempts_never_report(tmp_path) -> None:
    specs = make_specs(2, tmp_path)
    executor = LocalExecutor(NoopAttempt(sleep_s=0.2), workers=2)
    executor.start(specs)
    executor.cancel()
    assert executor.in_flight() == 0
    time.sleep(0.4)  # both threads end now; their results must be dropped
    executor.start(make_specs(1, tmp_path)[:1])
    results = []
    while executor.in_flight():
        results += executor.collect(1.0)
    assert [r.key for r in results] == [specs[0].key]  # the new start's one result (same key as spec 0)
    assert len(results) == 1
