"""CLI commands: `rsi hcp validate|revise|log|show` and the top-level `rsi diff`.

Each command parses flags, calls one function in rsi.contracts, and renders (rich on a TTY, plain
lines otherwise, --json for machines). Exit codes: 0 ok; 2 bad input (invalid contract, bad ref,
bad --set); 1 runtime or git failure (including a refused revise on a dirty contract); `rsi diff`
exits 1 when the contracts differ, like diff(1).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from rsi.cli.render import console, is_tty, print_json
from rsi.cli.state import state

if TYPE_CHECKING:
    from rsi.contracts.diff import ContractDiff
    from rsi.contracts.load import LoadedContract

hcp_app = typer.Typer(
    help="HCP contracts: validate, revise (git commit + tag), log, show.",
    no_args_is_help=True,
    rich_markup_mode="rich",
)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for machines.")]


def _contract_json(loaded: LoadedContract) -> dict[str, Any]:
    return {
        "ref": loaded.ref,
        "path": str(loaded.path),
        "name": loaded.name,
        "revision": loaded.revision,
        "content_hash": loaded.content_hash,
        "clock_hashes": loaded.clock_hashes,
        "system_prompt": loaded.system_prompt,
        "spec": loaded.spec.model_dump(mode="json"),
    }


@hcp_app.command("validate")
def validate(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Contract files or folders of them (default: every hcp/*.toml of the workspace)."),
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """Validate contracts; report every problem at once as `file:line: key: message` (exit 2 on any)."""
    from rsi.contracts.load import check_contracts
    from rsi.errors import ContractError

    if not paths:
        paths = sorted(state.workspace().hcp_dir.glob("*.toml"))
    results = check_contracts(paths)
    problems = [problem for _, _, found in results for problem in found]
    if json_out:
        print_json(
            [
                {
                    "path": str(path),
                    "valid": loaded is not None,
                    "name": loaded.name if loaded else None,
                    "revision": loaded.revision if loaded else None,
                    "content_hash": loaded.content_hash if loaded else None,
                    "problems": [
                        {"file": str(p.file), "line": p.line, "key": p.key, "message": p.message} for p in found
                    ],
                }
                for path, loaded, found in results
            ]
        )
        if problems:
            raise typer.Exit(2)
        return
    for path, loaded, _ in results:
        if loaded is not None:
            console.print(f"ok  {path}  {loaded.name} r{loaded.revision}  {loaded.short_hash}", markup=False)
    if problems:
        raise ContractError(problems, hint="see docs/hcp.md for the contract format")


@hcp_app.command("revise")
def revise(
    name: Annotated[str, typer.Argument(help="Contract name (hcp/NAME.toml).")],
    message: Annotated[str, typer.Option("--message", "-m", help="Why this revision exists.")],
    sets: Annotated[
        list[str] | None, typer.Option("--set", "-s", help="KEY=VALUE (dotted key; VALUE read as TOML).")
    ] = None,
    trailers: Annotated[
        list[str] | None, typer.Option("--trailer", help="Evidence trailer KEY=VALUE for the commit message.")
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """Write, commit and tag the next revision of a contract (refuses on uncommitted edits)."""
    from rsi.contracts.overrides import parse_assignment
    from rsi.contracts.revisions import revise_contract
    from rsi.errors import UserInputError

    changes: dict[str, Any] = dict(parse_assignment(item) for item in sets or [])
    extra: dict[str, str] = {}
    for item in trailers or []:
        separator = "=" if "=" in item else ":"
        key, _, value = item.partition(separator)
        if not key.strip() or not _:
            raise UserInputError(f"--trailer {item!r}: expected KEY=VALUE")
        extra[key.strip()] = value.strip()
    outcome = revise_contract(state.workspace(), name, changes, message, extra)
    if json_out:
        print_json(
            {
                "name": outcome.name,
                "revision": outcome.revision,
                "parent": outcome.parent,
                "commit": outcome.commit,
                "tag": outcome.tag,
                "content_hash": outcome.content_hash,
                "clocks_moved": outcome.clocks_moved,
                "recovered": outcome.recovered,
                "tagged": outcome.tagged,
            }
        )
        return
    if outcome.recovered:
        console.print("recovered an interrupted revise: committed and tagged it", markup=False)
    clocks = ", ".join(outcome.clocks_moved) or "none"
    console.print(
        f"{outcome.name} r{outcome.revision} (parent r{outcome.parent})  {outcome.content_hash[:12]}  "
        f"clocks moved: {clocks}  commit {outcome.commit[:12]}  tag {outcome.tag}",
        markup=False,
    )


@hcp_app.command("log")
def log(
    name: Annotated[str, typer.Argument(help="Contract name (hcp/NAME.toml).")],
    json_out: JsonFlag = False,
) -> None:
    """List a contract's revisions from git: revision, date, clocks moved, hash, message."""
    from rsi.contracts.revisions import revision_log

    entries = revision_log(state.workspace(), name)
    if json_out:
        print_json(
            [
                {
                    "revision": e.revision,
                    "parent": e.parent,
                    "date": e.date.isoformat(),
                    "clocks_moved": e.clocks_moved,
                    "content_hash": e.content_hash,
                    "commit": e.commit,
                    "tag": e.tag,
                    "message": e.message,
                    "trailers": e.trailers,
                }
                for e in entries
            ]
        )
        return
    if is_tty():
        from rich.table import Table

        table = Table("rev", "date (UTC)", "clocks moved", "hash", "tag", "message")
        for e in entries:
            table.add_row(
                f"r{e.revision}",
                e.date.strftime("%Y-%m-%d %H:%M"),
                ", ".join(e.clocks_moved) or "-",
                e.content_hash[:12],
                e.tag or "(untagged)",
                e.message.splitlines()[0] if e.message else "",
            )
        console.print(table)
        return
    for e in entries:
        clocks = ",".join(e.clocks_moved) or "-"
        first = e.message.splitlines()[0] if e.message else ""
        typer.echo(f"r{e.revision}\t{e.date.strftime('%Y-%m-%dT%H:%M:%SZ')}\t{clocks}\t{e.content_hash[:12]}\t{first}")


