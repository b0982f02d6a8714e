"""The numbers and the decision of an evaluation, from what each side solved (pure: no store, no files).

- the **lift**: the paired difference of solve rates on the heldout tasks with its 95% interval, exactly
  `rsi.promotion.decision.paired_lift`, against the parent and (with a control) against generation 0;
- the **retention** (`heldout_retention`, the gate's): of the heldout tasks the parent (and the control) solved,
  the share the candidate still solves; beside it the **in-sample retention** (`retention_of`) over the covered
  train tasks, the adapter's own training data, shown and never gated;
- the **transfer** (`transfer_of`): of the portfolio's union coverage, the share one configuration solves;
- the **cost-matched** best-of-n (`cost_matched_of`) beside them; each side's **price** (`side_costs`:
  prompt and completion tokens and check seconds per heldout task).

Every comparison counts **equal attempts per task** on its two sides (`paired_solved`): attempt i of a task
counts only where both sides have a counted outcome for it (with paired seeds, the same seed on both sides), so
an infrastructure error on one side never leaves the other side more tries at the task.

The gate is the parent's `[evaluation.gate]`: promote only if the lift's CI lower bound is above `min_lift`,
heldout retention >= `retention_min` against the parent and the control (vacuous where that side solved no
heldout task: the reason says "no tasks"), and the price is inside the bounds it sets (`decide_adapter`,
`price_problems`, rsi.promotion.price).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rsi.evaluation.plan import (
    BEST_OF_N,
    CANDIDATE,
    CONTROL,
    COST_MATCHED,
    PARENT,
    SIDES,
    BestOfNPlan,
    HeldoutBestOfNPlan,
    _Plan,
    _Sides,
)
from rsi.evaluation.records import (
    ContractSide,
    CostMatchedSummary,
    EvalDecision,
    EvalOutcome,
    EvalSpec,
    GateSummary,
    HeldoutCostMatchedSummary,
    RetentionEstimate,
    SideCache,
    SideCost,
    TransferSummary,
    heldout_retention,
)
from rsi.promotion import price


def retention_of(covered: list[str], candidate: dict[str, bool], parent: dict[str, bool]) -> RetentionEstimate:
    return RetentionEstimate(
        covered=len(covered),
        still_solved=sum(1 for t in covered if candidate.get(t, False)),
        parent_resolved=sum(1 for t in covered if parent.get(t, False)),
        kept=sum(1 for t in covered if parent.get(t, False) and candidate.get(t, False)),
    )


def transfer_of(portfolio_covered: list[str], candidate: dict[str, bool], parent: dict[str, bool]) -> TransferSummary:
    """Share of the portfolio's covered train tasks the deployed configuration solves (pure)."""
    n = len(portfolio_covered)
    cand = sum(1 for t in portfolio_covered if candidate.get(t, False))
    par = sum(1 for t in portfolio_covered if parent.get(t, False))
    return TransferSummary(portfolio_covered=n, candidate_solved=cand, parent_solved=par,
                           transfer=round(cand / n, 4) if n else 0.0, parent_transfer=round(par / n, 4) if n else 0.0)



def cost_matched_of(plan: BestOfNPlan, solved: dict[str, bool], spent: int, transfer: TransferSummary,
                    sampling: str, job_index: int) -> CostMatchedSummary:
    """The best-of-n side's numbers beside union coverage and the deployed configuration's transfer (pure)."""
    t = len(plan.tasks)
    b = sum(1 for k in plan.tasks if solved.get(k, False))
    return CostMatchedSummary(
        **plan.summary_fields(), job_index=job_index, sampling=sampling, attempts=spent, solved=b,
        union_rate=round(len(plan.covered) / t, 4) if t else 0.0, best_of_n_rate=round(b / t, 4) if t else 0.0,
        transfer_tasks=transfer.portfolio_covered, parent_solved=transfer.parent_solved,
        candidate_solved=transfer.candidate_solved)



