"""The model backends: name -> factory. A contract's `[serving] backend` validates against the
registry (`rsi.contracts.schema.ModelBackendName`), and `rsi.models.factory.make_model` builds through it.

The registry is `rsi.plugins.MODEL_BACKENDS` (entry point group `rsi.model_backends`), typed here: its
names are pyproject.toml's entry points, so the contract schema checks a name without importing this
module. Adding a backend is one module and one line there (`name = "rsi.models.<name>_backend:factory"`),
then `make install`.

A factory takes the contract spec, the workspace (None: the current folder), the contract's adapters
(name -> folder) and `shared` (the embedded backend's process-wide model, or a private one), and
returns a `ChatModel` with those adapters servable by name. Light on purpose (no torch at import): each
factory imports its backend.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from rsi import plugins
from rsi.plugins import PluginRegistry
from rsi.plugins import model_backend_name as model_backend_name

if TYPE_CHECKING:
    from rsi.contracts.schema import ContractSpec
    from rsi.models.base import ChatModel
    from rsi.workspace import Workspace

ModelFactory = Callable[["ContractSpec", "Workspace | None", dict[str, Path], bool], "ChatModel"]


def embedded_backend(spec: ContractSpec, workspace: Workspace | None, adapters: dict[str, Path], shared: bool) -> ChatModel:
    from rsi.models.factory import make_embedded

    return make_embedded(spec, workspace, adapters, shared)


def openai_backend(spec: ContractSpec, workspace: Workspace | None, adapters: dict[str, Path], shared: bool) -> ChatModel:
    from rsi.models.openai_backend import OpenAIModel, require_url

    serving = spec.serving
    client = OpenAIModel.from_env(require_url(serving.base_url), serving.api_key_env, timeout_s=spec.harness.timeouts.model_s)
    try:
        client.attach_specialists(adapters)
    except BaseException:
        client.close()
        raise
    return client


def vllm_backend(spec: ContractSpec, workspace: Workspace | None, adapters: dict[str, Path], shared: bool) -> ChatModel:
    from rsi.models.vllm_backend import VllmModel

    return VllmModel.start(spec, workspace, adapters=adapters)


MODEL_BACKENDS = cast("PluginRegistry[ModelFactory]", plugins.MODEL_BACKENDS)
