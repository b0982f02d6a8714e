"""Options several commands share, checked against their registry when the flag is read.

A flag naming a plug-in (here: a sandbox backend) is checked against the one registry of its
axis, so an unknown name is one located line (`--sandbox: unknown sandbox backend 'x'; known: ...`,
exit 2) before any work starts, and a backend registered before the CLI runs is accepted. Flags
that fill a spec (`rsi run --executor/--sandbox`) are checked by the spec's own validators instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

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


SANDBOX_HELP = f"Sandbox backend: {', '.join(SANDBOXES)} (rsi/sandbox/select.py)."

SandboxOpt = Annotated[str, typer.Option("--sandbox", help=SANDBOX_HELP, callback=registered("--sandbox", sandbox_name))]
