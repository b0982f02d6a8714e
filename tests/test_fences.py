"""The fence grammar's stop rule: stopping a reply where its first Python block closes changes nothing
the harness reads from it."""

from __future__ import annotations

import pytest

from rsi.fences import first_block_end
from rsi.harness import replies

REPLIES = [
    "```python\ndef f(x):\n    return x\n```\n\nThis function returns its argument.",
    "Here is the code:\n```py\nx = 1\n```\nand a usage example:\n```python\nprint(x)\n```\n",
    "```bash\nls -l\n```\nthen\n```\ny = 2\n```\nDone.",  # a non-Python block first, then an untagged one
    "```python\n\n```\n```python\nz = 3\n```tail",  # an empty block does not count
    "```text\nno python here\n```\njust words",
    "```python\ndef g():\n    return [1,",  # left open by a length cut
    "```python\ns = '```'\n```\nafter",  # a fence inside a string closes the block, in both readings
    "",
]


@pytest.mark.parametrize("reply", REPLIES)
def test_decoding_stopped_at_the_first_closed_block_reads_as_the_whole_reply(reply: str) -> None:
    """Character by character, as a backend decodes: the first prefix where the block has closed, cut
    there, is the whole reply cut there, and its first Python block is the whole reply's."""
    whole_end = first_block_end(reply)
    stopped = next((reply[:k] for k in range(len(reply) + 1) if first_block_end(reply[:k]) is not None), reply)
    end = first_block_end(stopped)
    cut = stopped if end is None else stopped[:end]
    assert cut == (reply if whole_end is None else reply[:whole_end])
    assert replies.solution_code(cut) == replies.solution_code(reply)
    if whole_end is not None:
        assert cut.endswith("```") and len(cut) <= len(reply)


def test_where_the_first_block_ends() -> None:
    assert first_block_end(REPLIES[0]) == REPLIES[0].index("```\n\n") + 3
    assert first_block_end(REPLIES[2]) == REPLIES[2].index("y = 2\n```") + len("y = 2\n```")
    assert first_block_end(REPLIES[4]) is None  # no Python block at all
    assert first_block_end(REPLIES[5]) is None  # still open
    assert first_block_end("```python\nx = 1\n``") is None  # two of the three backticks
