"""CLI commands: `rsi portfolio show NAME` and `rsi portfolio validate [NAME|PATH ...]`.

Both resolve every variant to a full, validated configuration (rsi.portfolio); `show` lists them
with their config hashes and the settings that make them differ. Exit 2 on any invalid portfolio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from rsi.cli.render import console, is_tty, print_json
from rsi.cli.state import state

if TYPE_CHECKING:
    from rsi.config import Configuration
    from rsi.portfolio import PortfolioOutcome

portfolio_app = typer.Typer(help="Portfolios: sets of harness configurations over a base contract.", no_args_is_help=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for machines.")]


def _summary(config: Configuration) -> dict[str, Any]:
    harness = config.spec.harness
    sampling = harness.sampling
    prompt = harness.system_prompt_file or ("inline" if config.system_prompt else "none")
    return {
        "name": config.name,
        "config_hash": config.config_hash,
        "substrate": harness.substrate,
        "prompt_style": harness.prompt_style,
        "system_prompt": prompt,
        "temperature": sampling.temperature,
        "top_p": sampling.top_p,
        "samples": sampling.samples,
        "greedy_first": sampling.greedy_first,
        "max_tokens": sampling.max_tokens,
        "max_turns": harness.max_turns,
        "check": harness.check,
        "repair_turns": harness.repair_turns,
        "overrides": config.overrides,
        "parents": config.parents,
    }


def _outcome_json(outcome: PortfolioOutcome) -> dict[str, Any]:
    return {
        "name": outcome.name,
        "path": str(outcome.path),
        "description": outcome.description,
        "base": {"ref": outcome.base.ref, "name": outcome.base.name, "revision": outcome.base.revision,
                 "content_hash": outcome.base.content_hash},
        "configurations": [
            {**_summary(c), "spec": c.spec.model_dump(mode="json"), "resolved_system_prompt": c.system_prompt}
            for c in outcome.configurations
        ],
    }


@portfolio_app.command("show")
def show(
    name: Annotated[str, typer.Argument(help="Portfolio name (portfolios/NAME.toml) or a path.")],
    json_out: JsonFlag = False,
) -> None:
    """List a portfolio's configurations: name, config hash, substrate, prompt, sampling, turns."""
    from rsi.portfolio import resolve_portfolio

    outcome = resolve_portfolio(state.workspace(), name)
    if json_out:
        print_json(_outcome_json(outcome))
        return
    base = outcome.base
    console.print(
        f"portfolio {outcome.name}: {len(outcome.configurations)} configurations over "
        f"{base.name} r{base.revision} ({base.short_hash})",
        markup=False,
    )
    if outcome.description:
        console.print(outcome.description, markup=False)
    rows = [_summary(c) for c in outcome.configurations]
    columns = ["name", "config_hash", "substrate", "prompt_style", "system_prompt", "temperature", "top_p",
               "samples", "greedy_first", "max_tokens", "max_turns", "check", "repair_turns"]
    if is_tty():
        from rich.table import Table

        table = Table(*columns)
        for row in rows:
            table.add_row(*(str(row[c]) for c in columns))
        console.print(table)
        return
    typer.echo("\t".join(columns))
    for row in rows:
        typer.echo("\t".join(str(row[c]) for c in columns))


@portfolio_app.command("validate")
def validate(
    names: Annotated[
        list[str] | None,
        typer.Argument(help="Portfolio names or paths (default: every portfolios/*.toml of the workspace)."),
    ] = None,
) -> None:
    """Resolve and validate portfolios; every problem as `file:line: key: message` (exit 2 on any)."""
    from rsi.errors import ContractError, Problem
    from rsi.portfolio import resolve_portfolio

    workspace = state.workspace()
    targets: list[str] = list(names or []) or [str(p) for p in sorted(workspace.portfolios_dir.glob("*.toml"))]
    problems: list[Problem] = []
    for target in targets:
        try:
            outcome = resolve_portfolio(workspace, target)
        except ContractError as error:
            problems.extend(error.problems)
            continue
        console.print(f"ok  {outcome.path}  {outcome.name}: {len(outcome.configurations)} configurations",
                      markup=False)
    if problems:
        raise ContractError(problems, hint="see docs/hcp.md (Portfolios)")


def register(app: typer.Typer) -> None:
    """Add `rsi portfolio ...` to the root app."""
    app.add_typer(portfolio_app, name="portfolio")
