"""Per-turn specialist routing (Mixture-of-LoRA) and the context each specialist sees (pure).

`choose_specialist` picks, for every agent turn, one specialist adapter or the bare base (None):

- policy `fixed`: `routing.specialist` on every turn;
- policy `rules`: the first `[[routing.rules]]` entry whose `turn` matches the kind of this turn
  (`any`, `first`, `after_error`, `after_output`) and whose `pattern` (a regex, `re.search`) matches
  the last observation; no match means the bare base. On the first turn the "last observation" is
  the task instruction, so rules can route by what the task says;
- policy `learned`: the router the contract pins (rsi/harness/router.py) scores every specialist from
  the task's tags and instruction words, the turn kind and the last observation's words.

`build_context` gives a specialist its own turns in full and every other specialist's turns as
short summaries of at most `summary_tokens` tokens each (reply and observation separately), so the
chat stays system, user, (assistant, user)* for any chat template. Tokens are approximated as
characters / 4 (`approx_tokens`): close enough for English and code with BPE tokenizers, and it
needs no tokenizer, so routing stays a pure function of the trajectory.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from rsi.contracts.schema import RoutingSpec
from rsi.harness.router import RouterRecord, label, predict, turn_features
from rsi.harness.trajectory import RoutingDecision, TurnKind
from rsi.models.base import ChatMessage

CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class TurnRecord:
    """One finished agent turn, as routing and context building see it."""

    specialist: str | None
    reply: str
    observation: str
    error: bool


def approx_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def summarize(text: str, max_tokens: int) -> str:
    """The head of `text` within `max_tokens` (approximate), marked as cut when it was."""
    limit = max_tokens * CHARS_PER_TOKEN
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f" …[{approx_tokens(text) - max_tokens} more tokens]"


def turn_kind(previous: TurnRecord | None) -> TurnKind:
    if previous is None:
        return "first"
    return "after_error" if previous.error else "after_output"


@dataclass(frozen=True)
class TaskView:
    """What a learned router sees of the task: its tags and instruction (policy `learned`)."""

    router: RouterRecord
    tags: tuple[str, ...]
    instruction: str


def choose_specialist(
    routing: RoutingSpec, kind: TurnKind, last_observation: str, learned: TaskView | None = None
) -> RoutingDecision:
    """The specialist for one turn (None = bare base) and the reason, recorded in the trajectory."""
    if routing.policy == "learned":
        if learned is None:  # the configuration carries the router once its contract loaded it; never silently base
            raise ValueError("routing policy 'learned' without its router")
        features = turn_features(learned.tags, learned.instruction, kind, last_observation)
        specialist, reason = predict(learned.router, features)
        return RoutingDecision(specialist=specialist, turn_kind=kind, reason=reason)
    if routing.policy == "fixed":
        return RoutingDecision(specialist=routing.specialist or None, turn_kind=kind, reason="fixed")
    for index, rule in enumerate(routing.rules, start=1):
        if rule.turn not in ("any", kind):
            continue
        if rule.pattern and not re.search(rule.pattern, last_observation):
            continue
        return RoutingDecision(specialist=rule.specialist or None, turn_kind=kind, reason=f"rule {index}")
    return RoutingDecision(specialist=None, turn_kind=kind, reason="no rule matched")


def build_context(
    opening: list[ChatMessage], turns: list[TurnRecord], specialist: str | None, summary_tokens: int
) -> list[ChatMessage]:
    """The messages `specialist` is sent: its own turns in full, other turns summarized."""
    messages = list(opening)
    for number, turn in enumerate(turns, start=1):
        if turn.specialist == specialist:
            messages.append(ChatMessage(role="assistant", content=turn.reply))
            messages.append(ChatMessage(role="user", content=turn.observation))
            continue
        head = f"[turn {number} by {label(turn.specialist)}, summarized]"
        reply = summarize(turn.reply, summary_tokens) if summary_tokens else "(omitted)"
        observation = summarize(turn.observation, summary_tokens) if summary_tokens else "(omitted)"
        messages.append(ChatMessage(role="assistant", content=f"{head} {reply}"))
        messages.append(ChatMessage(role="user", content=observation))
    return messages
