"""Read public examples out of text a task already shows (pure: no I/O).

- `examples_from_instruction`: the shipped instruction format, an ``Examples:`` line followed by
  indented ``call == expected`` lines (pyfuncs, pyfuncs2).
- `examples_from_docstring`: doctest style, ``>>> call`` then the expected value's line(s), for
  suites converted from elsewhere (HumanEval-like prompts carry their examples this way).

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
    lines = textwrap.dedent(text.expandtabs()).splitlines()
    examples: list[PublicExampleSpec] = []
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
        output = []
        while n < len(lines) and lines[n].strip() and lines[n].startswith(indent) and _PROMPT.match(lines[n]) is None:
            output.append(lines[n][len(indent) :])
            n += 1
        code = "\n".join(source)
        example = _doctest_example(code, "\n".join(output), number)
        if example is not None:
            examples.append(example)
    return examples


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
