"""The promotion decision: a pure function from attempt records to "promote X" or "promote nothing, because".

Policy (documented in docs/promotion.md):

1. **Candidate.** Evidence is taken over the run's non-heldout attempts (the heldout split is kept for
   the gate, so the candidate is never chosen on the data that judges it; a run holding only heldout
   attempts falls back to those, and the decision says so). Configurations are ranked by the lower
   bound of the 95% Wilson interval of their attempt pass rate (rewards evidence, not luck on three
   attempts), then task solve rate, then fewer tokens per attempt, then name.
2. **Gate** (`[evaluation.gate]`). Paired comparison on heldout tasks that both the candidate and the
   parent contract's configuration attempted: per task, pass = any attempt passed. The lift is the
   mean paired difference; its 95% interval is Newcombe's method 10 (Wilson score intervals for the two
   marginal rates combined with the paired correlation) by default, or a seeded paired bootstrap.
   The gate passes when the interval's lower bound is above `min_lift` (so with the default
   `min_lift = 0` the interval must exclude zero) and the candidate still solves at least
   `retention_min` of the heldout tasks the parent solved.
3. **Routing.** Optionally, for every task tag, the configuration best on it (highest Wilson lower
   bound of its solve rate on the tag's tasks).

The decision hash names the decision independently of the contract's current head (contract name,
candidate hash, runs, and the evidence counts), so a rerun after a crash recognises its own commit.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from rsi.contracts.hashing import canonical_json, sha256_text
from rsi.contracts.schema import ContractSpec
from rsi.promotion.evidence import (
    ALL_TAGS,
    ConfigEvidence,
    Evidence,
    Interval,
    ScoredAttempt,
    collect_evidence,
    task_outcomes,
    wilson_interval,
)

CiMethod = Literal["newcombe", "bootstrap"]


@dataclass(frozen=True)
class GatePolicy:
    """The gate's parameters (from the contract's `[evaluation.gate]`, plus the interval method)."""

    enabled: bool = True
    min_lift: float = 0.0
    retention_min: float = 0.9
    method: CiMethod = "newcombe"
    resamples: int = 2000
    seed: int = 0
    max_token_ratio: float | None = None
    min_lift_per_1k_tokens: float | None = None

    @classmethod
    def from_contract(cls, spec: ContractSpec, method: CiMethod = "newcombe") -> GatePolicy:
        """Read `spec.evaluation.gate` and `spec.evaluation.seed`; the interval method is the caller's
        (`[evaluation.gate]` declares none)."""
        evaluation = spec.evaluation
        gate = evaluation.gate
        return cls(
            enabled=gate.enabled,
            min_lift=gate.min_lift,
            retention_min=gate.retention_min,
            method=method,
            seed=evaluation.seed,
            max_token_ratio=gate.max_token_ratio,
            min_lift_per_1k_tokens=gate.min_lift_per_1k_tokens,
        )


@dataclass(frozen=True)
class LiftEstimate:
    """Paired heldout comparison of candidate against parent (per task: any attempt passed)."""

    tasks: int
    both: int
    candidate_only: int
    parent_only: int
    neither: int
    ci: Interval
    method: str

    @property
    def lift(self) -> float:
        return (self.candidate_only - self.parent_only) / self.tasks if self.tasks else 0.0

    @property
    def candidate_rate(self) -> float:
        return (self.both + self.candidate_only) / self.tasks if self.tasks else 0.0

    @property
    def parent_rate(self) -> float:
        return (self.both + self.parent_only) / self.tasks if self.tasks else 0.0

    @property
    def retention(self) -> float:
        """Share of the tasks the parent solved that the candidate also solves (1.0 if none)."""
        parent_solved = self.both + self.parent_only
        return self.both / parent_solved if parent_solved else 1.0

    def summary(self) -> LiftSummary:
        return LiftSummary(
            tasks=self.tasks, candidate_rate=round(self.candidate_rate, 4), parent_rate=round(self.parent_rate, 4),
            lift=round(self.lift, 4), lift_ci95=(round(self.ci.low, 4), round(self.ci.high, 4)), method=self.method,
            retention=round(self.retention, 4),
            table=PairTable(both=self.both, candidate_only=self.candidate_only, parent_only=self.parent_only,
                            neither=self.neither),
        )


class PairTable(BaseModel):
    """The 2x2 table of a paired comparison: tasks solved by both sides, one side only, or neither."""

    both: int
    candidate_only: int
    parent_only: int
    neither: int


class LiftSummary(BaseModel):
    """A paired lift as it is stored and shown (eval.json, generation state, ledger, commit trailers).

    "parent" is whichever side the candidate was compared with (its parent, or the frozen
    generation-0 control)."""

    tasks: int = Field(description="Tasks both sides attempted.")
    candidate_rate: float = Field(description="Share of those tasks the candidate solved (any attempt passed).")
    parent_rate: float = Field(description="Share the other side solved.")
    lift: float = Field(description="candidate_rate - parent_rate (the mean paired difference).")
    lift_ci95: tuple[float, float] = Field(description="95% interval of the lift (see `method`).")
    method: str = Field(description="newcombe (method 10) or bootstrap.")
    retention: float = Field(description="Share of the other side's solved tasks the candidate also solved.")
    table: PairTable

    def as_text(self) -> str:
        return f"{self.lift:+.3f} CI95 [{self.lift_ci95[0]:.3f}, {self.lift_ci95[1]:.3f}]"


@dataclass(frozen=True)
class TagRoute:
    """Routing rule entry: tasks carrying `tag` go to the configuration best on it."""

    tag: str
    config_hash: str
    config_name: str
    solved: int
    tasks: int


@dataclass(frozen=True)
class PromotionDecision:
    """What to promote (or why nothing), with the evidence that decided it."""

    contract: str
    promote: bool
    reason: str
    decision_hash: str
    parent_hash: str
    candidate: ConfigEvidence | None
    evidence: Evidence
    selection_split: str
    lift: LiftEstimate | None = None
    gate: GatePolicy = field(default_factory=GatePolicy)
    routing: tuple[TagRoute, ...] = ()
    hint: str | None = None

    def summary(self) -> dict[str, object]:
        return {
            "contract": self.contract,
            "promote": self.promote,
            "reason": self.reason,
            "hint": self.hint,
            "decision_hash": self.decision_hash,
            "parent_hash": self.parent_hash,
            "candidate": self.candidate.summary() if self.candidate else None,
            "selection_split": self.selection_split,
            "heldout": self.lift.summary().model_dump(mode="json") if self.lift else None,
            "gate": {"enabled": self.gate.enabled, "min_lift": self.gate.min_lift,
                     "retention_min": self.gate.retention_min, "method": self.gate.method},
            "routing": [{"tag": r.tag, "config": r.config_name, "config_hash": r.config_hash,
                         "solved": r.solved, "tasks": r.tasks} for r in self.routing],
            "evidence": self.evidence.summary(),
        }


def rank_key(config: ConfigEvidence) -> tuple[float, float, float, str, str]:
    """Sort key, best first: Wilson lower bound, solve rate, fewer tokens, then name and hash."""
    return (-config.pass_ci.low, -config.solve_rate, config.tokens_per_attempt, config.config_name, config.config_hash)


def choose_candidate(evidence: Evidence) -> ConfigEvidence | None:
    """The best configuration that passed at least once, or None."""
    ranked = sorted((c for c in evidence.configs if c.passes > 0), key=rank_key)
    return ranked[0] if ranked else None


def shortlist(evidence: Evidence, parent_hash: str, top: int) -> list[str]:
    """The configurations a paired selection compares (pure): the `top` the promotion ranking puts first among
    those with a counted attempt, and the parent's own configuration, which is always there to be beaten."""
    ranked = [c.config_hash for c in sorted((c for c in evidence.configs if c.attempts > 0), key=rank_key)]
    chosen = [h for h in ranked if h != parent_hash][: max(0, top)]
    return [parent_hash, *chosen]


