"""The one model interface every other layer uses.

Chat messages in, `n` completions out, with sampling, an optional specialist (a LoRA adapter name)
per request, and token counts. Backends implement `ChatModel`; nothing outside `rsi.models` knows
which backend serves a request.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant"]


class ChatMessage(BaseModel):
    """One chat turn."""

    model_config = ConfigDict(frozen=True)
    role: Role
    content: str


class GenerationRequest(BaseModel):
    """What a caller asks of a model: messages plus sampling, and which specialist serves it."""

    model_config = ConfigDict(frozen=True)
    messages: list[ChatMessage]
    n: int = Field(default=1, ge=1)
    temperature: float = Field(default=0.0, ge=0.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(default=256, ge=1)
    stop: list[str] = Field(default_factory=list)
    stop_after_code: bool = Field(
        default=False,
        description="End a completion once its first Python block has closed (`rsi.fences`): the text"
        " substrate reads nothing after it. Backends that cannot stop there decode on; the harness cuts.",
    )
    seed: int | None = None
    specialist: str | None = Field(default=None, description="LoRA adapter name; None is the bare base.")


class Completion(BaseModel):
    """One generated completion and why it stopped."""

    text: str
    finish_reason: Literal["stop", "length"] = "stop"
    completion_tokens: int = 0


class GenerationResult(BaseModel):
    """`n` completions for one request, with token accounting."""

    completions: list[Completion]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    specialist: str | None = None
    latency_s: float = 0.0
    cache: Literal["", "hit", "miss"] = Field(
        default="", description="The response cache's part (rsi.models.cache): '' when the request was not cached.")
    cached_from: str | None = Field(default=None, description="On a hit: what first made this reply (a run id).")


@runtime_checkable
class ChatModel(Protocol):
    """A model backend. Implementations must be safe to call from several threads at once."""

    name: str

    def generate(self, request: GenerationRequest) -> GenerationResult:
        """Serve one request (blocking). Raises `rsi.errors.ModelError` on backend failure."""
        ...

    def load_adapter(self, name: str, path: str) -> None:
        """Make a PEFT adapter directory servable under `name` (a new, never reused, name)."""
        ...

    def unload_adapter(self, name: str) -> None:
        """Stop serving `name`."""
        ...

    def close(self) -> None:
        """Release the model (processes, memory)."""
        ...

    def batch_stats(self) -> dict[str, int]:
        """How much batching happened in this process (`rsi serve`'s /stats); {} where the batching
        happens elsewhere (a remote server) or not at all."""
        ...

    def number_format(self) -> str:
        """The number format the weights are served in, as loaded (after `RSI_DTYPE` and the CPU's own
        choice); "" where this process cannot know (a remote endpoint, a scripted model)."""
        ...

    def use_summary(self) -> str:
        """One line on how busy this process kept the model (the run's closing `model_use` line); "" where
        the model is served elsewhere or nothing is worth saying (a remote endpoint, a scripted model)."""
        ...


Closable = TypeVar("Closable", bound=ChatModel)


@contextmanager
def closed_on_error(model: Closable) -> Iterator[Closable]:
    """`model`, closed if the block raises (Ctrl-C included) while it starts up or loads its adapters: a
    half-started model (a server process, a shared worker's reference) must not outlive the error."""
    try:
        yield model
    except BaseException:
        model.close()
        raise
