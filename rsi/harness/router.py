"""The learned router (`[routing] policy = "learned"`): features, fit and predict (pure, no I/O).

For each specialist (and the bare base, `None`) the router keeps train pass counts: overall, and per
feature of the attempts it saw (task tags, instruction words, turn kind, last-observation words). Its
score for a turn is a smoothed naive-Bayes estimate of P(pass | features, specialist):

    logit(p) = logit(prior) + sum over known features f of (logit(rate_f) - logit(prior))

with prior = (passes + 1) / (attempts + 2), the specialist's overall train pass rate, and
rate_f = (passes_f + M * prior) / (attempts_f + M), shrunk toward that prior by M pseudo-attempts, so a
feature seen once moves the score little. The argmax wins (ties: the lower label, so it is deterministic);
the reason names the scores and the winner's top features. The record is a versioned JSON document
(`ROUTER_SCHEMA`) that `rsi router fit` (rsi/trajectories/router_fit.py) writes and the contract pins by
sha256; which evidence it was fitted on is part of it (train runs and tasks only).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

ROUTER_SCHEMA = "rsi.router/1"
FEATURE_KINDS = ("tag", "word", "kind", "obs")
PRIOR_STRENGTH = 2.0  # M: pseudo-attempts at the specialist's overall rate behind every feature's rate
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_STOP = frozenset(("the", "and", "for", "that", "this", "with", "from", "are", "you", "your", "its", "not", "but",
                   "all", "any", "can", "each", "into", "out", "one", "which", "return", "returns", "given"))


def label(specialist: str | None) -> str:
    """How a specialist is named to people and in a router's tables (None, the bare base, is "base")."""
    return specialist or "base"


def words(text: str, limit: int = 64) -> list[str]:
    """Distinct lower-cased words of `text` (3+ characters, no stop words), first `limit` in order."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text):
        word = match.group(0).lower()
        if word not in _STOP:
            seen.setdefault(word, None)
        if len(seen) >= limit:
            break
    return list(seen)


def turn_features(tags: Iterable[str], instruction: str, kind: str, last_observation: str) -> list[str]:
    """The features of one turn: `tag:`, `word:` (instruction), `kind:` and, after the first turn, `obs:`."""
    found = [f"tag:{tag}" for tag in sorted(set(tags))] + [f"word:{w}" for w in words(instruction)]
    found.append(f"kind:{kind}")
    if kind != "first":
        found += [f"obs:{w}" for w in words(last_observation, limit=16)]
    return found


class SpecialistStats(BaseModel):
    """One specialist's train evidence: attempts, passes, and [passes, attempts] per feature."""

    model_config = ConfigDict(extra="forbid")
    specialist: str | None = Field(description="Specialist name; None is the bare base.")
    attempts: int = 0
    passes: int = 0
    features: dict[str, list[int]] = Field(default_factory=dict)


class RouterEvidence(BaseModel):
    model_config = ConfigDict(extra="forbid")
    split: str = "train"
    runs: list[str] = Field(default_factory=list)
    tasks: list[str] = Field(default_factory=list, description="Train task keys the fit saw.")
    attempts: int = 0


class RouterRecord(BaseModel):
    """A router artifact (routers/<contract>-r<N>.json)."""

    model_config = ConfigDict(extra="forbid")
    schema_id: str = Field(default=ROUTER_SCHEMA, alias="schema")
    contract: str
    revision: int = Field(ge=1)
    features: list[str] = Field(default_factory=lambda: list(FEATURE_KINDS))
    prior_strength: float = PRIOR_STRENGTH
    specialists: list[SpecialistStats]
    evidence: RouterEvidence
    fitted_at: str = ""
    code_commit: str = ""

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json", by_alias=True), indent=2, sort_keys=True) + "\n"

    def learned_part(self) -> dict[str, Any]:
        """What a refit compares: everything but the revision, the date and the commit."""
        return self.model_dump(mode="json", by_alias=True, exclude={"revision", "fitted_at", "code_commit"})


@dataclass(frozen=True)
class Example:
    """One train attempt as evidence: who acted, on which task, with which features, and whether it passed."""

    specialist: str | None
    task_key: str
    features: tuple[str, ...]
    passed: bool


def fit(examples: Sequence[Example], specialists: Sequence[str | None]) -> list[SpecialistStats]:
    """Per-specialist pass counts, overall and per feature (each feature once per attempt)."""
    stats = {label(s): SpecialistStats(specialist=s) for s in specialists}
    for example in examples:
        entry = stats.get(label(example.specialist))
        if entry is None:
            continue
        entry.attempts += 1
        entry.passes += int(example.passed)
        for feature in sorted(set(example.features)):
            counts = entry.features.setdefault(feature, [0, 0])
            counts[0] += int(example.passed)
            counts[1] += 1
    return [stats[key] for key in sorted(stats)]


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def score(stats: SpecialistStats, features: Iterable[str], strength: float = PRIOR_STRENGTH) -> tuple[float, list[tuple[float, str]]]:
    """P(pass | features, specialist) and each known feature's contribution (log-odds), largest first."""
    prior = (stats.passes + 1.0) / (stats.attempts + 2.0)
    base = _logit(prior)
    parts: list[tuple[float, str]] = []
    for feature in sorted(set(features)):
        counts = stats.features.get(feature)
        if not counts:
            continue
        rate = (counts[0] + strength * prior) / (counts[1] + strength)
        parts.append((_logit(rate) - base, feature))
    parts.sort(key=lambda part: (-part[0], part[1]))
    return _sigmoid(base + sum(weight for weight, _ in parts)), parts


def _shown(feature: str) -> str:
    kind, _, value = feature.partition(":")
    return f"{kind} {value}" if kind in ("tag", "kind") else f"{kind} '{value}'"


def predict(record: RouterRecord, features: Sequence[str]) -> tuple[str | None, str]:
    """The specialist with the highest score and the reason (scores, the winner's top features)."""
    ranked = sorted(((score(s, features, record.prior_strength), s) for s in record.specialists),
                    key=lambda item: (-item[0][0], label(item[1].specialist)))
    if not ranked:
        return None, f"learned r{record.revision}: no specialists"
    (best, parts), winner = ranked[0]
    shown = f"{label(winner.specialist)} {best:.2f}"
    if len(ranked) > 1:
        shown += f" > {label(ranked[1][1].specialist)} {ranked[1][0][0]:.2f}"
    top = [_shown(feature) for weight, feature in parts[:2] if weight > 0]
    return winner.specialist, f"learned r{record.revision}: {shown}" + (f" ({', '.join(top)})" if top else "")


def parse_router(text: str) -> RouterRecord:
    """A router record from its JSON text (raises ValueError: the caller locates it)."""
    record = RouterRecord.model_validate(json.loads(text))
    if record.schema_id != ROUTER_SCHEMA:
        raise ValueError(f"schema {record.schema_id!r} is not {ROUTER_SCHEMA!r}")
    return record
