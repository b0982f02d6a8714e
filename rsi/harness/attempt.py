"""One attempt: a configuration on a task, from a fresh working directory to a verdict.

`run_attempt` is the harness's public entry point (executors, `rsi attempt` and training rollouts
call it). It prepares the working directory, runs the configured substrate (REPL or text) with the
model, kills every agent process, hands the final working directory to the hidden verifier, and
writes one trajectory. It never raises for what the agent or the model produced: every attempt
ends as passed, failed, timeout or error, and infrastructure failures (sandbox will not start, model
backend down, verifier crashed, bad contract) end as Verdict.ERROR with `error_class` set — never
as failed. Only KeyboardInterrupt (and SystemExit) pass through, after the agent is killed.

Attempt folder (`out_dir`, owned by this attempt):

    out_dir/
      trajectory.json   the whole attempt (rewritten atomically after every turn, final at the end)
      tools.json        helpers the agent saved with save_tool (only when it saved any)
      workdir/          the agent's working directory as the verifier saw it
      verifier/         files the verifier kept (ui kind: screenshot.png, ui-checks.json), named by
                        the outcome's `artifacts` relative to this folder
"""

from __future__ import annotations

import shutil
import time
import uuid
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache
from pathlib import Path

from pydantic import Field

from rsi.config import Configuration
from rsi.contracts.schema import HarnessSpec
from rsi.errors import RsiError
from rsi.harness import prompts
from rsi.harness.agent import (
    LoopOutcome,
    Submissions,
    end_marker_is_call,
    run_repl_loop,
    safe_solution_path,
)
from rsi.harness.checks import CandidateChecker
from rsi.harness.clock import AgentClock
from rsi.harness.exemplars import with_exemplars
from rsi.harness.repl import ReplSession
from rsi.harness.router import RouterRecord, parse_router
from rsi.harness.routing import TaskView
from rsi.harness.text_substrate import run_text_once
from rsi.harness.tools import install_library, library_root, write_saved_tools
from rsi.harness.trajectory import (
    AttemptEnding,
    ConfigurationRef,
    FinalMetrics,
    FinalOutcome,
    ModelRef,
    Step,
    TaskRef,
    Trajectory,
    utc_now,
    write_trajectory,
)
from rsi.models.base import ChatModel
from rsi.sandbox.base import Isolation, Limits, Sandbox
from rsi.tasks.kinds import kind_of
from rsi.tasks.spec import Task
from rsi.verdict import Verdict, VerifierOutcome

FINAL_CODE_MAX_CHARS = 200_000
EVIDENCE_DIR = "verifier"  # out_dir/verifier: the files the hidden verifier kept

Verify = Callable[[Task, Path, Sandbox], VerifierOutcome]


class AttemptOutcome(AttemptEnding):
    """How one attempt ended (what executors store; the trajectory holds the details)."""

    attempt_id: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    tokens_not_spent: int = 0
    turns: int = 0
    wall_s: float = 0.0
    trajectory_path: Path | None = None
    final_code: str | None = Field(default=None, description="The solution file's text (for dedup), if written.")
    isolation: Isolation | None = None
    started_at: datetime
    finished_at: datetime


def new_attempt_id(task: Task, config: Configuration, seed: int) -> str:
    return f"{task.id}-{config.config_hash[:8]}-s{seed}-{uuid.uuid4().hex[:6]}"


def model_allowance_s(harness: HarnessSpec) -> float:
    """The longest an attempt can wait for the model: every turn queued and served to its bounds
    (rsi/harness/agent.py `call_model`: model_s to start serving, model_s to serve)."""
    return (harness.max_turns + harness.repair_turns) * 2 * harness.timeouts.model_s


def repl_limits(task: Task, agent_s: float, model_wait_s: float = 0.0) -> Limits:
    """The task's limits, stretched over the whole attempt: the REPL process lives for all turns, the agent's
    own time plus whatever the turns may wait for the model (its CPU limit stays the agent's)."""
    base = task.spec.limits
    return base.model_copy(update={"wall_s": agent_s + model_wait_s + 60.0, "cpu_s": max(base.cpu_s, int(agent_s) + 10)})


