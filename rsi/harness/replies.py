"""Reading model replies: find the code in them (pure functions; the fence grammar is `rsi.fences`)."""

from __future__ import annotations

import ast

from rsi.fences import python_blocks


def code_blocks(reply: str) -> list[str]:
    """Python code blocks in a reply, in order, stripped; empty blocks dropped."""
    return [match.group(2).strip("\n").rstrip() for match in python_blocks(reply)]


def repl_code(reply: str) -> str | None:
    """The code one REPL turn runs: every Python block of the reply, in order (None: there is none)."""
    blocks = code_blocks(reply)
    return "\n\n".join(blocks) if blocks else None


def solution_code(reply: str) -> str | None:
    """The solution file in a text-substrate reply: its first Python block (None: there is none)."""
    blocks = code_blocks(reply)
    return blocks[0] + "\n" if blocks else None


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