def heldout_cost_matched_of(held: HeldoutBestOfNPlan, heldout: list[str], ran: _Solved, lift: Any, sampling: str,
                            job_index: int) -> HeldoutCostMatchedSummary:
    """The heldout cost-matched side's numbers: pass rate, spend, and `lift` (its paired lift against the parent,
    computed by the caller with the evaluation's own interval method) (pure)."""
    solved, tokens = ran.by_side.get(COST_MATCHED, {}), ran.completion.get(COST_MATCHED, {})
    tasks = [k for k in heldout if k in solved]
    n = len(tasks)
    return HeldoutCostMatchedSummary(
        job_index=job_index, per_task=held.per_task, basis=held.basis, sampling=sampling, tasks=n,
        attempts=ran.spent.get(COST_MATCHED, 0), pass_rate=round(sum(solved[k] for k in tasks) / n, 4) if n else 0.0,
        completion_tokens_per_task=round(sum(tokens.get(k, 0) for k in tasks) / n, 1) if n else 0.0,
        lift=lift.summary())


def price_problems(lift: Any, costs: dict[str, SideCost], gate: Any) -> list[str]:
    """Where the candidate's price breaks the gate's bounds (pure; rsi.promotion.price): each token kind against
    `max_token_ratio`, the lift's CI lower end per extra 1k tokens against `min_lift_per_1k_tokens`."""
    return price.price_problems(lift.ci.low, costs.get("candidate"), costs.get("parent"), gate.max_token_ratio,
                                gate.min_lift_per_1k_tokens)


def _retention_condition(retention: RetentionEstimate, gate: Any) -> tuple[str | None, str]:
    """(the problem or None, the words for the reason) of one heldout retention figure against `retention_min`.
    Over zero tasks the condition is vacuous: the other side solved no heldout task, so there is nothing for the
    candidate to lose; it passes, and the reason says it was not measured rather than pretending 1.0."""
    whose = "the parent" if retention.against == "parent" else "generation 0"
    if retention.retention is None:
        return None, f"retention vs {whose}: no tasks (it solved no heldout task; vacuous)"
    text = f"heldout retention vs {whose} {retention.as_text()}"
    if retention.retention < gate.retention_min:
        return f"{text} is below retention_min {gate.retention_min}", text
    return None, f"{text} >= {gate.retention_min}"


def decide_adapter(lift: Any, retention: RetentionEstimate, gate: Any,
                   costs: dict[str, SideCost] | None = None,
                   retention_vs_control: RetentionEstimate | None = None) -> EvalDecision:
    """Promote only if the lift's CI is above `min_lift`, heldout retention (against the parent, and against the
    control when there is one) >= `retention_min`, and the price is inside the gate's bounds (pure)."""
    gate_summary = GateSummary(enabled=gate.enabled, min_lift=gate.min_lift, retention_min=gate.retention_min,
                               max_token_ratio=gate.max_token_ratio, min_lift_per_1k_tokens=gate.min_lift_per_1k_tokens)
    if lift.tasks == 0:
        return EvalDecision(promote=False, reason="no heldout task was evaluated by both contracts", gate=gate_summary)
    if not gate.enabled:
        ok = lift.lift > 0
        return EvalDecision(promote=ok, reason=("gate disabled: lift " + f"{lift.lift:+.3f}" +
                                                (" > 0" if ok else " is not positive")), gate=gate_summary)
    problems: list[str] = []
    held: list[str] = []
    if not lift.ci.low > gate.min_lift:
        problems.append(f"lift {lift.lift:+.3f} CI95 [{lift.ci.low:.3f}, {lift.ci.high:.3f}] does not lie above "
                        f"min_lift {gate.min_lift}")
    for figure in (retention, retention_vs_control):
        if figure is None:
            continue
        problem, words = _retention_condition(figure, gate)
        (problems if problem else held).append(problem or words)
    problems += price_problems(lift, costs or {}, gate)
    if problems:
        return EvalDecision(promote=False, reason="; ".join(problems), gate=gate_summary)
    priced = price.price_text((costs or {}).get("candidate"), (costs or {}).get("parent"))
    return EvalDecision(
        promote=True,
        reason=(f"lift {lift.lift:+.3f} CI95 [{lift.ci.low:.3f}, {lift.ci.high:.3f}] above {gate.min_lift}, "
                + ", ".join(held) + (f", {priced} within max_token_ratio {gate.max_token_ratio}" if priced else "")),
        gate=gate_summary,
    )


