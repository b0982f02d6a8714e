"""Trajectory selection for SFT: a pure, documented policy from attempt records to training examples.

Policy `shortest-passing-train` (parameters in `SelectionPolicy`, recorded in every export manifest):

1. Keep only attempts that **passed**, on the **train** split. An attempt on the heldout split, or on a
   task whose content hash is a heldout task's (the same task copied under another name), is refused
   and counted under its reason: training on the data that gates promotion would make the gate lie.
   So is a train task that is a **twin** of a protected task of any suite in the workspace (same function
   and instruction after normalisation, `rsi.trajectories.twins`), counted under the reason that names
   both ("pyfuncs/factorial duplicates pyfuncs2/factorial (heldout)").
2. Per task, rank the passing attempts by completion tokens (`rank_by="tokens"`, the cheapest first)
   or by model turns (`rank_by="turns"`), ties broken by the other measure and then the attempt id.
3. Deduplicate per task by **normalized final code**: the solution parsed and unparsed by Python's
   `ast` (comments, blank lines and formatting removed); code that does not parse falls back to
   whitespace-collapsed text. Only the best-ranked attempt of each distinct solution is kept.
4. Cap: at most `max_per_task` examples per task, and at most `max_per_config` examples per
   configuration over the whole dataset. Examples are taken in rounds (every task's best, then every
   task's second best, ...) so a configuration's cap is spent across many tasks, not a few.

`check_decontaminated` repeats the heldout (and twin) check on the final selection; the exporter calls it
right before writing, so even a selection built by other code cannot leak a heldout task.
"""

from __future__ import annotations

import ast
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Literal

from rsi.contracts.hashing import sha256_text
from rsi.errors import RsiError
from rsi.promotion.evidence import ScoredAttempt

POLICY_NAME = "shortest-passing-train"


class ContaminationError(RsiError):
    """A selected example belongs to a heldout task (by split or by content hash)."""


@dataclass(frozen=True)
class SelectionPolicy:
    """Parameters of the selection policy (see the module docstring)."""

    rank_by: Literal["tokens", "turns"] = "tokens"
    max_per_task: int = 2
    max_per_config: int = 1000
    dedup: bool = True

    def __post_init__(self) -> None:
        if self.max_per_task < 1 or self.max_per_config < 1:
            raise ValueError("max_per_task and max_per_config must be at least 1")

    def describe(self) -> dict[str, object]:
        return {"name": POLICY_NAME, **asdict(self)}


@dataclass(frozen=True)
class TrajectoryCandidate:
    """One attempt offered for selection: its record, final solution code and model turns."""

    record: ScoredAttempt
    final_code: str
    turns: int

    @property
    def code_key(self) -> str:
        return sha256_text(normalize_code(self.final_code))[:16]


@dataclass(frozen=True)
class SelectionOutcome:
    """The chosen examples (in output order) and how many candidates each rule dropped."""

    selected: tuple[TrajectoryCandidate, ...]
    dropped: dict[str, int]

    def per_task(self) -> dict[str, int]:
        return dict(sorted(Counter(c.record.task_key for c in self.selected).items()))

    def per_config(self) -> dict[str, int]:
        return dict(sorted(Counter(c.record.config_hash for c in self.selected).items()))

    def per_tag(self) -> dict[str, int]:
        return dict(sorted(Counter(t for c in self.selected for t in c.record.tags).items()))


def normalize_code(code: str) -> str:
    """Formatting-insensitive form of Python code (see policy step 3)."""
    try:
        return ast.unparse(ast.parse(code))
    except (SyntaxError, ValueError, RecursionError):
        return re.sub(r"\s+", " ", code).strip()


def select_trajectories(
    candidates: Iterable[TrajectoryCandidate],
    policy: SelectionPolicy | None = None,
    heldout_hashes: Iterable[str] = (),
    twins: Mapping[str, str] | None = None,
) -> SelectionOutcome:
    """Apply the selection policy; deterministic for the same candidates in any order. `twins` maps a train task
    key to the refusal naming the protected task it duplicates (`rsi.trajectories.twins.Decontamination.reasons`)."""
    policy = policy or SelectionPolicy()
    twins = twins or {}
    heldout = set(heldout_hashes)
    dropped: Counter[str] = Counter()
    by_task: dict[str, list[TrajectoryCandidate]] = defaultdict(list)
    for candidate in candidates:
        record = candidate.record
        if not record.passed:
            dropped["not passed"] += 1
        elif record.split == "heldout":
            dropped["heldout split"] += 1
        elif record.task_hash in heldout:
            dropped["heldout content hash"] += 1
        elif record.split != "train":
            dropped[f"split {record.split!r}"] += 1
        elif record.task_key in twins:
            dropped[twins[record.task_key]] += 1
        else:
            by_task[record.task_key].append(candidate)
    ranked: dict[str, list[TrajectoryCandidate]] = {}
    for task, group in sorted(by_task.items()):
        group.sort(key=lambda c: _rank_key(c, policy))
        if policy.dedup:
            seen: set[str] = set()
            unique = []
            for candidate in group:
                if candidate.code_key in seen:
                    dropped["duplicate code"] += 1
                    continue
                seen.add(candidate.code_key)
                unique.append(candidate)
            group = unique
        ranked[task] = group
    selected: list[TrajectoryCandidate] = []
    per_config: Counter[str] = Counter()
    per_task: Counter[str] = Counter()
    cursor = dict.fromkeys(ranked, 0)
    progress = True
    while progress:  # one round: each task contributes its next-best example that fits the caps
        progress = False
        for task, group in ranked.items():
            if per_task[task] >= policy.max_per_task:
                continue
            while cursor[task] < len(group):
                candidate = group[cursor[task]]
                cursor[task] += 1
                if per_config[candidate.record.config_hash] >= policy.max_per_config:
                    dropped["config cap"] += 1
                    continue
                selected.append(candidate)
                per_config[candidate.record.config_hash] += 1
                per_task[task] += 1
                progress = True
                break
    for task, group in ranked.items():
        dropped["task cap"] += len(group) - cursor[task]
    selected.sort(key=lambda c: (c.record.task_key, _rank_key(c, policy)))
    return SelectionOutcome(tuple(selected), {k: v for k, v in sorted(dropped.items()) if v})


def check_decontaminated(
    selected: Iterable[TrajectoryCandidate], heldout_hashes: Iterable[str], heldout_keys: Iterable[str] = (),
    twins: Mapping[str, str] | None = None,
) -> None:
    """Raise ContaminationError if any example is a protected task (by split, key or content hash) or a twin of one."""
    twins = twins or {}
    hashes, keys = set(heldout_hashes), set(heldout_keys)
    leaks = sorted(
        {
            twins.get(c.record.task_key, c.record.task_key)
            for c in selected
            if c.record.split != "train" or c.record.task_hash in hashes or c.record.task_key in keys
            or c.record.task_key in twins
        }
    )
    if leaks:
        raise ContaminationError(
            f"refusing to export: {len(leaks)} selected task(s) are heldout or test tasks, or twins of one: "
            f"{', '.join(leaks[:5])}",
            hint="heldout and test tasks (of any suite) gate promotion and must never be trained on",
        )


def _rank_key(candidate: TrajectoryCandidate, policy: SelectionPolicy) -> tuple[int, int, str]:
    tokens, turns = candidate.record.tokens, candidate.turns
    first, second = (tokens, turns) if policy.rank_by == "tokens" else (turns, tokens)
    return (first, second, candidate.record.attempt_id)
