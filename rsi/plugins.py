"""Plug-ins declared as entry points: the registries whose names a lower layer checks.

A contract names its model backend, check selection rule and training method, a task its verifier kind,
`rsi train --executor` an executor that trains, and the store asks which kinds of run are not coverage
search. Each name is read in a layer below the one that implements it, so a registry holding the objects
in its own module would be an import up the layers (docs/architecture.md). Instead each plug-in is an
entry point of the installed distribution, as flake8 declares its own checkers:

    [project.entry-points."rsi.model_backends"]
    embedded = "rsi.models.registry:embedded_backend"

A `PluginRegistry` knows its names from the distributions' metadata alone (checking a name imports
nothing) and loads an entry's object the first time it is used. rsi's own plug-ins are lines of its
pyproject.toml, so the dependency is declared by the distribution, not by an import in a low module; a
lab ships its own backend, verifier kind, selection rule, training method or run kind from its own
package the same way, without forking rsi. Entries set at run time (`registry[name] = value`, a test's
`monkeypatch.setitem`) sit beside the metadata's and win over them.

The metadata is the installed distribution's: after changing an entry point in pyproject.toml, rerun
`make install` (an editable install writes them when it is installed).

Only the standard library and the bottom layer are imported here: the registries' objects are typed
where they are implemented (`rsi.models.registry.MODEL_BACKENDS` is this same registry, typed).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, MutableMapping
from importlib import metadata
from typing import Any, Generic, Protocol, TypeVar

from rsi.errors import RsiError
from rsi.registry import known_name, name_check

T = TypeVar("T")

DISTRIBUTION = "rsi"
INSTALL_HINT = "run `make install` (or `pip install -e .`) in the rsi checkout, with the Python that runs rsi"


class PluginError(RsiError):
    """The plug-ins' metadata is missing or an entry point does not load: the installation is at fault,
    not the input that named the plug-in."""


class PluginRegistry(MutableMapping[str, T], Generic[T]):
    """Name -> plug-in object: the entry points of `group` plus the entries set at run time.

    `name in registry` and iterating read the metadata only (once, cached); `registry[name]` loads the
    entry point on first use and keeps the object, so each name maps to one object. Names are in the
    metadata's order (setuptools writes them sorted), then the run-time ones in the order they were set.
    Two distributions declaring one name: the first on sys.path wins, as it would for a module."""

    def __init__(self, group: str, what: str) -> None:
        self.group = group
        self.what = what
        self._declared: dict[str, metadata.EntryPoint] | None = None
        self._loaded: dict[str, T] = {}
        self._set: dict[str, T] = {}
        self._removed: set[str] = set()

    def declared(self) -> dict[str, metadata.EntryPoint]:
        """The group's entry points by name. None at all: rsi's metadata is missing or stale (PluginError)."""
        if self._declared is None:
            found: dict[str, metadata.EntryPoint] = {}
            for point in metadata.entry_points(group=self.group):  # a few ms: every distribution's metadata
                found.setdefault(point.name, point)
            if not found:
                raise PluginError(self._nothing_declared(), hint=INSTALL_HINT)
            self._declared = found
        return self._declared

    def _nothing_declared(self) -> str:
        what = f"no {self.what} is declared (entry point group {self.group!r})"
        try:
            dist = metadata.distribution(DISTRIBUTION)
        except metadata.PackageNotFoundError:
            return f"{what}: rsi is not installed in {sys.executable}, so its plug-ins' metadata is missing"
        return (f"{what}: the installed rsi {dist.version} ({dist.locate_file('')}) has metadata older than "
                "its plug-in entry points in pyproject.toml")

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        return name in self._set or (name in self.declared() and name not in self._removed)

    def __getitem__(self, name: str) -> T:
        declared = self.declared()
        if name in self._set:
            return self._set[name]
        if name not in declared or name in self._removed:
            raise KeyError(name)
        if name not in self._loaded:
            self._loaded[name] = self._load(declared[name])
        return self._loaded[name]

    def _load(self, point: metadata.EntryPoint) -> T:
        try:
            loaded: T = point.load()
        except Exception as error:  # the module's import, the attribute, or the module's own code failing
            source = point.dist.name if point.dist is not None else "an unknown distribution"
            raise PluginError(f"{self.what} {point.name!r} ({point.value}, declared by {source} in group "
                              f"{self.group!r}) does not load: {type(error).__name__}: {error}",
                              hint="fix the entry point or its module, then `make install`") from error
        return loaded

    def __setitem__(self, name: str, value: T) -> None:
        self._removed.discard(name)
        if name in self.declared() and self._loaded.get(name) is value:
            # Setting a declared name back to its own object (monkeypatch's undo) restores the metadata's entry.
            self._set.pop(name, None)
        else:
            self._set[name] = value

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self._set.pop(name, None)
        if name in self.declared():
            self._removed.add(name)

    def __iter__(self) -> Iterator[str]:
        declared = self.declared()
        names = [name for name in declared if name not in self._removed]
        names += [name for name in self._set if name not in declared]
        return iter(names)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"PluginRegistry({self.group!r}, {self.what!r})"

    def refresh(self) -> None:
        """Read the metadata again (a distribution installed or removed since) and forget the loaded
        objects; the entries set at run time stay."""
        self._declared = None
        self._loaded.clear()


# -- the registries ----------------------------------------------------------------------------------
# Typed `Any` here: the objects' types live in the layers that implement them, which re-export these same
# registries typed (rsi/models/registry.py, rsi/harness/selection.py, rsi/training/methods.py,
# rsi/verifier/registry.py, rsi/executors/registry.py, rsi/run/kinds.py).
MODEL_BACKENDS: PluginRegistry[Any] = PluginRegistry("rsi.model_backends", "model backend")
SELECTION_RULES: PluginRegistry[Any] = PluginRegistry("rsi.selection_rules", "check selection rule")
TRAINING_METHODS: PluginRegistry[Any] = PluginRegistry("rsi.training_methods", "training method")
VERIFIER_KINDS: PluginRegistry[Any] = PluginRegistry("rsi.verifier_kinds", "verifier kind")
TRAINING_RUNNERS: PluginRegistry[Any] = PluginRegistry("rsi.training_runners", "training runner")
RUN_KINDS: PluginRegistry[Any] = PluginRegistry("rsi.run_kinds", "kind of run")
REGISTRIES = (MODEL_BACKENDS, SELECTION_RULES, TRAINING_METHODS, VERIFIER_KINDS, TRAINING_RUNNERS, RUN_KINDS)

DEFAULT_MODEL_BACKEND = "embedded"
DEFAULT_TRAINING_METHOD = "sft"
SELECTION_OFF = "off"  # `harness.check`: no selection among checked candidates

model_backend_name = name_check(MODEL_BACKENDS, "model backend")
training_method_name = name_check(TRAINING_METHODS, "training method")
verifier_kind_name = name_check(VERIFIER_KINDS, "verifier kind")


def selection_rule_name(name: str) -> str:
    """`name` if it is 'off' or a registered rule; a ValueError naming the known ones otherwise."""
    return known_name(dict.fromkeys([SELECTION_OFF, *SELECTION_RULES]), "check selection rule", name)


class SearchCounting(Protocol):
    """What the store reads of a kind of run (rsi.run.kinds.RunKind)."""

    @property
    def scheduler(self) -> str | None: ...

    @property
    def counts_as_search(self) -> bool: ...


def non_search_schedulers() -> tuple[str, ...]:
    """The scheduler names of the kinds of run that are not coverage search (the store leaves their runs
    out of its reads over all runs); loads the kinds' entries."""
    kinds: list[SearchCounting] = list(RUN_KINDS.values())
    return tuple(k.scheduler for k in kinds if not k.counts_as_search and k.scheduler is not None)


