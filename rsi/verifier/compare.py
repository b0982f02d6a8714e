"""How a returned JSON value is matched with an expected one (`exact`, `float`, `unordered`).

Pure functions. Booleans are never numbers here (True != 1, False != 0.0), because Python's own
`==` would let a function returning True pass a case that expects 1.
"""

from __future__ import annotations

import math
from typing import Any


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def values_equal(got: Any, expected: Any, *, tolerant: bool = False, rel_tol: float = 1e-6, abs_tol: float = 1e-9) -> bool:
    """Structural equality of JSON values; numbers within tolerance when `tolerant`."""
    if isinstance(got, bool) or isinstance(expected, bool):
        return type(got) is type(expected) and got == expected
    if _is_number(got) and _is_number(expected):
        if tolerant:
            if math.isnan(got) or math.isnan(expected):
                return math.isnan(got) and math.isnan(expected)
            return math.isclose(got, expected, rel_tol=rel_tol, abs_tol=abs_tol)
        return got == expected
    if isinstance(got, list) and isinstance(expected, list):
        return len(got) == len(expected) and all(
            values_equal(g, e, tolerant=tolerant, rel_tol=rel_tol, abs_tol=abs_tol) for g, e in zip(got, expected, strict=True)
        )
    if isinstance(got, dict) and isinstance(expected, dict):
        return got.keys() == expected.keys() and all(
            values_equal(got[k], expected[k], tolerant=tolerant, rel_tol=rel_tol, abs_tol=abs_tol) for k in expected
        )
    if got is None or expected is None:
        return got is None and expected is None
    if isinstance(got, str) and isinstance(expected, str):
        return got == expected
    return False


def unordered_equal(got: Any, expected: Any) -> bool:
    """Both are lists holding the same elements with the same multiplicities (top level only)."""
    if not (isinstance(got, list) and isinstance(expected, list)) or len(got) != len(expected):
        return False
    remaining = list(expected)
    for item in got:
        for index, candidate in enumerate(remaining):
            if values_equal(item, candidate):
                del remaining[index]
                break
        else:
            return False
    return True


def matches(got: Any, expected: Any, mode: str, rel_tol: float = 1e-6, abs_tol: float = 1e-9) -> bool:
    if mode == "exact":
        return values_equal(got, expected)
    if mode == "float":
        return values_equal(got, expected, tolerant=True, rel_tol=rel_tol, abs_tol=abs_tol)
    if mode == "unordered":
        return unordered_equal(got, expected)
    raise ValueError(f"unknown compare mode {mode!r}")
