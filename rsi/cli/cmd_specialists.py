"""CLI commands: `rsi specialists import PATH` (adapters from other owners; rsi/training/imported.py).

Parses flags, calls one core function (rsi.training.imported.import_adapter) and renders. Exit codes: 0
registered; 1 runtime failure; 2 bad input (a folder that does not fit the contract's base: one located line).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rsi.cli.render import console, print_json
from rsi.cli.state import state

specialists_app = typer.Typer(help="Specialists: LoRA adapters served over the contract's one frozen base.",
                              no_args_is_help=True)


@specialists_app.command("import")
def import_command(
    path: Annotated[Path, typer.Argument(help="A PEFT LoRA folder (adapter_config.json + adapter_model.safetensors).")],
    contract: Annotated[str, typer.Option("--contract", help="The contract whose base it must fit.")] = "default",
    name: Annotated[str, typer.Option("--name", help="Specialist name (default: the folder's name).")] = "",
    base_name_ok: Annotated[bool, typer.Option("--base-name-ok", help=(
        "Accept an adapter whose config names another base (trained on this one under another name); its "
        "shapes are checked all the same."))] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print the registry record as JSON.")] = False,
) -> None:
    """Register an adapter trained outside rsi, after checking its rank layout and shapes against the contract's
    base; it stays unevaluated (state `registered`) until `rsi eval` measures a contract that routes to it."""
    from rsi.training.imported import import_adapter

    record = import_adapter(state.workspace(), path, contract=contract, name=name, base_name_ok=base_name_ok)
    if json_output:
        print_json(record.summary())
        return
    origin = record.lineage.origin
    console.print(f"registered {record.short_id} as specialist {record.lineage.name!r} from {path} "
                  f"({origin.tensors if origin else '?'} LoRA tensors, rank {record.lineage.hyperparameters.rank}); "
                  f"state {record.status.state}: not evaluated (`rsi eval` a contract that routes to it)", markup=False)


def register(app: typer.Typer) -> None:
    app.add_typer(specialists_app, name="specialists")
