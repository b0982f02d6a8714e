"""The weak-isolation gate: evidence from weakly isolated attempts is refused unless allowed.

An attempt's trajectory records what its sandbox really isolated (`Trajectory.sandbox`, an
`rsi.sandbox.base.Isolation`). Where the sandbox fell back to rlimits only (`Isolation.weak`: no
network, PID or file-system isolation), the agent could read hidden tests or other attempts'
answers, so a `passed` verdict from it proves less. `rsi promote` and `rsi trajectories export`
call `check_isolation` over the attempts whose evidence they use and refuse (UserInputError, exit
2) unless the user passes `--allow-weak-isolation`; what was allowed is recorded either way
(`IsolationCheck.summary()` in the export manifest and the promotion's `Evidence-Isolation`
trailer).

An attempt with no isolation record (no trajectory file, as with `RSI_ATTEMPT_OVERRIDE=noop`,
whose attempts run no agent code; or a trajectory written by other means) is counted as
`unrecorded`, reported, and not refused: the harness records the sandbox on every attempt it runs.

`check_isolation` is pure; `read_isolation` is the one I/O edge (one read of one trajectory file).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsi.errors import UserInputError
from rsi.sandbox.base import Isolation

ALLOW_FLAG = "--allow-weak-isolation"


class WeakIsolationError(UserInputError):
    """Evidence from weakly isolated attempts was offered without `--allow-weak-isolation`."""


@dataclass(frozen=True)
class AttemptIsolation:
    """One attempt's isolation as its trajectory recorded it (None: nothing recorded)."""

    attempt_id: str
    isolation: Isolation | None


@dataclass(frozen=True)
class IsolationCheck:
    """How isolated the attempts behind some evidence were, and whether weak ones were allowed."""

    attempts: int
    weak: int
    unrecorded: int
    backends: dict[str, int]
    weak_reasons: dict[str, int]
    allowed_weak: bool

    def summary(self) -> dict[str, Any]:
        return {
            "attempts": self.attempts,
            "weak": self.weak,
            "unrecorded": self.unrecorded,
            "backends": dict(self.backends),
            "weak_reasons": dict(self.weak_reasons),
            "weak_allowed": self.allowed_weak and self.weak > 0,
        }

    def as_text(self) -> str:
        """One line for a commit trailer."""
        backends = ", ".join(f"{name} {count}" for name, count in self.backends.items()) or "none recorded"
        text = f"{self.weak}/{self.attempts} weakly isolated; {self.unrecorded} unrecorded; sandboxes: {backends}"
        return text + (f" (allowed by {ALLOW_FLAG})" if self.weak and self.allowed_weak else "")


def weak_reason(isolation: Isolation) -> str:
    """Why an attempt is weak, in words: the backend and its own notes."""
    return f"{isolation.backend}: {isolation.notes}" if isolation.notes else isolation.backend


def check_isolation(records: Iterable[AttemptIsolation], allow_weak: bool = False, what: str = "evidence") -> IsolationCheck:
    """Count weak and unrecorded attempts; raise WeakIsolationError if any is weak and not allowed."""
    records = list(records)
    backends: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    unrecorded = 0
    for record in records:
        if record.isolation is None:
            unrecorded += 1
            continue
        backends[record.isolation.backend] += 1
        if record.isolation.weak:
            reasons[weak_reason(record.isolation)] += 1
    weak = sum(reasons.values())
    check = IsolationCheck(len(records), weak, unrecorded, dict(sorted(backends.items())),
                           dict(sorted(reasons.items())), allow_weak)
    if weak and not allow_weak:
        reason, _ = max(reasons.items(), key=lambda item: (item[1], item[0]))
        more = f" (and {len(reasons) - 1} other sandbox setup(s))" if len(reasons) > 1 else ""
        raise WeakIsolationError(
            f"refusing {what}: {weak} of {len(records)} attempts were weakly isolated ({reason}){more}",
            hint=f"re-run where `rsi doctor` shows an isolating sandbox mode, or pass {ALLOW_FLAG} to use it anyway "
            "(the record will say so)",
        )
    return check


def read_isolation(attempt_id: str, trajectory_path: str) -> AttemptIsolation:
    """The `sandbox` record of one trajectory file (None when absent or unreadable)."""
    if not trajectory_path:
        return AttemptIsolation(attempt_id, None)
    try:
        raw = json.loads(Path(trajectory_path).read_text(encoding="utf-8"))
        sandbox = raw.get("sandbox") if isinstance(raw, dict) else None
        return AttemptIsolation(attempt_id, Isolation.model_validate(sandbox) if sandbox else None)
    except (OSError, ValueError):
        return AttemptIsolation(attempt_id, None)
