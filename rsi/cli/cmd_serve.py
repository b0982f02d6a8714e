"""CLI command: `rsi serve` — the embedded base and its specialists behind an OpenAI-compatible HTTP API."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rsi.cli.render import console
from rsi.errors import UserInputError


def parse_adapter_flags(values: list[str]) -> dict[str, str]:
    """`NAME=PATH` flags as a dict; a malformed or repeated flag is a usage error (exit 2)."""
    adapters: dict[str, str] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise UserInputError(f"--adapter {value!r}: expected NAME=PATH")
        if name in adapters:
            raise UserInputError(f"--adapter {name}: given twice")
        adapters[name] = str(Path(path).expanduser().resolve())
    return adapters


def serve(
    contract: Annotated[
        str | None,
        typer.Option(
            "--contract",
            "-c",
            help="Contract REF whose base model and specialists to serve (default: 'default').",
        ),
    ] = None,
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port.", min=1, max=65535)] = 8000,
    adapter: Annotated[
        list[str] | None,
        typer.Option("--adapter", help="Extra LoRA adapter to serve, as NAME=PATH (repeatable)."),
    ] = None,
    max_batch: Annotated[
        int | None,
        typer.Option(
            "--max-batch",
            min=1,
            help="Rows per batched generate (default: the contract's serving.max_batch).",
        ),
    ] = None,
    dtype: Annotated[
        str | None,
        typer.Option("--dtype", help="bfloat16, float32 or float16 (default: the contract's serving.dtype)."),
    ] = None,
) -> None:
    """Serve the contract's base model and specialists over an OpenAI-compatible API (vLLM's shapes).

    Concurrent requests are batched into one generate; adapters are hot-loaded through
    POST /v1/load_lora_adapter without a restart.
    """
    from rsi.cli.state import state
    from rsi.models.serve import ServeSpec, run_server

    spec = ServeSpec(
        contract=contract,
        host=host,
        port=port,
        adapters=parse_adapter_flags(adapter or []),
        max_batch=max_batch,
        dtype=dtype,
        workspace_dir=state.workspace_dir,
    )
    run_server(spec, on_ready=lambda line: console.print(line, markup=False))


def register(app: typer.Typer) -> None:
    """Add this module's commands to the root app."""
    app.command("serve")(serve)
