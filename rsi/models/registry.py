"""The one registry of model backends: name -> factory. A contract's `[serving] backend` validates
against it (`ModelBackendName`), and `rsi.models.factory.make_model` builds through it, so adding a
backend is one entry here.

A factory takes the contract spec, the workspace (None: the current folder), the contract's adapters
(name -> folder) and `shared` (the embedded backend's process-wide model, or a private one), and
returns a `ChatModel` with those adapters servable by name. Light on purpose (no torch, no contract
schema at import): `rsi.contracts.schema` imports this module.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import AfterValidator

from rsi.registry import name_check

if TYPE_CHECKING:
    from rsi.contracts.schema import ContractSpec
    from rsi.models.base import ChatModel
    from rsi.workspace import Workspace

ModelFactory = Callable[["ContractSpec", "Workspace | None", dict[str, Path], bool], "ChatModel"]


def _embedded(spec: ContractSpec, workspace: Workspace | None, adapters: dict[str, Path], shared: bool) -> ChatModel:
    from rsi.models.factory import make_embedded

    return make_embedded(spec, workspace, adapters, shared)


def _openai(spec: ContractSpec, workspace: Workspace | None, adapters: dict[str, Path], shared: bool) -> ChatModel:
    from rsi.models.openai_backend import OpenAIModel, require_url

    serving = spec.serving
    client = OpenAIModel.from_env(require_url(serving.base_url), serving.api_key_env, timeout_s=spec.harness.timeouts.model_s)
    try:
        client.attach_specialists(adapters)
    except BaseException:
        client.close()
        raise
    return client


def _vllm(spec: ContractSpec, workspace: Workspace | None, adapters: dict[str, Path], shared: bool) -> ChatModel:
    from rsi.models.vllm_backend import VllmModel

    return VllmModel.start(spec, workspace, adapters=adapters)


DEFAULT = "embedded"

MODEL_BACKENDS: dict[str, ModelFactory] = {
    "embedded": _embedded,
    "openai": _openai,
    "vllm": _vllm,
}


model_backend_name = name_check(MODEL_BACKENDS, "model backend")
ModelBackendName = Annotated[str, AfterValidator(model_backend_name)]
