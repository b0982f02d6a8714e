"""Turn a parse or validation failure into located `Problem`s (file, line, dotted key, message).

tomllib gives values but no positions, so the line of a key is found by scanning the TOML text for
the table header and `key =` line it lives under. This covers the task files we write (plain tables,
dotted keys, inline tables on one line); anything it cannot place is reported without a line rather
than with a wrong one.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError as PydanticValidationError

from rsi.errors import Problem

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_.\-\"' ]+?)\s*=")
_TOML_AT = re.compile(r"\(at line (\d+), column \d+\)")


def _strip_quotes(part: str) -> str:
    part = part.strip()
    if len(part) >= 2 and part[0] == part[-1] and part[0] in "\"'":
        return part[1:-1]
    return part


def _split_key(raw: str) -> tuple[str, ...]:
    return tuple(_strip_quotes(p) for p in raw.split("."))


def toml_line(text: str, path: tuple[str, ...]) -> int | None:
    """1-based line where the dotted key `path` is set in `text`, or its nearest enclosing table."""
    if not path:
        return None
    table: tuple[str, ...] = ()
    best: tuple[int, int] | None = None  # (matched length, line)
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            table = _split_key(header.group(1))
            if path[: len(table)] == table and (best is None or len(table) > best[0]):
                best = (len(table), number)
            continue
        key = _KEY.match(line)
        if not key:
            continue
        full = table + _split_key(key.group(1))
        if path[: len(full)] == full and (best is None or len(full) > best[0]):
            best = (len(full), number)
    return best[1] if best else None


def json_line(text: str, loc: tuple[Any, ...]) -> int | None:
    """1-based line of `loc` in a JSON object text: ("cases", 3, ...) -> the line where case 3 starts,
    ("function",) -> the line of that top-level key. None when it cannot be placed."""
    if not loc or not isinstance(loc[0], str):
        return None
    found = re.search('"' + re.escape(loc[0]) + r'"\s*:\s*', text)
    if found is None:
        return None
    start = found.end()
    if len(loc) < 2 or not isinstance(loc[1], int) or not text[start:].startswith("["):
        return text.count("\n", 0, found.start()) + 1
    decoder = json.JSONDecoder()
    position = start + 1
    for index in range(loc[1] + 1):
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        if index == loc[1]:
            return text.count("\n", 0, position) + 1
        try:
            _, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            return None
    return None


def toml_syntax_problem(file: Path, error: Exception) -> Problem:
    """A tomllib.TOMLDecodeError as a located problem."""
    message = str(error)
    found = _TOML_AT.search(message)
    line = int(found.group(1)) if found else None
    return Problem(file, line, "", f"invalid TOML: {_TOML_AT.sub('', message).strip()}")


def json_syntax_problem(file: Path, error: json.JSONDecodeError) -> Problem:
    return Problem(file, error.lineno, "", f"invalid JSON: {error.msg}")


def dotted(loc: tuple[Any, ...]) -> str:
    """('cases', 3, 'args') -> 'cases[3].args'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _message(error: Any) -> str:
    if error["type"] == "extra_forbidden":
        return "unknown key"
    if error["type"] == "missing":
        return "required key is missing"
    message = str(error["msg"])
    return message.removeprefix("Value error, ")


def pydantic_problems(
    file: Path,
    error: PydanticValidationError,
    text: str | None = None,
    prefix: tuple[str, ...] = (),
    json_text: str | None = None,
) -> list[Problem]:
    """Every error of one pydantic validation, located in `file` (TOML `text`, or `json_text`)."""
    problems = []
    for item in error.errors():
        loc = tuple(item["loc"])
        key_path = prefix + tuple(str(p) for p in loc if not isinstance(p, int))
        if text is not None:
            line = toml_line(text, key_path)
        elif json_text is not None:
            line = json_line(json_text, loc)
        else:
            line = None
        problems.append(Problem(file, line, dotted(prefix + loc), _message(item)))
    return problems