def entry_point_drift(pyproject_text: str) -> list[str]:
    """How rsi's installed plug-in metadata differs from a pyproject.toml's `rsi.*` entry points: one line per
    entry declared there and missing or mapped elsewhere here, or installed here and no longer declared
    there ([] where they agree). A checkout whose pyproject.toml gained an entry after `make install`
    has drift; the cure is `make install` (INSTALL_HINT)."""
    import tomllib

    declared = {(group, name): value
                for group, points in tomllib.loads(pyproject_text).get("project", {}).get("entry-points", {}).items()
                if group.startswith("rsi.") for name, value in points.items()}
    groups = {group for group, _ in declared} | {r.group for r in REGISTRIES}
    try:
        installed = {(p.group, p.name): p.value for p in metadata.distribution(DISTRIBUTION).entry_points
                     if p.group in groups}
    except metadata.PackageNotFoundError:
        return [f"rsi is not installed in {sys.executable}"]
    lines = [f"{group} {name} = {value!r} is not installed" if (group, name) not in installed else
             f"{group} {name} is installed as {installed[group, name]!r}, pyproject.toml says {value!r}"
             for (group, name), value in sorted(declared.items()) if installed.get((group, name)) != value]
    lines += [f"{group} {name} is installed but no longer in pyproject.toml"
              for group, name in sorted(installed.keys() - declared.keys())]
    return lines