def _prepare_workdir(task: Task, workdir: Path) -> None:
    from rsi.tasks.load import prepare_workdir

    if workdir.exists():  # a rerun of the same attempt starts over, never from a half-finished state
        shutil.rmtree(workdir)
    prepare_workdir(task, workdir)


def _tools_root(tools_root: Path | None) -> Path:
    if tools_root is not None:
        return tools_root
    from rsi.workspace import find_workspace

    return library_root(find_workspace().runs_dir)


def _read_final_code(workdir: Path, solution_file: str) -> str | None:
    try:
        path = safe_solution_path(workdir, solution_file)
        if path.is_file():
            return path.read_text(encoding="utf-8", errors="replace")[:FINAL_CODE_MAX_CHARS]
    except (OSError, ValueError):
        pass
    return None


def run_attempt(
    config: Configuration,
    task: Task,
    model: ChatModel,
    sandbox: Sandbox,
    out_dir: Path,
    seed: int,
    attempt_id: str | None = None,
    *,
    tools_root: Path | None = None,
    verify: Verify | None = None,
    on_step: Callable[[Trajectory, Step], None] | None = None,
) -> AttemptOutcome:
    """Run one attempt and return its outcome; see the module docstring for the guarantees.

    `tools_root` is where tool library revisions live (default: $RSI_TOOLS_DIR, else the
    workspace's runs/tools); it is read only when the configuration names a `tool_library`.
    `verify` defaults to the hidden verifier `rsi.verifier.verify`. `on_step` observes every step
    as it is recorded (after each turn; `rsi attempt` prints the transcript live with it); an
    observer that raises is dropped, it never changes the attempt.
    """
    started_at = utc_now()
    clock = time.monotonic()
    agent_clock = AgentClock(min(config.spec.harness.timeouts.agent_s, task.spec.agent_timeout_s), started=clock)
    attempt_id = attempt_id or new_attempt_id(task, config, seed)
    out_dir = Path(out_dir)
    workdir = out_dir / "workdir"
    trajectory = _new_trajectory(config, task, model, seed, attempt_id, started_at)
    steps = _Steps(trajectory, out_dir / "trajectory.json", on_step)
    loop: LoopOutcome | None = None
    failure: BaseException | None = None
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        trajectory.sandbox = sandbox.isolation()
        _prepare_workdir(task, workdir)
        loop = _run_agent(config, task, model, sandbox, workdir, trajectory, seed, agent_clock, tools_root, steps)
    except Exception as error:  # noqa: BLE001 - every failure here is infrastructure, recorded as data
        failure = error

    final = _conclude(task, workdir, sandbox, loop, failure, verify, out_dir)
    final.final_code = _read_final_code(workdir, task.spec.solution_file) if workdir.is_dir() else None
    trajectory.outcome = final
    trajectory.finished_at = utc_now()
    trajectory.final_metrics = _totals(trajectory, clock, agent_clock)
    steps.notify()
    written = _write_evidence(trajectory, steps.path, out_dir, final)
    totals = trajectory.final_metrics
    return AttemptOutcome(
        **final.model_dump(include=set(AttemptEnding.model_fields)),
        attempt_id=attempt_id,
        prompt_tokens=totals.prompt_tokens,
        completion_tokens=totals.completion_tokens,
        cache_hits=totals.cache_hits,
        cache_misses=totals.cache_misses,
        tokens_not_spent=totals.tokens_not_spent,
        turns=totals.turns,
        wall_s=round(time.monotonic() - clock, 4),
        trajectory_path=written,
        final_code=final.final_code,
        isolation=trajectory.sandbox,
        started_at=started_at,
        finished_at=trajectory.finished_at,
    )


