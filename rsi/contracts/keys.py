"""Dotted keys against the contract schema: parse them, and say whether the schema has them.

A dotted key names one field of a contract: `harness.sampling.temperature`, `specialists[0].rank`
(also written `specialists.0.rank`). Unknown keys get a "did you mean" hint from difflib, so that a
typo in a contract, an override or a `--set` is an error that says how to fix it.
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from rsi.contracts.schema import ContractSpec

KeyPath = tuple[str | int, ...]

_PART = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|([A-Za-z0-9_-]+))\s*((?:\[\s*\d+\s*\])*)\s*')


def parse_dotted_key(key: str) -> KeyPath:
    """`harness.sampling.temperature` -> ('harness', 'sampling', 'temperature'); `a[1].b` and `a.1.b` index."""
    path: list[str | int] = []
    position = 0
    text = key.strip()
    if not text:
        raise ValueError("empty key")
    while True:
        match = _PART.match(text, position)
        if not match or match.end() == position:
            raise ValueError(f"cannot parse key {key!r}")
        quoted, bare, indices = match.groups()
        if quoted is not None:
            path.append(quoted.replace('\\"', '"'))
        elif bare.isdigit() and path:
            path.append(int(bare))
        else:
            path.append(bare)
        path.extend(int(index) for index in re.findall(r"\d+", indices or ""))
        position = match.end()
        if position >= len(text):
            return tuple(path)
        if text[position] != ".":
            raise ValueError(f"cannot parse key {key!r}")
        position += 1


def _unwrap(annotation: Any) -> Any:
    """Strip Optional/Annotated so the walk sees the model, list or scalar type."""
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return _unwrap(args[0]) if len(args) == 1 else annotation
    return annotation


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def walk_schema(path: KeyPath, model: type[BaseModel] = ContractSpec) -> tuple[Any, str | None]:
    """The annotation at `path`, or (None, why-not) with a did-you-mean hint for an unknown key."""
    current: Any = model
    for depth, part in enumerate(path):
        current = _unwrap(current)
        where = ".".join(str(p) for p in path[:depth]) or "the contract"
        if isinstance(part, int):
            if get_origin(current) is not list:
                return None, f"{where} is not a list; it cannot be indexed"
            current = get_args(current)[0] if get_args(current) else Any
            continue
        if _is_model(current):
            fields = current.model_fields
            if part not in fields:
                return None, unknown_key_message(part, list(fields))
            current = fields[part].annotation
        elif get_origin(current) is dict:
            current = get_args(current)[1] if get_args(current) else Any
        else:
            return None, f"{where} is a value, not a table; it has no key '{part}'"
    return current, None


def unknown_key_message(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f" (did you mean '{close[0]}'?)" if close else f" (known keys: {', '.join(sorted(known))})"
    return f"unknown key '{key}'{hint}"


def fields_at(path: KeyPath, model: type[BaseModel] = ContractSpec) -> list[str]:
    """Field names of the table at `path` ([] when `path` is not a table)."""
    annotation, _ = walk_schema(path, model)
    annotation = _unwrap(annotation)
    return list(annotation.model_fields) if _is_model(annotation) else []
