"""Reading model replies: find the code in them (pure functions; the fence grammar is `rsi.fences`).

The REPL substrate runs Python blocks whatever the task; the text substrate reads the task kind's fences
(`ReplyFormat`): the solution file's block, and any extra file the kind allows.
"""

from __future__ import annotations

import ast

from rsi.fences import PYTHON, PYTHON_REPLY, Fence, ReplyFormat, blocks, python_blocks


def code_blocks(reply: str) -> list[str]:
    """Python code blocks in a reply, in order, stripped; empty blocks dropped."""
    return [match.group(2).strip("\n").rstrip() for match in python_blocks(reply)]


def repl_code(reply: str) -> str | None:
    """The code one REPL turn runs: every Python block of the reply, in order (None: there is none)."""
    found = code_blocks(reply)
    return "\n\n".join(found) if found else None


def fenced_blocks(reply: str, fence: Fence = PYTHON) -> list[str]:
    """The blocks of `fence`'s language in a reply, in order, stripped; empty blocks dropped."""
    return [match.group(2).strip("\n").rstrip() for match in blocks(reply, fence)]


def solution_code(reply: str, format: ReplyFormat = PYTHON_REPLY) -> str | None:
    """The solution file in a text-substrate reply: its first block in the kind's main fence (None: none)."""
    found = fenced_blocks(reply, format.main)
    return found[0] + "\n" if found else None


def extra_files(reply: str, format: ReplyFormat) -> dict[str, str]:
    """The other files a kind lets a text-substrate reply carry: file -> the first block of its fence."""
    files = {}
    for fence, file in zip(format.fences[1:], format.files, strict=False):
        found = fenced_blocks(reply, fence)
        if found:
            files[file] = found[0] + "\n"
    return files


def mentions_marker(reply: str, marker: str) -> bool:
    """Whether a textual end marker (e.g. 'DONE') appears in the reply."""
    return bool(marker) and marker in reply


def trim_cut_code(code: str) -> tuple[str, int]:
    """Code from a reply cut at max_tokens, up to its last complete statement.

    Returns the longest prefix of whole lines that parses, and how many trailing lines were
    dropped; (code, 0) when it parses as is, and also when no prefix parses (then running it shows
    the model its syntax error).
    """
    try:
        ast.parse(code)
        return code, 0
    except SyntaxError:
        pass
    lines = code.splitlines()
    for keep in range(len(lines) - 1, 0, -1):
        prefix = "\n".join(lines[:keep])
        if not prefix.strip():
            break
        try:
            ast.parse(prefix)
        except SyntaxError:
            continue
        return prefix, len(lines) - keep
    return code, 0
