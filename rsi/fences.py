"""Fenced Python code in a model's reply: the grammar the harness reads, shared with the models layer.

Small models are sloppy, so the grammar is lenient in ways that cannot change meaning: fences may be
tagged `python`, `py`, `python3` or untagged; a last fence left open by a length cut still counts.
Blocks tagged with another language (```bash, ```text, ```output) and empty blocks are not Python
blocks.

It lives outside `rsi.harness` because a model backend applies one rule of it while it decodes: a
text-substrate reply is read only up to the end of its first Python block (the solution file), so a
request may ask to stop there (`GenerationRequest.stop_after_code`) instead of decoding a tail nobody
reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
PYTHON_TAGS = frozenset({"", "python", "py", "python3", "py3"})


def python_blocks(reply: str) -> Iterator[re.Match[str]]:
    """The fences of `reply` that hold Python code, in order (group 2 is the body)."""
    for match in _FENCE.finditer(reply):
        if match.group(1).lower() in PYTHON_TAGS and match.group(2).strip():
            yield match


def first_block_end(reply: str) -> int | None:
    """Where the first Python block's closing fence ends, or None while that block is still open (or
    there is none yet). Cutting a reply there leaves its first Python block, and every block before
    it, exactly as they were."""
    for match in python_blocks(reply):
        return match.end() if match.group(0).endswith("```") else None
    return None
