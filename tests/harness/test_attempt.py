"""run_attempt end to end with the scripted model: real sandbox, real REPL, real verifier, real tasks."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsi.errors import ModelError
from rsi.harness.attempt import run_attempt
from rsi.harness.trajectory import read_trajectory
from rsi.models.scripted import ScriptedModel
from rsi.verdict import Verdict

GOOD_ADD = "```python\nopen('solution.py', 'w').write('def add(a, b):\\n    return a + b\\n')\n```"
SUBMIT = "```python\nsubmit()\n```"


def attempt(config, task, model, sandbox, open_tmp: Path, **kwargs):
    return run_attempt(config, task, model, sandbox, open_tmp / "attempt", seed=7, **kwargs)


def test_a_correct_solution_then_submit_passes_and_the_trajectory_round_trips(
    config_factory, pyfuncs, sandbox, open_tmp
):
    config = config_factory(harness={"max_turns": 4})
    model = ScriptedModel([GOOD_ADD, "Checking.\n```python\nfrom solution import add\nadd(2, 3)\n```", SUBMIT])
    outcome = attempt(config, pyfuncs["add-two"], model, sandbox, open_tmp, attempt_id="a1")

    assert outcome.verdict is Verdict.PASSED, outcome.reason
    assert (outcome.ended_by, outcome.turns, outcome.attempt_id) == ("submit", 3, "a1")
    assert outcome.final_code == "def add(a, b):\n    return a + b\n"
    assert outcome.prompt_tokens > 0 and outcome.completion_tokens > 0
    assert outcome.isolation is not None and outcome.isolation.backend.startswith("local")
    assert outcome.started_at <= outcome.finished_at and outcome.started_at.tzinfo is not None

    trajectory = read_trajectory(outcome.trajectory_path)
    assert trajectory.model_dump() == type(trajectory).model_validate_json(trajectory.model_dump_json()).model_dump()
    assert [s.source for s in trajectory.steps] == ["system", "user", "agent", "agent", "agent"]
    assert trajectory.steps[3].observation.startswith("Output:\n```\n5\n```")
    assert trajectory.task.key == "pyfuncs/add-two" and trajectory.task.content_hash == pyfuncs["add-two"].content_hash
    assert trajectory.configuration.config_hash == config.config_hash
    assert trajectory.outcome.verdict is Verdict.PASSED and trajectory.outcome.final_code == outcome.final_code
    assert trajectory.final_metrics.completion_tokens == outcome.completion_tokens
    # The model was sent what the trajectory says it was: system, task, then alternating turns.
    last = model.requests[-1]
    assert [m.role for m in last.messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert last.seed == 7 and last.max_tokens == config.spec.harness.sampling.max_tokens


def test_a_whole_attempt_on_every_sandbox_backend(every_backend, config_factory, pyfuncs, open_tmp):
    model = ScriptedModel([GOOD_ADD, "```python\nfrom solution import add\nadd(2, 3)\n```", SUBMIT])
    outcome = attempt(config_factory(), pyfuncs["add-two"], model, every_backend, open_tmp)
    assert (outcome.verdict, outcome.turns) == (Verdict.PASSED, 3), outcome.reason
    assert outcome.isolation == every_backend.isolation()


def test_max_turns_without_submit_is_verified_and_fails(config_factory, pyfuncs, sandbox, open_tmp):
    wrong = "```python\nopen('solution.py', 'w').write('def add(a, b):\\n    return a - b\\n')\n```"
    outcome = attempt(config_factory(harness={"max_turns": 2}), pyfuncs["add-two"], ScriptedModel([wrong, wrong]),
                      sandbox, open_tmp)
    assert outcome.verdict is Verdict.FAILED
    assert (outcome.ended_by, outcome.turns) == ("max_turns", 2)


def test_max_turns_with_a_correct_file_still_passes(config_factory, pyfuncs, sandbox, open_tmp):
    outcome = attempt(config_factory(harness={"max_turns": 1}), pyfuncs["add-two"], ScriptedModel([GOOD_ADD]),
                      sandbox, open_tmp)
    assert (outcome.verdict, outcome.ended_by) == (Verdict.PASSED, "max_turns")


def test_malformed_output_gets_a_corrective_observation(config_factory, pyfuncs, sandbox, open_tmp):
    model = ScriptedModel(["I think add returns a + b.", "", GOOD_ADD + "\n" + SUBMIT])
    outcome = attempt(config_factory(harness={"max_turns": 3}), pyfuncs["add-two"], model, sandbox, open_tmp)
    assert outcome.verdict is Verdict.PASSED and outcome.turns == 3
    steps = [s for s in read_trajectory(outcome.trajectory_path).steps if s.source == "agent"]
    assert steps[0].code is None and "no ```python code block" in steps[0].observation
    assert steps[1].code is None and steps[1].execution.error
    assert steps[2].routing.turn_kind == "after_error"
    assert model.requests[1].messages[-1].content == steps[0].observation


def test_a_reply_cut_at_max_tokens_runs_its_complete_statements(config_factory, pyfuncs, sandbox, open_tmp):
    reply = GOOD_ADD[: -len("```")] + "values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]\n```"
    max_tokens = (len(reply) - 30) // 4  # the scripted model cuts at 4 characters per token
    config = config_factory(harness={"max_turns": 1, "sampling": {"max_tokens": max_tokens}})
    outcome = attempt(config, pyfuncs["add-two"], ScriptedModel([reply]), sandbox, open_tmp)
    assert outcome.verdict is Verdict.PASSED, outcome.reason
    step = [s for s in read_trajectory(outcome.trajectory_path).steps if s.source == "agent"][0]
    assert step.metrics.finish_reason == "length" and "values" not in step.code
    assert step.observation.startswith("(Your reply was cut off; its last 1 unfinished line did not run.)")


def test_state_persists_across_turns(config_factory, pyfuncs, sandbox, open_tmp):
    model = ScriptedModel([
        "```python\nbody = 'def add(a, b):\\n    return a + b\\n'\n```",
        "```python\nopen('solution.py', 'w').write(body)\nsubmit()\n```",
    ])
    outcome = attempt(config_factory(harness={"max_turns": 3}), pyfuncs["add-two"], model, sandbox, open_tmp)
    assert (outcome.verdict, outcome.turns, outcome.ended_by) == (Verdict.PASSED, 2, "submit")


def test_a_runaway_step_is_interrupted_and_reported(config_factory, pyfuncs, sandbox, open_tmp):
    config = config_factory(harness={"max_turns": 3, "timeouts": {"step_s": 1.0}})
    model = ScriptedModel(["```python\nx = 1\nwhile True:\n    x += 1\n```", GOOD_ADD + "\n" + SUBMIT])
    outcome = attempt(config, pyfuncs["add-two"], model, sandbox, open_tmp)
    assert outcome.verdict is Verdict.PASSED
    first = [s for s in read_trajectory(outcome.trajectory_path).steps if s.source == "agent"][0]
    assert first.execution.timed_out and not first.execution.session_died
    assert "StepTimeout" in first.observation and "1s" in first.observation


def test_a_dead_repl_is_reported_and_restarted(config_factory, pyfuncs, sandbox, open_tmp):
    model = ScriptedModel(["```python\nimport os\nos._exit(3)\n```", GOOD_ADD + "\n" + SUBMIT])
    outcome = attempt(config_factory(harness={"max_turns": 3}), pyfuncs["add-two"], model, sandbox, open_tmp)
    assert outcome.verdict is Verdict.PASSED
    first = [s for s in read_trajectory(outcome.trajectory_path).steps if s.source == "agent"][0]
    assert first.execution.session_died and "restarted" in first.observation


class _StartsOnce:
    """The real sandbox, failing exactly the second start (the REPL's restart; the verifier's works)."""

    def __init__(self, inner) -> None:
        self._inner = inner
        self.name = inner.name
        self.python = inner.python
        self.starts = 0

    def start(self, *args, **kwargs):
        from rsi.errors import SandboxError

        self.starts += 1
        if self.starts == 2:
            raise SandboxError("sandbox engine went away")
        return self._inner.start(*args, **kwargs)

    def __getattr__(self, item):
        return getattr(self._inner, item)


def test_a_repl_that_dies_and_cannot_restart_ends_the_attempt_and_is_still_verified(
    config_factory, pyfuncs, sandbox, open_tmp
):
    crash = GOOD_ADD.replace("\n```", "\nimport os\nos._exit(1)\n```")
    model = ScriptedModel([crash, SUBMIT])
    outcome = attempt(config_factory(harness={"max_turns": 3}), pyfuncs["add-two"], model, _StartsOnce(sandbox), open_tmp)
    assert (outcome.verdict, outcome.ended_by, outcome.turns) == (Verdict.PASSED, "session_died", 1)
    failing = ScriptedModel(["```python\nimport os\nos._exit(1)\n```"])
    lost = attempt(config_factory(), pyfuncs["add-two"], failing, _StartsOnce(sandbox), open_tmp / "second")
    assert (lost.verdict, lost.ended_by) == (Verdict.FAILED, "session_died")
    assert "could not be restarted: sandbox engine went away" in lost.reason


def test_huge_output_is_truncated_to_observation_chars(config_factory, pyfuncs, sandbox, open_tmp):
    config = config_factory(harness={"max_turns": 1, "observation_chars": 400})
    model = ScriptedModel(["```python\nprint('START')\nprint('x' * 100000)\nprint('END')\n```"])
    outcome = attempt(config, pyfuncs["add-two"], model, sandbox, open_tmp)
    step = [s for s in read_trajectory(outcome.trajectory_path).steps if s.source == "agent"][0]
    assert step.execution.output_bytes > 100000
    assert "START" in step.observation and "END" in step.observation and "characters cut" in step.observation
    assert len(step.observation) < 400 + 40


def test_a_textual_end_marker_ends_the_attempt(config_factory, pyfuncs, sandbox, open_tmp):
    config = config_factory(harness={"max_turns": 4, "end_marker": "DONE"})
    outcome = attempt(config, pyfuncs["add-two"], ScriptedModel([GOOD_ADD + "\nDONE"]), sandbox, open_tmp)
    assert (outcome.verdict, outcome.ended_by, outcome.turns) == (Verdict.PASSED, "end_marker", 1)


def test_a_model_outage_is_an_error_not_a_failure(config_factory, pyfuncs, sandbox, open_tmp):
    model = ScriptedModel([GOOD_ADD, ModelError("backend unreachable")])
    outcome = attempt(config_factory(harness={"max_turns": 3}), pyfuncs["add-two"], model, sandbox, open_tmp)
    assert outcome.verdict is Verdict.ERROR and outcome.error_class == "ModelError"
    assert "backend unreachable" in outcome.reason
    trajectory = read_trajectory(outcome.trajectory_path)
    assert trajectory.outcome.verdict is Verdict.ERROR and trajectory.final_metrics.turns == 1


def test_a_model_slower_than_model_s_is_an_error(config_factory, pyfuncs, sandbox, open_tmp):
    config = config_factory(harness={"timeouts": {"model_s": 0.5, "agent_s": 60}})
    outcome = attempt(config, pyfuncs["add-two"], ScriptedModel([GOOD_ADD], delay_s=3.0), sandbox, open_tmp)
    assert (outcome.verdict, outcome.error_class) == (Verdict.ERROR, "ModelError")
    assert "did not answer within model_s=0.5s" in outcome.reason
    assert outcome.wall_s < 3.0  # the harness did not wait for the stuck backend


class _BrokenPython:
    """The real sandbox, misconfigured with an interpreter that does not exist."""

    def __init__(self, inner) -> None:
        self._inner = inner
        self.name = inner.name
        self.python = "/nonexistent/python3"

    def __getattr__(self, item):
        return getattr(self._inner, item)


def test_a_sandbox_that_cannot_start_the_repl_is_an_error(config_factory, pyfuncs, sandbox, open_tmp):
    outcome = attempt(config_factory(), pyfuncs["add-two"], ScriptedModel([GOOD_ADD]), _BrokenPython(sandbox), open_tmp)
    assert outcome.verdict is Verdict.ERROR and outcome.error_class == "SandboxError"
    assert outcome.turns == 0 and outcome.trajectory_path.is_file()


@pytest.mark.parametrize(("override", "key"), [
    ({"routing": {"policy": "rules", "rules": [{"pattern": "(bad"}]}}, "pattern"),
    ({"harness": {"tools": ["submit", "run_hidden_tests"]}}, "tools"),
])
def test_a_bad_routing_regex_or_tool_never_reaches_an_attempt(config_factory, override, key):
    """The contract schema rejects them (so `rsi hcp validate` reports them with file:line:key,
    tests/contracts/malformed/); before, every attempt of such a configuration ended as a retried error."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=key):
        config_factory(**override)


