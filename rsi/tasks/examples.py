"""Read public examples out of text a task already shows (pure: no I/O).

- `examples_from_instruction`: the shipped instruction format, an ``Examples:`` line followed by
  indented ``call == expected`` lines (pyfuncs, pyfuncs2).
- `examples_from_docstring`: doctest style, ``>>> call`` then the expected value's line(s), for
  suites converted from elsewhere (HumanEval-like prompts carry their examples this way).
- `derive_examples`: what `rsi tasks examples` proposes for an instruction (either form above, or
  indented ``call == expected`` lines with no heading).
- `shown_in`: whether an example is one the instruction shows (the loader's rule for ``[public]``).

Both split an example with the ast module, never with a string search, so ``==`` inside a string or
inside brackets stays where it belongs; `call` and `expected` are the exact source text.
"""

from __future__ import annotations

import ast
import io
import re
import textwrap
import tokenize

from rsi.tasks.spec import PublicExampleSpec

_HEADING = "Examples:"
_PROMPT = re.compile(r"^(\s*)>>>(?: (.*))?$")
_MORE = "..."
_CLOSING = ('"""', "'''")


def split_example(line: str) -> PublicExampleSpec:
    """`call == expected` (one expression whose top level is a single `==`) -> its two sides, verbatim.

    Raises ValueError for anything else (no top-level `==`, a chain `a == b == c`, not Python).
    """
    source = line.strip()
    try:
        tree = ast.parse(source, mode="eval").body
    except SyntaxError as error:
        raise ValueError(f"{source!r} is not a Python expression: {error.msg}") from None
    if not (isinstance(tree, ast.Compare) and len(tree.ops) == 1 and isinstance(tree.ops[0], ast.Eq)):
        raise ValueError(f"{source!r} is not of the form `call == expected`")
    # The one `==` token outside brackets (strings are single tokens, so an `==` inside one is not seen).
    depth, at = 0, None
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.OP:
            continue
        if token.string in "([{":
            depth += 1
        elif token.string in ")]}":
            depth -= 1
        elif token.string == "==" and depth == 0:
            at = _offset(source, token.start)
            break
    if at is None:  # pragma: no cover - the ast said there is one
        raise ValueError(f"{source!r}: cannot find the top-level `==`")
    return PublicExampleSpec(call=source[:at].strip(), expected=source[at + 2 :].strip())


def _offset(source: str, position: tuple[int, int]) -> int:
    """A tokenize (row, col) position as an offset into `source`."""
    row, col = position
    return sum(len(line) for line in source.splitlines(keepends=True)[: row - 1]) + col


def examples_from_instruction(text: str) -> list[PublicExampleSpec]:
    """The examples an instruction shows: the indented lines after its ``Examples:`` line.

    Blank lines between them are skipped; the first non-blank line that is not indented ends them.
    No ``Examples:`` line: []. An indented line that is not `call == expected`: ValueError naming it.
    """
    lines = text.splitlines()
    start = next((n for n, line in enumerate(lines) if line.strip() == _HEADING), None)
    if start is None:
        return []
    examples = []
    for number, line in enumerate(lines[start + 1 :], start=start + 2):
        if not line.strip():
            continue
        if not line[:1].isspace():
            break
        try:
            examples.append(split_example(line))
        except ValueError as error:
            raise ValueError(f"line {number}: {error}") from None
    return examples


def examples_from_docstring(text: str) -> list[PublicExampleSpec]:
    """Doctest examples: ``>>> call`` (with ``...`` continuation lines), then the expected value's lines.

    An example becomes a public example when its source is one expression and its output is a Python
    expression (the repr doctest compares). Skipped, since no call/expected pair can state them: an
    example with no output, one whose output is a traceback or not an expression, a ``print(...)`` (its
    output is text, not a value), and one carrying a ``doctest:`` directive (``+ELLIPSIS`` output is not a value). A statement
    (``>>> x = f(1)``) is a ValueError: later examples may depend on it, so the docstring cannot be
    turned into independent examples.
    """
    return [example for _, example in _docstring_examples(text)]


def _docstring_examples(text: str) -> list[tuple[int, PublicExampleSpec]]:
    """`examples_from_docstring`, each example with the line number of its prompt."""
    lines = textwrap.dedent(text.expandtabs()).splitlines()
    examples: list[tuple[int, PublicExampleSpec]] = []
    n = 0
    while n < len(lines):
        prompt = _PROMPT.match(lines[n])
        if prompt is None:
            n += 1
            continue
        indent, number = prompt.group(1), n + 1
        source = [prompt.group(2) or ""]
        n += 1
        while n < len(lines) and lines[n].startswith(indent + _MORE) and not lines[n].startswith(indent + ">>>"):
            source.append(lines[n][len(indent) + len(_MORE) :].removeprefix(" "))
            n += 1
        output: list[str] = []
        while n < len(lines) and lines[n].strip() and lines[n].startswith(indent) and _PROMPT.match(lines[n]) is None:
            line, closed = _before_closing_quotes(lines[n][len(indent) :], output)
            if line:
                output.append(line)
            n += 1
            if closed:
                break
        code = "\n".join(source)
        example = _doctest_example(code, "\n".join(output), number)
        if example is not None:
            examples.append((number, example))
    return examples


