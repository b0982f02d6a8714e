"""Every shipped reference solution passes when verified many times in parallel, in every sandbox mode.

Issue 11: verifying the pyfuncs references with 4 threads in the rlimits-only mode judged a few of
them `failed` ("the solution process closed its input before starting", "exited (code -9) while
importing the solution"): a correct solution recorded as a failure. The cause was the sandbox's
tree kill: it SIGKILLed every process holding the attempt's output pipes, and a sibling sandbox's
freshly forked child (between fork and exec it holds copies of all of this process's descriptors)
was one of them. This test is the reproduction: it runs the real verifier (`rsi.verifier.verify`)
on each reference 5 times from 6 threads and demands 100% passes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rsi.tasks.load import load_suite, prepare_workdir
from rsi.verdict import Verdict
from rsi.verifier import verify

REPO = Path(__file__).resolve().parents[2]
REPEATS = 5
THREADS = 6


@pytest.fixture(scope="module")
def staged_references():
    """(task, final working directory holding its reference solution) for every `cases` task of pyfuncs."""
    tasks = [t for t in load_suite(REPO, "pyfuncs") if t.spec.verifier.kind == "cases" and t.solution_dir.is_dir()]
    assert len(tasks) >= 80, "the shipped pyfuncs suite shrank: this test would prove less"
    folder = Path(tempfile.mkdtemp(prefix="rsi-parallel-refs-"))
    staged = []
    for task in tasks:
        work = prepare_workdir(task, folder / task.id)
        shutil.copytree(task.solution_dir, work, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
        staged.append((task, work))
    yield staged
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
def test_every_reference_passes_when_verified_in_parallel(backend, staged_references):
    jobs = staged_references * REPEATS
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        outcomes = list(pool.map(lambda job: verify(job[0], job[1], backend), jobs))
    wrong = [
        f"{task.id}: {outcome.verdict.value}: {outcome.reason}"
        for (task, _work), outcome in zip(jobs, outcomes, strict=True)
        if outcome.verdict is not Verdict.PASSED
    ]
    assert not wrong, f"{len(wrong)} of {len(jobs)} reference verifications did not pass:\n" + "\n".join(wrong[:30])


@pytest.mark.slow
def test_every_reference_passes_in_parallel_with_one_shared_uid(staged_references):
    """The rlimits-only mode with one uid for all (uid=65534, or rsi not run as root) cannot kill by
    uid; it walks the session and scans the output pipes' holders, the very scan that killed a
    sibling's freshly forked child. Our own children are excluded from it now."""
    from rsi.sandbox.select import make_sandbox

    sandbox = make_sandbox("local", mode="bare", uid=65534) if os.geteuid() == 0 else make_sandbox("local", mode="bare")
    jobs = staged_references * REPEATS
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        outcomes = list(pool.map(lambda job: verify(job[0], job[1], sandbox), jobs))
    wrong = [f"{t.id}: {o.verdict.value}: {o.reason}" for (t, _w), o in zip(jobs, outcomes, strict=True) if o.verdict is not Verdict.PASSED]
    assert not wrong, f"{len(wrong)} of {len(jobs)} did not pass:\n" + "\n".join(wrong[:30])
