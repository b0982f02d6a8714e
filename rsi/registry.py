"""What every plug-in registry shares: checking a name against it.

One registry per axis, each the single place its names live: schedulers (rsi/scheduler/registry.py),
sandbox backends (rsi/sandbox/select.py), executors (rsi/executors/registry.py), model backends
(rsi/models/registry.py), verifier kinds (rsi/verifier/registry.py), training methods
(rsi/training/methods.py). Specs validate a name when they
are read, against the registry as it is then, so a registration made before is selectable by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping


def known_name(registry: Mapping[str, object], what: str, name: str) -> str:
    """`name` if `registry` has it, else ValueError listing the known ones (a pydantic validator's error)."""
    if name not in registry:
        raise ValueError(f"unknown {what} {name!r}; known: {', '.join(registry)}")
    return name


def name_check(registry: Mapping[str, object], what: str) -> Callable[[str], str]:
    """`known_name` bound to one registry: the validator its specs and flags use. It looks the name up
    when called, so a registration made after import is accepted."""

    def check(name: str) -> str:
        return known_name(registry, what, name)

    check.__doc__ = f"`name` if it is a registered {what}, else ValueError listing the known ones."
    return check
