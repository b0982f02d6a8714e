"""The promotion decision: a pure function from attempt records to "promote X" or "promote nothing, because".

Policy (documented in docs/promotion.md):

1. **Candidate.** Evidence is taken over the run's non-heldout attempts (the heldout split is kept for
   the gate, so the candidate is never chosen on the data that judges it). A run holding only heldout
   attempts falls back to them, but never chooses and gates on the same tasks: its heldout tasks are split
   by a seeded hash of their keys (`split_heldout`) into a choosing half, which ranks the configurations,
   and a gating half, which alone judges the one chosen; the decision says so. Configurations are ranked by
   the lower bound of the 95% Wilson interval of their attempt pass rate (rewards evidence, not luck on
   three attempts), then task solve rate, then fewer tokens per attempt, then name.
2. **Gate** (`[evaluation.gate]`). Paired comparison on heldout tasks that both the candidate and the
   parent contract's configuration attempted, with **equal attempts per task** (`equal_attempts`: where one
   side has more counted attempts on a task, only as many as the other side's count, first recorded first):
   per task, pass = any attempt passed. The lift is the mean paired difference; its 95% interval is
   Newcombe's method 10 (Wilson score intervals for the two marginal rates combined with the paired
   correlation) by default, or a seeded paired bootstrap. The gate passes when the interval's lower bound
   is above `min_lift` (so with the default `min_lift = 0` the interval must exclude zero), the candidate
   still solves at least `retention_min` of the heldout tasks the parent solved (no such task: the condition
   is vacuous and the reason says "no tasks"), and, where the attempts' trajectories record a price, the
   price is inside the gate's bounds (rsi.promotion.price: `max_token_ratio`, `min_lift_per_1k_tokens`).
3. **Routing.** Optionally, for every task tag, the configuration best on it (highest Wilson lower
   bound of its solve rate on the tag's tasks).

The decision hash names the decision independently of the contract's current head (contract name,
candidate hash, runs, and the evidence counts), so a rerun after a crash recognises its own commit.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from rsi.contracts.hashing import canonical_json, sha256_text
from rsi.contracts.schema import ContractSpec
from rsi.promotion import price
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
from rsi.promotion.price import AttemptCost, SidePrice

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
    max_token_ratio: float | None = 10.0  # as GateSpec's default: the price gates unless a contract says otherwise
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
    def retention(self) -> float | None:
        """Share of the tasks the parent solved that the candidate also solves (None: the parent solved none)."""
        parent_solved = self.both + self.parent_only
        return self.both / parent_solved if parent_solved else None

    def retention_text(self) -> str:
        """'0.906 (29/32)', or 'no tasks'."""
        retention = self.retention
        return "no tasks" if retention is None else f"{retention:.3f} ({self.both}/{self.both + self.parent_only})"

    def summary(self) -> LiftSummary:
        return LiftSummary(
            tasks=self.tasks, candidate_rate=round(self.candidate_rate, 4), parent_rate=round(self.parent_rate, 4),
            lift=round(self.lift, 4), lift_ci95=(round(self.ci.low, 4), round(self.ci.high, 4)), method=self.method,
            retention=round(self.retention, 4) if self.retention is not None else None,
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
    retention: float | None = Field(description="Share of the other side's solved tasks the candidate also solved "
                                    "(None: the other side solved none; records before held 1.0 then).")
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
    prices: dict[str, SidePrice] = field(default_factory=dict)  # 'candidate', 'parent' on the gated heldout tasks
    heldout_halves: tuple[int, int] | None = None  # heldout fallback: (choosing, gating) tasks
    unequal_attempts: int = 0  # counted heldout attempts left out so both sides count equal attempts per task

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
                     "retention_min": self.gate.retention_min, "method": self.gate.method,
                     "max_token_ratio": self.gate.max_token_ratio,
                     "min_lift_per_1k_tokens": self.gate.min_lift_per_1k_tokens},
            "prices": {side: p.summary() for side, p in self.prices.items()},
            "heldout_halves": ({"choosing": self.heldout_halves[0], "gating": self.heldout_halves[1]}
                               if self.heldout_halves else None),
            "unequal_attempts": self.unequal_attempts,
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


def split_heldout(tasks: set[str] | list[str], seed: int) -> tuple[frozenset[str], frozenset[str]]:
    """The heldout fallback's halves (pure): a task chooses when sha256("<seed>:<task key>")'s first 8 hex digits
    are even, and gates otherwise. Seeded by `[evaluation].seed`, fixed by the task's key alone, so a task stays in
    its half however the runs are pooled, and no task both chooses the candidate and judges it."""
    choosing = {t for t in tasks if int(sha256_text(f"{seed}:{t}")[:8], 16) % 2 == 0}
    return frozenset(choosing), frozenset(set(tasks) - choosing)


def equal_attempts(records: list[ScoredAttempt], candidate_hash: str,
                   parent_hash: str) -> tuple[list[ScoredAttempt], list[ScoredAttempt], int]:
    """Both sides with equal counted attempts per task (pure): on every task both attempted, each side keeps its
    first k counted attempts in the order recorded, k = the fewer side's count (any-pass over eight attempts
    against any-pass over one would be a lift bought with attempts). Returns the candidate's and the parent's
    kept attempts, and how many counted attempts were left out."""
    by_side: dict[str, dict[str, list[ScoredAttempt]]] = {candidate_hash: {}, parent_hash: {}}
    for record in records:
        if record.config_hash in by_side and record.verdict.counts_as_attempt:
            by_side[record.config_hash].setdefault(record.task_key, []).append(record)
    cand, parent = by_side[candidate_hash], by_side[parent_hash]
    kept_cand: list[ScoredAttempt] = []
    kept_parent: list[ScoredAttempt] = []
    for task in sorted(set(cand) & set(parent)):
        k = min(len(cand[task]), len(parent[task]))
        kept_cand += cand[task][:k]
        kept_parent += parent[task][:k]
    counted = sum(len(v) for side in by_side.values() for v in side.values())
    return kept_cand, kept_parent, counted - len(kept_cand) - len(kept_parent)


def _side_price(attempts: list[ScoredAttempt], costs: Mapping[str, AttemptCost]) -> SidePrice:
    per_task: dict[str, list[AttemptCost]] = {}
    for record in attempts:
        per_task.setdefault(record.task_key, []).append(costs.get(record.attempt_id, AttemptCost()))
    return price.side_price(list(per_task.values()))


def _choosing_and_gating(
    records: list[ScoredAttempt], seed: int
) -> tuple[str, list[ScoredAttempt], list[ScoredAttempt], tuple[int, int] | None]:
    """(the split that chooses, the attempts that choose, the heldout attempts that gate, the fallback's halves):
    train evidence chooses and heldout gates; with heldout evidence only, one half of its tasks chooses and the
    other half gates (`split_heldout`), so no task both chooses and judges (pure)."""
    heldout = [r for r in records if r.split == "heldout"]
    if any(r.split != "heldout" for r in records):
        return "train", [r for r in records if r.split != "heldout"], heldout, None
    choosing, gating = split_heldout({r.task_key for r in heldout}, seed)
    return ("heldout", [r for r in heldout if r.task_key in choosing], [r for r in heldout if r.task_key in gating],
            (len(choosing), len(gating)))


def _gate_refusal(lift: LiftEstimate, gate: GatePolicy, prices: Mapping[str, SidePrice]) -> tuple[str, str] | None:
    """Why the gate refuses a measured heldout lift (reason, hint): its interval, its retention, its price;
    None when it passes (pure)."""
    if lift.ci.low <= gate.min_lift:
        return (f"gate: heldout lift {lift.lift:+.3f} with 95% CI {lift.ci.as_text()} ({lift.method}, {lift.tasks} "
                f"tasks) does not lie above min_lift {gate.min_lift}",
                "collect more heldout evidence, or lower [evaluation.gate].min_lift")
    if lift.retention is not None and lift.retention < gate.retention_min:
        return (f"gate: candidate keeps only {lift.retention_text()} of the heldout tasks the parent solved "
                f"(retention_min {gate.retention_min})",
                "look at the parent-only tasks before promoting; or lower [evaluation.gate].retention_min")
    too_dear = price.price_problems(lift.ci.low, prices.get("candidate"), prices.get("parent"), gate.max_token_ratio,
                                    gate.min_lift_per_1k_tokens)
    if too_dear:
        return ("gate: " + "; ".join(too_dear), "a cheaper candidate, or raise [evaluation.gate].max_token_ratio / "
                "lower min_lift_per_1k_tokens where the price is worth it")
    return None


def decide_promotion(
    records: list[ScoredAttempt],
    contract: str,
    parent_hash: str,
    gate: GatePolicy | None = None,
    with_routing: bool = True,
    costs: Mapping[str, AttemptCost] | None = None,
) -> PromotionDecision:
    """Turn attempt records into a PromotionDecision for `contract`, whose configuration is `parent_hash`.
    `costs` (attempt id -> what it spent, from its trajectory) prices the gated heldout attempts; without it the
    price is unmeasured and its bounds are not applied."""
    gate = gate or GatePolicy()
    # a sealed test task's verdict neither chooses nor gates (only a final evaluation reads it; docs/tasks.md)
    records = [r for r in records if r.split != "test"]
    selection_split, selectable, heldout, halves = _choosing_and_gating(records, gate.seed)
    evidence = collect_evidence(selectable, "all")
    evidence = Evidence(evidence.run_ids, selection_split, evidence.configs, evidence.tasks, evidence.task_tags)
    routing = route_by_tag(evidence) if with_routing else ()
    candidate = choose_candidate(evidence)
    decision_hash = decision_hash_of(contract, candidate.config_hash, evidence) if candidate else ""
    prices: dict[str, SidePrice] = {}
    unequal = 0
    gated_on = (f" (the heldout fallback: {halves[0]} heldout tasks chose the candidate, the other {halves[1]} "
                "judge it)") if halves else ""

    def decided(promote: bool, reason: str, lift: LiftEstimate | None = None, hint: str | None = None) -> PromotionDecision:
        return PromotionDecision(
            contract=contract, promote=promote, reason=reason, decision_hash=decision_hash, parent_hash=parent_hash,
            candidate=candidate, evidence=evidence, selection_split=selection_split, lift=lift, gate=gate,
            routing=routing, hint=hint, prices=prices, heldout_halves=halves, unequal_attempts=unequal,
        )

    if not records:
        return decided(False, "the run holds no finished attempts", hint="wait for the run to finish, or check its id")
    if candidate is None:
        return decided(False, "no configuration passed any attempt" + gated_on)
    if candidate.config_hash == parent_hash:
        return decided(
            False,
            f"the best configuration ({candidate.config_name}, {candidate.config_hash}) "
            f"is already the configuration of contract {contract!r}",
        )
    cand_attempts, parent_attempts, unequal = equal_attempts(heldout, candidate.config_hash, parent_hash)
    cand_tasks = task_outcomes(cand_attempts, candidate.config_hash)
    parent_tasks = task_outcomes(parent_attempts, parent_hash)
    lift = paired_lift(cand_tasks, parent_tasks, gate.method, gate.resamples, gate.seed) if heldout else None
    if costs is not None and cand_attempts:
        prices = {"candidate": _side_price(cand_attempts, costs), "parent": _side_price(parent_attempts, costs)}
    if not gate.enabled:
        return decided(
            True,
            lift=lift,
            reason=f"gate disabled: promoting the best configuration on {selection_split} evidence "
            f"({candidate.config_name}, pass rate {candidate.pass_rate:.3f} {candidate.pass_ci.as_text()})",
        )
    if lift is None or lift.tasks == 0:
        attempted = {side: bool(task_outcomes(heldout, h)) for side, h in
                     (("candidate", candidate.config_hash), ("parent", parent_hash))}
        missing = [side for side, got in attempted.items() if not got]
        return decided(
            False,
            lift=lift,
            reason="gate: no heldout tasks attempted by both the candidate "
            f"({candidate.config_name}) and the parent configuration ({parent_hash})"
            + (f"; missing heldout attempts of: {', '.join(missing)}" if missing else "") + gated_on,
            hint="run both configurations on the heldout split (`rsi run --split heldout`, or `rsi eval`) "
            "and pass that run too: `rsi promote TRAIN_RUN HELDOUT_RUN`",
        )
    refused = _gate_refusal(lift, gate, prices)
    if refused is not None:
        return decided(False, lift=lift, reason=refused[0] + gated_on, hint=refused[1])
    retention = lift.retention_text() + (" (vacuous: the parent solved none of them)" if lift.retention is None else "")
    priced = price.price_text(prices.get("candidate"), prices.get("parent"))
    return decided(
        True,
        lift=lift,
        reason=f"gate passed: heldout lift {lift.lift:+.3f} with 95% CI {lift.ci.as_text()} over {lift.tasks} "
        f"tasks, retention {retention}" + (f", {priced}" if priced else ", price unmeasured") + gated_on,
    )
