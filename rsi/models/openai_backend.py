"""The openai backend: any OpenAI-compatible chat endpoint (vLLM, `rsi serve`, a hosted API) over HTTP.

A specialist maps to the request's `model` field, which is how vLLM names LoRA adapters; the bare
base maps to the served base model's name (given, or discovered from `/v1/models`: the model without
a `parent`). Adapters are loaded and unloaded through vLLM's `/v1/load_lora_adapter` and
`/v1/unload_lora_adapter`, which `rsi serve` implements too.

A contract's specialists are served at their exact revision (`attach_specialists`): each under the
content-addressed name `<name>@<digest12>`, loaded at the endpoint unless it already lists that name.
The endpoint reads the adapter folder itself, so it must share the filesystem (a cluster's) and allow
runtime loading (vLLM: `VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`). A specialist the endpoint cannot load is
an error, never a silent fallback to whatever it serves under the bare name: an evaluation of a
candidate against its parent would otherwise compare one adapter with itself. Loaded revisions stay
loaded at close: other processes may be using the same content-addressed name.

Retries are for transient failures only: connection errors, 429 and 5xx, a bounded number of times
with exponential backoff and jitter. A 4xx is the caller's mistake and retrying cannot fix it. A read
timeout is not retried either: the server may still be generating, and a retry would double the work.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from rsi.errors import ModelError, UserInputError
from rsi.models.base import Completion, GenerationRequest, GenerationResult

_RETRY_TRANSPORT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.RemoteProtocolError)


class TransientHttpError(ModelError):
    """A retryable failure: the server was unreachable, overloaded (429) or broken (5xx)."""


class HttpStatusError(ModelError):
    """The server refused the request with a status retrying cannot fix (4xx)."""

    def __init__(self, message: str, status: int, body: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.body = body


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try: `attempts` calls in all, waits growing from `initial_wait_s` up to `max_wait_s`."""

    attempts: int = 4
    initial_wait_s: float = 0.5
    max_wait_s: float = 8.0