def route_by_tag(evidence: Evidence) -> tuple[TagRoute, ...]:
    """Per tag (the overall pseudo-tag excluded), the configuration best on it.

    Best: the highest lower bound of the Wilson interval of its solve rate on the tag's tasks, so a
    configuration that solved 3 of 3 beats one that solved 1 of 1; then the promotion ranking.
    """
    routes = []
    for tag in evidence.tag_names():
        if tag == ALL_TAGS:
            continue
        scored = [(c, strength) for c in evidence.configs if (strength := c.tag(tag)) is not None and strength.solved > 0]
        if not scored:
            continue
        best, strength = min(scored, key=lambda cs: (-cs[1].ci.low, -cs[1].rate, *rank_key(cs[0])))
        routes.append(TagRoute(tag, best.config_hash, best.config_name, strength.solved, strength.tasks))
    return tuple(routes)


def paired_lift(
    candidate: dict[str, bool], parent: dict[str, bool], method: CiMethod = "newcombe",
    resamples: int = 2000, seed: int = 0,
) -> LiftEstimate:
    """Paired comparison over the tasks both sides attempted."""
    tasks = sorted(set(candidate) & set(parent))
    both = sum(candidate[t] and parent[t] for t in tasks)
    cand_only = sum(candidate[t] and not parent[t] for t in tasks)
    parent_only = sum(parent[t] and not candidate[t] for t in tasks)
    neither = len(tasks) - both - cand_only - parent_only
    if not tasks:
        ci = Interval(-1.0, 1.0)
    elif method == "newcombe":
        ci = newcombe_paired_interval(both, cand_only, parent_only, neither)
    elif method == "bootstrap":
        diffs = [int(candidate[t]) - int(parent[t]) for t in tasks]
        ci = bootstrap_mean_interval(diffs, resamples, seed)
    else:
        raise ValueError(f"unknown interval method {method!r} (use 'newcombe' or 'bootstrap')")
    return LiftEstimate(len(tasks), both, cand_only, parent_only, neither, ci, method)


