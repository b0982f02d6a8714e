"""The agent loop of the REPL substrate, and the model call both substrates share.

`run_repl_loop` drives a stateful REPL (`ReplSession`) turn by turn; with `harness.repair_turns`, a
submit() whose solution fails a public check is answered with the failing check instead of ending. Both record every step into the
trajectory as they go and return why they ended. Neither raises for what the agent did (no code,
crashing code, runaway code, a dead session); they raise only `ModelError` (backend down or too
slow) and `SandboxError` (a REPL that cannot be restarted), which the attempt runner turns into
Verdict.ERROR.

The text substrate lives in rsi/harness/text_substrate.py (candidates, public checks, selection, repair).

Text substrate: only a completion's first Python block is ever read, so its request asks the backend
to stop once that block has closed (`GenerationRequest.stop_after_code`), and the recorded completion
ends at that block's closing fence whichever backend served it. What the agent is judged on is
unchanged; the tail is not decoded. On the shipped suite that tail was 47% of the text configurations'
completion tokens (bench/RESULTS.md, "profile of a run (2026-12-03, a65af5a and c9e6b50)"). `RSI_STOP_AFTER_CODE=0` decodes and keeps it (for
comparisons).
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rsi.contracts.schema import HarnessSpec, RoutingSpec
from rsi.errors import ModelError, SandboxError
from rsi.harness import prompts, replies
from rsi.harness.checks import CandidateChecker
from rsi.harness.clock import AgentClock
from rsi.harness.repl import ReplSession
from rsi.harness.routing import TaskView, TurnRecord, build_context, choose_specialist, turn_kind
from rsi.harness.selection import OFF, choose_candidate
from rsi.harness.trajectory import (
    CheckRecord,
    Execution,
    SavedToolRecord,
    StepMetrics,
    Trajectory,
    clean_text,
)
from rsi.models.base import ChatMessage, ChatModel, GenerationRequest, GenerationResult
from rsi.models.served import DeadlineReached, QueuedModel, wait_served

ENV_STOP_AFTER_CODE = "RSI_STOP_AFTER_CODE"  # 0: text-substrate completions decode on to their end


def stop_after_code() -> bool:
    """Whether text-substrate completions end at their first Python block's closing fence (the default)."""
    return os.environ.get(ENV_STOP_AFTER_CODE, "1").strip() != "0"


class AgentTimeout(Exception):
    """The attempt's agent time ran out while waiting for the model."""


@dataclass
class LoopOutcome:
    """Why and how an agent loop ended."""

    ended_by: str  # submit | end_marker | max_turns | agent_timeout | session_died | text
    turns: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    note: str = ""


def end_marker_is_call(end_marker: str) -> bool:
    """'submit()' or 'done()' end by being called in the REPL; anything else is a text marker."""
    return end_marker.endswith("()") and end_marker[:-2].isidentifier()


def call_model(model: ChatModel, request: GenerationRequest, model_s: float, clock: AgentClock) -> GenerationResult:
    """One model call, bounded apart from the agent's time, without trusting the backend to time itself out.

    The agent's clock stops while the model is asked (rsi/harness/clock.py): time queued or generating is
    ours, not the agent's. A backend that queues in process (`rsi.models.served.QueuedModel`) gets
    `model_s` to start serving the request and, once it does, may take as long as it keeps producing
    tokens: `model_s` without one is a stalled model (a busy machine slows a model, it does not stall
    it); any other call runs in a daemon thread for at most `model_s` (a backend stuck past it is
    abandoned: it cannot be cancelled from here). Past either bound the call fails as a ModelError: an
    infrastructure error, retried, never the agent's failure. Only an agent whose own time is already
    spent gets an AgentTimeout.
    """
    if clock.expired():
        raise AgentTimeout("agent time limit reached before the model call")
    with clock.waiting_for_model():
        if isinstance(model, QueuedModel):  # in-process queue: model_s to start serving, then model_s per token
            try:
                return _checked(model, wait_served(model, request, model_s, time.monotonic() + model_s))
            except DeadlineReached:
                raise ModelError(f"model {model.name!r} did not serve the request within model_s={model_s:g}s of "
                                 "queueing (a busy or stuck engine)") from None
            except ModelError:
                raise
            except Exception as failure:  # noqa: BLE001 - any backend fault is the model's, never the agent's
                raise ModelError(f"model {model.name!r} failed: {type(failure).__name__}: {failure}") from failure
        return _threaded_call(model, request, model_s)