def test_the_agent_deadline_ends_the_attempt_as_timeout(config_factory, pyfuncs, sandbox, open_tmp):
    # The agent's own time runs out: its cells sleep (the model answers at once).
    config = config_factory(harness={"max_turns": 5, "timeouts": {"agent_s": 1.5, "step_s": 5}})
    model = ScriptedModel(["```python\nimport time\ntime.sleep(1.0)\n```"] * 5)
    outcome = attempt(config, pyfuncs["add-two"], model, sandbox, open_tmp)
    assert (outcome.verdict, outcome.ended_by) == (Verdict.TIMEOUT, "agent_timeout")
    assert outcome.turns <= 2


def test_time_spent_waiting_for_a_slow_model_is_not_the_agents(config_factory, pyfuncs, sandbox, open_tmp):
    # Three turns of 1 s model latency against 1.5 s of agent time: before, the attempt timed out (a task
    # failure caused by our slowness); the agent's own time is a few milliseconds, so it passes.
    config = config_factory(harness={"max_turns": 3, "timeouts": {"agent_s": 1.5, "model_s": 10}})
    model = ScriptedModel(["```python\nx = 1\n```", GOOD_ADD, SUBMIT], delay_s=1.0)
    outcome = attempt(config, pyfuncs["add-two"], model, sandbox, open_tmp)
    assert (outcome.verdict, outcome.ended_by, outcome.turns) == (Verdict.PASSED, "submit", 3), outcome.reason
    totals = read_trajectory(outcome.trajectory_path).final_metrics
    assert totals.model_wait_s >= 3.0 and totals.wall_s >= totals.model_wait_s