def _before_closing_quotes(line: str, output: list[str]) -> tuple[str, bool]:
    """An output line cut at the docstring's closing quotes, and whether they closed it.

    A docstring that ends right after its last example puts its closing quotes on the line after the
    output (or at the end of the output's own line); doctest's output stops there, and so does ours.
    A line whose quotes belong to the value (a repr holding three quotes) is kept whole.
    """
    stripped = line.rstrip()
    for quotes in _CLOSING:
        if stripped.endswith(quotes):
            before = stripped[: -len(quotes)].rstrip()
            if _is_expression("\n".join([*output, stripped])) and not _is_expression("\n".join([*output, before])):
                return line, False
            return before, True
    return line, False


def _is_expression(text: str) -> bool:
    try:
        ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return False
    return bool(text.strip())


def _doctest_example(code: str, output: str, number: int) -> PublicExampleSpec | None:
    try:
        tree = ast.parse(code)
    except SyntaxError as error:
        raise ValueError(f"line {number}: {code!r} is not Python: {error.msg}") from None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        raise ValueError(f"line {number}: {code!r} is a statement, not a call a public example can state")
    if "doctest:" in code or not output.strip() or output.startswith("Traceback (most recent call last)"):
        return None
    expected = output.replace("<BLANKLINE>", "").strip()
    try:
        ast.parse(expected, mode="eval")
    except SyntaxError:
        return None  # printed text, not a value
    call = tree.body[0].value
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "print":
        return None  # the output is printed text, whatever it looks like
    return PublicExampleSpec(call=code.strip(), expected=expected)


def derive_examples(text: str) -> list[PublicExampleSpec]:
    """The public examples an instruction shows, for `rsi tasks examples`.

    An ``Examples:`` heading wins (its indented lines are the examples, as in the shipped suites);
    otherwise doctest examples and indented ``call == expected`` lines whose left side is a call
    (region-totals' form), in the order they appear, each once. ValueError as the readers above.
    """
    if any(line.strip() == _HEADING for line in text.splitlines()):
        return examples_from_instruction(text)
    found = _equality_lines(text) + _docstring_examples(text)
    unique: dict[tuple[str, str], PublicExampleSpec] = {}
    for _, example in sorted(found, key=lambda item: item[0]):
        unique.setdefault((example.call, example.expected), example)
    return list(unique.values())


def _equality_lines(text: str) -> list[tuple[int, PublicExampleSpec]]:
    """Indented `call(...) == expected` lines (no heading needed), with their line numbers."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line[:1].isspace() or _PROMPT.match(line):
            continue
        try:
            example = split_example(line)
        except ValueError:
            continue
        if isinstance(ast.parse(example.call, mode="eval").body, ast.Call):
            found.append((number, example))
    return found


# --- is an example shown? -------------------------------------------------------------------------
# An instruction shows an example when its call appears, and its expected value follows on the same
# line or the next one, separated by at most an operator a reader takes for "gives": the shipped
# `call == expected` lines, a doctest's `>>> call` and output line, or prose like "`call` returns
# `expected`". Whitespace is not compared (the instruction may wrap or align), and doctest prompts
# (`>>>`, `...`) are read as whitespace, so a continued call matches its one-line form.
_PROMPTS = re.compile(r"^([ \t]*)(>>>|\.\.\.)(?= |$)", re.MULTILINE)
_GIVES = r"(?:(?:#[ \t]*)?(?:==|->|=>|→|⇒|returns|gives|is|evaluates to|:|=)|#)"
_BLANK = r"[ \t`*]*(?:\n[ \t`*]*)?"
_SEP = re.compile(rf"{_BLANK}(?:{_GIVES}{_BLANK})?")
_SEP_MAX = 80


def _pattern(source: str) -> str:
    """A regex for `source` with any whitespace (or none) between its non-blank characters."""
    return r"\s*".join(re.escape(char) for char in source if not char.isspace())


def shown_in(instruction: str, example: PublicExampleSpec) -> str | None:
    """None when `instruction` shows `example`; otherwise why not (for a located error)."""
    text = _PROMPTS.sub(lambda m: m.group(1) + " " * len(m.group(2)), instruction.replace("\r\n", "\n"))
    call = re.compile(r"(?<![\w.])" + _pattern(example.call))
    expected = re.compile(_pattern(example.expected) + r"(?![\w])(?!\.\d)")
    calls = list(call.finditer(text))
    if not calls:
        return f"call `{example.call}` is not shown in instruction.md"
    for found in calls:
        # Every separator length the rule allows (a short one: it is an operator and some blanks).
        for end in range(found.end(), min(len(text), found.end() + _SEP_MAX) + 1):
            if _SEP.fullmatch(text, found.end(), end) and text.count("\n", found.end(), end) <= 1 and expected.match(text, end):
                return None
    return f"call `{example.call}` is shown in instruction.md, but not with the value `{example.expected}`"