def _new_trajectory(
    config: Configuration, task: Task, model: ChatModel, seed: int, attempt_id: str, started_at: datetime
) -> Trajectory:
    harness = config.spec.harness
    return Trajectory(
        attempt_id=attempt_id,
        task=TaskRef(
            key=task.key,
            suite=task.suite,
            id=task.id,
            content_hash=task.content_hash,
            solution_file=task.spec.solution_file,
        ),
        configuration=ConfigurationRef(
            name=config.name,
            contract_ref=config.contract_ref,
            config_hash=config.config_hash,
            substrate=harness.substrate,
            prompt_style=harness.prompt_style,
            tool_library=harness.tool_library,
        ),
        model=ModelRef(name=model.name, base_id=config.spec.base.id, dtype=model.number_format()),
        seed=seed,
        started_at=started_at,
    )


class _Steps:
    """Checkpoints the trajectory after each turn and shows every new step to the observer once.
    An observer that raises is dropped: a display problem must not change the attempt."""

    def __init__(self, trajectory: Trajectory, path: Path, observer: Callable[[Trajectory, Step], None] | None) -> None:
        self.trajectory, self.path, self.observer, self.shown = trajectory, path, observer, 0

    def notify(self) -> None:
        while self.observer is not None and self.shown < len(self.trajectory.steps):
            self.shown += 1
            try:
                self.observer(self.trajectory, self.trajectory.steps[self.shown - 1])
            except Exception:  # noqa: BLE001 - a display problem must not change the attempt
                self.observer = None

    def checkpoint(self) -> None:
        write_trajectory(self.trajectory, self.path)
        self.notify()


def _learned_view(config: Configuration, task: Task) -> TaskView | None:
    """The learned router with the task's tags and instruction; None unless routing is learned."""
    if config.spec.routing.policy != "learned":
        return None
    return TaskView(_router(config.router_text), tuple(task.spec.tags), task.instruction)


@lru_cache(maxsize=4)
def _router(text: str) -> RouterRecord:
    return parse_router(text)  # a router is immutable (pinned by sha256): one parse per process


def _run_agent(
    config: Configuration, task: Task, model: ChatModel, sandbox: Sandbox, workdir: Path, trajectory: Trajectory,
    seed: int, clock: AgentClock, tools_root: Path | None, steps: _Steps,
) -> LoopOutcome:
    """The opening messages, then the agent's turns on the configuration's substrate until it ends."""
    harness = config.spec.harness
    tool_names: list[str] = []
    if harness.tool_library:
        tool_names = install_library(_tools_root(tools_root), harness.tool_library, workdir)
    by_call = end_marker_is_call(harness.end_marker)
    reply = kind_of(task).reply  # the fences and words of the task's kind
    user_message = prompts.task_message(
        task.instruction, task.spec.solution_file, substrate=harness.substrate, style=harness.prompt_style,
        end_marker=harness.end_marker, end_by_call=by_call, tool_names=tool_names, reply=reply,
    )
    user_message, trajectory.exemplars = with_exemplars(harness, task, user_message, seed)
    opening = prompts.first_messages(config.system_prompt, user_message)
    if config.system_prompt.strip():
        trajectory.add_step("system", message=config.system_prompt.strip())
    trajectory.add_step("user", message=user_message)
    steps.checkpoint()
    # Execution feedback: candidates are checked in scratch copies beside the working directory, in the
    # attempt's own sandbox backend; check time counts against the attempt's clock.
    checker = CandidateChecker(task, sandbox, workdir, workdir.parent / "checks")
    learned = _learned_view(config, task)
    if harness.substrate != "repl":
        return run_text_once(
            harness=harness, routing=config.spec.routing, model=model, workdir=workdir,
            solution_file=task.spec.solution_file, opening=opening, instruction=task.instruction,
            trajectory=trajectory, seed=seed, clock=clock, checker=checker, learned=learned, reply=reply,
        )
    session = ReplSession(
        sandbox, workdir, repl_limits(task, clock.budget_s, model_allowance_s(harness)), python=sandbox.python,
        step_s=harness.timeouts.step_s,
        tools=list(harness.tools), end_call=harness.end_marker[:-2] if by_call else "",
        env={"PYTHONDONTWRITEBYTECODE": "1"},
    )
    try:
        session.start()
        return run_repl_loop(
            harness=harness, routing=config.spec.routing, model=model, session=session, opening=opening,
            instruction=task.instruction, trajectory=trajectory, seed=seed, clock=clock,
            checkpoint=steps.checkpoint,
            submissions=Submissions(checker, harness, workdir, task.spec.solution_file)
            if harness.check != "off" or harness.repair_turns else None,
            learned=learned,
        )
    finally:
        # The agent's process tree must be dead before anything looks at its working directory.
        session.close()


