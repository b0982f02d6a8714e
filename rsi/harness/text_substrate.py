"""The text substrate: completions whose first Python block is the whole solution file.

Without execution feedback (`harness.check = "off"`, `repair_turns = 0`) this is best of n as it always
was: one request for `samples` completions, and the FIRST with a code block is written. With it:

- `harness.check = RULE`: every candidate is run against the task's public checks (rsi/harness/checks.py,
  inside the attempt's sandbox) and RULE (rsi/harness/selection.py) picks the one written. The hidden
  verifier never takes part in the choice: running candidates through it would make its verdict the
  agent's.
- `sampling.greedy_first`: one greedy completion is asked for first; the sampled ones follow only when a
  rule that stops at the first pass has not passed yet (most tasks the greedy reply solves then cost one
  completion, not n + 1).
- `harness.repair_turns = N`: while the written candidate fails a public check, the failing call, its
  expected value and what came back go to the model as a new turn (public values only), up to N times;
  a repaired candidate replaces the written one when it passes more checks.

Every candidate is a trajectory step (turn 1 for the first request's completions, turn 2+ for repairs)
with its check record, and every completion's tokens count. Only a completion's first Python block is
ever read, so requests stop once that block has closed (`stop_after_code`, see rsi/harness/agent.py).

Which fences are read is the task kind's (`reply`, `TaskKind.reply`): the first block in its main fence
is the solution file, and a kind that allows more files (a page's ```css, ```js) gets the first block of
each written beside it. Stopping at the first block is the models layer's Python rule, so it is asked for
only where the reply is one Python file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rsi.contracts.schema import HarnessSpec, RoutingSpec
from rsi.fences import PYTHON, PYTHON_REPLY, ReplyFormat, first_block_end
from rsi.harness import prompts, replies
from rsi.harness.agent import (
    AgentTimeout,
    LoopOutcome,
    call_model,
    make_request,
    safe_solution_path,
    stop_after_code,
)
from rsi.harness.checks import CandidateChecker
from rsi.harness.clock import AgentClock
from rsi.harness.routing import TaskView, choose_specialist
from rsi.harness.selection import OFF, SELECTION_RULES, better, choose_candidate
from rsi.harness.trajectory import CheckRecord, RoutingDecision, Step, StepMetrics, Trajectory, clean_text
from rsi.models.base import ChatMessage, ChatModel, Completion, GenerationResult


@dataclass
class Candidate:
    """One completion of the attempt: its (cut) text, its code (None: no block), its step and checks."""

    text: str
    code: str | None
    step: Step
    dropped: int = 0
    check: CheckRecord | None = None
    files: dict[str, str] | None = None
    """Other files the kind lets the reply carry (file -> text), written beside the solution file."""


@dataclass
class TextAttempt:
    """What the text substrate needs for one attempt (the loop's inputs, gathered once)."""

    harness: HarnessSpec
    model: ChatModel
    workdir: Path
    solution_file: str
    opening: list[ChatMessage]
    trajectory: Trajectory
    seed: int
    clock: AgentClock
    decision: RoutingDecision
    checker: CandidateChecker | None = None
    reply: ReplyFormat = PYTHON_REPLY

    @property
    def rule(self) -> str:
        return self.harness.check if self.checker is not None else OFF


def run_text_once(
    *, harness: HarnessSpec, routing: RoutingSpec, model: ChatModel, workdir: Path, solution_file: str,
    opening: list[ChatMessage], instruction: str, trajectory: Trajectory, seed: int, clock: AgentClock,
    checker: CandidateChecker | None = None, learned: TaskView | None = None, reply: ReplyFormat = PYTHON_REPLY,
) -> LoopOutcome:
    """Ask for candidates, check and select them where configured, repair, and write the chosen one."""
    attempt = TextAttempt(harness, model, workdir, solution_file, opening, trajectory, seed, clock,
                          choose_specialist(routing, "first", instruction, learned),
                          checker if harness.check != OFF or harness.repair_turns else None, reply)
    outcome = LoopOutcome(ended_by="text", turns=1)
    candidates: list[Candidate] = []
    for temperature, n in _rounds(harness):
        if not _ask(attempt, opening, temperature, n, 1, candidates, outcome):
            break
        if _settled(attempt, candidates):
            break
    chosen = _choose(attempt, candidates)
    if chosen is not None:
        chosen = _repair(attempt, candidates, chosen, outcome)
        _write(attempt, candidates[chosen])
    _annotate(candidates, chosen, solution_file, reply.main.tag)
    if chosen is None and outcome.ended_by == "text":
        outcome.note = f"no completion contained a ```{reply.main.tag} code block"
    return outcome


def _rounds(harness: HarnessSpec) -> list[tuple[float, int]]:
    """(temperature, completions) per request, in order: the greedy one first where asked."""
    sampling = harness.sampling
    if sampling.greedy_first and sampling.temperature > 0:
        return [(0.0, 1), (sampling.temperature, sampling.samples)]
    return [(sampling.temperature, sampling.samples)]


def _ask(
    attempt: TextAttempt, messages: list[ChatMessage], temperature: float, n: int, turn: int,
    candidates: list[Candidate], outcome: LoopOutcome,
) -> bool:
    """One request; each completion becomes a checked candidate. False when the agent's time ran out."""
    code_stop = stop_after_code() and attempt.reply.fences == (PYTHON,)
    request = make_request(attempt.harness, messages, attempt.seed + len(candidates), attempt.decision.specialist, n=n,
                           code_stop=code_stop).model_copy(update={"temperature": temperature})
    try:
        result = call_model(attempt.model, request, attempt.harness.timeouts.model_s, attempt.clock)
    except AgentTimeout as stop:
        attempt.trajectory.add_step("environment", message=str(stop))
        outcome.ended_by = "agent_timeout"
        return False
    outcome.turns = max(outcome.turns, turn)
    outcome.prompt_tokens += result.prompt_tokens
    outcome.completion_tokens += result.completion_tokens
    for index, completion in enumerate(result.completions):
        candidate = _candidate(attempt, result, index, completion, turn, code_stop)
        if candidate.code is not None and attempt.checker is not None and attempt.harness.check != OFF:
            candidate.check = attempt.checker.check(candidate.code)
            candidate.step.check = candidate.check
        candidates.append(candidate)
    return True


def _candidate(
    attempt: TextAttempt, result: GenerationResult, index: int, completion: Completion, turn: int, code_stop: bool
) -> Candidate:
    text, finish_reason = completion.text, completion.finish_reason
    block_end = first_block_end(text, attempt.reply.main)
    if code_stop and block_end is not None:  # the same record whether or not the backend stopped there
        text, finish_reason = text[:block_end], "stop"
    code = replies.solution_code(clean_text(text), attempt.reply)
    dropped = 0
    if code is not None and block_end is None and finish_reason == "length":  # the block was cut open
        trimmed, dropped = replies.trim_cut_code(code)
        code = trimmed.rstrip("\n") + "\n"
    step = attempt.trajectory.add_step(
        "agent", turn=turn, message=text, code=code, routing=attempt.decision,
        metrics=StepMetrics(
            prompt_tokens=result.prompt_tokens if index == 0 else 0,  # a request's prompt counts once
            completion_tokens=completion.completion_tokens,
            latency_s=round(result.latency_s, 4),
            finish_reason=finish_reason,
            cache=result.cache, cached_from=result.cached_from,
        ),
    )
    files = replies.extra_files(clean_text(text), attempt.reply) if code is not None and attempt.reply.files else None
    return Candidate(text=text, code=code, step=step, dropped=dropped, files=files)


def _settled(attempt: TextAttempt, candidates: list[Candidate]) -> bool:
    """Whether later rounds can no longer change the choice (the rule stops at a first pass, or no checks)."""
    rule = attempt.harness.check
    if rule == OFF:
        return any(candidate.code is not None for candidate in candidates)
    if not SELECTION_RULES[rule].stops_at_first_pass:
        return False
    return any(candidate.check is not None and candidate.check.all_passed for candidate in candidates)


def _choose(attempt: TextAttempt, candidates: list[Candidate]) -> int | None:
    with_code = [index for index, candidate in enumerate(candidates) if candidate.code is not None]
    if attempt.harness.check == OFF:
        return with_code[0] if with_code else None
    return choose_candidate(attempt.harness.check, [candidate.check if candidate.code is not None else None
                                                    for candidate in candidates])


def _repair(attempt: TextAttempt, candidates: list[Candidate], chosen: int, outcome: LoopOutcome) -> int:
    """Repair turns on the chosen candidate while it fails a public check; the index finally written."""
    if not attempt.harness.repair_turns or attempt.checker is None or not attempt.checker.declared:
        return chosen
    current = candidates[chosen]
    if current.check is None and current.code is not None:
        current.check = current.step.check = attempt.checker.check(current.code)
    messages = list(attempt.opening)
    latest = current
    for turn in range(2, attempt.harness.repair_turns + 2):
        if current.check is None or current.check.all_passed or latest.check is None:
            break
        messages += [ChatMessage(role="assistant", content=latest.text),
                     ChatMessage(role="user", content=prompts.repair_message(
                         latest.check.first_failure, attempt.solution_file, "text", attempt.reply))]
        latest.step.observation = messages[-1].content
        before = len(candidates)
        if not _ask(attempt, messages, attempt.harness.sampling.temperature, 1, turn, candidates, outcome):
            break
        latest = candidates[before]
        if latest.code is not None and latest.check is None:
            latest.check = latest.step.check = attempt.checker.check(latest.code)
        if latest.check is not None and better(latest.check, current.check):
            chosen, current = before, latest
    return chosen


def _write(attempt: TextAttempt, candidate: Candidate) -> None:
    target = safe_solution_path(attempt.workdir, attempt.solution_file)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(candidate.code or "", encoding="utf-8")
    for file, text in (candidate.files or {}).items():
        extra = safe_solution_path(attempt.workdir, file)
        extra.parent.mkdir(parents=True, exist_ok=True)
        extra.write_text(text, encoding="utf-8")


def _annotate(candidates: list[Candidate], chosen: int | None, solution_file: str, tag: str = "python") -> None:
    """Each candidate's observation says whether it was written and what its public checks found."""
    for index, candidate in enumerate(candidates):
        checked = f" ({candidate.check.passed}/{candidate.check.total} public checks passed)" if candidate.check else ""
        if index == chosen:
            cut = f" (cut off: last {candidate.dropped} unfinished line(s) dropped)" if candidate.dropped else ""
            note = f"written to {solution_file}{cut}{checked}"
            if candidate.check is not None:
                candidate.check.selected = True
        elif candidate.code is None:
            note = f"not used: no ```{tag} code block"
        else:
            note = f"not used: completion {chosen + 1 if chosen is not None else '?'} was written{checked}"
        if candidate.step.observation is None:
            candidate.step.observation = note
        else:  # a repaired candidate: keep the repair message the model was shown, and say what became of it
            candidate.step.observation = f"{note}\n{candidate.step.observation}"