def newcombe_paired_interval(a: int, b: int, c: int, d: int) -> Interval:
    """95% interval for p1 - p2 from a paired 2x2 table (Newcombe 1998, method 10).

    a: both pass, b: only the first passes, c: only the second passes, d: neither.
    """
    n = a + b + c + d
    if n == 0:
        return Interval(-1.0, 1.0)
    p1, p2 = (a + b) / n, (a + c) / n
    w1, w2 = wilson_interval(a + b, n), wilson_interval(a + c, n)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    if margins == 0:
        phi = 0.0
    else:
        numerator = float(a * d - b * c)
        if numerator > 0:  # Newcombe's continuity adjustment, applied only to a positive correlation
            numerator = max(numerator - n / 2, 0.0)
        phi = numerator / margins**0.5
    theta = p1 - p2
    delta = ((p1 - w1.low) ** 2 - 2 * phi * (p1 - w1.low) * (w2.high - p2) + (w2.high - p2) ** 2) ** 0.5
    epsilon = ((w1.high - p1) ** 2 - 2 * phi * (w1.high - p1) * (p2 - w2.low) + (p2 - w2.low) ** 2) ** 0.5
    return Interval(max(-1.0, theta - delta), min(1.0, theta + epsilon))


def bootstrap_mean_interval(values: list[int], resamples: int = 2000, seed: int = 0) -> Interval:
    """Seeded percentile bootstrap 95% interval of the mean of `values` (tasks resampled together)."""
    if not values:
        return Interval(-1.0, 1.0)
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(values[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    low = means[int(0.025 * (resamples - 1))]
    high = means[int(round(0.975 * (resamples - 1)))]
    return Interval(low, high)


def decision_hash_of(contract: str, candidate_hash: str, evidence: Evidence) -> str:
    """Identity of a decision: same runs, same candidate, same counts -> same hash."""
    digest = {
        "contract": contract,
        "candidate": candidate_hash,
        "runs": list(evidence.run_ids),
        "split": evidence.split,
        "counts": sorted((c.config_hash, c.attempts, c.passes) for c in evidence.configs),
    }
    return sha256_text(canonical_json(digest))[:16]


def decide_promotion(
    records: list[ScoredAttempt],
    contract: str,
    parent_hash: str,
    gate: GatePolicy | None = None,
    with_routing: bool = True,
) -> PromotionDecision:
    """Turn attempt records into a PromotionDecision for `contract`, whose configuration is `parent_hash`."""
    gate = gate or GatePolicy()
    # a sealed test task's verdict neither chooses nor gates (only a final evaluation reads it; docs/tasks.md)
    records = [r for r in records if r.split != "test"]
    selection_split = "train" if any(r.split != "heldout" for r in records) else "heldout"
    selectable = [r for r in records if (r.split != "heldout") == (selection_split == "train")]
    evidence = collect_evidence(selectable, "all")
    evidence = Evidence(evidence.run_ids, selection_split, evidence.configs, evidence.tasks, evidence.task_tags)
    routing = route_by_tag(evidence) if with_routing else ()
    candidate = choose_candidate(evidence)
    decision_hash = decision_hash_of(contract, candidate.config_hash, evidence) if candidate else ""

    def decided(promote: bool, reason: str, lift: LiftEstimate | None = None, hint: str | None = None) -> PromotionDecision:
        return PromotionDecision(
            contract=contract, promote=promote, reason=reason, decision_hash=decision_hash, parent_hash=parent_hash,
            candidate=candidate, evidence=evidence, selection_split=selection_split, lift=lift, gate=gate,
            routing=routing, hint=hint,
        )

    if not records:
        return decided(False, "the run holds no finished attempts", hint="wait for the run to finish, or check its id")
    if candidate is None:
        return decided(False, "no configuration passed any attempt")
    if candidate.config_hash == parent_hash:
        return decided(
            False,
            f"the best configuration ({candidate.config_name}, {candidate.config_hash}) "
            f"is already the configuration of contract {contract!r}",
        )
    heldout = [r for r in records if r.split == "heldout"]
    cand_tasks, parent_tasks = task_outcomes(heldout, candidate.config_hash), task_outcomes(heldout, parent_hash)
    lift = paired_lift(cand_tasks, parent_tasks, gate.method, gate.resamples, gate.seed) if heldout else None
    if not gate.enabled:
        return decided(
            True,
            lift=lift,
            reason=f"gate disabled: promoting the best configuration on {selection_split} evidence "
            f"({candidate.config_name}, pass rate {candidate.pass_rate:.3f} {candidate.pass_ci.as_text()})",
        )
    if lift is None or lift.tasks == 0:
        missing = [side for side, got in (("candidate", cand_tasks), ("parent", parent_tasks)) if not got]
        return decided(
            False,
            lift=lift,
            reason="gate: no heldout tasks attempted by both the candidate "
            f"({candidate.config_name}) and the parent configuration ({parent_hash})"
            + (f"; missing heldout attempts of: {', '.join(missing)}" if missing else ""),
            hint="run both configurations on the heldout split (`rsi run --split heldout`, or `rsi eval`) "
            "and pass that run too: `rsi promote TRAIN_RUN HELDOUT_RUN`",
        )
    if lift.ci.low <= gate.min_lift:
        return decided(
            False,
            lift=lift,
            reason=f"gate: heldout lift {lift.lift:+.3f} with 95% CI {lift.ci.as_text()} ({lift.method}, "
            f"{lift.tasks} tasks) does not lie above min_lift {gate.min_lift}",
            hint="collect more heldout evidence, or lower [evaluation.gate].min_lift",
        )
    if lift.retention < gate.retention_min:
        return decided(
            False,
            lift=lift,
            reason=f"gate: candidate keeps only {lift.retention:.3f} of the heldout tasks the parent solved "
            f"(retention_min {gate.retention_min})",
            hint="look at the parent-only tasks before promoting; or lower [evaluation.gate].retention_min",
        )
    return decided(
        True,
        lift=lift,
        reason=f"gate passed: heldout lift {lift.lift:+.3f} with 95% CI {lift.ci.as_text()} over {lift.tasks} "
        f"tasks, retention {lift.retention:.3f}",
    )