def test_a_queued_model_that_never_serves_is_an_error_not_a_timeout(config_factory, pyfuncs, sandbox, open_tmp):
    from rsi.models.base import GenerationRequest
    from rsi.models.served import QueuedModel, ServedFuture

    class NeverServed:
        """A backend whose queue never reaches this request (a stuck engine)."""

        name = "stuck"

        def submit(self, request: GenerationRequest) -> ServedFuture:
            return ServedFuture()

        def number_format(self) -> str:
            return ""

    assert isinstance(NeverServed(), QueuedModel)

    config = config_factory(harness={"timeouts": {"model_s": 0.3, "agent_s": 30}})  # old: a 30 s timeout
    outcome = attempt(config, pyfuncs["add-two"], NeverServed(), sandbox, open_tmp)  # type: ignore[arg-type]
    assert (outcome.verdict, outcome.error_class) == (Verdict.ERROR, "ModelError"), outcome.reason
    assert "did not serve the request within model_s=0.3s" in outcome.reason


class _SlowQueuedModel:
    """A queued backend on a loaded machine: each request is served `tokens` tokens at `every_s` apart
    (or, with `stall_after`, stops producing tokens after that many: a hung engine)."""

    name = "slow-queued"

    def __init__(self, reply: str, tokens: int, every_s: float, stall_after: int | None = None) -> None:
        self.reply, self.tokens, self.every_s, self.stall_after = reply, tokens, every_s, stall_after

    def number_format(self) -> str:
        return ""

    def submit(self, request):
        import threading
        import time

        from rsi.models.base import Completion, GenerationResult
        from rsi.models.served import ServedFuture

        future = ServedFuture()

        def serve() -> None:
            future.set_running_or_notify_cancel()
            for index in range(self.tokens):
                if future.abandoned.is_set() or index == self.stall_after:
                    return  # abandoned, or hung: never resolves
                time.sleep(self.every_s)
                future.progress.mark()
            future.set_result(GenerationResult(completions=[Completion(text=self.reply, completion_tokens=self.tokens)],
                                               prompt_tokens=10, completion_tokens=self.tokens))

        threading.Thread(target=serve, daemon=True).start()
        return future


