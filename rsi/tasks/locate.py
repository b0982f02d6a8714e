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


def _exact_key_offset(text: str, path: tuple[str, ...]) -> int | None:
    """Character offset just past the `=` of the key line that sets exactly `path`, or None."""
    table: tuple[str, ...] = ()
    offset = 0
    for line in text.splitlines(keepends=True):
        header = _HEADER.match(line)
        if header:
            table = _split_key(header.group(1))
        else:
            key = _KEY.match(line)
            if key and table + _split_key(key.group(1)) == path:
                return offset + key.end()
        offset += len(line)
    return None


def _skip_string(text: str, i: int) -> int:
    """Offset just past the TOML string starting at text[i] (basic, literal, or either multi-line)."""
    quote = text[i]
    if text.startswith(quote * 3, i):
        end = i + 3
        while True:
            found = text.find(quote * 3, end)
            if found < 0:
                return len(text)
            if quote == '"' and _escaped(text, found):
                end = found + 1
                continue
            end = found + 3
            while end < len(text) and text[end] == quote:  # up to two quotes may close the content
                end += 1
            return end
    j = i + 1
    while j < len(text) and text[j] != "\n":
        if quote == '"' and text[j] == "\\":
            j += 2
            continue
        if text[j] == quote:
            return j + 1
        j += 1
    return j


def _escaped(text: str, at: int) -> bool:
    backslashes = 0
    while at - backslashes - 1 >= 0 and text[at - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _inline_item_offset(text: str, start: int, index: int) -> int | None:
    """Offset where item `index` of the inline array whose value starts at or after `start` begins."""
    i = start
    while i < len(text) and text[i] in " \t":
        i += 1
    if i >= len(text) or text[i] != "[":
        return None
    depth, item, expecting = 1, 0, True
    i += 1
    while i < len(text) and depth > 0:
        char = text[i]
        if char in " \t\r\n":
            i += 1
            continue
        if char == "#":
            newline = text.find("\n", i)
            i = len(text) if newline < 0 else newline
            continue
        if depth == 1 and expecting and char != "]":
            if item == index:
                return i
            expecting = False
        if char in "\"'":
            i = _skip_string(text, i)
            continue
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        elif char == "," and depth == 1:
            item += 1
            expecting = True
        i += 1
    return None


def toml_item_line(text: str, loc: tuple[Any, ...]) -> int | None:
    """1-based line of a location with list indices, ('public', 'examples', 0, 'call'): the line of that
    item (in an inline array, or the key inside the index-th `[[array of tables]]`), else of the array's key.
    Without an index it is `toml_line`."""
    at = next((n for n, part in enumerate(loc) if isinstance(part, int)), None)
    names = tuple(str(p) for p in loc if not isinstance(p, int))
    if at is None:
        return toml_line(text, names)
    array, index = tuple(str(p) for p in loc[:at]), int(loc[at])
    rest = tuple(str(p) for p in loc[at + 1 :] if not isinstance(p, int))
    fallback = toml_line(text, names)
    lines = text.splitlines()
    headers = [
        number
        for number, line in enumerate(lines, start=1)
        if line.lstrip().startswith("[[") and (found := _HEADER.match(line)) and _split_key(found.group(1)) == array
    ]
    if headers:
        if index >= len(headers):
            return headers[-1]
        header = headers[index]
        for number in range(header + 1, len(lines) + 1):
            line = lines[number - 1]
            if _HEADER.match(line):
                break
            key = _KEY.match(line)
            if key and rest and _split_key(key.group(1))[: len(rest)] == rest[: len(_split_key(key.group(1)))]:
                return number
        return header
    start = _exact_key_offset(text, array)
    if start is None:
        return fallback
    offset = _inline_item_offset(text, start, index)
    if offset is None:
        return fallback
    return text.count("\n", 0, offset) + 1


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
        if text is not None:
            line = toml_item_line(text, prefix + loc)
        elif json_text is not None:
            line = json_line(json_text, loc)
        else:
            line = None
        problems.append(Problem(file, line, dotted(prefix + loc), _message(item)))
    return problems