def _threaded_call(model: ChatModel, request: GenerationRequest, model_s: float) -> GenerationResult:
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["result"] = model.generate(request)
        except BaseException as error:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = error

    # The caller's context travels with the call (the response cache reads which run is asking from it).
    worker = threading.Thread(target=contextvars.copy_context().run, args=(target,), name="model-call", daemon=True)
    worker.start()
    worker.join(model_s)
    if worker.is_alive():
        raise ModelError(f"model {model.name!r} did not answer within model_s={model_s:g}s")
    if "error" in box:
        error = box["error"]
        if isinstance(error, ModelError):
            raise error
        raise ModelError(f"model {model.name!r} failed: {type(error).__name__}: {error}") from error  # type: ignore[misc]
    result = box["result"]
    assert isinstance(result, GenerationResult)
    return _checked(model, result)


def _checked(model: ChatModel, result: GenerationResult) -> GenerationResult:
    if not result.completions:
        raise ModelError(f"model {model.name!r} returned no completions")
    return result


def make_request(
    harness: HarnessSpec, messages: list[ChatMessage], seed: int, specialist: str | None, n: int = 1, *, code_stop: bool = False
) -> GenerationRequest:
    sampling = harness.sampling
    return GenerationRequest(
        messages=messages,
        n=n,
        temperature=sampling.temperature,
        top_p=sampling.top_p,
        max_tokens=sampling.max_tokens,
        stop=list(sampling.stop),
        stop_after_code=code_stop,
        seed=seed,
        specialist=specialist,
    )


@dataclass
class Submissions:
    """The REPL substrate's execution feedback: each submit() checks the solution file against the task's
    public checks; a failing check with repair turns left is shown to the agent instead of ending the
    attempt (each repair adds one turn to `max_turns`). Under a selection rule, the submitted version the
    rule picks is the one left in the working directory at the end."""

    checker: CandidateChecker | None
    harness: HarnessSpec
    workdir: Path
    solution_file: str
    versions: list[tuple[str, CheckRecord]] = field(default_factory=list)
    repairs_used: int = 0

    @property
    def turn_limit(self) -> int:
        return self.harness.max_turns + self.repairs_used

    def on_end(self, ended_by: str, observation: str) -> tuple[CheckRecord | None, str, str]:
        """(check record, how the loop ends, observation) once the agent submitted."""
        if self.checker is None or ended_by not in ("submit", "end_marker"):
            return None, ended_by, observation
        code = read_submitted(self.workdir, self.solution_file)
        record = self.checker.check(code)
        self.versions.append((code, record))
        if record.all_passed or self.repairs_used >= self.harness.repair_turns or not self.checker.declared:
            return record, ended_by, observation
        self.repairs_used += 1
        return record, "", f"{observation}\n{prompts.repair_message(record.first_failure, self.solution_file, 'repl')}"

    def finish(self) -> None:
        """Leave the version the selection rule picks in the working directory (no rule: the last one)."""
        if self.harness.check == OFF or not self.versions:
            return
        chosen = choose_candidate(self.harness.check, [record for _, record in self.versions])
        if chosen is None:
            return
        self.versions[chosen][1].selected = True
        if chosen != len(self.versions) - 1:
            try:
                safe_solution_path(self.workdir, self.solution_file).write_text(self.versions[chosen][0], encoding="utf-8")
            except (ValueError, OSError):  # the agent made the solution file a link out or a folder: the verifier judges it
                return


