"""Dotted-key overrides on contract data: the one way portfolios and `rsi hcp revise --set` change a contract.

Pure: takes a plain dict (a contract as TOML data or as a model dump), returns a new dict. Keys the
schema does not have are refused with a "did you mean" hint; values are checked later, when the
result is validated as a ContractSpec.
"""

from __future__ import annotations

import copy
import tomllib
from typing import Any

from rsi.contracts.keys import KeyPath, parse_dotted_key, walk_schema
from rsi.errors import UserInputError


class OverrideError(UserInputError):
    """One or more override keys are invalid. `items` holds (key as written, message) pairs."""

    def __init__(self, items: list[tuple[str, str]]) -> None:
        self.items = list(items)
        super().__init__("; ".join(f"{key}: {message}" for key, message in self.items))

    def lines(self) -> list[str]:
        return [f"{key}: {message}" for key, message in self.items]


def check_override_key(key: str) -> tuple[KeyPath | None, str | None]:
    """Parse and check one dotted key against the schema: (path, None) or (None, message)."""
    try:
        path = parse_dotted_key(key)
    except ValueError as error:
        return None, str(error)
    _, problem = walk_schema(path)
    return (None, problem) if problem else (path, None)


def _merge(target: Any, value: Any) -> Any:
    """Tables merge key by key (so `harness.sampling = {top_p = 0.9}` keeps temperature); others replace."""
    if isinstance(target, dict) and isinstance(value, dict):
        merged = dict(target)
        for key, item in value.items():
            merged[key] = _merge(merged.get(key), item)
        return merged
    return copy.deepcopy(value)


def apply_overrides(data: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """A copy of `data` with each dotted key set to its value; raises OverrideError for bad keys."""
    result = copy.deepcopy(data)
    problems: list[tuple[str, str]] = []
    for key, value in overrides.items():
        path, problem = check_override_key(key)
        if path is None:
            problems.append((key, problem or "invalid key"))
            continue
        node: Any = result
        for depth, part in enumerate(path[:-1]):
            following = path[depth + 1]
            if isinstance(part, int):
                if not isinstance(node, list) or part >= len(node):
                    problems.append((key, f"index {part} is out of range (the list has {len(node)} items)"))
                    break
                node = node[part]
            else:
                if node.get(part) is None:
                    node[part] = [] if isinstance(following, int) else {}
                node = node[part]
        else:
            last = path[-1]
            if isinstance(last, int):
                if not isinstance(node, list) or last >= len(node):
                    size = len(node) if isinstance(node, list) else 0
                    problems.append((key, f"index {last} is out of range (the list has {size} items)"))
                    continue
                node[last] = _merge(node[last], value)
            else:
                node[last] = _merge(node.get(last), value)
    if problems:
        raise OverrideError(problems)
    return result


def parse_assignment(text: str, flag: str = "--set") -> tuple[str, Any]:
    """`KEY=VALUE` from the command line (given to `flag`); VALUE is read as TOML (0.7, true, [..]) or else as
    a string."""
    if "=" not in text:
        example = "harness.sampling.temperature=0.7" if flag == "--set" else "KEY=VALUE"
        raise UserInputError(f"{flag} {text!r}: expected KEY=VALUE", hint=f"e.g. {flag} {example}")
    key, raw = text.split("=", 1)
    key, raw = key.strip(), raw.strip()
    if not key:
        raise UserInputError(f"{flag} {text!r}: empty key")
    try:
        value = tomllib.loads(f"value = {raw}")["value"]
    except tomllib.TOMLDecodeError:
        value = raw
    return key, value
