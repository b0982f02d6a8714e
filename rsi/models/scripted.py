"""A deterministic scripted `ChatModel` for fast tests of the agent loop (never for real runs).

It replays a list of assistant replies in order, one per completion, or answers with a function of
the request (so a test can react to what the agent was shown). An `Exception` in the list is raised
instead of replying, which is how tests simulate a backend outage. Every request is kept in
`requests` so tests can check what each turn was sent (routing, summaries, sampling).
Token counts are approximate (characters / 4), like the harness's own accounting.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence

from rsi.errors import ModelError
from rsi.models.base import Completion, GenerationRequest, GenerationResult

Reply = str | BaseException
Responder = Callable[[GenerationRequest], str | list[str]]


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


class ScriptedModel:
    """Replays `script` (a list of replies, or a function of the request)."""

    def __init__(self, script: Sequence[Reply] | Responder, name: str = "scripted", delay_s: float = 0.0) -> None:
        self.name = name
        self._script = script
        self._cursor = 0
        self._lock = threading.Lock()
        self.delay_s = delay_s
        self.requests: list[GenerationRequest] = []
        self.adapters: dict[str, str] = {}
        self.closed = False

    def _next(self, request: GenerationRequest) -> list[str]:
        if callable(self._script):
            answer = self._script(request)
            return [answer] if isinstance(answer, str) else list(answer)
        replies = []
        for _ in range(request.n):
            if self._cursor >= len(self._script):
                raise ModelError(f"scripted model {self.name!r} ran out of replies after {self._cursor}")
            item = self._script[self._cursor]
            self._cursor += 1
            if isinstance(item, BaseException):
                raise item
            replies.append(item)
        return replies

    def generate(self, request: GenerationRequest) -> GenerationResult:
        started = time.monotonic()
        with self._lock:
            self.requests.append(request)
            texts = self._next(request)
        if self.delay_s:
            time.sleep(self.delay_s)
        completions = []
        for text in texts:
            cut = len(text) > request.max_tokens * 4
            body = text[: request.max_tokens * 4]
            completions.append(
                Completion(text=body, finish_reason="length" if cut else "stop", completion_tokens=_tokens(body))
            )
        return GenerationResult(
            completions=completions,
            prompt_tokens=sum(_tokens(m.content) for m in request.messages),
            completion_tokens=sum(c.completion_tokens for c in completions),
            specialist=request.specialist,
            latency_s=time.monotonic() - started,
        )

    def load_adapter(self, name: str, path: str) -> None:
        self.adapters[name] = path

    def unload_adapter(self, name: str) -> None:
        self.adapters.pop(name, None)

    def batch_stats(self) -> dict[str, int]:
        return {}  # no batching in this process

    def number_format(self) -> str:
        return ""  # no weights

    def use_summary(self) -> str:
        return ""  # nothing served in earnest

    def close(self) -> None:
        self.closed = True