def run_repl_loop(
    *,
    harness: HarnessSpec,
    routing: RoutingSpec,
    model: ChatModel,
    session: ReplSession,
    opening: list[ChatMessage],
    instruction: str,
    trajectory: Trajectory,
    seed: int,
    clock: AgentClock,
    checkpoint: Callable[[], None] = lambda: None,
    submissions: Submissions | None = None,
    learned: TaskView | None = None,
) -> LoopOutcome:
    """Turns until submit(), the end marker, max_turns, the agent deadline, or an unrecoverable REPL."""
    outcome = LoopOutcome(ended_by="max_turns")
    turns: list[TurnRecord] = []
    turn = 0
    while turn < (submissions.turn_limit if submissions is not None else harness.max_turns):
        turn += 1
        previous = turns[-1] if turns else None
        kind = turn_kind(previous)
        decision = choose_specialist(routing, kind, previous.observation if previous else instruction, learned)
        messages = build_context(opening, turns, decision.specialist, routing.summary_tokens)
        try:
            result = call_model(model, make_request(harness, messages, seed, decision.specialist), harness.timeouts.model_s,
                                clock)
        except AgentTimeout as stop:
            trajectory.add_step("environment", message=str(stop))
            outcome.ended_by = "agent_timeout"
            break
        completion = result.completions[0]
        reply = clean_text(completion.text)
        outcome.turns = turn
        outcome.prompt_tokens += result.prompt_tokens
        outcome.completion_tokens += result.completion_tokens
        metrics = StepMetrics(
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            latency_s=round(result.latency_s, 4),
            finish_reason=completion.finish_reason,
            cache=result.cache, cached_from=result.cached_from,
        )
        code, observation, execution, ended_by = _act(
            reply, completion.finish_reason, session, harness, trajectory, turn, clock, outcome
        )
        check = None
        if submissions is not None:
            check, ended_by, observation = submissions.on_end(ended_by, observation)
        trajectory.add_step(
            "agent",
            turn=turn,
            message=reply,
            code=code,
            observation=observation,
            routing=decision,
            execution=execution,
            metrics=metrics,
            check=check,
        )
        turns.append(TurnRecord(decision.specialist, reply, observation, execution.error))
        checkpoint()
        if ended_by:
            outcome.ended_by = ended_by
            break
        if clock.expired():
            trajectory.add_step("environment", message="agent time limit reached")
            outcome.ended_by = "agent_timeout"
            break
    if submissions is not None:
        submissions.finish()
    return outcome


def _act(
    reply: str, finish_reason: str, session: ReplSession, harness: HarnessSpec, trajectory: Trajectory, turn: int,
    clock: AgentClock, outcome: LoopOutcome,
) -> tuple[str | None, str, Execution, str]:
    """Run the reply's code in the REPL: (code run, observation, execution, how the loop ends or '')."""
    by_call = end_marker_is_call(harness.end_marker)
    code = replies.repl_code(reply)
    if code is None:
        if not by_call and replies.mentions_marker(reply, harness.end_marker):
            return None, "(ended by the end marker)", Execution(error=True), "end_marker"
        return None, prompts.no_code_correction(harness.end_marker, by_call), Execution(error=True), ""
    dropped = 0
    if finish_reason == "length":
        # A reply cut mid-statement still runs up to its last complete statement.
        code, dropped = replies.trim_cut_code(code)
    cell = session.run(code)
    for tool in cell.saved_tools:
        trajectory.tools_saved.append(SavedToolRecord(turn=turn, **tool.__dict__))
    turns_left = max(0, harness.max_turns - turn)
    observation = prompts.observation_text(cell.output, cell.error, harness.observation_chars, turns_left=turns_left or None)
    if dropped:
        observation = prompts.cut_note(dropped) + observation
    execution = Execution(
        error=bool(cell.error) or cell.died,
        timed_out=cell.timed_out,
        session_died=cell.died,
        output_bytes=cell.output_bytes,
        wall_s=round(cell.wall_s, 4),
    )
    ended_by = ""
    if cell.submitted:
        ended_by = "submit"
    elif not by_call and replies.mentions_marker(reply, harness.end_marker):
        ended_by = "end_marker"
    elif cell.died:
        if clock.expired():
            ended_by = "agent_timeout"
        else:
            # Files survive a dead session; only the variables are lost. Say so and go on.
            try:
                session.restart()
                observation += "\nThe Python session was restarted: variables are gone, files remain."
            except SandboxError as error:
                ended_by = "session_died"
                outcome.note = f"the REPL died and could not be restarted: {error.message}"
    return code, observation, execution, ended_by


def read_submitted(workdir: Path, solution_file: str, limit: int = 4 * 1024 * 1024) -> str:
    """The solution file's text as submitted, '' when the agent left no regular file there (a link out of the working
    directory, a FIFO, a folder, an unreadable file): the agent's own doing, so its check fails, never the attempt."""
    import os
    import stat

    try:
        path = safe_solution_path(workdir, solution_file)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symbolic link loop, on older Pythons
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, limit).decode("utf-8", errors="replace")
    except OSError:
        return ""
    finally:
        os.close(fd)


def safe_solution_path(workdir: Path, solution_file: str) -> Path:
    """The solution file inside the working directory (never outside it)."""
    target = (workdir / solution_file).resolve()
    if not target.is_relative_to(workdir.resolve()):
        raise ValueError(f"solution_file {solution_file!r} points outside the working directory")
    return target
