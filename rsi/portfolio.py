"""Portfolios: a base contract plus named variants (dotted-key overrides) and grids, each resolved to a
full, validated, content-hashed Configuration.

    portfolios/<name>.toml
      schema_version = 1
      [portfolio]   name, base (a contract ref), description
      [[variants]]  name, description, parents, [variants.overrides] "dotted.key" = value
      [[grids]]     name, description, [grids.overrides] (shared), [grids.axes] "dotted.key" = [values]

A grid expands to the cartesian product of its axes, in the order written, named
`<grid>-<leaf>-<value>[-<leaf>-<value>...]`. Every problem names `file:line: key` — an override of a
key the schema lacks names the variant and the key, with a "did you mean" hint. Two variants that
resolve to the same configuration (same config hash) are an error: a portfolio spends budget per
configuration, so a duplicate is a silent waste.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from rsi.config import Configuration
from rsi.contracts.keys import KeyPath
from rsi.contracts.load import LoadedContract, override_contract, pydantic_problems
from rsi.contracts.refs import resolve_ref
from rsi.contracts.toml_source import TomlSource, TomlSyntaxError, format_key, parse_source
from rsi.errors import ContractError, Problem, RsiError, UserInputError
from rsi.workspace import Workspace

NAME_PATTERN = r"^[a-z0-9][a-z0-9_.-]*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PortfolioMeta(_Strict):
    """`[portfolio]`: what this portfolio is and which contract it varies."""

    name: str = Field(pattern=NAME_PATTERN, description="Portfolio name; the file is portfolios/<name>.toml.")
    base: str = Field(
        default="default",
        min_length=1,
        description="Contract ref the variants override: NAME, NAME@rN, GITREV:path, or a path relative to this file.",
    )
    description: str = Field(default="", description="What this portfolio explores.")


class VariantSpec(_Strict):
    """`[[variants]]`: one named configuration, the base plus dotted-key overrides."""

    name: str = Field(pattern=NAME_PATTERN, description="Unique within the portfolio.")
    description: str = Field(default="")
    parents: list[str] = Field(default_factory=list, description="Configurations this one was derived from.")
    overrides: dict[str, Any] = Field(default_factory=dict, description='"dotted.key" = value, applied to the base.')


class GridSpec(_Strict):
    """`[[grids]]`: the cartesian product of `axes`, each on top of the shared `overrides`."""

    name: str = Field(pattern=NAME_PATTERN, description="Prefix of the generated variant names.")
    description: str = Field(default="")
    overrides: dict[str, Any] = Field(default_factory=dict, description="Applied to every combination.")
    axes: dict[str, list[Any]] = Field(min_length=1, description='"dotted.key" = [value, ...]')


class PortfolioSpec(_Strict):
    """One portfolio file."""

    schema_version: Literal[1] = Field(default=1)
    portfolio: PortfolioMeta
    variants: list[VariantSpec] = Field(default_factory=list)
    grids: list[GridSpec] = Field(default_factory=list)


@dataclass(frozen=True)
class PortfolioOutcome:
    """A resolved portfolio: its base contract and one Configuration per variant, in file order."""

    name: str
    path: Path
    description: str
    base: LoadedContract
    configurations: list[Configuration]


@dataclass(frozen=True)
class _Variant:
    name: str
    description: str
    parents: list[str]
    overrides: dict[str, Any]
    where: KeyPath  # the variant's table in the portfolio file
    key_paths: dict[str, KeyPath]  # override key -> where it is written
    origin: str  # "variant 'x'" or "grid 'g'" for shared grid overrides


def _slug(value: Any) -> str:
    text = "_".join(str(v) for v in value) if isinstance(value, list) else str(value)
    return re.sub(r"[^a-z0-9._]+", "_", text.lower()).strip("_") or "x"


def _expand(spec: PortfolioSpec) -> list[_Variant]:
    variants = [
        _Variant(
            v.name,
            v.description,
            list(v.parents),
            dict(v.overrides),
            ("variants", i),
            {key: ("variants", i, "overrides", key) for key in v.overrides},
            f"variant '{v.name}'",
        )
        for i, v in enumerate(spec.variants)
    ]
    for j, grid in enumerate(spec.grids):
        axes = list(grid.axes.items())
        for combination in itertools.product(*(values for _, values in axes)):
            chosen = {key: value for (key, _), value in zip(axes, combination, strict=True)}
            parts = [f"{key.split('.')[-1].strip(chr(34))}-{_slug(value)}" for key, value in chosen.items()]
            name = "-".join([grid.name, *parts])
            key_paths: dict[str, KeyPath] = {key: ("grids", j, "overrides", key) for key in grid.overrides}
            key_paths.update({key: ("grids", j, "axes", key) for key in chosen})
            variants.append(
                _Variant(
                    name,
                    grid.description,
                    [],
                    {**grid.overrides, **chosen},
                    ("grids", j),
                    key_paths,
                    f"grid '{grid.name}'",
                )
            )
    return variants


def portfolio_path(workspace: Workspace, name_or_path: str | Path) -> Path:
    text = str(name_or_path)
    candidate = Path(text).expanduser()
    if text.endswith(".toml") or candidate.is_file():
        return candidate
    path = workspace.portfolio_path(text)
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in workspace.portfolios_dir.glob("*.toml"))) or "none"
        raise UserInputError(f"{text}: no portfolio {path} (portfolios here: {known})")
    return path


def _resolve_base(workspace: Workspace, source: TomlSource, spec: PortfolioSpec, path: Path) -> LoadedContract:
    ref = spec.portfolio.base
    if ref.endswith(".toml") and not Path(ref).is_absolute() and ":" not in ref:
        ref = str((path.parent / ref).resolve())
    try:
        return resolve_ref(workspace, ref)
    except ContractError:
        raise
    except RsiError as error:
        raise ContractError(
            [source.problem(("portfolio", "base"), f"cannot load base contract: {error.message}")], hint=error.hint
        ) from None


def split_selection(name_or_path: str | Path) -> tuple[str | Path, list[str]]:
    """`default:text-*,repl-greedy` -> ("default", ["text-*", "repl-greedy"]): a portfolio ref may
    select some of its configurations by name (shell-style globs). A path that exists as given is
    never split, so a file name with a colon still works."""
    text = str(name_or_path)
    if ":" not in text or Path(text).expanduser().is_file():
        return name_or_path, []
    ref, _, selection = text.rpartition(":")
    return ref, [pattern.strip() for pattern in selection.split(",") if pattern.strip()]


def _select(configurations: list[Configuration], patterns: list[str], ref: str) -> list[Configuration]:
    """The configurations some pattern matches, in file order; a pattern matching none is an error."""
    from fnmatch import fnmatchcase

    names = [c.name for c in configurations]
    unmatched = [p for p in patterns if not any(fnmatchcase(name, p) for name in names)]
    if unmatched:
        raise UserInputError(f"{ref}: no configuration matches {', '.join(map(repr, unmatched))}",
                             hint=f"its configurations: {', '.join(names)}")
    return [c for c in configurations if any(fnmatchcase(c.name, p) for p in patterns)]


def resolve_portfolio(workspace: Workspace, name_or_path: str | Path) -> PortfolioOutcome:
    """Load, expand and validate a portfolio (the whole file, even when the ref selects some of its
    configurations: see `split_selection`); raises ContractError holding every problem."""
    name_or_path, patterns = split_selection(name_or_path)
    path = portfolio_path(workspace, name_or_path)
    source, spec = _read_portfolio(path)
    problems: list[Problem] = []
    if not spec.variants and not spec.grids:
        problems.append(source.problem(("portfolio",), "a portfolio needs at least one [[variants]] or [[grids]]", key="variants"))
    for j, grid in enumerate(spec.grids):
        for axis, values in grid.axes.items():
            if not values:  # the product would be empty: the whole grid would vanish without a word
                message = f"grid '{grid.name}': axis has no values (the grid would make no configuration)"
                problems.append(source.problem(("grids", j, "axes", axis), message, key=axis))
    base = _resolve_base(workspace, source, spec, path)
    configurations: list[Configuration] = []
    seen_names: dict[str, str] = {}
    seen_hashes: dict[str, str] = {}
    for variant in _expand(spec):
        where_name = (*variant.where, "name")
        if variant.name in seen_names:
            problems.append(source.problem(where_name, f"duplicate variant name '{variant.name}'"))
            continue
        seen_names[variant.name] = variant.name
        new_spec, prompt, found = override_contract(base, variant.overrides)
        for problem in _override_problems(source, variant, found):
            if problem not in problems:  # a shared grid value's problem is reported once
                problems.append(problem)
        if new_spec is None or found:
            continue
        configuration = Configuration(
            name=variant.name,
            contract_ref=base.ref,
            spec=new_spec,
            system_prompt=prompt,
            overrides=variant.overrides,
            parents=variant.parents,
        )
        duplicate = seen_hashes.get(configuration.config_hash)
        if duplicate is not None:
            problems.append(
                source.problem(
                    where_name,
                    f"variant '{variant.name}' resolves to the same configuration as '{duplicate}' "
                    f"(config hash {configuration.config_hash})",
                )
            )
            continue
        seen_hashes[configuration.config_hash] = variant.name
        configurations.append(configuration)
    if problems:
        raise ContractError(sorted(problems, key=lambda p: p.line or 0), hint="see docs/hcp.md (Portfolios)")
    if patterns:
        configurations = _select(configurations, patterns, str(name_or_path))
    return PortfolioOutcome(
        name=spec.portfolio.name,
        path=path,
        description=spec.portfolio.description,
        base=base,
        configurations=configurations,
    )


def _read_portfolio(path: Path) -> tuple[TomlSource, PortfolioSpec]:
    """The parsed source (for locating problems) and the validated spec of a portfolio file."""
    if not path.is_file():
        raise ContractError([Problem(path, None, "", "no such portfolio file")])
    try:
        source = parse_source(str(path), path.read_text(encoding="utf-8"))
    except TomlSyntaxError as error:
        raise ContractError([error.problem], hint="fix the TOML syntax first") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ContractError([Problem(path, None, "", f"cannot read: {error}")]) from None
    try:
        return source, PortfolioSpec.model_validate(source.data)
    except PydanticValidationError as error:
        raise ContractError(
            [source.problem(loc, message) for loc, message in pydantic_problems(error, PortfolioSpec)],
            hint="see docs/hcp.md (Portfolios) for the format",
        ) from None


def _override_problems(source: TomlSource, variant: _Variant, found: list[Any]) -> list[Problem]:
    """The overrides' problems, each at the line that set the bad key (a grid's own line for a shared value)."""
    problems = []
    for culprit, loc, message in found:
        if culprit is not None:
            key_path = variant.key_paths.get(culprit, variant.where)
            # a bad key, or a bad shared grid value, is the grid's problem: report it once
            shared = key_path[2:3] == ("overrides",) or not loc
            origin = variant.origin if shared else f"variant '{variant.name}'"
            key = culprit if not loc or len(loc) <= len(_split(culprit)) else format_key(loc)
            problems.append(Problem(source.file, source.line_of(key_path), key, f"{origin}: {message}"))
        else:
            problems.append(Problem(
                source.file, source.line_of(variant.where), format_key(loc), f"variant '{variant.name}': {message}"
            ))
    return problems


def _split(key: str) -> KeyPath:
    from rsi.contracts.keys import parse_dotted_key

    try:
        return parse_dotted_key(key)
    except ValueError:
        return (key,)


def load_portfolio(workspace: Workspace, name_or_path: str | Path) -> list[Configuration]:
    """The configurations of a portfolio, each fully resolved and validated (see resolve_portfolio)."""
    return resolve_portfolio(workspace, name_or_path).configurations
