"""Scripted replies for run tests: the REPL agent writes the reference solution (pass) or a wrong one."""

from __future__ import annotations

import json
from pathlib import Path


def write_script(ws, path: Path, count: int = 4, delay_s: float = 0.0) -> dict[str, bool]:
    """A RSI_MODEL_OVERRIDE file for the first `count` pyfuncs train tasks, each reply taking `delay_s`;
    returns task -> should pass."""
    from rsi.tasks.load import load_suite

    tasks = [t for t in load_suite(ws, "pyfuncs") if t.spec.split == "train"][:count]
    replies, expected = {}, {}
    for i, task in enumerate(tasks):
        good = i % 2 == 0
        source = (task.solution_dir / task.spec.solution_file).read_text() if good else "x = 1\n"
        code = f"open({task.spec.solution_file!r}, 'w').write({source!r})\nsubmit()"
        replies[task.id] = [f"```python\n{code}\n```"]
        expected[task.key] = good
    path.write_text(json.dumps({"tasks": replies, "delay_s": delay_s}))
    return expected
