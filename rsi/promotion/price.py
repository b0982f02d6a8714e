"""The price of a lift, and the gate's bounds on it (pure: no store, no files).

One definition for `rsi eval` (rsi.evaluation.measure, a generation's evaluation) and `rsi promote`
(rsi.promotion.decision): what a side spends per heldout task, in three currencies,

- **completion tokens**: every completion its attempts asked for (all candidates, repair turns);
- **prompt tokens**: every prompt its attempts sent (repair turns and retrieved exemplars make these grow);
- **check seconds**: the wall time of the public checks its harness ran on candidates (our CPU, not the model's).

The gate's price bounds (`[evaluation.gate]`):

- `max_token_ratio` (default 10): neither the candidate's completion tokens nor its prompt tokens per heldout
  task may exceed this multiple of the parent's. Each kind is bounded on its own: a candidate sampling twelve
  completions from one shared prompt spends 12x the completions and 1x the prompt, and a sum of the two
  would hide the first behind the second;
- `min_lift_per_1k_tokens` (optional): where the candidate spends more prompt + completion tokens per heldout
  task than the parent, the lift's 95% CI **lower end** per extra thousand tokens must reach this. The lower
  end, not the point estimate: a price is paid for the lift the evidence guarantees, not the one it hopes for.

Check seconds are reported beside the tokens and do not gate: the parent often runs no checks at all (a ratio
to zero says nothing), and seconds depend on the machine. A kind the parent's attempts recorded none of (no
trajectory, or an old record) has no ratio: it is shown as unmeasured, never as free.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

TOKEN_KINDS = ("completion", "prompt")


@dataclass(frozen=True)
class AttemptCost:
    """What one attempt spent, as its trajectory records it."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    check_s: float = 0.0


def trajectory_cost(trajectory: Any) -> AttemptCost:
    """An attempt's cost from its trajectory (`rsi.harness.trajectory.Trajectory`): the totals the harness
    wrote (`final_metrics`) and the wall time of every public check recorded on its steps."""
    metrics = trajectory.final_metrics
    checks = sum(step.check.wall_s for step in trajectory.steps if step.check is not None)
    return AttemptCost(prompt_tokens=metrics.prompt_tokens, completion_tokens=metrics.completion_tokens,
                       check_s=round(checks, 4))


class Priced(Protocol):
    """Per heldout task: what a side spent (rsi.evaluation.SideCost and `SidePrice` both are)."""

    @property
    def prompt_tokens_per_task(self) -> float: ...

    @property
    def completion_tokens_per_task(self) -> float: ...

    @property
    def check_seconds_per_task(self) -> float: ...


@dataclass(frozen=True)
class SidePrice:
    """One side's price on the heldout tasks a promotion gates on."""

    tasks: int
    attempts: int
    prompt_tokens_per_task: float
    completion_tokens_per_task: float
    check_seconds_per_task: float

    def summary(self) -> dict[str, float | int]:
        return {"tasks": self.tasks, "attempts": self.attempts, "prompt_tokens_per_task": self.prompt_tokens_per_task,
                "completion_tokens_per_task": self.completion_tokens_per_task,
                "check_seconds_per_task": self.check_seconds_per_task}


def side_price(costs: list[list[AttemptCost]]) -> SidePrice:
    """A side's price from its attempts' costs, grouped per task (pure)."""
    tasks = len(costs)
    flat = [c for per_task in costs for c in per_task]

    def per_task(total: float, digits: int) -> float:
        return round(total / tasks, digits) if tasks else 0.0

    return SidePrice(tasks=tasks, attempts=len(flat),
                     prompt_tokens_per_task=per_task(sum(c.prompt_tokens for c in flat), 1),
                     completion_tokens_per_task=per_task(sum(c.completion_tokens for c in flat), 1),
                     check_seconds_per_task=per_task(sum(c.check_s for c in flat), 2))


def tokens_of(side: Priced, kind: str) -> float:
    return float(getattr(side, f"{kind}_tokens_per_task", 0.0) or 0.0)


def token_ratio(candidate: Priced, parent: Priced, kind: str) -> float | None:
    """Candidate / parent tokens of one kind per task; None where the parent recorded none (unmeasured)."""
    base = tokens_of(parent, kind)
    return tokens_of(candidate, kind) / base if base > 0 else None


def price_problems(lift_low: float, candidate: Priced | None, parent: Priced | None,
                   max_token_ratio: float | None, min_lift_per_1k_tokens: float | None) -> list[str]:
    """Where the candidate's price breaks the gate's bounds (pure; no bound set, or no price measured: none)."""
    if candidate is None or parent is None:
        return []
    problems = []
    for kind in TOKEN_KINDS:
        ratio = token_ratio(candidate, parent, kind)
        if max_token_ratio is not None and ratio is not None and ratio > max_token_ratio:
            problems.append(f"price {ratio:.2f}x the parent's {kind} tokens per heldout task "
                            f"({tokens_of(candidate, kind):.0f} vs {tokens_of(parent, kind):.0f}) is above "
                            f"max_token_ratio {max_token_ratio:g}")
    extra = sum(tokens_of(candidate, k) for k in TOKEN_KINDS) - sum(tokens_of(parent, k) for k in TOKEN_KINDS)
    if min_lift_per_1k_tokens is not None and extra > 0:
        per_1k = lift_low / (extra / 1000)
        if per_1k < min_lift_per_1k_tokens:
            problems.append(f"lift per extra 1k tokens per heldout task {per_1k:+.3f} (the lift's CI95 lower end "
                            f"{lift_low:+.3f} over {extra:.0f} extra prompt and completion tokens) is below "
                            f"min_lift_per_1k_tokens {min_lift_per_1k_tokens:g}")
    return problems


def price_text(candidate: Priced | None, base: Priced | None, against: str = "parent") -> str:
    """The three prices in one phrase, for a first line ('' without both sides):
    'at 9.8x the parent's completion tokens (812 vs 83), 1.2x its prompt tokens (410 vs 342) and 0.31 vs 0.00
    check seconds per heldout task'."""
    if candidate is None or base is None:
        return ""
    parts: list[str] = []
    for kind in TOKEN_KINDS:
        ratio = token_ratio(candidate, base, kind)
        numbers = f"({tokens_of(candidate, kind):.0f} vs {tokens_of(base, kind):.0f})"
        whose = f"the {against}'s" if not parts else "its"
        parts.append(f"{ratio:.1f}x {whose} {kind} tokens {numbers}" if ratio is not None
                     else f"{kind} tokens {numbers[1:-1]} (the {against}'s unmeasured)")
    seconds = (f"{float(getattr(candidate, 'check_seconds_per_task', 0.0) or 0.0):.2f} vs "
               f"{float(getattr(base, 'check_seconds_per_task', 0.0) or 0.0):.2f} check seconds")
    return f"at {parts[0]}, {parts[1]} and {seconds} per heldout task"
