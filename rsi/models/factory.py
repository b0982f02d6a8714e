"""Build the `ChatModel` a contract's `[serving]` section asks for, with its specialists loaded.

`make_model(spec, workspace)` is the one entry point the harness and the runner use; the backends are
named in rsi/models/registry.py:

- `embedded` (default): the base converted from `[base]` (see `rsi.models.embedded.weights`) in this process.
  Loading the base costs memory (about 0.5 GB in bf16), and batching only helps if concurrent attempts
  share one queue, so by default every caller in a process gets a handle on ONE shared `EmbeddedModel`
  per (base folder, dtype, max_batch). Each handle maps its contract's specialist names onto
  content-addressed served names (`name@<digest12>`), so two configurations that give the same
  specialist name to different adapter revisions never see each other's weights. Closing a handle
  releases its adapters; the last handle closes the model.
- `openai`: an OpenAI-compatible endpoint (`[serving] base_url`); each specialist is loaded there at
  its exact revision, under `name@<digest12>` (`OpenAIModel.attach_specialists`).
- `vllm`: a vLLM server this process starts and owns (`rsi.models.vllm_backend`).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from rsi.contracts.schema import ContractSpec
from rsi.errors import ModelError
from rsi.models.base import ChatModel, GenerationRequest, GenerationResult, closed_on_error
from rsi.models.served import ServedFuture
from rsi.workspace import Workspace


def specialist_paths(spec: ContractSpec, workspace: Workspace | None) -> dict[str, Path]:
    """The contract's adapters: name -> folder (relative paths are relative to the workspace)."""
    root = workspace.root if workspace is not None else Path.cwd()
    return {s.name: (Path(s.path) if Path(s.path).is_absolute() else root / s.path) for s in spec.specialists}


def make_model(spec: ContractSpec, workspace: Workspace | None = None, *, shared: bool = True) -> ChatModel:
    """The model `spec.serving` names (rsi.models.registry), with `spec.specialists` servable by name.

    `shared=False` gives the embedded backend a private model (its own worker and weights).
    """
    from rsi.models.registry import MODEL_BACKENDS

    factory = MODEL_BACKENDS.get(spec.serving.backend)
    if factory is None:  # a spec validated against an older registry
        raise ModelError(f"unknown model backend {spec.serving.backend!r}", hint=f"known: {', '.join(MODEL_BACKENDS)}")
    return factory(spec, workspace, specialist_paths(spec, workspace), shared)


def make_embedded(spec: ContractSpec, workspace: Workspace | None, adapters: dict[str, Path], shared: bool) -> ChatModel:
    """The embedded backend: the base converted from `[base]`, run in this process."""
    from rsi.models.embedded.weights import hf_folder

    serving = spec.serving
    folder = hf_folder(spec.base, workspace.root if workspace is not None else None)
    if not shared:
        from rsi.models.embedded.backend import EmbeddedModel

        model = EmbeddedModel(folder, name=spec.base.id, dtype=serving.dtype, max_batch=serving.max_batch)
        for name, path in adapters.items():
            model.load_adapter(name, str(path))
        return model
    with closed_on_error(shared_embedded(folder, name=spec.base.id, dtype=serving.dtype,
                                         max_batch=serving.max_batch)) as handle:
        for name, path in adapters.items():
            handle.load_adapter(name, str(path))
    return handle


# -- one embedded model per process, shared by handles --------------------------------------------

_registry_lock = threading.Lock()
_registry: dict[tuple[str, str, int], _SharedEntry] = {}


class _SharedEntry:
    def __init__(self, model: Any) -> None:
        self.model = model
        self.handles = 0
        self.adapter_users: dict[str, int] = {}  # served name -> handles using it


def shared_embedded(
    folder: Path, *, name: str, dtype: str = "bfloat16", max_batch: int = 8
) -> SharedModelHandle:
    """A handle on the process-wide `EmbeddedModel` for this base (created on first use)."""
    from rsi.models.embedded.backend import EmbeddedModel

    key = (str(Path(folder).resolve()), dtype, max_batch)
    with _registry_lock:
        entry = _registry.get(key)
        if entry is None:
            entry = _SharedEntry(EmbeddedModel(folder, name=name, dtype=dtype, max_batch=max_batch))
            _registry[key] = entry
        entry.handles += 1
    return SharedModelHandle(key, entry)


class SharedModelHandle:
    """One caller's view of a shared `EmbeddedModel`: its own specialist names, a refcounted close."""

    def __init__(self, key: tuple[str, str, int], entry: _SharedEntry) -> None:
        self._key = key
        self._entry = entry
        self._served: dict[str, str] = {}  # this handle's specialist name -> served (content-addressed) name
        self._closed = False
        self.name: str = entry.model.name

    @property
    def model(self) -> Any:
        """The shared `EmbeddedModel` (for stats and tests)."""
        return self._entry.model

    def submit(self, request: GenerationRequest) -> ServedFuture:
        """Queue `request` on the shared model under this handle's specialist names (see `rsi.models.served`)."""
        if self._closed:
            raise ModelError("this model handle is closed")
        if request.specialist is None:
            return self._entry.model.submit(request)
        served = self._served.get(request.specialist)
        if served is None:
            from rsi.models.embedded.backend import UnknownAdapterError

            raise UnknownAdapterError(
                f"specialist {request.specialist!r} is not loaded",
                hint=f"loaded: {', '.join(sorted(self._served)) or 'none'}",
            )
        public = request.specialist
        inner = self._entry.model.submit(request.model_copy(update={"specialist": served}))
        return inner.chained(lambda result: result.model_copy(update={"specialist": public}))

    def generate(self, request: GenerationRequest) -> GenerationResult:
        return self.submit(request).result()

    def load_adapter(self, name: str, path: str) -> None:
        from rsi.models.embedded.weights import served_adapter_name

        served = served_adapter_name(name, Path(path))
        with _registry_lock:
            if served not in self._entry.adapter_users:
                self._entry.model.load_adapter(served, str(path))
                self._entry.adapter_users[served] = 0
            self._entry.adapter_users[served] += 1
            previous = self._served.get(name)
            self._served[name] = served
            if previous is not None and previous != served:
                self._release(previous)
            elif previous == served:
                self._entry.adapter_users[served] -= 1

    def unload_adapter(self, name: str) -> None:
        with _registry_lock:
            served = self._served.pop(name, None)
            if served is None:
                from rsi.models.embedded.backend import UnknownAdapterError

                raise UnknownAdapterError(f"adapter {name!r} is not loaded")
            self._release(served)

    def _release(self, served: str) -> None:
        users = self._entry.adapter_users
        users[served] -= 1
        if users[served] <= 0:
            del users[served]
            self._entry.model.unload_adapter(served)

    def number_format(self) -> str:
        return self._entry.model.number_format()  # type: ignore[no-any-return]

    def batch_stats(self) -> dict[str, int]:
        """The shared model's counters (every handle's requests together)."""
        return self._entry.model.batch_stats()  # type: ignore[no-any-return]

    def use_summary(self) -> str:
        """Where the shared model's time went (every handle's requests together)."""
        return self._entry.model.use_summary()  # type: ignore[no-any-return]

    def close(self) -> None:
        with _registry_lock:
            if self._closed:
                return
            self._closed = True
            self._entry.handles -= 1
            last = self._entry.handles <= 0
            if last:  # the adapters go with the model: no unload, which waits for the worker's lock
                _registry.pop(self._key, None)
            else:
                for served in list(self._served.values()):
                    self._release(served)
            self._served.clear()
        if last:
            self._entry.model.close()
