"""CLI commands: `rsi cache list | prune | clear`, the workspace's response cache (rsi.models.cache)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import TYPE_CHECKING, Annotated

import typer

from rsi.cli.render import console, print_json

if TYPE_CHECKING:
    from rsi.models.cache import ReplyCache

cache_app = typer.Typer(help="The response cache: replies to exact requests (float32 greedy or seeded), kept once.",
                        no_args_is_help=True)

_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_age(text: str) -> timedelta:
    """'90m', '12h', '7d', '2w' -> a timedelta (a located one-line error otherwise)."""
    from rsi.errors import UserInputError

    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([mhdw])\s*", text)
    if match is None:
        raise UserInputError(f"--older-than {text!r}: expected a number and a unit (m, h, d or w), e.g. 7d")
    return timedelta(**{_UNITS[match.group(2)]: float(match.group(1))})


def _open() -> ReplyCache:
    from rsi.cli.state import state
    from rsi.models.cache import ReplyCache, cache_url

    return ReplyCache(cache_url(state.workspace().runs_dir))


@cache_app.command("list")
def list_cache(as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False) -> None:
    """Rows per model and number format: replies kept, their completion tokens, oldest and newest."""
    cache = _open()
    rows = cache.summary()
    if as_json:
        print_json({"url": cache.url, "models": [
            {"model": r.model, "backend": r.backend, "dtype": r.dtype, "replies": r.replies,
             "completion_tokens": r.completion_tokens, "oldest": r.oldest.isoformat() if r.oldest else None,
             "newest": r.newest.isoformat() if r.newest else None} for r in rows]})
        return
    if not rows:
        console.print(f"the response cache is empty ({cache.url})")
        return
    from rich.table import Table

    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("model", "backend", "dtype", "replies", "completion tokens", "oldest", "newest"):
        table.add_column(column)
    for r in rows:
        table.add_row(r.model, r.backend, r.dtype, str(r.replies), str(r.completion_tokens),
                      f"{r.oldest:%Y-%m-%d %H:%M}" if r.oldest else "-", f"{r.newest:%Y-%m-%d %H:%M}" if r.newest else "-")
    console.print(table)
    console.print(f"[dim]{cache.url}[/]")


@cache_app.command("prune")
def prune(
    model: Annotated[str | None, typer.Option("--model", help="Only this base model's replies (as `rsi cache list` names it).")] = None,
    older_than: Annotated[str | None, typer.Option("--older-than", help="Only replies older than this: 90m, 12h, 7d, 2w.")] = None,
) -> None:
    """Delete some replies: by model, by age, or both."""
    from rsi.errors import UserInputError

    if model is None and older_than is None:
        raise UserInputError("rsi cache prune: give --model and/or --older-than (`rsi cache clear` deletes everything)")
    age = parse_age(older_than) if older_than is not None else None
    cache = _open()
    console.print(f"deleted {cache.prune(model=model, older_than=age)} cached replies")


@cache_app.command("clear")
def clear() -> None:
    """Delete every reply in the workspace's response cache."""
    cache = _open()
    console.print(f"deleted {cache.prune()} cached replies")


def register(app: typer.Typer) -> None:
    """Add `rsi cache` to the root app."""
    app.add_typer(cache_app, name="cache")