def paired_solved(candidate: dict[str, dict[int, bool]], other: dict[str, dict[int, bool]],
                  tasks: list[str]) -> tuple[dict[str, bool], dict[str, bool], int]:
    """Per task of `tasks`, did any attempt pass, on each side, counting only the attempts (by index) both sides
    have a counted outcome for: equal attempts per task on both sides. Also: the attempts left out (pure)."""
    cand, base, left_out = {}, {}, 0
    for task in tasks:
        mine, theirs = candidate.get(task, {}), other.get(task, {})
        both = set(mine) & set(theirs)
        left_out += len(mine) + len(theirs) - 2 * len(both)
        if both:
            cand[task] = any(mine[i] for i in both)
            base[task] = any(theirs[i] for i in both)
    return cand, base, left_out



@dataclass
class _Solved:
    """Per side, task -> any counted attempt passed; the counted attempts per side; their tokens."""

    by_side: dict[int, dict[str, bool]]
    spent: dict[int, int]
    tokens: int
    served: dict[str, int]  # number format -> counted attempts (from their trajectories)
    completion: dict[int, dict[str, int]] = field(default_factory=dict)  # side -> task -> completion tokens
    prompt: dict[int, dict[str, int]] = field(default_factory=dict)  # side -> task -> prompt tokens
    checks: dict[int, dict[str, float]] = field(default_factory=dict)  # side -> task -> public check seconds
    outcomes: dict[int, dict[str, dict[int, bool]]] = field(default_factory=dict)  # side -> task -> attempt -> passed
    seconds: dict[int, dict[str, float]] = field(default_factory=dict)  # side -> task -> attempt wall seconds
    depth: dict[int, dict[str, int]] = field(default_factory=dict)  # side -> solved task -> submitted candidate's position
    cache: dict[int, SideCache] = field(default_factory=dict)  # side -> what the response cache served it

    @property
    def attempts(self) -> int:
        return sum(self.spent.values())

    def attempts_of(self, side: int) -> dict[str, dict[int, bool]]:
        """task -> attempt index -> passed (without per-attempt outcomes: one attempt per task, as solved)."""
        if side in self.outcomes:
            return self.outcomes[side]
        return {k: {0: passed} for k, passed in self.by_side.get(side, {}).items()}



def submitted_depth(trajectory: Any) -> int | None:
    """The position (1-based, in the order sampled) of the candidate the harness submitted, among the candidates
    its public checks ran on (all of them when none is marked submitted); None when none was checked (pure)."""
    checks = [step.check for step in trajectory.steps if step.check is not None]
    chosen = [check.candidate for check in checks if check.selected]
    return chosen[-1] if chosen else (max(check.candidate for check in checks) if checks else None)


def side_costs(plan: Any, ran: _Solved) -> dict[str, SideCost]:
    """Each side's pass rate and price on the heldout tasks (pure)."""
    costs = {}
    for j in (PARENT, CANDIDATE, CONTROL):
        tasks = [k for k in plan.heldout if k in ran.by_side.get(j, {})]
        if not tasks:
            continue
        tokens, seconds = ran.completion.get(j, {}), ran.seconds.get(j, {})
        prompt, checks = ran.prompt.get(j, {}), ran.checks.get(j, {})
        depths = [d for k, d in ran.depth.get(j, {}).items() if k in tasks]
        costs[SIDES[j]] = SideCost(
            tasks=len(tasks), pass_rate=round(sum(ran.by_side[j][k] for k in tasks) / len(tasks), 4),
            completion_tokens_per_task=round(sum(tokens.get(k, 0) for k in tasks) / len(tasks), 1),
            seconds_per_task=round(sum(seconds.get(k, 0.0) for k in tasks) / len(tasks), 2),
            prompt_tokens_per_task=round(sum(prompt.get(k, 0) for k in tasks) / len(tasks), 1),
            check_seconds_per_task=round(sum(checks.get(k, 0.0) for k in tasks) / len(tasks), 2),
            k_needed=round(sum(depths) / len(depths), 2) if depths else None)
    return costs



