"""Render one trajectory as the chat an SFT trainer learns from. Pure.

The conversation is the one the harness held with the model, message for message:

- `system`: the resolved system prompt (when the configuration had one);
- `user`: the task message exactly as the harness framed it (instruction, prompt style, finish hint);
- REPL substrate, per agent turn: `assistant` = the raw model reply (its ```python block included),
  then `user` = the observation the harness showed back (`Output: ...`, truncated as the model saw
  it, with the turns-left note, the no-code correction, or the restart notice);
- text substrate: only the completion that was written as the solution (best-of-n siblings that
  were not used are not what the agent did).

Environment events (time limits, session deaths) were never shown to the model and are left out.
A trailing observation after the last reply is dropped: SFT learns assistant turns, and a
conversation ending on a user turn teaches nothing after it. Every turn is rendered in full even
when routing showed some turns to a specialist only as summaries, because the exported data trains
the whole agent's behaviour; the manifest records the configurations it came from.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rsi.harness.trajectory import Trajectory


def render_messages(trajectory: Trajectory) -> list[dict[str, str]]:
    """`[{"role": ..., "content": ...}, ...]` for one trajectory (see the module docstring)."""
    messages: list[dict[str, str]] = []
    agent_steps = [s for s in trajectory.steps if s.source == "agent"]
    if trajectory.configuration.substrate == "text":
        written = [s for s in agent_steps if (s.observation or "").startswith("written to")]
        agent_steps = written[:1]
    for step in trajectory.steps:
        if step.source == "system" and step.message.strip():
            messages.append({"role": "system", "content": step.message})
        elif step.source == "user":
            messages.append({"role": "user", "content": step.message})
        elif step.source == "agent" and any(step is chosen for chosen in agent_steps):
            messages.append({"role": "assistant", "content": step.message})
            if trajectory.configuration.substrate == "repl" and step.observation is not None:
                messages.append({"role": "user", "content": step.observation})
    while messages and messages[-1]["role"] != "assistant":
        messages.pop()
    return messages


def final_code_of(trajectory: Trajectory) -> str:
    """The solution as verified if the trajectory kept it, else the code of the last agent turn."""
    code = trajectory.outcome.final_code if trajectory.outcome is not None else None
    if code:
        return str(code)
    for step in reversed(trajectory.steps):
        if step.source == "agent" and step.code:
            return step.code
    return ""


def agent_turns(trajectory: Trajectory) -> int:
    return trajectory.final_metrics.turns or sum(1 for s in trajectory.steps if s.source == "agent")


def render_deployed(
    config: Any, instruction: str, solution_file: str, code: str, tool_names: Sequence[str] = ()
) -> list[dict[str, str]]:
    """A solution rendered into the conversation `config` (the deployed configuration, an
    `rsi.config.Configuration`) would hold: its system prompt and its own task framing, built by the
    harness's own functions (rsi.harness.prompts), then one assistant reply in its answer format
    that writes `code` and finishes:

    - REPL substrate: one ```python block that writes the solution file and calls the end marker
      (a text end marker follows the block instead);
    - text substrate: one ```python block holding the file's contents.

    Transfer: what any configuration found becomes what the deployed one is trained to do. Not
    synthesized: the restatement and plan the `stepwise` framing asks for (the reply is the code
    only). `tool_names` are the deployed tool library's helpers, listed as the harness lists them.
    """
    from rsi.harness import prompts
    from rsi.harness.agent import end_marker_is_call

    harness = config.spec.harness
    by_call = end_marker_is_call(harness.end_marker)
    user = prompts.task_message(instruction, solution_file, substrate=harness.substrate, style=harness.prompt_style,
                                end_marker=harness.end_marker, end_by_call=by_call, tool_names=list(tool_names))
    messages = [{"role": m.role, "content": m.content} for m in prompts.first_messages(config.system_prompt, user)]
    if harness.substrate == "text":
        reply = f"```python\n{code.rstrip()}\n```"
    elif by_call:
        reply = f"```python\nopen({solution_file!r}, 'w').write({code!r})\n{harness.end_marker}\n```"
    else:
        reply = f"```python\nopen({solution_file!r}, 'w').write({code!r})\n```\n{harness.end_marker}"
    messages.append({"role": "assistant", "content": reply})
    return messages
