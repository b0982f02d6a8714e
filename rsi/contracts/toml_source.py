"""TOML text with positions: parse a file and say on which line every key (and table) was written.

`tomllib` parses but forgets where things were; error messages must name `file:line: key`. This
module scans the source text once and records the line of every key path, so that any location
(a pydantic error's `loc`, an override key, a model validator's field) can be mapped back to a line.

Key paths are tuples: strings for keys, integers for array indices (both `[[specialists]]` blocks
and inline arrays), e.g. `("specialists", 1, "name")` or `("harness", "sampling", "temperature")`.
The scanner only runs on text that `tomllib` has already accepted, so it can be lenient; for a
syntax error, `syntax_problem` locates the line from tomllib's message.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rsi.errors import Problem

KeyPath = tuple[str | int, ...]

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_SYNTAX_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_SYNTAX_END = re.compile(r"\s*\(at end of document\)\s*$")


def format_key(path: KeyPath) -> str:
    """Dotted display form: `specialists[1].name`, `harness.sampling.temperature`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            text = part if _BARE.fullmatch(part) else '"' + part.replace('"', '\\"') + '"'
            out += ("." if out else "") + text
    return out


@dataclass(frozen=True)
class TomlSource:
    """One parsed TOML file: its text, its data, and the line of every key path."""

    file: Path | str
    text: str
    data: dict[str, Any]
    lines: dict[KeyPath, int] = field(default_factory=dict)

    def line_of(self, path: KeyPath) -> int:
        """Line of `path`, or of its longest located prefix (a missing key points at its table)."""
        for cut in range(len(path), 0, -1):
            line = self.lines.get(tuple(path[:cut]))
            if line is not None:
                return line
        return 1

    def has(self, path: KeyPath) -> bool:
        return tuple(path) in self.lines

    def problem(self, path: KeyPath, message: str, key: str | None = None) -> Problem:
        return Problem(self.file, self.line_of(path), key if key is not None else format_key(path), message)


class TomlSyntaxError(Exception):
    """Raised by `parse_source` for text tomllib rejects; carries the located problem."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(str(problem))
        self.problem = problem


def parse_source(file: Path | str, text: str) -> TomlSource:
    """Parse TOML text and locate its keys. Raises TomlSyntaxError with the line of a syntax error."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise TomlSyntaxError(syntax_problem(file, text, str(error))) from error
    try:
        lines = locate_keys(text)
    except Exception:  # the locator is best effort; a parse that succeeded must not fail here
        lines = {}
    return TomlSource(file, text, data, lines)


def syntax_problem(file: Path | str, text: str, message: str) -> Problem:
    """A Problem for a tomllib error message: its line, and the key written on that line if any."""
    line = 0
    match = _SYNTAX_AT.search(message)
    if match:
        line = int(match.group(1))
        message = message[: match.start()]
    elif _SYNTAX_END.search(message):
        message = _SYNTAX_END.sub("", message)
        line = max(1, text.count("\n") + (0 if text.endswith("\n") else 1))
    return Problem(file, line or 1, _key_near(text, line), f"TOML syntax error: {message}")