def _measure(sides: _Sides, plan: _Plan, ran: _Solved, spec: EvalSpec) -> EvalOutcome:
    """The numbers and the decision, from what each side solved (pure)."""
    from rsi.promotion.decision import GatePolicy, paired_lift

    solved = ran.by_side

    gate = GatePolicy.from_contract(sides.parent.spec, spec.ci_method)

    left_out = 0

    def paired(other: int, tasks: list[str]) -> tuple[dict[str, bool], dict[str, bool]]:
        nonlocal left_out
        cand, base, dropped = paired_solved(ran.attempts_of(CANDIDATE), ran.attempts_of(other), tasks)
        left_out += dropped
        return cand, base

    def lift_against(other: int) -> Any:
        return paired_lift(*paired(other, plan.heldout), spec.ci_method, gate.resamples, gate.seed)

    def spend_lift() -> Any:
        """The cost-matched side spends n attempts a task on purpose: all of them count, not pairs by index."""
        spend, base = solved[COST_MATCHED], solved[PARENT]
        return paired_lift({k: spend[k] for k in plan.heldout if k in spend},
                           {k: base[k] for k in plan.heldout if k in base}, spec.ci_method, gate.resamples, gate.seed)

    lift_estimate = lift_against(PARENT)
    retention = heldout_retention(lift_estimate, "parent")
    in_sample = retention_of(plan.covered, *paired(PARENT, [k for k in plan.covered if k not in plan.heldout]))
    has_control = CONTROL in plan.configs
    versus_control = lift_against(CONTROL) if has_control else None
    retention_vs_control = heldout_retention(versus_control, "control") if versus_control is not None else None
    candidate = sides.candidate
    adapter = next((s.sha256 for s in candidate.spec.specialists if s.name == candidate.spec.routing.specialist), "")
    sides_of_task = [j for j in (PARENT, CANDIDATE, CONTROL) if j in plan.configs]  # best-of-n: its own summary
    transfer = transfer_of(plan.transfer, solved[CANDIDATE], solved[PARENT]) if spec.transfer_runs else None
    costs = side_costs(plan, ran)
    cost_matched = None
    if plan.best_of_n is not None and transfer is not None:
        cost_matched = cost_matched_of(plan.best_of_n, solved[BEST_OF_N], ran.spent.get(BEST_OF_N, 0), transfer,
                                       _sampling_text(plan.configs[BEST_OF_N], plan.best_of_n.overrides),
                                       plan.job_index_of(BEST_OF_N))
    held = plan.heldout_best_of_n
    cost_matched_heldout = None if held is None else heldout_cost_matched_of(
        held, plan.heldout, ran, spend_lift(),
        _sampling_text(plan.configs[COST_MATCHED], held.overrides), plan.job_index_of(COST_MATCHED))
    return EvalOutcome(
        eval_id=plan.run_id, suite=plan.suite,
        candidate=_contract_info(candidate, plan.configs[CANDIDATE]), parent=_contract_info(sides.parent, plan.configs[PARENT]),
        control=_contract_info(sides.control, plan.configs[CONTROL]) if has_control and sides.control else None,
        adapter_id=adapter, dtype=spec.dtype or "serving", seeds={"seed": plan.seed, "attempts_per_task": plan.per_task},
        heldout_tasks=plan.heldout, covered_tasks=plan.covered, transfer_tasks=plan.transfer,
        lift=lift_estimate.summary(),
        # without a separate control, the parent is generation 0 (or no control was asked for)
        lift_vs_control=versus_control.summary() if versus_control is not None else (
            lift_estimate.summary() if spec.control else None),
        retention=retention.summary(),
        retention_vs_control=retention_vs_control.summary() if retention_vs_control is not None else None,
        retention_in_sample=in_sample.summary(), unpaired_attempts=left_out,
        transfer=transfer, cost_matched=cost_matched, cost_matched_heldout=cost_matched_heldout, costs=costs,
        cache={SIDES[j]: ran.cache[j] for j in sorted(ran.cache) if j in SIDES},
        per_task={k: {SIDES[j]: solved[j].get(k, False) for j in sides_of_task if k in plan.task_keys(j)}
                  for k in plan.task_keys(CANDIDATE)},
        decision=decide_adapter(lift_estimate, retention, gate, costs, retention_vs_control),
    )



def _contract_info(loaded: Any, config: Any) -> ContractSide:
    return ContractSide(name=loaded.name, revision=loaded.revision, ref=loaded.ref, content_hash=loaded.content_hash,
                        config_hash=config.config_hash)



def _sampling_text(config: Any, overrides: dict[str, float]) -> str:
    sampling = config.spec.harness.sampling
    text = f"temperature {sampling.temperature}, top_p {sampling.top_p}"
    return f"{text}: the greedy parent, sampled" if overrides else f"{text}: the parent's own"

