"""Options several commands share, checked against their registry when the flag is read.

A flag naming a plug-in (here: a sandbox backend) is checked against the one registry of its
axis, so an unknown name is one located line (`--sandbox: unknown sandbox backend 'x'; known: ...`,
exit 2) before any work starts, and a backend registered before the CLI runs is accepted. Flags
that fill a spec (`rsi run --executor/--sandbox`) are checked by the spec's own validators instead.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

from rsi.errors import UserInputError
from rsi.sandbox.select import SANDBOXES, sandbox_name


def registered(flag: str, check: Callable[[str], str]) -> Callable[[str | None], str | None]:
    """A typer callback: the flag's value if `check` accepts it, else a UserInputError naming the flag."""

    def callback(value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return check(value)
        except ValueError as error:
            raise UserInputError(f"{flag}: {error}") from None

    return callback


Command = TypeVar("Command", bound=Callable[..., Any])


def with_options(template: Callable[..., Any]) -> Callable[[Command], Command]:
    """A decorator: the command also takes `template`'s parameters (listed first in its --help) and receives
    them in its `**options`.

    Typer reads a command's flags from its signature, so this is how one list of options serves several
    commands that fill the same spec (`rsi generation` and `rsi nightly`): a new field is one parameter of
    the template, not one per command, and the two lists cannot drift apart.
    """
    shared = [p.replace(kind=p.KEYWORD_ONLY) for p in inspect.signature(template, eval_str=True).parameters.values()]

    def decorate(command: Command) -> Command:
        own = inspect.signature(command, eval_str=True).parameters.values()
        params = shared + [p.replace(kind=p.KEYWORD_ONLY) for p in own if p.kind is not p.VAR_KEYWORD]
        command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        return command

    return decorate


SANDBOX_HELP = f"Sandbox backend: {', '.join(SANDBOXES)} (rsi/sandbox/select.py)."

SandboxOpt = Annotated[str, typer.Option("--sandbox", help=SANDBOX_HELP, callback=registered("--sandbox", sandbox_name))]


def method_options(items: list[str], flags: dict[str, Any], keys: dict[str, str], flag: str = "--option") -> dict[str, Any]:
    """A training method's own options (`TrainStageSpec.method_options`): the `flag KEY=VALUE`s (VALUE read
    as TOML) and the option flags given (`keys`: flag -> option key), one key from one source."""
    from rsi.contracts.overrides import parse_assignment

    options: dict[str, Any] = {}
    for item in items:
        key, value = parse_assignment(item, flag=flag)
        if key in options:
            raise UserInputError(f"{flag} {key}: given twice")
        options[key] = value
    for given, value in flags.items():
        if value is not None:
            key = keys[given]
            if key in options:
                raise UserInputError(f"{given}: also given as {flag} {key}; give one")
            options[key] = value
    return options