class OpenAIModel:
    """A `ChatModel` over an OpenAI-compatible HTTP endpoint. Thread-safe (httpx.Client is)."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        base_model: str | None = None,
        timeout_s: float = 120.0,
        connect_timeout_s: float = 10.0,
        retry: RetryPolicy | None = None,
    ) -> None:
        url = base_url.rstrip("/")
        # Accept both "http://host:port" and "http://host:port/v1"; every path below starts with /v1.
        self.base_url = url.removesuffix("/v1")
        self.retry = retry or RetryPolicy()
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=connect_timeout_s),
        )
        self._base_model = base_model
        # The base model's name once known, else the endpoint: a plain attribute, because protocol
        # checks read `name` and must not trigger a network call.
        self.name: str = base_model or self.base_url
        self.served_names: dict[str, str] = {}
        """specialist -> served model name, for servers that name adapters differently (vLLM revisions)."""

    @classmethod
    def from_env(cls, base_url: str, api_key_env: str, **kwargs: Any) -> OpenAIModel:
        """Read the API key from the environment variable the contract names (absent: no key)."""
        return cls(base_url, api_key=os.environ.get(api_key_env) or None, **kwargs)

    def base_model(self) -> str:
        """The served base model's name: as given, else the first model of /v1/models without a parent."""
        if self._base_model is None:
            models = self.list_models()
            bases = [m["id"] for m in models if not m.get("parent")]
            if not bases:
                raise ModelError(f"{self.base_url}/v1/models lists no base model")
            self._base_model = self.name = bases[0]
        return self._base_model

    def list_models(self) -> list[dict[str, Any]]:
        body = self._request("GET", "/v1/models").json()
        return list(body.get("data", []))

    # -- ChatModel -------------------------------------------------------------------------------

    def generate(self, request: GenerationRequest) -> GenerationResult:
        model = (
            self.base_model()
            if request.specialist is None
            else self.served_names.get(request.specialist, request.specialist)
        )
        payload: dict[str, Any] = {
            "model": model,
            "messages": [m.model_dump() for m in request.messages],
            "n": request.n,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "max_tokens": request.max_tokens,
        }
        if request.stop:
            payload["stop"] = list(request.stop)
        if request.seed is not None:
            payload["seed"] = request.seed
        response = self._request("POST", "/v1/chat/completions", json=payload)
        return parse_chat_completion(response.json(), request.specialist, response.elapsed.total_seconds())

    def load_adapter(self, name: str, path: str) -> None:
        self._request("POST", "/v1/load_lora_adapter", json={"lora_name": name, "lora_path": str(path)})

    def attach_specialists(self, adapters: Mapping[str, Path]) -> None:
        """Serve each specialist (name -> adapter folder) at its exact revision; see the module docstring."""
        from rsi.models.embedded.weights import served_adapter_name

        if not adapters:
            return
        listed = {m["id"] for m in self.list_models()}
        for name, path in adapters.items():
            served = served_adapter_name(name, Path(path))
            if served not in listed:
                try:
                    self.load_adapter(served, str(Path(path).resolve()))
                except HttpStatusError as error:
                    # Another process may have loaded the same revision meanwhile (a name is loaded once).
                    if served not in {m["id"] for m in self.list_models()}:
                        raise ModelError(
                            f"{self.base_url}: cannot serve specialist {name!r} from {path}: {error}",
                            hint="the endpoint must allow runtime LoRA loading (vLLM: "
                            "VLLM_ALLOW_RUNTIME_LORA_UPDATING=True; rsi serve does) and read that folder",
                        ) from error
            self.served_names[name] = served

    def unload_adapter(self, name: str) -> None:
        self._request("POST", "/v1/unload_lora_adapter", json={"lora_name": name})

    def batch_stats(self) -> dict[str, int]:
        return {}  # no batching in this process

    def number_format(self) -> str:
        return ""  # the endpoint's own business

    def use_summary(self) -> str:
        return ""  # the endpoint's own business

    def close(self) -> None:
        self._client.close()

    # -- transport -------------------------------------------------------------------------------

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_random_exponential

        retrying = Retrying(
            retry=retry_if_exception_type(TransientHttpError),
            stop=stop_after_attempt(self.retry.attempts),
            wait=wait_random_exponential(multiplier=self.retry.initial_wait_s, max=self.retry.max_wait_s),
            reraise=True,
        )
        for attempt in retrying:
            with attempt:
                return self._request_once(method, path, **kwargs)
        raise AssertionError("unreachable: tenacity reraises the last error")  # pragma: no cover

    def _request_once(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        where = f"{method} {self.base_url}{path}"
        try:
            response = self._client.request(method, path, **kwargs)
        except _RETRY_TRANSPORT as error:
            raise TransientHttpError(f"{where}: {type(error).__name__}: {error}") from error
        except httpx.TimeoutException as error:
            raise ModelError(f"{where}: timed out ({type(error).__name__})") from error
        except httpx.HTTPError as error:
            raise ModelError(f"{where}: {type(error).__name__}: {error}") from error
        status = response.status_code
        if status == 429 or status >= 500:
            raise TransientHttpError(f"{where}: HTTP {status}: {_error_text(response)}")
        if status >= 400:
            raise HttpStatusError(f"{where}: HTTP {status}: {_error_text(response)}", status, response.text)
        return response


def _error_text(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:300]
    if isinstance(body, dict):
        error = body.get("error", body.get("detail", body))
        if isinstance(error, dict):
            return str(error.get("message", error))[:300]
        return str(error)[:300]
    return str(body)[:300]


def parse_chat_completion(
    body: dict[str, Any], specialist: str | None, latency_s: float = 0.0
) -> GenerationResult:
    """An OpenAI chat.completion response as a `GenerationResult` (choices in index order)."""
    try:
        choices = sorted(body["choices"], key=lambda c: c.get("index", 0))
        usage = body.get("usage") or {}
        completions = [
            Completion(
                text=(choice.get("message") or {}).get("content") or "",
                finish_reason="length" if choice.get("finish_reason") == "length" else "stop",
            )
            for choice in choices
        ]
    except (KeyError, TypeError, AttributeError) as error:
        raise ModelError(f"malformed chat completion response: {error}") from error
    total = int(usage.get("completion_tokens") or 0)
    if len(completions) == 1:
        completions[0] = completions[0].model_copy(update={"completion_tokens": total})
    return GenerationResult(
        completions=completions,
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=total,
        specialist=specialist,
        latency_s=latency_s,
    )


def require_url(base_url: str) -> str:
    """The contract's `[serving] base_url`, which backend 'openai' cannot do without."""
    if not base_url:
        raise UserInputError("[serving] base_url: backend 'openai' needs the endpoint's URL")
    return base_url
