"""The shape the code keeps: no function in rsi/ longer than 80 lines (docs/architecture.md).

Measured on the AST (end_lineno - lineno + 1, decorators excluded, docstrings included), so a long
function cannot hide in a nested def: every def is measured on its own, nested ones too.
"""

from __future__ import annotations

import ast
from pathlib import Path

MAX_LINES = 80
PACKAGE = Path(__file__).resolve().parent.parent / "rsi"

# Files allowed long functions for now, each with why; an entry goes once its file is split, and
# nothing else may be added here. Empty: every function in rsi/ is within the limit.
NOT_YET: set[str] = set()


def long_functions(root: Path = PACKAGE, limit: int = MAX_LINES) -> list[str]:
    """`path:line name (N lines)` for every function or method in `root` longer than `limit` lines."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > limit:
                    found.append(f"{path.relative_to(root.parent).as_posix()}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_the_measure_finds_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "long.py").write_text(f"def outer():\n    def inner():\n{body.replace('    ', '        ')}\n    return 1\n")
    assert [line.split(" ", 1)[1] for line in long_functions(tmp_path)] == ["outer (83 lines)", "inner (81 lines)"]


def test_no_function_in_rsi_is_longer_than_80_lines() -> None:
    long = [line for line in long_functions() if line.split(":", 1)[0] not in NOT_YET]
    assert not long, "split these into steps with one job each:\n" + "\n".join(long)
