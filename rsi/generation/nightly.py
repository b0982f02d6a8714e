"""`rsi nightly`, the cron entry point: one generation under a lock, with exit codes a wrapper can act on.

- **Lock.** `runs/generations/nightly.lock` (filelock, taken without waiting). A second nightly while
  one runs exits 0 with one line saying so: overlapping cron firings are normal, not errors. The lock
  is an OS file lock, so a SIGKILLed holder releases it with its process.
- **Resume.** An unfinished generation (killed, failed, or interrupted) is resumed before a new one is
  started; finished steps are not redone (rsi.generation.generation).
- **Output.** Plain, timestamped log lines (no colours, no progress bars: cron mails them), and a final
  `summary:` line.

Exit codes (`NightlyOutcome.exit_code`):

| code | meaning                                                                          |
|------|----------------------------------------------------------------------------------|
| 0    | a generation completed (adapter promoted or rejected), or another nightly is running |
| 1    | a step failed (infrastructure, model, training); the next nightly resumes it     |
| 2    | bad configuration or input (contract, portfolio, flags); a human must fix it     |
| 3    | stopped by the ledger: a plateau or a regression by the contract's `[evaluation.gate]` rule (`stop_on_regression`, `plateau_generations`); no generation was started |
| 130  | interrupted (SIGINT/SIGTERM); the next nightly resumes                           |
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from rsi.errors import RsiError
from rsi.generation.generation import GenerationSpec, run_generation
from rsi.generation.outputs import GenerationSummary
from rsi.generation.state import generations_dir
from rsi.workspace import Workspace

LOCK_FILE = "nightly.lock"
EXIT_DONE = 0
EXIT_LOCKED = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_STOPPED = 3
EXIT_INTERRUPTED = 130


@dataclass
class NightlyOutcome:
    exit_code: int
    status: str
    """'done', 'locked', 'failed', 'bad-input', 'stopped' or 'interrupted'."""
    generation: str = ""
    summary: GenerationSummary | None = None
    message: str = ""


def summary_line(summary: GenerationSummary | None) -> str:
    """One line a human reads in a cron mail."""
    s = summary or GenerationSummary()
    lift, versus, retention, transfer = s.lift, s.lift_vs_control, s.retention, s.transfer
    covered, tasks = [*s.coverage, None, None][:2]
    parts = [
        f"contract {s.contract or None} r{s.revision_start} -> r{s.revision_end}",
        f"coverage {covered}/{tasks}",
        f"harness {s.harness}",
        f"adapter {(s.adapter_id or '-')[:12]} {s.adapter}",
    ]
    if lift:
        parts.append(f"lift {lift.as_text()}")
        if s.costs.get("candidate") and s.costs.get("parent"):
            from rsi.evaluation import price_text

            parts.append(price_text(s.costs))
    if versus:
        parts.append(f"vs generation 0 {versus.as_text()}")
    if retention:
        parts.append(f"heldout retention {retention.as_text()}")
    if transfer:
        parts.append(f"transfer {transfer.transfer:.3f}")
    return ", ".join(parts)


def stop_reason(workspace: Workspace, contract: str) -> str | None:
    """The ledger's stop rule, applied only before a NEW generation (an unfinished one is always resumed)."""
    from rsi.generation.lineage import build_lineage, ledger_stop
    from rsi.generation.state import list_generations
    from rsi.promotion.promote import load_head_contract

    existing = [g for g in list_generations(workspace) if g.inputs.get("contract", contract) == contract]
    if not existing or existing[-1].status != "done":
        return None
    gate = load_head_contract(workspace, contract).spec.evaluation.gate
    rows = [r for r in build_lineage(workspace) if r.contract == contract]
    return ledger_stop(rows, gate.stop_on_regression, gate.plateau_generations)


def run_nightly(workspace: Workspace, spec: GenerationSpec, log: Callable[[str], None]) -> NightlyOutcome:
    """Take the lock, resume or run one generation, log, and say how it ended (never raises RsiError)."""
    from filelock import FileLock, Timeout

    def stamped(message: str) -> None:
        log(f"{datetime.now(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')} {message}")

    folder = generations_dir(workspace)
    folder.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(folder / LOCK_FILE))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        message = f"another rsi nightly is running (lock {folder / LOCK_FILE} is held); nothing to do"
        log(message)
        return NightlyOutcome(EXIT_LOCKED, "locked", message=message)
    try:
        stamped(f"nightly: workspace {workspace.root}")
        try:
            why = stop_reason(workspace, spec.contract)
            if why is not None:
                stamped(f"nightly: stopped: {why}; no new generation (edit [evaluation.gate] to change the rule)")
                return NightlyOutcome(EXIT_STOPPED, "stopped", message=why)
            state = run_generation(workspace, spec, on_note=stamped)
        except KeyboardInterrupt:
            stamped("nightly: interrupted; the next run resumes")
            return NightlyOutcome(EXIT_INTERRUPTED, "interrupted", message="interrupted")
        except RsiError as error:
            code = EXIT_BAD_INPUT if error.exit_code == 2 else EXIT_FAILED
            status = "bad-input" if code == EXIT_BAD_INPUT else "failed"
            stamped(f"nightly: {status}: {error.message}" + (f" (hint: {error.hint})" if error.hint else ""))
            return NightlyOutcome(code, status, message=error.message)
        except Exception as error:  # anything unexpected is a failed step the next night resumes
            stamped(f"nightly: failed: {type(error).__name__}: {error}")
            return NightlyOutcome(EXIT_FAILED, "failed", message=f"{type(error).__name__}: {error}")
        line = summary_line(state.summary)
        stamped(f"summary: {state.id} done: {line}")
        return NightlyOutcome(EXIT_DONE, "done", generation=state.id, summary=state.summary, message=line)
    finally:
        lock.release()