@hcp_app.command("show")
def show(
    ref: Annotated[str, typer.Argument(help="A path, NAME, NAME@rN or GITREV:path.")],
    json_out: JsonFlag = False,
) -> None:
    """Print a resolved contract (defaults filled in, system prompt resolved)."""
    import tomli_w

    loaded = _resolve_refs([ref])[0]
    if json_out:
        print_json(_contract_json(loaded))
        return
    data = loaded.spec.model_dump(mode="python", exclude_none=True)
    source = loaded.spec.harness.system_prompt_file
    data["harness"]["system_prompt"] = loaded.system_prompt
    data["harness"].pop("system_prompt_file", None)
    clocks = "  ".join(f"{clock}={digest[:12]}" for clock, digest in loaded.clock_hashes.items())
    lines = [
        f"# ref: {loaded.ref}",
        f"# identity: {loaded.content_hash}",
        f"# clocks: {clocks}",
        f"# system prompt: {'from ' + source if source else 'inline'}",
        "",
        tomli_w.dumps(data, multiline_strings=True).rstrip(),
    ]
    console.print("\n".join(lines), markup=False, highlight=False)


def _resolve_refs(refs: list[str]) -> list[LoadedContract]:
    """Resolve refs in the workspace; plain file paths also work outside any workspace."""
    from rsi.contracts.load import load_contract
    from rsi.contracts.refs import resolve_ref
    from rsi.errors import WorkspaceError

    try:
        workspace = state.workspace()
    except WorkspaceError:
        if all(Path(ref).is_file() for ref in refs):
            return [load_contract(Path(ref)) for ref in refs]
        raise
    return [resolve_ref(workspace, ref) for ref in refs]


def _show_value(value: Any) -> str:
    import json

    return "(absent)" if value is None else json.dumps(value, ensure_ascii=False, default=str)


def render_diff(result: ContractDiff) -> None:
    """Rich on a TTY, plain lines otherwise."""
    rich = is_tty()
    header = f"--- {result.a_ref} ({result.a_hash[:12]})\n+++ {result.b_ref} ({result.b_hash[:12]})"
    console.print(header, markup=False, style="bold" if rich else None)
    verdict = "equal identity" if result.equal else "different"
    clocks = ", ".join(result.clocks_moved) or "none"
    console.print(f"{verdict}; clocks moved: {clocks}", markup=False)
    for line in result.specialists:
        console.print(line, markup=False, style="bold" if rich else None)
    for section, changes in result.sections().items():
        console.print(f"[{section}]", markup=False, style="bold cyan" if rich else None)
        for change in changes:
            note = "  (bookkeeping)" if change.bookkeeping else ""
            if change.text_diff is not None:
                console.print(f"  {change.key}: {change.kind}{note}", markup=False)
                for line in change.text_diff.splitlines():
                    style = None
                    if rich:
                        style = "green" if line.startswith("+") else "red" if line.startswith("-") else "dim"
                    console.print(f"    {line}", markup=False, style=style)
                continue
            if rich:
                console.print(
                    f"  {change.key}: [red]{_escape(_show_value(change.old))}[/] -> "
                    f"[green]{_escape(_show_value(change.new))}[/]{note}"
                )
            else:
                console.print(
                    f"  {change.key}: {_show_value(change.old)} -> {_show_value(change.new)}{note}", markup=False
                )


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def diff(
    a: Annotated[str, typer.Argument(help="Contract ref A (path, NAME, NAME@rN, GITREV:path).")],
    b: Annotated[str, typer.Argument(help="Contract ref B.")],
    json_out: JsonFlag = False,
) -> None:
    """Semantic diff of two contracts by section, naming moved clocks. Exit 0 equal, 1 different, 2 bad input."""
    from rsi.contracts.diff import diff_contracts

    first, second = _resolve_refs([a, b])
    result = diff_contracts(first, second)
    grown = _experience_growth(first, second)
    if json_out:
        print_json({**result.to_json(), **({"experience": grown.to_json()} if grown else {})})
    else:
        render_diff(result)
        if grown:
            console.print(f"experience library {grown.old} -> {grown.new}: {grown.as_text()}", markup=False)
    if not result.equal:
        raise typer.Exit(1)


def _experience_growth(first: LoadedContract, second: LoadedContract) -> Any:
    """How the experience library grew between the two contracts (None when they carry the same one, or it is
    not readable here: the diff itself never depends on it)."""
    from rsi.errors import RsiError, WorkspaceError
    from rsi.experience.library import growth

    old, new = first.spec.harness.experience, second.spec.harness.experience
    if old == new:
        return None
    try:
        return growth(state.workspace().runs_dir / "experience", old, new)
    except (RsiError, WorkspaceError):
        return None


def register(app: typer.Typer) -> None:
    """Add `rsi hcp ...` and `rsi diff` to the root app."""
    app.add_typer(hcp_app, name="hcp")
    app.command("diff")(diff)
