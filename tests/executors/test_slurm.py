"""The SLURM executor against the real single-node SLURM of .ci/services/20-slurm.sh."""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime

import pytest

from rsi.config import Configuration
from rsi.contracts.schema import BaseModelSpec, ContractSpec, HcpMeta
from rsi.executors import AttemptSpec, make_executor
from rsi.executors.noop import NoopAttempt
from rsi.executors.slurm import SlurmExecutor, SlurmOptions
from rsi.verdict import Verdict

pytestmark = pytest.mark.slow




def make_specs(n: int, tmp_path) -> list[AttemptSpec]:
    spec = ContractSpec(
        hcp=HcpMeta(name="t", revision=1, created=datetime(2026, 1, 1, tzinfo=UTC)),
        base=BaseModelSpec(id="m", file="m.gguf"),
    )
    config = Configuration(name="c0", contract_ref="test", spec=spec)
    return [
        AttemptSpec(
            key=f"r|0|s/t{i}|0", run_id="r", job_index=0, task_key=f"s/t{i}", task_dir=str(tmp_path),
            config=config, out_dir=str(tmp_path / f"a{i}"), timeout_s=60,
        )
        for i in range(n)
    ]


def test_job_array_runs_attempts_in_slurm_workers(slurm, tmp_path) -> None:
    specs = make_specs(4, tmp_path)
    executor = make_executor("slurm", NoopAttempt(pass_rate=0.5, tokens=7), tmp_path / "slurm",
                             slurm=SlurmOptions(mem_gb=0.5, poll_s=0.2, queue_grace_s=60))
    t0 = time.monotonic()
    results = list(executor.submit(specs))
    elapsed = time.monotonic() - t0
    executor.close()
    assert sorted(r.key for r in results) == sorted(s.key for s in specs)
    assert all(r.verdict in (Verdict.PASSED, Verdict.FAILED) for r in results), [r.reason for r in results]
    assert all(r.tokens == 7 for r in results)
    # Each attempt ran in its own SLURM worker process, not in this one.
    pids = {r.host.split(":")[1] for r in results}
    assert str(os.getpid()) not in pids and len(pids) == 4
    # The worker used this interpreter (the project venv): submitit's batch script names it.
    [batch] = list((tmp_path / "slurm").iterdir())
    scripts = list(batch.glob("*_submission.sh"))
    assert scripts and sys.executable in scripts[0].read_text()
    # Same verdicts as running the function here: results really come from the function.
    local = {s.key: NoopAttempt(pass_rate=0.5)(s).verdict for s in specs}
    assert {r.key: r.verdict for r in results} == local
    assert elapsed < 60


def test_each_batch_gets_its_own_folder(slurm, tmp_path) -> None:
    executor = SlurmExecutor(NoopAttempt(), tmp_path / "slurm", SlurmOptions(mem_gb=0.5, poll_s=0.2))
    first = list(executor.submit(make_specs(1, tmp_path)))
    second = list(executor.submit(make_specs(1, tmp_path)))
    assert len(first) == len(second) == 1
    assert len(list((tmp_path / "slurm").iterdir())) == 2


def test_a_worker_that_dies_is_an_infrastructure_error(slurm, tmp_path) -> None:
    specs = make_specs(2, tmp_path)
    fn = NoopAttempt(crash_keys=frozenset({specs[0].key}), error_keys=frozenset({specs[1].key}))
    executor = SlurmExecutor(fn, tmp_path / "slurm",
                             # 2 minutes of SLURM time: a worker slow to start on a loaded machine must not be
                             # ended TIMEOUT (an ExecutorError) before it raises
                             SlurmOptions(mem_gb=0.5, poll_s=0.2, failed_grace_s=1, queue_grace_s=40, time_min=2))
    t0 = time.monotonic()
    results = {r.key: r for r in executor.submit(specs)}
    assert time.monotonic() - t0 < 130
    assert results[specs[0].key].verdict is Verdict.ERROR  # the process died: no result file
    assert results[specs[1].key].verdict is Verdict.ERROR  # raised inside the worker
    assert results[specs[1].key].error_class == "RuntimeError", results[specs[1].key].reason
