"""Semantic diff of two contracts: which keys changed, grouped by section, and which clocks moved.

Pure: compares two LoadedContracts' validated models (defaults filled in), so formatting, comments
and key order never show up. The resolved prompt text stands in for `harness.system_prompt`;
long strings (several lines, or over 80 characters) carry a unified text diff. Two contracts are
*equal* when their identity hashes are equal; bookkeeping changes (`hcp.revision`, `hcp.parent`,
`hcp.created`, `hcp.notes`) are listed but do not make them different.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, field
from typing import Any

from rsi.contracts.hashing import BOOKKEEPING, clocks_moved
from rsi.contracts.load import LoadedContract
from rsi.contracts.toml_source import format_key

SECTION_ORDER = ("schema_version", "hcp", "base", "specialists", "harness", "routing", "evaluation", "training", "serving")
_MISSING = object()


@dataclass(frozen=True)
class Change:
    """One key whose value differs."""

    section: str
    key: str
    old: Any
    new: Any
    kind: str  # "changed", "added" or "removed"
    text_diff: str | None = None

    @property
    def bookkeeping(self) -> bool:
        return self.section == "hcp" and self.key.removeprefix("hcp.") in BOOKKEEPING

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "bookkeeping": self.bookkeeping}


@dataclass(frozen=True)
class ContractDiff:
    """The semantic difference between contract `a` and contract `b`."""

    a_ref: str
    b_ref: str
    a_hash: str
    b_hash: str
    changes: list[Change]
    clocks_moved: list[str]
    specialists: list[str] = field(default_factory=list)  # the Mixture-of-LoRA story in words (`specialist_story`)

    @property
    def equal(self) -> bool:
        return self.a_hash == self.b_hash

    def sections(self) -> dict[str, list[Change]]:
        grouped: dict[str, list[Change]] = {}
        for change in self.changes:
            grouped.setdefault(change.section, []).append(change)
        return grouped

    def to_json(self) -> dict[str, Any]:
        return {
            "a": {"ref": self.a_ref, "hash": self.a_hash},
            "b": {"ref": self.b_ref, "hash": self.b_hash},
            "equal": self.equal,
            "clocks_moved": self.clocks_moved,
            "specialists": self.specialists,
            "sections": {section: [c.to_json() for c in items] for section, items in self.sections().items()},
        }


def _comparable(loaded: LoadedContract) -> dict[str, Any]:
    data = loaded.spec.model_dump(mode="json")
    data["harness"]["system_prompt"] = loaded.system_prompt
    return data


def _flatten(value: Any, path: tuple[str | int, ...], out: dict[tuple[str | int, ...], Any]) -> None:
    """Tables become dotted keys; lists of tables are indexed; lists of scalars stay one value."""
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, (*path, key), out)
        if not value and path:
            out[path] = {}
    elif isinstance(value, list) and any(isinstance(item, dict) for item in value):
        for index, item in enumerate(value):
            _flatten(item, (*path, index), out)
    else:
        out[path] = value


def _drop_empty_tables_lists(flat: dict[tuple[str | int, ...], Any], other: dict[tuple[str | int, ...], Any]) -> None:
    """An empty list of tables on one side is 'no items', not a value: its items show as added/removed."""
    for key in [k for k, v in flat.items() if v == []]:
        if any(len(o) > len(key) and o[: len(key)] == key for o in other):
            del flat[key]


def _is_long(value: Any) -> bool:
    return isinstance(value, str) and ("\n" in value.strip() or len(value) > 80)


def _text_diff(old: Any, new: Any, a_label: str, b_label: str) -> str | None:
    if not (_is_long(old) or _is_long(new)):
        return None
    old_text = old if isinstance(old, str) else ""
    new_text = new if isinstance(new, str) else ""
    lines = difflib.unified_diff(
        old_text.splitlines(keepends=True), new_text.splitlines(keepends=True), fromfile=a_label, tofile=b_label
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def diff_contracts(a: LoadedContract, b: LoadedContract) -> ContractDiff:
    """Key-by-key difference of two contracts, in section order."""
    flat_a: dict[tuple[str | int, ...], Any] = {}
    flat_b: dict[tuple[str | int, ...], Any] = {}
    _flatten(_comparable(a), (), flat_a)
    _flatten(_comparable(b), (), flat_b)
    _drop_empty_tables_lists(flat_a, flat_b)
    _drop_empty_tables_lists(flat_b, flat_a)
    keys = list(flat_a) + [key for key in flat_b if key not in flat_a]

    def order(key: tuple[str | int, ...]) -> tuple[int, int]:
        section = str(key[0])
        return (SECTION_ORDER.index(section) if section in SECTION_ORDER else len(SECTION_ORDER), keys.index(key))

    changes = []
    for key in sorted(keys, key=order):
        old, new = flat_a.get(key, _MISSING), flat_b.get(key, _MISSING)
        if old == new:
            continue
        kind = "added" if old is _MISSING else "removed" if new is _MISSING else "changed"
        old_value = None if old is _MISSING else old
        new_value = None if new is _MISSING else new
        dotted = format_key(key)
        changes.append(
            Change(
                section=str(key[0]),
                key=dotted,
                old=old_value,
                new=new_value,
                kind=kind,
                text_diff=_text_diff(old_value, new_value, f"{a.ref}:{dotted}", f"{b.ref}:{dotted}"),
            )
        )
    return ContractDiff(
        a_ref=a.ref,
        b_ref=b.ref,
        a_hash=a.content_hash,
        b_hash=b.content_hash,
        changes=changes,
        clocks_moved=clocks_moved(a.clock_hashes, b.clock_hashes),
        specialists=specialist_story(a.spec, b.spec),
    )


def specialist_story(a: Any, b: Any) -> list[str]:
    """Which specialists were added, removed or replaced, and whether routing changed, between two contract specs,
    in words (pure): what a reader of `rsi diff` wants before the keys that say it."""
    old, new = {s.name: s for s in a.specialists}, {s.name: s for s in b.specialists}
    lines = [f"specialist {name} added (r{new[name].revision}, rank {new[name].rank}, adapter {_adapter(new[name])})"
             for name in sorted(new.keys() - old.keys())]
    lines += [f"specialist {name} removed (was r{old[name].revision})" for name in sorted(old.keys() - new.keys())]
    for name in sorted(old.keys() & new.keys()):
        was, now = old[name], new[name]
        if (was.revision, was.sha256, was.path) != (now.revision, now.sha256, now.path):
            lines.append(f"specialist {name} replaced: r{was.revision} -> r{now.revision} "
                         f"(adapter {_adapter(was)} -> {_adapter(now)})")
    if _routing(a.routing) != _routing(b.routing):
        lines.append(f"re-routed: {_routing(a.routing)} -> {_routing(b.routing)}")
    return lines


def _adapter(specialist: Any) -> str:
    return specialist.sha256[:12] or specialist.path


def _routing(routing: Any) -> str:
    if routing.policy == "fixed":
        return f"every turn to {routing.specialist}" if routing.specialist else "every turn to the base"
    if routing.policy == "learned":
        return f"a learned router ({routing.router}, sha256 {routing.router_sha256[:12]})"
    chosen = sorted({rule.specialist or "the base" for rule in routing.rules})
    return f"first-match rules ({len(routing.rules)}) over {', '.join(chosen) or 'nothing'}"