def test_a_slow_but_progressing_model_is_waited_for(config_factory, pyfuncs, sandbox, open_tmp):
    """Serving that outlasts model_s while it keeps producing tokens is a busy machine, not a dead model:
    the call waits (before issue 37's second fix it failed as a retried ModelError, which on a shared CPU
    made every attempt after a load step an error). Four times model_s in all, a token every 0.1 s."""
    config = config_factory(harness={"max_turns": 1, "timeouts": {"model_s": 0.5, "agent_s": 30}})
    model = _SlowQueuedModel(GOOD_ADD, tokens=20, every_s=0.1)
    outcome = attempt(config, pyfuncs["add-two"], model, sandbox, open_tmp)  # type: ignore[arg-type]
    assert outcome.verdict is Verdict.PASSED, outcome.reason
    assert read_trajectory(outcome.trajectory_path).final_metrics.model_wait_s >= 2.0


def test_a_model_that_stops_producing_tokens_is_an_error(config_factory, pyfuncs, sandbox, open_tmp):
    config = config_factory(harness={"max_turns": 1, "timeouts": {"model_s": 0.5, "agent_s": 30}})
    model = _SlowQueuedModel(GOOD_ADD, tokens=20, every_s=0.1, stall_after=3)
    outcome = attempt(config, pyfuncs["add-two"], model, sandbox, open_tmp)  # type: ignore[arg-type]
    assert (outcome.verdict, outcome.error_class) == (Verdict.ERROR, "ModelError"), outcome.reason
    assert "made no progress for model_s=0.5s" in outcome.reason
    assert outcome.wall_s < 5.0


