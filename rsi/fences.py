"""Fenced code in a model's reply: the grammar the harness reads, shared with the models layer.

Small models are sloppy, so the grammar is lenient in ways that cannot change meaning: a Python fence may
be tagged `python`, `py`, `python3` or untagged; a last fence left open by a length cut still counts.
Blocks tagged with another language (```bash, ```text, ```output) and empty blocks are not Python
blocks.

Which languages a reply is read for is the task kind's (`Fence`, `ReplyFormat`, named by the kind in
rsi/tasks/kinds.py): the shipped kinds read Python; a kind that wants a page reads ```html (and ```css,
```js) by declaring its own `Fence` in its own module. Nothing here names a kind.

It lives outside `rsi.harness` because a model backend applies one rule of it while it decodes: a
text-substrate reply is read only up to the end of its first Python block (the solution file), so a
request may ask to stop there (`GenerationRequest.stop_after_code`) instead of decoding a tail nobody
reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
PYTHON_TAGS = frozenset({"", "python", "py", "python3", "py3"})


@dataclass(frozen=True)
class Fence:
    """One language a reply's blocks are read for: its name in words, the tag the prompts ask for, and
    every tag (lower case; "" is an untagged fence) a block of it may carry."""

    language: str
    tag: str
    tags: frozenset[str]


PYTHON = Fence("Python", "python", PYTHON_TAGS)


@dataclass(frozen=True)
class ReplyFormat:
    """What a text-substrate reply carries for a kind: the solution file's block in `fences[0]`, and,
    where the kind allows more files, one block of each other fence for the file `files` names for it
    (`files[i]` belongs to `fences[i + 1]`). `example` is a tiny worked example of a good reply for the
    prompts' `example` style ('' for the prompts' own Python one)."""

    fences: tuple[Fence, ...] = (PYTHON,)
    files: tuple[str, ...] = ()
    example: str = ""

    @property
    def main(self) -> Fence:
        return self.fences[0]


PYTHON_REPLY = ReplyFormat()


def blocks(reply: str, fence: Fence = PYTHON) -> Iterator[re.Match[str]]:
    """The non-empty blocks of `reply` in `fence`'s language, in order (group 2 is the body)."""
    for match in _FENCE.finditer(reply):
        if match.group(1).lower() in fence.tags and match.group(2).strip():
            yield match


def python_blocks(reply: str) -> Iterator[re.Match[str]]:
    """The fences of `reply` that hold Python code, in order (group 2 is the body)."""
    return blocks(reply, PYTHON)


def first_block_end(reply: str, fence: Fence = PYTHON) -> int | None:
    """Where the first block of `fence` closes, or None while that block is still open (or there is none
    yet). Cutting a reply there leaves its first such block, and every block before it, exactly as they
    were."""
    for match in blocks(reply, fence):
        return match.end() if match.group(0).endswith("```") else None
    return None
