"""`rsi serve` as a function: resolve the contract, load the embedded model and adapters, run uvicorn."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError as PydanticValidationError

from rsi.contracts.schema import ContractSpec, ServingSpec
from rsi.errors import UserInputError, WorkspaceError
from rsi.workspace import Workspace, find_workspace, shipped_root


@dataclass(frozen=True)
class ServeSpec:
    """What to serve and where (the flags of `rsi serve`)."""

    contract: str | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    adapters: dict[str, str] = field(default_factory=dict)
    """Extra adapters, name -> folder, on top of the contract's specialists."""
    max_batch: int | None = None
    dtype: str | None = None
    workspace_dir: Path | None = None


def resolve_contract(
    ref: str | None, workspace_dir: Path | None = None
) -> tuple[ContractSpec, Workspace | None]:
    """The contract to serve and the workspace its specialists' paths are relative to.

    REF in the workspace (found from the cwd), or a .toml path (its workspace is found from the file),
    or no REF: the workspace's default contract, else the shipped one.
    """
    from rsi.contracts.load import load_contract
    from rsi.contracts.refs import resolve_ref

    as_file = Path(ref).expanduser() if ref is not None and Path(ref).expanduser().is_file() else None
    try:
        workspace: Workspace | None = find_workspace(explicit=workspace_dir)
    except WorkspaceError:
        if workspace_dir is not None or (ref is not None and as_file is None):
            raise
        workspace = None
        if as_file is not None:
            with contextlib.suppress(WorkspaceError):
                workspace = find_workspace(start=as_file.resolve().parent)
    if workspace is None:
        path = Path(ref).expanduser() if ref else shipped_root() / "hcp" / "default.toml"
        return load_contract(path).spec, None
    return resolve_ref(workspace, ref or "default").spec, workspace


def run_server(spec: ServeSpec, on_ready: Callable[[str], None] | None = None) -> None:
    """Serve until SIGINT/SIGTERM: load the model and adapters, then run uvicorn in this thread."""
    import uvicorn

    from rsi.models.factory import make_model, specialist_paths
    from rsi.models.server import create_app

    contract, workspace = resolve_contract(spec.contract, spec.workspace_dir)
    # Always the embedded backend: `rsi serve` IS the server that the openai backend talks to.
    serving: dict[str, object] = {**contract.serving.model_dump(), "backend": "embedded"}
    if spec.max_batch is not None:
        serving["max_batch"] = spec.max_batch
    if spec.dtype is not None:
        serving["dtype"] = spec.dtype
    try:
        contract = contract.model_copy(update={"serving": ServingSpec.model_validate(serving)})
    except PydanticValidationError as error:
        raise UserInputError(
            f"rsi serve: {error.errors()[0]['loc'][0]}: {error.errors()[0]['msg']}"
        ) from error
    listener = bind_listener(spec.host, spec.port)  # before the model loads: a busy port fails fast
    try:
        model = make_model(contract, workspace, shared=False)
    except BaseException:
        listener.close()
        raise
    try:
        adapters = {name: str(path) for name, path in specialist_paths(contract, workspace).items()}
        for name, path in spec.adapters.items():
            model.load_adapter(name, path)
            adapters[name] = path
        app = create_app(model, base_name=contract.base.id, adapters=adapters)
        host, port = listener.getsockname()[:2]
        if on_ready is not None:
            names = ", ".join(sorted(adapters)) or "none"
            on_ready(f"serving {contract.base.id} (adapters: {names}) on http://{host}:{port}/v1")
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        server.run(sockets=[listener])
    finally:
        listener.close()
        model.close()


def bind_listener(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (port 0 picks a free one); a busy port is a UserInputError."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
        listener.listen(2048)
    except OSError as error:
        listener.close()
        raise UserInputError(f"--host {host} --port {port}: cannot listen there: {error.strerror}") from error
    return listener
