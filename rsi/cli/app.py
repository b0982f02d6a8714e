"""The root Typer app: global options, error handling, and registration of the command groups.

Each command group lives in its own module with a `register(app)` function. Commands import heavy
modules inside their bodies so that `rsi --help` stays instant.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from rsi import __version__
from rsi.cli import (
    cmd_attempt,
    cmd_cache,
    cmd_doctor,
    cmd_experience,
    cmd_generation,
    cmd_harvest,
    cmd_hcp,
    cmd_portfolio,
    cmd_promote,
    cmd_router,
    cmd_run,
    cmd_serve,
    cmd_specialists,
    cmd_tasks,
    cmd_train,
    cmd_trajectories,
    cmd_workspace,
)
from rsi.cli.render import print_error
from rsi.cli.state import state
from rsi.errors import RsiError

app = typer.Typer(
    name="rsi",
    help="Recursive self-improvement of LLM agents: contracts, portfolios, runs, promotion, generations.",
    # Markdown, not rich markup: help texts quote TOML tables like [training], which rich would swallow.
    rich_markup_mode="markdown",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"rsi {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")] = False,
    workspace: Annotated[
        Path | None, typer.Option("--workspace", "-C", help="Workspace folder (default: found from cwd).")
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Ask the model every time: serve nothing from the response cache and "
                           "keep nothing in it (sets RSI_REPLY_CACHE=off, which workers inherit; see `rsi cache`).")
    ] = False,
) -> None:
    state.debug = debug
    state.workspace_dir = workspace
    if no_cache:
        from rsi.models.cache import ENV_CACHE

        os.environ[ENV_CACHE] = "off"


for module in (
    cmd_workspace, cmd_hcp, cmd_portfolio, cmd_tasks, cmd_doctor, cmd_attempt, cmd_cache, cmd_serve, cmd_run, cmd_promote,
    cmd_trajectories, cmd_train, cmd_specialists, cmd_harvest, cmd_experience, cmd_generation, cmd_router,
):
    module.register(app)


def _is_usage_error(error: Exception) -> bool:
    """Bad flags or commands: click's exceptions, whether from click itself or typer's vendored copy."""
    import click

    return isinstance(error, click.exceptions.ClickException | typer.exceptions.TyperException) and hasattr(
        error, "show"
    )


def main() -> None:
    """Console entry point: exit 2 for bad input, 1 for runtime failure, 130 on Ctrl-C."""
    debug = "--debug" in sys.argv
    try:
        returned = app(standalone_mode=False)
    except RsiError as error:
        if debug:
            _settle()
            raise
        print_error(error.lines(), error.hint)
        _exit(error.exit_code)
    except KeyboardInterrupt:
        print_error(["interrupted"])
        _exit(130)
    except typer.Exit as done:
        _exit(done.exit_code)
    except typer.Abort:
        print_error(["aborted"])
        _exit(130)
    except Exception as error:  # usage errors (click's, or the copy typer vendors) and anything unexpected
        if _is_usage_error(error):
            error.show()  # type: ignore[attr-defined]
            _exit(2)
        if debug:
            _settle()
            raise
        print_error([f"internal error: {type(error).__name__}: {error}"], "rerun with --debug for the traceback")
        _exit(1)
    _exit(returned if isinstance(returned, int) else 0)


# How long the exit waits for a thread inside torch (a decoding step, a model load) to leave it.
EXIT_WAIT_S = 5.0


def _settle() -> bool:
    """Wait for this process's threads inside torch (rsi.models.embedded.native); True when none is left. Free when no
    model was ever loaded: the module is looked up, not imported."""
    native = sys.modules.get("rsi.models.embedded.native")
    try:
        return native is None or bool(native.settle(EXIT_WAIT_S))
    except KeyboardInterrupt:  # a second Ctrl-C while waiting: do not wait, and do not shut down under torch
        return False


def _exit(code: int) -> NoReturn:
    if not _settle():
        # A thread is still inside torch (a model load, a long prefill). Shutting the interpreter down now
        # would end that thread with pthread_exit and abort the process ("terminate called without an
        # active exception", SIGABRT) when it takes the GIL back: rsi.models.embedded.native. Nothing is left to
        # save (a run has recorded its end and closed its store before returning), so end the process
        # here, with its own exit code, after flushing what it printed.
        import logging

        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)
    sys.exit(code)
