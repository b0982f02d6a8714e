"""What every plug-in registry shares: checking a name against it.

One registry per axis, each the single place its names live. Schedulers (rsi/scheduler/registry.py),
sandbox backends (rsi/sandbox/select.py) and executors (rsi/executors/registry.py) are dicts in the
module that implements them: only their own layer and those above name them. Model backends, check
selection rules, training methods, verifier kinds, executors' training runners and kinds of run are
named by layers below their plug-ins (a contract, a task, the store), so they are entry points of the
installed distribution (rsi/plugins.py `PluginRegistry`: one line of pyproject.toml each, names read
from the metadata without importing anything, objects loaded when used), re-exported typed where they
are implemented (rsi/models/registry.py, rsi/harness/selection.py, rsi/training/methods.py,
rsi/verifier/registry.py, rsi/executors/registry.py, rsi/run/kinds.py).

Either way a registry is a mapping, and specs validate a name when they are read, against the registry
as it is then, so a registration made before (`registry[name] = value`) is selectable by name.
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
