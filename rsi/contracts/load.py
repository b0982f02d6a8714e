"""Loading and validating contracts: TOML text -> ContractSpec, with every problem located at once.

A problem names `file:line: key: message`. The line comes from the TOML source (toml_source), the
key from pydantic's error location or from a model validator's FieldProblems; unknown keys carry a
"did you mean" hint. Referenced prompt files must exist. A contract can be read from the working
tree or from a git revision: the prompt reader decides where relative files come from, so a
contract at `default@r2` resolves its prompt as it was at r2.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from rsi.contracts.hashing import clock_hashes, content_hash, sha256_text
from rsi.contracts.keys import KeyPath, fields_at, unknown_key_message, walk_schema
from rsi.contracts.overrides import OverrideError, apply_overrides, check_override_key
from rsi.contracts.schema import ContractSpec, FieldProblems, specialist_reference_problems
from rsi.contracts.toml_source import TomlSyntaxError, format_key, parse_source
from rsi.errors import ContractError, Problem


class PromptReader(Protocol):
    """Reads files referenced by a contract (relative to the contract's folder)."""

    def read(self, relative: str) -> str | None: ...

    def where(self, relative: str) -> str: ...


@dataclass(frozen=True)
class FileReader:
    """Referenced files from the working tree."""

    folder: Path

    def read(self, relative: str) -> str | None:
        path = self.folder / relative
        try:
            return path.read_text(encoding="utf-8") if path.is_file() else None
        except (OSError, UnicodeDecodeError):
            return None

    def where(self, relative: str) -> str:
        return str(self.folder / relative)


@dataclass(frozen=True)
class LoadedContract:
    """A validated contract with its source text, resolved prompt and identity hashes."""

    spec: ContractSpec
    path: Path
    source: str
    system_prompt: str
    content_hash: str
    clock_hashes: dict[str, str]
    ref: str
    reader: PromptReader = field(compare=False, repr=False)

    @property
    def name(self) -> str:
        return self.spec.hcp.name

    @property
    def revision(self) -> int:
        return self.spec.hcp.revision

    @property
    def short_hash(self) -> str:
        return self.content_hash[:12]


def pydantic_problems(error: PydanticValidationError, model: type = ContractSpec) -> list[tuple[KeyPath, str]]:
    """(key path, message) for each pydantic error, with field-level locations and did-you-mean hints."""
    found: list[tuple[KeyPath, str]] = []
    for item in error.errors(include_url=False):
        loc: KeyPath = tuple(item["loc"])
        kind = item["type"]
        cause = (item.get("ctx") or {}).get("error")
        if isinstance(cause, FieldProblems):
            found.extend(((*loc, *sub), message) for sub, message in cause.items)
        elif kind == "extra_forbidden":
            found.append((loc, unknown_key_message(str(loc[-1]), fields_at(loc[:-1], model))))
        elif kind == "missing":
            annotation, _ = walk_schema(loc, model)
            if len(loc) == 1 and isinstance(annotation, type) and issubclass(annotation, BaseModel):
                found.append((loc, f"missing required section [{loc[0]}]"))
            else:
                found.append((loc, f"missing required key '{loc[-1]}'"))
        else:
            message = str(item["msg"]).removeprefix("Value error, ")
            value = item.get("input")
            if isinstance(value, str | int | float | bool) and not isinstance(value, dict):
                shown = repr(value)
                message += f" (got {shown if len(shown) <= 60 else shown[:57] + '...'})"
            found.append((loc, message))
    return found


def _prompt_problems(data: dict[str, Any], reader: PromptReader) -> list[tuple[KeyPath, str]]:
    harness = data.get("harness")
    if not isinstance(harness, dict):
        return []
    relative = harness.get("system_prompt_file")
    if isinstance(relative, str) and relative and reader.read(relative) is None:
        return [(("harness", "system_prompt_file"), f"prompt file not found: {reader.where(relative)}")]
    return []


def _raw_reference_problems(data: dict[str, Any]) -> list[tuple[KeyPath, str]]:
    """Cross-field checks on raw data, for when pydantic skipped the model validators."""
    raw_specialists = data.get("specialists")
    raw_routing = data.get("routing")
    specialists: list[Any] = raw_specialists if isinstance(raw_specialists, list) else []
    routing: dict[str, Any] = raw_routing if isinstance(raw_routing, dict) else {}
    names = [str(s.get("name", "")) if isinstance(s, dict) else "" for s in specialists]
    raw_rules = routing.get("rules")
    rules: list[Any] = raw_rules if isinstance(raw_rules, list) else []
    wanted = [str(r.get("specialist", "")) if isinstance(r, dict) else "" for r in rules]
    fixed = routing.get("specialist", "")
    return specialist_reference_problems(
        names, fixed if isinstance(fixed, str) else "", wanted
    )


def router_problems(spec: ContractSpec, reader: PromptReader) -> tuple[str, list[tuple[KeyPath, str]]]:
    """The learned router's JSON text, checked against `routing.router_sha256` ('' when routing is not learned)."""
    routing = spec.routing
    if routing.policy != "learned":
        return "", []
    text = reader.read(routing.router)
    if text is None:
        return "", [(("routing", "router"), f"router file not found: {reader.where(routing.router)}")]
    digest = sha256_text(text)
    if digest != routing.router_sha256:
        return "", [(("routing", "router_sha256"), f"{reader.where(routing.router)} has sha256 {digest[:12]}, not "
                     f"the {routing.router_sha256[:12]} the contract pins (router files are immutable; refit with "
                     "`rsi router fit`)")]
    return text, []


def resolve_router(loaded: LoadedContract, spec: ContractSpec) -> str:
    """`spec`'s router text read through `loaded`'s reader; a missing or changed file is a located ContractError."""
    text, problems = router_problems(spec, loaded.reader)
    if problems:
        source = parse_source(str(loaded.path), loaded.source) if loaded.source else None
        raise ContractError([source.problem(loc, message) if source else Problem(loaded.path, None, format_key(loc), message)
                             for loc, message in problems])
    return text


def validate_data(data: dict[str, Any], reader: PromptReader) -> tuple[ContractSpec | None, str, list[tuple[KeyPath, str]]]:
    """Validate contract data: (spec or None, resolved system prompt, located problems)."""
    problems: list[tuple[KeyPath, str]] = []
    spec: ContractSpec | None = None
    try:
        spec = ContractSpec.model_validate(data)
    except PydanticValidationError as error:
        problems.extend(pydantic_problems(error))
        problems.extend(p for p in _raw_reference_problems(data) if p not in problems)
    problems.extend(_prompt_problems(data, reader))
    if spec is not None and not problems:
        problems.extend(router_problems(spec, reader)[1])
    prompt = ""
    if spec is not None and not problems:
        harness = spec.harness
        prompt = (reader.read(harness.system_prompt_file) or "") if harness.system_prompt_file else harness.system_prompt
    return (spec if not problems else None), prompt, problems


def load_contract_text(text: str, path: Path, ref: str, reader: PromptReader, file_label: str | None = None) -> LoadedContract:
    """Parse and validate contract text; raise ContractError holding every problem."""
    label = file_label or str(path)
    try:
        source = parse_source(label, text)
    except TomlSyntaxError as error:
        raise ContractError([error.problem], hint="fix the TOML syntax first") from None
    if "portfolio" in source.data and "hcp" not in source.data:
        raise ContractError(
            [source.problem(("portfolio",), "this file is a portfolio, not a contract")],
            hint="check it with `rsi portfolio validate PATH`",
        )
    spec, prompt, problems = validate_data(source.data, reader)
    if problems or spec is None:
        raise ContractError(
            sorted((source.problem(loc, message) for loc, message in problems), key=lambda p: p.line or 0),
            hint="see docs/hcp.md for the contract format",
        )
    return LoadedContract(
        spec=spec,
        path=path,
        source=text,
        system_prompt=prompt,
        content_hash=content_hash(spec, prompt),
        clock_hashes=clock_hashes(spec, prompt),
        ref=ref,
        reader=reader,
    )


def load_contract(path: Path | str) -> LoadedContract:
    """Load one contract file from disk. Raises ContractError with every problem, located."""
    path = Path(path)
    if not path.is_file():
        raise ContractError([Problem(path, None, "", "no such contract file")])
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ContractError([Problem(path, None, "", f"cannot read: {error}")]) from None
    return load_contract_text(text, path, str(path), FileReader(path.parent.resolve()))


def with_prompt_source(overrides: dict[str, Any]) -> dict[str, Any]:
    """Setting one prompt source clears the other, so `system_prompt = "..."` replaces a prompt file."""
    result = dict(overrides)
    keys = {k.replace(" ", "") for k in overrides}
    if "harness.system_prompt" in keys and "harness.system_prompt_file" not in keys:
        result["harness.system_prompt_file"] = ""
    if "harness.system_prompt_file" in keys and "harness.system_prompt" not in keys:
        result["harness.system_prompt"] = ""
    return result


def override_contract(
    loaded: LoadedContract, overrides: dict[str, Any]
) -> tuple[ContractSpec | None, str, list[tuple[str | None, KeyPath, str]]]:
    """Apply dotted overrides to a loaded contract and validate the result.

    Returns (spec, prompt, problems); each problem is (override key it comes from or None, key path,
    message), so a caller can point at the line of the override that caused it.
    """
    try:
        data = apply_overrides(loaded.spec.model_dump(mode="python"), with_prompt_source(overrides))
    except OverrideError as error:
        return None, "", [(key, (), message) for key, message in error.items]
    spec, prompt, problems = validate_data(data, loaded.reader)
    paths = {key: check_override_key(key)[0] for key in overrides}
    located: list[tuple[str | None, KeyPath, str]] = []
    for loc, message in problems:
        culprit = None
        for key, path in paths.items():
            if path is not None and tuple(loc[: len(path)]) == path:
                culprit = key
                break
        located.append((culprit, loc, message))
    return spec, prompt, located


def check_contracts(paths: list[Path]) -> list[tuple[Path, LoadedContract | None, list[Problem]]]:
    """Validate many contract files (folders expand to their *.toml); never raises for bad contracts.

    Beyond `load_contract`, a contract checked here must be findable by its name: `hcp.name` equals
    the file name (refs resolve `NAME` to hcp/NAME.toml). A folder without contracts, or a path that
    does not exist, is itself a located problem.
    """
    files: list[Path] = []
    results: list[tuple[Path, LoadedContract | None, list[Problem]]] = []
    for path in paths:
        if path.is_dir():
            found = sorted(path.glob("*.toml"))
            if not found:
                results.append((path, None, [Problem(path, None, "", "no contracts (*.toml) in this folder")]))
            files.extend(found)
        elif not path.exists():
            results.append((path, None, [Problem(path, None, "", "no such file")]))
        else:
            files.append(path)
    for file in files:
        try:
            loaded = load_contract(file)
        except ContractError as error:
            results.append((file, None, list(error.problems)))
            continue
        if loaded.name != file.stem:
            source = parse_source(file, loaded.source)
            message = f"'{loaded.name}' differs from the file name '{file.stem}' (refs find hcp/NAME.toml)"
            results.append((file, None, [source.problem(("hcp", "name"), message)]))
        else:
            results.append((file, loaded, []))
    return results
