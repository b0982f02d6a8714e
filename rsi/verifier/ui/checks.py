"""The UI check registry: check name -> layer and parameter model (docs/tasks.md, "The ui kind").

A task names its checks as `[[check]]` tables (tests/checks.toml, hidden) or as `[public] checks`
(task.toml). Each is validated here, in the parent, into a `CheckSpec` with file:line:key problems;
the judge child (judge.py, standard library only, inside the sandbox) receives the validated plain
dicts and runs them through its `RUNNERS`, keyed by the same names (a test holds the two key sets
equal). The layer is the check's, never the task's: a task cannot move a check to a layer it does not
require.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rsi.errors import Problem

Layer = Literal["viability", "task", "interaction", "constraints", "visual"]
LAYERS: tuple[Layer, ...] = ("viability", "task", "interaction", "constraints", "visual")


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")
    check: str
    id: str = ""


class Target(BaseModel):
    """An element: by accessible role (and name), by CSS selector, or both (both must hold). First match."""

    model_config = ConfigDict(extra="forbid")
    role: str | None = None
    name: str | None = None
    selector: str | None = None

    @model_validator(mode="after")
    def _one_way(self) -> Target:
        if self.role is None and self.selector is None:
            raise ValueError("a target needs `role` or `selector`")
        if self.name is not None and self.role is None:
            raise ValueError("`name` needs a `role`")
        return self


class NoParams(_Params):
    pass


class ElementParams(_Params):
    role: str | None = None
    name: str | None = None
    selector: str | None = None
    count: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _one_way(self) -> ElementParams:
        Target(role=self.role, name=self.name, selector=self.selector)
        return self


class TextParams(_Params):
    text: str = Field(min_length=1)
    selector: str | None = None


class TypeArg(BaseModel):
    model_config = ConfigDict(extra="forbid")
    target: Target
    text: str


class KeyArg(BaseModel):
    model_config = ConfigDict(extra="forbid")
    target: Target
    key: str = Field(min_length=1)


class SelectArg(BaseModel):
    model_config = ConfigDict(extra="forbid")
    target: Target
    value: str


class Step(BaseModel):
    """Exactly one of: click, type, key, select, reload (a reload keeps the page's storage)."""

    model_config = ConfigDict(extra="forbid")
    click: Target | None = None
    type: TypeArg | None = None
    key: KeyArg | None = None
    select: SelectArg | None = None
    reload: bool | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Step:
        if len(self.model_dump(exclude_none=True)) != 1:
            raise ValueError("a step is exactly one of click, type, key, select, reload")
        if self.reload is False:
            raise ValueError("`reload` can only be true")
        return self


class ValueArg(BaseModel):
    model_config = ConfigDict(extra="forbid")
    target: Target
    equals: str


class ElementArg(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: str | None = None
    name: str | None = None
    selector: str | None = None
    count: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _one_way(self) -> ElementArg:
        Target(role=self.role, name=self.name, selector=self.selector)
        return self


class Expect(BaseModel):
    """One of: text (+ selector), element, absent, value."""

    model_config = ConfigDict(extra="forbid")
    text: str | None = None
    selector: str | None = None
    element: ElementArg | None = None
    absent: Target | None = None
    value: ValueArg | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Expect:
        kinds = [k for k in ("text", "element", "absent", "value") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError("an expectation is exactly one of text, element, absent, value")
        if self.selector is not None and kinds != ["text"]:
            raise ValueError("`selector` goes with `text` only")
        return self


class InteractParams(_Params):
    steps: list[Step] = Field(min_length=1)
    expect: list[Expect] = Field(min_length=1)


class MaxBytesParams(_Params):
    bytes: int = Field(gt=0)


class NamesParams(_Params):
    names: list[str] = Field(min_length=1)


class WithinViewportParams(_Params):
    selector: str | None = None


class NoOverlapParams(_Params):
    selectors: list[str] = Field(min_length=2)


class ContrastParams(_Params):
    selector: str | None = None
    min_ratio: float = Field(default=4.5, ge=1.0, le=21.0)


@dataclass(frozen=True)
class CheckDef:
    """One registered check: its layer, its parameters, what it does in one line."""

    layer: Layer
    params: type[_Params]
    summary: str


CHECKS: dict[str, CheckDef] = {
    "loads": CheckDef("viability", NoParams, "DOMContentLoaded within the load limit"),
    "no-uncaught-errors": CheckDef("viability", NoParams, "no uncaught exception or unhandled rejection, and the page never froze"),
    "no-failed-requests": CheckDef("viability", NoParams, "every request to the page's own origin found its file"),
    "element": CheckDef("task", ElementParams, "a visible element by role (and accessible name) or selector; count = exactly N"),
    "text": CheckDef("task", TextParams, "the text is perceivable (in the page, not hidden, transparent or clipped)"),
    "interact": CheckDef("interaction", InteractParams, "steps from a fresh load, then every expectation holds"),
    "no-external-requests": CheckDef("constraints", NoParams, "no request to any other origin (all are refused anyway)"),
    "max-bytes": CheckDef("constraints", MaxBytesParams, "the solution files' total size"),
    "forbid-api": CheckDef("constraints", NamesParams, "none of the strings appears in the page's HTML or script files"),
    "require-api": CheckDef("constraints", NamesParams, "each string appears in the page's HTML or script files"),
    "not-blank": CheckDef("visual", NoParams, "the screenshot is not one flat colour"),
    "within-viewport": CheckDef("visual", WithinViewportParams, "visible elements lie within the viewport's width"),
    "no-overlap": CheckDef("visual", NoOverlapParams, "the boxes of the selectors' first matches do not intersect"),
    "contrast": CheckDef("visual", ContrastParams, "WCAG contrast of text against its effective background"),
}


class CheckSpec(BaseModel):
    """One validated check, as the judge receives it."""

    model_config = ConfigDict(frozen=True)
    id: str
    name: str
    layer: Layer
    params: dict[str, Any]


class CheckError(ValueError):
    """A check table that does not validate: `key` is its dotted place (e.g. `check[2].steps.0.click`)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key, self.message = key, message


def parse_check(raw: Any, index: int, where: str = "check") -> CheckSpec:
    """One `[[check]]` table -> CheckSpec; CheckError naming `where[index].key` otherwise."""
    place = f"{where}[{index}]"
    if not isinstance(raw, dict):
        raise CheckError(place, "a check is a table")
    name = raw.get("check")
    if name not in CHECKS:
        raise CheckError(f"{place}.check", f"unknown check {name!r} (known: {', '.join(CHECKS)})")
    definition = CHECKS[name]
    try:
        params = definition.params.model_validate(raw)
    except ValidationError as error:
        first = error.errors()[0]
        key = ".".join(str(p) for p in first["loc"] if not str(p).startswith("function-after"))
        raise CheckError(f"{place}.{key}".rstrip("."), first["msg"]) from error
    plain = params.model_dump(exclude_none=True)
    return CheckSpec(id=plain.pop("id") or f"{name}-{index}", name=name, layer=definition.layer, params=plain)


def parse_checks(raws: list[Any], where: str = "check") -> list[CheckSpec]:
    """Every check of a list; the first bad one raises CheckError. Ids must be unique."""
    specs = [parse_check(raw, i, where) for i, raw in enumerate(raws)]
    seen: set[str] = set()
    for i, spec in enumerate(specs):
        if spec.id in seen:
            raise CheckError(f"{where}[{i}].id", f"duplicate id {spec.id!r}")
        seen.add(spec.id)
    return specs


def _nth_header_line(text: str, index: int) -> int | None:
    lines = [n for n, line in enumerate(text.splitlines(), 1) if re.match(r"^\s*\[\[\s*check\s*\]\]", line)]
    return lines[index] if index < len(lines) else None


def load_checks_file(path: Path) -> tuple[list[CheckSpec], list[Problem]]:
    """tests/checks.toml -> (checks, problems located by file, line, key); no check when any is bad."""
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except OSError as error:
        return [], [Problem(path, None, "", f"cannot read: {error}")]
    except tomllib.TOMLDecodeError as error:
        found = re.search(r"at line (\d+)", str(error))
        return [], [Problem(path, int(found.group(1)) if found else None, "", f"not valid TOML: {error}")]
    raws = data.get("check")
    extra = sorted(set(data) - {"check"})
    if extra:
        return [], [Problem(path, None, extra[0], "unknown key (a checks file holds only [[check]] tables)")]
    if not isinstance(raws, list) or not raws:
        return [], [Problem(path, None, "check", "no [[check]] table")]
    try:
        return parse_checks(raws), []
    except CheckError as error:
        index = int(re.match(r"check\[(\d+)\]", error.key).group(1))  # type: ignore[union-attr]
        return [], [Problem(path, _nth_header_line(text, index), error.key, error.message)]


class UiOptions(BaseModel):
    """The `ui` kind's `[verifier]` options (besides `kind`)."""

    model_config = ConfigDict(extra="forbid")
    viewport: tuple[int, int] = (800, 600)
    required_layers: list[Layer] | None = Field(default=None, description="Default: every layer that has a check.")
    entry: str = Field(default="index.html", description="The page loaded first (the task's solution_file).")
    load_s: float = Field(default=10.0, gt=0, le=120)
    step_s: float = Field(default=5.0, gt=0, le=60)

    @model_validator(mode="after")
    def _sane(self) -> UiOptions:
        width, height = self.viewport
        if not (200 <= width <= 4000 and 200 <= height <= 4000):
            raise ValueError("viewport sides must lie between 200 and 4000 pixels")
        return self