def test_per_turn_routing_is_recorded_and_served(config_factory, pyfuncs, sandbox, open_tmp):
    config = config_factory(
        specialists=["planner", "debugger"],
        routing={
            "policy": "rules",
            "summary_tokens": 8,
            "rules": [
                {"turn": "first", "specialist": "planner"},
                {"turn": "after_error", "pattern": "ZeroDivision", "specialist": "debugger"},
            ],
        },
        harness={"max_turns": 4},
    )
    plan = "Plan: " + "p" * 200 + "\n```python\nratio = 1 / 0\n```"
    model = ScriptedModel([plan, "```python\nratio = 0.5\n```", GOOD_ADD + "\n" + SUBMIT])
    outcome = attempt(config, pyfuncs["add-two"], model, sandbox, open_tmp)
    assert outcome.verdict is Verdict.PASSED
    assert [r.specialist for r in model.requests] == ["planner", "debugger", None]
    routed = [s.routing for s in read_trajectory(outcome.trajectory_path).steps if s.source == "agent"]
    assert [(r.specialist, r.turn_kind, r.reason) for r in routed] == [
        ("planner", "first", "rule 1"),
        ("debugger", "after_error", "rule 2"),
        (None, "after_output", "no rule matched"),
    ]
    # The debugger sees the planner's turn only as a capped summary.
    seen = model.requests[1].messages[2].content
    assert seen.startswith("[turn 1 by planner, summarized] Plan: ") and "p" * 40 not in seen


