"""Reading model replies: find the code in them (pure functions).

Small models are sloppy, so the parser is lenient in ways that cannot change meaning: fences may be
tagged `python`, `py`, `python3` or untagged; a last fence left open by a length cut still counts.
Blocks tagged with another language (```bash, ```text, ```output) are ignored.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
_PYTHON_TAGS = {"", "python", "py", "python3", "py3"}


def code_blocks(reply: str) -> list[str]:
    """Python code blocks in a reply, in order, stripped; empty blocks dropped."""
    blocks = []
    for match in _FENCE.finditer(reply):
        tag, body = match.group(1).lower(), match.group(2)
        if tag in _PYTHON_TAGS and body.strip():
            blocks.append(body.strip("\n").rstrip())
    return blocks


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
