"""bench/RESULTS.md: each benchmark owns one `## name` section and replaces only that one.

Benchmarks run as scripts (`python bench/NAME.py`), so this module is imported as `results`.
"""

from __future__ import annotations

import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def replace_section(heading: str, block: str, path: Path | None = None) -> None:
    """Put `block` (the whole section, starting with `heading`) in place of that section, or append it."""
    path = path or RESULTS
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
    block = block.rstrip("\n") + "\n\n"
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", flags=re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _match: block, text)
    else:
        text = text.rstrip("\n") + "\n\n" + block
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