def _totals(trajectory: Trajectory, clock: float, agent_clock: AgentClock) -> FinalMetrics:
    totals = FinalMetrics(wall_s=round(time.monotonic() - clock, 4), model_wait_s=round(agent_clock.model_wait_s, 4))
    for step in trajectory.steps:
        if step.metrics is not None:
            totals.prompt_tokens += step.metrics.prompt_tokens
            totals.completion_tokens += step.metrics.completion_tokens
            if step.metrics.cache == "hit":
                totals.cache_hits += 1
                totals.tokens_not_spent += step.metrics.prompt_tokens + step.metrics.completion_tokens
            elif step.metrics.cache == "miss":
                totals.cache_misses += 1
        if step.turn is not None:
            totals.turns = max(totals.turns, step.turn)
    return totals


def _write_evidence(trajectory: Trajectory, path: Path, out_dir: Path, final: FinalOutcome) -> Path | None:
    """Write the trajectory and the saved tools; where that fails the attempt is an error (`final` says so)."""
    try:
        write_trajectory(trajectory, path)
        write_saved_tools(trajectory, out_dir)
    except Exception as error:  # noqa: BLE001 - without its trajectory an attempt is not evidence
        final.verdict, final.error_class = Verdict.ERROR, type(error).__name__
        final.reason = f"could not write the trajectory: {error}"
        return None
    return path


def _conclude(
    task: Task,
    workdir: Path,
    sandbox: Sandbox,
    loop: LoopOutcome | None,
    failure: BaseException | None,
    verify: Verify | None,
    out_dir: Path | None = None,
) -> FinalOutcome:
    """The verdict: infrastructure failure -> ERROR; otherwise the hidden verifier decides."""
    if failure is not None or loop is None:
        message = failure.message if isinstance(failure, RsiError) else str(failure)
        return FinalOutcome(
            verdict=Verdict.ERROR,
            reason=message or "the harness stopped without an outcome",
            error_class=type(failure).__name__ if failure is not None else "RuntimeError",
            ended_by="error",
        )
    try:
        if verify is None:
            from rsi.verifier import verify as hidden_verify

            evidence = out_dir.absolute() / EVIDENCE_DIR if out_dir is not None else None
            checked = hidden_verify(task, workdir, sandbox, evidence_dir=evidence)
        else:
            checked = verify(task, workdir, sandbox)
    except Exception as error:  # noqa: BLE001 - a verifier crash is infrastructure, not a task failure
        return FinalOutcome(
            verdict=Verdict.ERROR,
            reason=f"verifier failed: {error}",
            error_class=type(error).__name__,
            ended_by=loop.ended_by,
        )
    verdict, reason = checked.verdict, checked.reason
    if loop.ended_by == "agent_timeout" and verdict is Verdict.FAILED:
        verdict, reason = Verdict.TIMEOUT, f"agent time limit reached; {reason}".rstrip("; ")
    if loop.note and verdict is not Verdict.PASSED:
        reason = f"{loop.note}; {reason}".rstrip("; ")
    return FinalOutcome(
        verdict=verdict,
        reason=reason,
        error_class="VerifierError" if verdict is Verdict.ERROR else "",
        ended_by=loop.ended_by,
        reward=checked.reward,
        verifier_wall_s=checked.wall_s,
        layer_scores=dict(checked.layer_scores),
        artifacts=_relative(checked.artifacts, out_dir),
    )


def _relative(artifacts: dict[str, str], out_dir: Path | None) -> dict[str, str]:
    """The verifier's kept files named relative to the attempt folder (so a moved runs/ folder still finds them)."""
    named = {}
    for name, raw in artifacts.items():
        path = Path(raw)
        if out_dir is not None and path.is_absolute() and path.is_relative_to(out_dir.absolute()):
            path = path.relative_to(out_dir.absolute())
        named[name] = path.as_posix()
    return named