def test_text_substrate_takes_the_first_completion_with_a_code_block(config_factory, pyfuncs, sandbox, open_tmp):
    config = config_factory(harness={"substrate": "text", "sampling": {"samples": 3}})
    model = ScriptedModel(["no code here", "```python\ndef add(a, b):\n    return a + b\n```", "```python\nbad(\n```"])
    outcome = attempt(config, pyfuncs["add-two"], model, sandbox, open_tmp)
    assert outcome.verdict is Verdict.PASSED and outcome.ended_by == "text"
    assert model.requests[0].n == 3 and outcome.turns == 1
    notes = [s.observation for s in read_trajectory(outcome.trajectory_path).steps if s.source == "agent"]
    assert notes[0].startswith("not used: no") and notes[1] == "written to solution.py"
    assert notes[2].startswith("not used: completion 2")


def test_text_substrate_drops_the_unfinished_tail_of_a_cut_completion(config_factory, pyfuncs, sandbox, open_tmp):
    reply = "```python\ndef add(a, b):\n    return a + b\n\n\ndef unfinished_helper(x, y, z):\n    return [x,"
    config = config_factory(harness={"substrate": "text", "sampling": {"max_tokens": (len(reply) - 2) // 4}})
    outcome = attempt(config, pyfuncs["add-two"], ScriptedModel([reply]), sandbox, open_tmp)
    assert outcome.verdict is Verdict.PASSED, outcome.reason
    assert outcome.final_code == "def add(a, b):\n    return a + b\n"
    step = [s for s in read_trajectory(outcome.trajectory_path).steps if s.source == "agent"][0]
    assert step.observation.startswith("written to solution.py (cut off: last")


TALKATIVE = "```python\ndef add(a, b):\n    return a + b\n```\nThis adds them. Also:\n```python\nprint(add(1, 2))\n```"


def test_text_substrate_asks_to_stop_at_the_first_block_and_records_it_cut_there(config_factory, pyfuncs, sandbox, open_tmp):
    config = config_factory(harness={"substrate": "text"})
    model = ScriptedModel([TALKATIVE])  # a backend that decodes on: the harness cuts
    outcome = attempt(config, pyfuncs["add-two"], model, sandbox, open_tmp)
    assert outcome.verdict is Verdict.PASSED, outcome.reason
    assert model.requests[0].stop_after_code
    step = [s for s in read_trajectory(outcome.trajectory_path).steps if s.source == "agent"][0]
    assert step.message == TALKATIVE[: TALKATIVE.index("```\nThis") + 3]
    assert step.metrics.finish_reason == "stop"


def test_text_substrate_keeps_the_whole_reply_when_told_to(config_factory, pyfuncs, sandbox, open_tmp, monkeypatch):
    monkeypatch.setenv("RSI_STOP_AFTER_CODE", "0")
    model = ScriptedModel([TALKATIVE])
    outcome = attempt(config_factory(harness={"substrate": "text"}), pyfuncs["add-two"], model, sandbox, open_tmp)
    assert outcome.verdict is Verdict.PASSED and not model.requests[0].stop_after_code
    assert [s for s in read_trajectory(outcome.trajectory_path).steps if s.source == "agent"][0].message == TALKATIVE


def test_a_closed_block_is_not_trimmed_when_the_reply_runs_on_to_the_length_limit(config_factory, pyfuncs, sandbox, open_tmp):
    """Only a block left open by the cut is trimmed: a closed one is what the model wrote, and it is
    judged as written whether or not the backend stopped at it."""
    reply = "```python\ndef add(a, b):\n    return a + b\nbroken = (\n```\n" + "and more words " * 20
    config = config_factory(harness={"substrate": "text", "sampling": {"max_tokens": len(reply) // 8}})
    outcome = attempt(config, pyfuncs["add-two"], ScriptedModel([reply]), sandbox, open_tmp)
    assert outcome.verdict is Verdict.FAILED
    assert outcome.final_code == "def add(a, b):\n    return a + b\nbroken = (\n"


def test_text_substrate_without_any_code_fails_with_a_reason(config_factory, pyfuncs, sandbox, open_tmp):
    config = config_factory(harness={"substrate": "text"})
    outcome = attempt(config, pyfuncs["add-two"], ScriptedModel(["just words"]), sandbox, open_tmp)
    assert outcome.verdict is Verdict.FAILED
    assert "no completion contained" in outcome.reason


@pytest.mark.parametrize("style", ["plain", "stepwise", "example"])
def test_each_prompt_style_reaches_the_model(style, config_factory, pyfuncs, sandbox, open_tmp):
    config = config_factory(harness={"prompt_style": style, "max_turns": 1})
    model = ScriptedModel([GOOD_ADD])
    attempt(config, pyfuncs["add-two"], model, sandbox, open_tmp)
    first_user = model.requests[0].messages[1].content
    assert pyfuncs["add-two"].instruction.strip() in first_user
    assert ("plan" in first_user) == (style == "stepwise")
    assert first_user.startswith("Example") == (style == "example")


def test_an_observer_sees_every_step_in_order_and_cannot_break_the_attempt(config_factory, pyfuncs, sandbox, open_tmp):
    seen: list[int] = []
    model = ScriptedModel([GOOD_ADD, SUBMIT])
    outcome = run_attempt(config_factory(), pyfuncs["add-two"], model, sandbox, open_tmp / "a", seed=0,
                          on_step=lambda trajectory, step: seen.append(step.step_id))
    assert seen == [s.step_id for s in read_trajectory(outcome.trajectory_path).steps] == [1, 2, 3, 4]

    def explode(trajectory, step):
        raise RuntimeError("display broke")

    again = run_attempt(config_factory(), pyfuncs["add-two"], ScriptedModel([GOOD_ADD, SUBMIT]), sandbox,
                        open_tmp / "b", seed=0, on_step=explode)
    assert again.verdict is Verdict.PASSED and again.turns == 2


def test_an_unwritable_attempt_folder_is_an_error_not_an_exception(config_factory, pyfuncs, sandbox, open_tmp):
    blocker = open_tmp / "file"
    blocker.write_text("not a folder")
    outcome = run_attempt(config_factory(), pyfuncs["add-two"], ScriptedModel([GOOD_ADD]), sandbox,
                          blocker / "attempt", seed=0)
    assert outcome.verdict is Verdict.ERROR and outcome.trajectory_path is None
    assert outcome.error_class in ("FileExistsError", "NotADirectoryError")


def test_unencodable_text_from_the_agent_is_cleaned_not_fatal(config_factory, pyfuncs, sandbox, open_tmp):
    reply = "Odd \ud800 text.\n```python\nraise ValueError('bad \\ud800 char')\n```"
    model = ScriptedModel([reply, GOOD_ADD + "\n" + SUBMIT])
    outcome = attempt(config_factory(harness={"max_turns": 2}), pyfuncs["add-two"], model, sandbox, open_tmp)
    assert outcome.verdict is Verdict.PASSED, outcome.reason
    first = [s for s in read_trajectory(outcome.trajectory_path).steps if s.source == "agent"][0]
    assert first.message.startswith("Odd ? text.") and "ValueError: bad ? char" in first.observation
    assert "\ud800" not in model.requests[1].messages[-1].content  # the model is sent clean text too
