"""Which checked candidate an attempt submits: the selection rules of `harness.check` (pure, one registry).

A rule sees only the public checks' results (`CheckRecord`), never the hidden verifier: choosing among
candidates by the verifier's verdict would make the verdict the agent's, not the judge's.

- `first-pass`: the earliest candidate that passes every public check. With none, the earliest
  candidate with code, exactly as an unchecked harness would submit. It lets the harness stop asking
  for candidates at the first one that passes (`sampling.greedy_first`: samples only after a failing
  greedy reply).
- `most-passed`: the candidate that passes the most public checks, ties to the earliest. Every
  candidate is asked for and checked.

The registry is `rsi.plugins.SELECTION_RULES` (entry point group `rsi.selection_rules`), typed here: a
rule is a module-level `SelectionRule` named by one line of pyproject.toml
(`first-pass = "rsi.harness.selection:FIRST_PASS"`), so the contract schema checks `harness.check`
without importing the harness.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from rsi import plugins
from rsi.harness.trajectory import CheckRecord
from rsi.plugins import SELECTION_OFF, PluginRegistry


@dataclass(frozen=True)
class SelectionRule:
    """One rule: how to choose (`choose`, over each candidate's record, None for a candidate without code)
    and whether the harness may stop at the first candidate that passes every check."""

    choose: Callable[[Sequence[CheckRecord | None]], int | None]
    stops_at_first_pass: bool
    description: str


def _first_pass(records: Sequence[CheckRecord | None]) -> int | None:
    for index, record in enumerate(records):
        if record is not None and record.all_passed:
            return index
    return next((index for index, record in enumerate(records) if record is not None), None)


def _most_passed(records: Sequence[CheckRecord | None]) -> int | None:
    scored = [(record.passed, -index) for index, record in enumerate(records) if record is not None]
    return -max(scored)[1] if scored else None


FIRST_PASS = SelectionRule(_first_pass, True, "the earliest candidate passing every public check, else the earliest")
MOST_PASSED = SelectionRule(_most_passed, False, "the candidate passing the most public checks, ties to the earliest")

OFF = SELECTION_OFF
SELECTION_RULES = cast("PluginRegistry[SelectionRule]", plugins.SELECTION_RULES)


def choose_candidate(rule: str, records: Sequence[CheckRecord | None]) -> int | None:
    """The index of the candidate to submit under `rule` (None: no candidate has code)."""
    return SELECTION_RULES[rule].choose(records)


def better(challenger: CheckRecord, incumbent: CheckRecord) -> bool:
    """Whether a repaired candidate replaces the chosen one: it passes strictly more public checks
    (every selection rule ranks a repair this way)."""
    return challenger.passed > incumbent.passed
