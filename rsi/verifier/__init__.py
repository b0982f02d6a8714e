"""The hidden verifier: judge an attempt's final working directory, after the agent has finished.

`verify(task, final_workdir, sandbox) -> VerifierOutcome`. The agent never sees tests/ or solution/;
they come in only here, into a FRESH directory made for this verification:

    <tmp>/rsi-verify-XXXX/      0711, owned by the caller
        work/                   the sandbox's working directory (staged files only)
            solution.py ...     regular files copied from the final workdir (see stage.py)
            tests/              the task's tests/ (script and pytest kinds; ours, read-only; script
                                kind as root: readable by the verifier uid only)
            .rsi-verifier/      pytest_child.py and pytest.ini (pytest kind; ours, read-only), or
                                bin/ (the solution shims) and reward/ (script kind)
        kept/                   files a judge keeps (ui kind: screenshot.png, ui-checks.json): moved
                                into `evidence_dir` (the attempt's out_dir/verifier) when one is given

Kinds (`task.spec.verifier.kind`, one entry each in registry.py): `cases` (cases.py: a host-side
judge holds the expected values, a sandboxed child only reports return values), `script` and `pytest`
(kinds.py: the task's tests run in the sandbox). Verdicts: passed, failed, timeout, and error only
for what the agent cannot cause (sandbox failed to start, the task's own verifier files missing or
broken, a crash of this code).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from rsi.sandbox.base import Sandbox
from rsi.tasks.spec import Task
from rsi.verdict import Verdict, VerifierOutcome
from rsi.verifier.registry import verifier_kind
from rsi.verifier.stage import make_fresh_root, remove_fresh_root, stage_submission

__all__ = ["verify"]


def verify(task: Task, final_workdir: Path, sandbox: Sandbox, *, keep_dir: bool = False,
           evidence_dir: Path | None = None) -> VerifierOutcome:
    """Judge `final_workdir` for `task` in a fresh directory of `sandbox`. Never raises.

    The files the judge kept (`outcome.artifacts`, e.g. the ui kind's screenshot) are moved into
    `evidence_dir` and named there; without one they go with the fresh directory and are not named."""
    started = time.monotonic()
    try:
        outcome = _verify(task, Path(final_workdir), sandbox, keep_dir, evidence_dir)
    except Exception as error:  # the verifier's own crash is infrastructure, never a task failure
        outcome = VerifierOutcome(verdict=Verdict.ERROR, reason=f"verifier crashed: {type(error).__name__}: {error}")
    return outcome.model_copy(update={"wall_s": time.monotonic() - started})


def _verify(task: Task, final_workdir: Path, sandbox: Sandbox, keep_dir: bool, evidence_dir: Path | None) -> VerifierOutcome:
    kind = verifier_kind(task.spec.verifier.kind)
    limits = task.spec.limits.model_copy(update={"wall_s": task.spec.verifier_timeout_s})
    if not task.tests_dir.is_dir():
        return VerifierOutcome(verdict=Verdict.ERROR, reason=f"task has no tests/ folder: {task.tests_dir}")
    root = make_fresh_root()
    try:
        work = root / "work"
        only = {Path(task.spec.solution_file).as_posix()} if kind.solution_only else None
        staged = stage_submission(final_workdir, work, only=only, exclude_top={"tests", ".rsi-verifier"})
        # tests/ is installed by the judge itself, after the sandbox has taken the working
        # directory: it must stay owned by us (kinds.install_verifier_files).
        outcome = kind.judge(task, work, sandbox, limits)
        if staged.refused:
            note = "not copied for verification: " + "; ".join(staged.refused[:10])
            outcome = outcome.model_copy(update={"output": (outcome.output + "\n" + note).strip()[:8000]})
        if outcome.artifacts and not keep_dir:
            outcome = outcome.model_copy(update={"artifacts": _keep_artifacts(outcome.artifacts, root, evidence_dir)})
        return outcome
    finally:
        if not keep_dir:
            remove_fresh_root(root)


def _keep_artifacts(artifacts: dict[str, str], root: Path, evidence_dir: Path | None) -> dict[str, str]:
    """Move the judge's kept files (regular files inside the fresh root only) into `evidence_dir`; name -> new path."""
    if evidence_dir is None:
        return {}
    kept: dict[str, str] = {}
    for name, raw in artifacts.items():
        path = Path(raw)
        if not path.is_absolute() or path.is_symlink() or not path.is_file() or not path.resolve().is_relative_to(root.resolve()):
            continue
        evidence_dir.mkdir(parents=True, exist_ok=True)
        target = evidence_dir / path.name
        shutil.copyfile(path, target)
        kept[name] = str(target)
    return kept