def _key_near(text: str, line: int) -> str:
    """Best guess at the key a broken line belongs to: `[table]` above it plus `key =` on it."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return ""
    table = ""
    for previous in lines[: line - 1]:
        header = re.match(r"\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$", previous)
        if header:
            table = header.group(1).replace(" ", "")
    current = lines[line - 1]
    header = re.match(r"\s*\[\[?\s*([^\]=]+?)\s*\]", current)
    if header:
        return header.group(1).replace(" ", "")
    key = re.match(r"\s*([A-Za-z0-9_.\"' -]+?)\s*=", current)
    if key:
        name = key.group(1).replace(" ", "")
        return f"{table}.{name}" if table else name
    return table


# --- the key locator -------------------------------------------------------------------------


class _Scanner:
    """A lenient TOML walker that records `KeyPath -> line` for keys, tables and array items."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.line = 1
        self.positions: dict[KeyPath, int] = {}
        self.array_counts: dict[KeyPath, int] = {}

    # low-level movement
    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.text[j] if j < len(self.text) else ""

    def advance(self, n: int = 1) -> None:
        for _ in range(n):
            if self.i < len(self.text):
                if self.text[self.i] == "\n":
                    self.line += 1
                self.i += 1

    def skip_inline_space(self) -> None:
        while self.peek() in (" ", "\t", "\r") and self.peek():
            self.advance()

    def skip_comment(self) -> None:
        if self.peek() == "#":
            while self.peek() and self.peek() != "\n":
                self.advance()

    def skip_to_eol(self) -> None:
        while self.peek() and self.peek() != "\n":
            self.advance()

    def skip_space_newlines_comments(self) -> None:
        while True:
            self.skip_inline_space()
            if self.peek() == "#":
                self.skip_comment()
            elif self.peek() == "\n":
                self.advance()
            else:
                return

    def record(self, path: KeyPath, line: int) -> None:
        self.positions.setdefault(path, line)

    # keys
    def read_key(self) -> list[str]:
        parts: list[str] = []
        while True:
            self.skip_inline_space()
            c = self.peek()
            if c in ('"', "'"):
                parts.append(self.read_quoted_key(c))
            else:
                start = self.i
                while self.peek() and _BARE.fullmatch(self.peek()):
                    self.advance()
                if self.i == start:
                    raise ValueError("expected a key")
                parts.append(self.text[start : self.i])
            self.skip_inline_space()
            if self.peek() == ".":
                self.advance()
                continue
            return parts

    def read_quoted_key(self, quote: str) -> str:
        self.advance()
        out = []
        while self.peek() and self.peek() != quote:
            if quote == '"' and self.peek() == "\\":
                self.advance()
                escaped = self.peek()
                out.append({"n": "\n", "t": "\t", '"': '"', "\\": "\\"}.get(escaped, escaped))
            else:
                out.append(self.peek())
            self.advance()
        self.advance()
        return "".join(out)

    # values
    def skip_string(self) -> None:
        c = self.peek()
        if self.text.startswith(c * 3, self.i):
            self.advance(3)
            end = self.text.find(c * 3, self.i)
            end = len(self.text) if end < 0 else end
            # a multi-line string may end with up to two extra quotes: """a""""" is valid
            while end + 3 < len(self.text) and self.text[end + 3] == c:
                end += 1
            self.advance(end + 3 - self.i)
            return
        self.advance()
        while self.peek() and self.peek() != c and self.peek() != "\n":
            if c == '"' and self.peek() == "\\":
                self.advance()
            self.advance()
        self.advance()

    def scan_value(self, path: KeyPath) -> None:
        self.skip_inline_space()
        c = self.peek()
        if c in ('"', "'"):
            self.skip_string()
        elif c == "[":
            self.advance()
            index = 0
            while True:
                self.skip_space_newlines_comments()
                if self.peek() in ("]", ""):
                    self.advance()
                    return
                start = self.i
                self.record((*path, index), self.line)
                self.scan_value((*path, index))
                self.skip_space_newlines_comments()
                if self.peek() == ",":
                    self.advance()
                    index += 1
                elif self.i == start:
                    self.advance()
        elif c == "{":
            self.advance()
            while True:
                self.skip_inline_space()
                if self.peek() in ("}", "", "\n"):
                    self.advance()
                    return
                start = self.i
                self.scan_pair(path)
                self.skip_inline_space()
                if self.peek() == "," or self.i == start:
                    self.advance()
        else:
            while self.peek() and self.peek() not in ",]}\n#":
                self.advance()

    def scan_pair(self, table: KeyPath) -> None:
        """One `key = value` (in a table or an inline table): every prefix of the dotted key is recorded at
        the key's line, then the value is scanned under the full path."""
        line = self.line
        keys = self.read_key()
        for cut in range(1, len(keys) + 1):
            self.record((*table, *keys[:cut]), line)
        self.skip_inline_space()
        if self.peek() == "=":
            self.advance()
        self.scan_value((*table, *keys))

    # tables
    def read_header(self) -> KeyPath:
        array = self.text.startswith("[[", self.i)
        self.advance(2 if array else 1)
        keys = self.read_key()
        self.skip_inline_space()
        self.advance(2 if array else 1)
        path: KeyPath = ()
        for position, key in enumerate(keys):
            path = (*path, key)
            if array and position == len(keys) - 1:
                index = self.array_counts.get(path, 0)
                self.array_counts[path] = index + 1
                self.record(path, self.line)
                path = (*path, index)
            elif path in self.array_counts:
                path = (*path, self.array_counts[path] - 1)
            self.record(path, self.line)
        return path

    def scan(self) -> dict[KeyPath, int]:
        table: KeyPath = ()
        while self.i < len(self.text):
            self.skip_space_newlines_comments()
            if not self.peek():
                break
            start = self.i
            if self.peek() == "[":
                table = self.read_header()
            else:
                self.scan_pair(table)
            self.skip_inline_space()
            self.skip_comment()
            if self.i == start:  # never loop without progress on odd input
                self.advance()
            self.skip_to_eol()
        return self.positions


def locate_keys(text: str) -> dict[KeyPath, int]:
    """Map every key path written in `text` to its (1-based) line."""
    return _Scanner(text).scan()
