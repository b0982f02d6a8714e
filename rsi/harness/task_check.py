"""Check that a suite's hidden verifiers can fail and can pass: `rsi tasks check`.

For every task, the real verifier (rsi.verifier.verify) judges, inside the real sandbox:

- the reference solution (environment/ with solution/ copied over it): must pass;
- the untouched environment (the "empty" solution, what an agent that does nothing leaves): must fail;
- a wrong solution (kind "cases": the function exists but returns None; other kinds: an empty
  solution file): must fail;
- the reference again, against the task's public checks (`[public]`: the examples its instruction
  shows, or its public script), when it declares any: must pass every one of them. A public check the
  reference fails would steer `harness.check` away from right answers, so each example it contradicts
  is named (the loader already proved the instruction shows it; only the reference can prove it right).

A verifier that passes the empty or wrong solution proves nothing about an agent, and one that
fails its own reference is broken; both are reported. A verifier error (infrastructure) is a
failed check too, never silently a pass.

It sits with the harness, above the tasks it checks: it runs the verifier and the harness's public
checks (tests/test_import_graph.py).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from rsi.errors import SandboxError
from rsi.harness.trajectory import CheckRecord
from rsi.sandbox.base import Sandbox
from rsi.tasks.load import prepare_workdir
from rsi.tasks.spec import Task
from rsi.verdict import Verdict

Probe = Literal["reference", "empty", "wrong", "public"]
_EXPECTED: dict[Probe, str] = {"reference": "pass", "empty": "fail", "wrong": "fail", "public": "pass"}


class ProbeResult(BaseModel):
    """One solution judged by the verifier, and whether that verdict is what a sound task gives."""

    probe: Probe
    verdict: Verdict | None = Field(description="None when the probe was skipped (no reference solution).")
    ok: bool
    reason: str = ""
    reward: float = 0.0
    wall_s: float = 0.0


class TaskCheckResult(BaseModel):
    """The probes of one task."""

    key: str
    probes: list[ProbeResult]

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.probes)

    def problems(self) -> list[str]:
        """One line per probe that did not get the verdict a sound task gives."""
        out = []
        for p in self.probes:
            if not p.ok:
                got = p.verdict.value if p.verdict else "skipped"
                if p.probe == "public" and p.verdict is Verdict.FAILED:
                    # The reference is the arbiter: a public example it fails states a wrong value.
                    out.append(f"{self.key}: [public] contradicts the reference solution: {p.reason}")
                elif p.probe == "public":
                    out.append(f"{self.key}: reference solution should pass its public checks but got {got}: {p.reason}")
                else:
                    out.append(f"{self.key}: {p.probe} solution should {_EXPECTED[p.probe]} but got {got}: {p.reason}")
        return out


class SuiteCheckOutcome(BaseModel):
    """Every task's probes, sorted by task key."""

    sandbox: str
    results: list[TaskCheckResult]

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    @property
    def failed(self) -> list[TaskCheckResult]:
        return [r for r in self.results if not r.ok]


def _write_wrong_solution(task: Task, workdir: Path) -> None:
    from rsi.tasks.kinds import kind_of

    target = workdir / task.spec.solution_file
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(kind_of(task).wrong_solution(task), encoding="utf-8")


def _stage(task: Task, probe: Probe, workdir: Path) -> bool:
    """Lay out the probe's final working directory; False when there is nothing to stage."""
    prepare_workdir(task, workdir)
    if probe in ("reference", "public"):
        if not task.solution_dir.is_dir():
            return False
        shutil.copytree(task.solution_dir, workdir, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    elif probe == "wrong":
        _write_wrong_solution(task, workdir)
    return True


def _public_probe(task: Task, sandbox: Sandbox, require_reference: bool) -> ProbeResult:
    """The reference solution run against the task's public checks (its kind's runner, as the harness's)."""
    from rsi.tasks.kinds import kind_of

    with tempfile.TemporaryDirectory(prefix=f"rsi-check-{task.id}-public-") as scratch:
        workdir = Path(scratch) / "work"
        if not _stage(task, "public", workdir):
            return ProbeResult(probe="public", verdict=None, ok=not require_reference, reason="no solution/ folder")
        try:
            record = kind_of(task).public_checks(task, workdir, sandbox, 1)
        except SandboxError as error:  # ours, not the task's: reported, never a pass
            return ProbeResult(probe="public", verdict=Verdict.ERROR, ok=False, reason=f"the public checks could not run: {error}")
    passed = record.all_passed and record.total > 0
    return ProbeResult(
        probe="public",
        verdict=Verdict.PASSED if passed else Verdict.FAILED,
        ok=passed,
        reason="; ".join([f"{record.passed}/{record.total} public checks passed", *_failures(record)]),
        reward=record.passed / record.total if record.total else 0.0,
        wall_s=record.wall_s,
    )


def _failures(record: CheckRecord) -> list[str]:
    """Every public check the reference failed, each named by its key in task.toml."""
    out = []
    for index, example in enumerate(record.examples):
        if not example.passed:
            outcome = f"raised {example.error}" if example.error else f"returned {example.got}"
            out.append(f"examples[{index}] {example.call} {outcome}, expected {example.expected}")
    if record.script_exit not in (None, 0):
        out.append(f"script exited {record.script_exit}: {record.script_output.strip()[-200:]}")
    if not out and record.note:
        out.append(record.note)
    return out


def check_task(task: Task, sandbox: Sandbox, require_reference: bool = True) -> TaskCheckResult:
    """Run the probes of one task in `sandbox`: three through the real verifier, and the public checks
    on the reference when the task declares any."""
    from rsi.verifier import verify  # the verifier pulls in sandbox code; keep import-time light

    probes = []
    for probe in ("reference", "empty", "wrong"):
        with tempfile.TemporaryDirectory(prefix=f"rsi-check-{task.id}-{probe}-") as scratch:
            workdir = Path(scratch) / "work"
            if not _stage(task, probe, workdir):
                probes.append(
                    ProbeResult(probe=probe, verdict=None, ok=not require_reference, reason="no solution/ folder")
                )
                continue
            outcome = verify(task, workdir, sandbox)
        want_pass = probe == "reference"
        if want_pass:
            ok = outcome.verdict is Verdict.PASSED
        else:
            ok = outcome.verdict in (Verdict.FAILED, Verdict.TIMEOUT)
        probes.append(
            ProbeResult(
                probe=probe,
                verdict=outcome.verdict,
                ok=ok,
                reason=outcome.reason,
                reward=outcome.reward,
                wall_s=outcome.wall_s,
            )
        )
    if task.spec.public.declared:
        probes.append(_public_probe(task, sandbox, require_reference))
    return TaskCheckResult(key=task.key, probes=probes)


def check_suite(
    tasks: list[Task],
    sandbox_name: str = "auto",
    workers: int = 2,
    require_reference: bool = True,
    on_done: Callable[[TaskCheckResult], None] | None = None,
) -> SuiteCheckOutcome:
    """Check every task (in `workers` threads: the work is in sandboxed subprocesses)."""
    from rsi.sandbox.select import make_sandbox

    sandbox = make_sandbox(sandbox_name)
    results: list[TaskCheckResult] = []

    def one(task: Task) -> TaskCheckResult:
        result = check_task(task, sandbox, require_reference)
        if on_done is not None:
            on_done(result)
        return result

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = list(pool.map(one, tasks))
    return SuiteCheckOutcome(sandbox=sandbox.name, results=sorted(results, key=lambda r: r.key))
