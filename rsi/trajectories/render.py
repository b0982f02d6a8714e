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
    outcome: Any = trajectory.outcome
    code = getattr(outcome, "final_code", None) if outcome is not None else None
    if code:
        return str(code)
    for step in reversed(trajectory.steps):
        if step.source == "agent" and step.code:
            return step.code
    return ""


def agent_turns(trajectory: Trajectory) -> int:
    return trajectory.final_metrics.turns or sum(1 for s in trajectory.steps if s.source == "agent")
