"""An OpenAI-compatible HTTP API in front of one `ChatModel`: the Mixture-of-LoRA proxy behind `rsi serve`.

One frozen base, specialists by name: a request's `model` is the base's name or an adapter's name.
The request and response shapes follow vLLM's OpenAI server, including its LoRA endpoints, so the
openai backend talks to `rsi serve` and to vLLM alike:

    GET  /health                      200 when the model is loaded
    GET  /stats                       batching counters (rsi's extension)
    GET  /v1/models                   the base, then each adapter (with `parent` = the base)
    POST /v1/chat/completions         messages, n, temperature, top_p, max_tokens, stop, seed, model
    POST /v1/load_lora_adapter        {"lora_name", "lora_path"}: hot load, no restart (adapter hand-off)
    POST /v1/unload_lora_adapter      {"lora_name"}

Endpoints are plain (sync) functions, so FastAPI runs each request on its thread pool, where it blocks
on the model's future; concurrent requests therefore meet in the embedded backend's batching queue.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rsi.errors import ModelError, RsiError, UserInputError
from rsi.models.base import ChatMessage, ChatModel, GenerationRequest, GenerationResult


class ChatCompletionBody(BaseModel):
    """The subset of OpenAI's chat completion request that rsi serves (unknown fields are ignored, as vLLM does)."""

    model_config = ConfigDict(extra="ignore")
    model: str | None = None
    messages: list[ChatMessage] = Field(min_length=1)
    n: int = Field(default=1, ge=1)
    temperature: float | None = Field(default=None, ge=0.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    stop: str | list[str] | None = None
    seed: int | None = None
    stream: bool = False


class LoadAdapterBody(BaseModel):
    lora_name: str = Field(min_length=1)
    lora_path: str = Field(min_length=1)


class UnloadAdapterBody(BaseModel):
    lora_name: str = Field(min_length=1)


def _error(status: int, message: str, kind: str) -> Any:
    from fastapi.responses import JSONResponse

    return JSONResponse(
        status_code=status, content={"error": {"message": message, "type": kind, "code": status}}
    )


def create_app(
    model: ChatModel,
    *,
    base_name: str | None = None,
    adapters: dict[str, str] | None = None,
    default_max_tokens: int = 256,
) -> Any:
    """The FastAPI app serving `model`. `adapters` names the adapters already loaded (name -> path)."""
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError

    app = FastAPI(title="rsi serve", docs_url=None, redoc_url=None)
    served = _Served(model, base_name or model.name, dict(adapters or {}), default_max_tokens)

    @app.exception_handler(RequestValidationError)
    def _invalid(_: Request, error: RequestValidationError) -> Any:
        where = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors())
        return _error(400, where, "BadRequestError")

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/stats")
    def stats() -> dict[str, Any]:
        """rsi's own extension (not in vLLM): how much batching happened, for benchmarks and tests."""
        return dict(model.batch_stats())

    app.get("/v1/models")(served.models)
    app.post("/v1/chat/completions")(served.chat_completions)
    app.post("/v1/load_lora_adapter")(served.load_lora_adapter)
    app.post("/v1/unload_lora_adapter")(served.unload_lora_adapter)
    return app


class _Served:
    """The endpoints' state: the model, the base's served name and the adapters loaded by name."""

    def __init__(self, model: ChatModel, base: str, loaded: dict[str, str], default_max_tokens: int) -> None:
        self.model, self.base, self.loaded, self.default_max_tokens = model, base, loaded, default_max_tokens
        self.created = int(time.time())
        self.adapter_lock = threading.Lock()  # one load/unload at a time, so a name check and its load agree

    def _entry(self, name: str, root: str, parent: str | None) -> dict[str, Any]:
        return {"id": name, "object": "model", "created": self.created, "owned_by": "rsi", "root": root,
                "parent": parent}

    def models(self) -> dict[str, Any]:
        entries = [self._entry(self.base, self.base, None)]
        entries += [self._entry(name, path, self.base) for name, path in sorted(self.loaded.items())]
        return {"object": "list", "data": entries}

    def chat_completions(self, body: ChatCompletionBody) -> Any:
        if body.stream:
            return _error(400, "stream=true is not supported by rsi serve", "BadRequestError")
        name = body.model or self.base
        if name != self.base and name not in self.loaded:
            return _error(404, f"The model `{name}` does not exist.", "NotFoundError")
        try:
            result = self.model.generate(_generation_request(body, None if name == self.base else name,
                                                             self.default_max_tokens))
        except UserInputError as error:
            return _error(400, error.message, "BadRequestError")
        except RsiError as error:
            return _error(500, error.message, "InternalServerError")
        return _completion(name, result)

    def load_lora_adapter(self, body: LoadAdapterBody) -> Any:
        from fastapi.responses import PlainTextResponse

        with self.adapter_lock:
            if body.lora_name == self.base or body.lora_name in self.loaded:
                # vLLM refuses a loaded name too: a new revision must come under a new name.
                return _error(
                    400, f"The lora adapter '{body.lora_name}' has already been loaded.", "BadRequestError"
                )
            try:
                self.model.load_adapter(body.lora_name, body.lora_path)
            except (UserInputError, ModelError) as error:
                return _error(400, error.message, "BadRequestError")
            self.loaded[body.lora_name] = body.lora_path
        return PlainTextResponse(f"Success: LoRA adapter '{body.lora_name}' added successfully.")

    def unload_lora_adapter(self, body: UnloadAdapterBody) -> Any:
        from fastapi.responses import PlainTextResponse

        with self.adapter_lock:
            if body.lora_name not in self.loaded:
                return _error(404, f"The lora adapter '{body.lora_name}' cannot be found.", "NotFoundError")
            try:
                self.model.unload_adapter(body.lora_name)
            except RsiError as error:
                return _error(500, error.message, "InternalServerError")
            self.loaded.pop(body.lora_name, None)
        return PlainTextResponse(f"Success: LoRA adapter '{body.lora_name}' removed successfully.")


def _generation_request(body: ChatCompletionBody, specialist: str | None, default_max_tokens: int) -> GenerationRequest:
    """OpenAI's request defaults (temperature 1, top_p 1) mapped onto rsi's request."""
    return GenerationRequest(
        messages=body.messages,
        n=body.n,
        temperature=1.0 if body.temperature is None else body.temperature,
        top_p=1.0 if body.top_p is None else body.top_p,
        max_tokens=body.max_completion_tokens or body.max_tokens or default_max_tokens,
        stop=[body.stop] if isinstance(body.stop, str) else list(body.stop or []),
        seed=body.seed,
        specialist=specialist,
    )


def _completion(name: str, result: GenerationResult) -> dict[str, Any]:
    choices = [
        {"index": i, "message": {"role": "assistant", "content": c.text}, "logprobs": None,
         "finish_reason": c.finish_reason}
        for i, c in enumerate(result.completions)
    ]
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": name,
        "choices": choices,
        "usage": {
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "total_tokens": result.prompt_tokens + result.completion_tokens,
        },
    }
