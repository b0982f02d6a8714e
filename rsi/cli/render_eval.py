"""What `rsi eval` prints (and generations' logs show): what ships, the deployed configuration, beside what
the search reached. Text only: the numbers are rsi.evaluation's records."""

from __future__ import annotations

from rsi.evaluation.looks import look_lines, marked
from rsi.evaluation.records import CostMatchedSummary, EvalOutcome, HeldoutCostMatchedSummary, price_text


def eval_lines(outcome: EvalOutcome) -> list[str]:
    """What `rsi eval` prints: what ships (the deployed configuration) beside what the search reached."""
    lift = outcome.lift
    price = price_text(outcome.costs)
    # The price rides on the first line, in its three currencies: a lift bought with ten times the tokens (or
    # the prompts, or our CPU for its checks) says so where it is read first.
    lines = [f"evaluation {outcome.eval_id}: {outcome.candidate.ref} vs {outcome.parent.ref}{_served_text(outcome)}: "
             f"lift {lift.lift:+.3f}" + (f" {price}" if price else ""),
             f"  heldout: candidate {lift.candidate_rate:.3f} vs parent {lift.parent_rate:.3f} on {lift.tasks} tasks; "
             f"lift {lift.as_text()} ({lift.method})"]
    for name, cost in outcome.costs.items():
        depth = f"; {cost.k_needed:.2f} candidates needed per solved task" if cost.k_needed is not None else ""
        lines.append(f"  {name}: pass rate {cost.pass_rate:.3f}, {cost.completion_tokens_per_task:.0f} completion "
                     f"tokens, {cost.prompt_tokens_per_task:.0f} prompt tokens, {cost.check_seconds_per_task:.2f} "
                     f"check seconds and {cost.seconds_per_task:.1f} s per heldout task ({cost.tasks} tasks){depth}")
    if any(c.share is not None for c in outcome.cache.values()):
        # A side asked exactly before (generation 0, the parent) is read back, not recomputed: say so.
        lines.append("  cache: " + "; ".join(f"{name} {c.as_text()}" for name, c in outcome.cache.items())
                     + f"; {sum(c.tokens_not_spent for c in outcome.cache.values())} tokens not spent")
    if outcome.lift_vs_control is not None:
        versus = outcome.control.ref if outcome.control else outcome.parent.ref
        c = outcome.lift_vs_control
        lines.append(f"  vs generation 0 ({versus}): candidate {c.candidate_rate:.3f} vs {c.parent_rate:.3f}; "
                     f"lift {c.as_text()}")
    lines += retention_lines(outcome)
    if outcome.transfer is not None:
        t = outcome.transfer
        lines.append(f"  transfer: the deployed configuration solves {t.candidate_solved}/{t.portfolio_covered} of the "
                     f"train tasks the portfolio covered ({t.transfer:.3f}; parent {t.parent_transfer:.3f}) - union "
                     f"coverage is what the search reached, transfer is what ships")
    if outcome.cost_matched is not None:
        lines.append(cost_matched_line(outcome.cost_matched))
    if outcome.cost_matched_heldout is not None:
        lines.append(heldout_cost_matched_line(outcome.cost_matched_heldout, outcome))
    lines[1:1] = look_lines(outcome)  # how worn the split is, right under the verdict (rsi/evaluation/looks.py)
    return marked(outcome, lines)


def retention_lines(outcome: EvalOutcome) -> list[str]:
    """The gate's retention (heldout, against the parent and generation 0) and, apart, the in-sample figure."""
    r = outcome.retention
    lines = [f"  retention (heldout, gated): {r.as_text()} - of the {r.parent_resolved} heldout tasks the parent "
             f"solved, the candidate still solves {r.kept}"]
    if outcome.retention_vs_control is not None:
        c = outcome.retention_vs_control
        lines.append(f"  retention vs generation 0 (heldout, gated): {c.as_text()} - of the {c.parent_resolved} "
                     f"heldout tasks generation 0 solved, the candidate still solves {c.kept}")
    if outcome.retention_in_sample is not None:
        i = outcome.retention_in_sample
        lines.append(f"  retention in-sample (covered train tasks, the adapter's training data; not gated): "
                     f"{i.as_text()} - of {i.covered} covered train tasks the parent solved {i.parent_resolved}, the "
                     f"candidate {i.kept} of those and {i.still_solved} in all")
    if outcome.unpaired_attempts:
        lines.append(f"  equal attempts: {outcome.unpaired_attempts} counted attempt(s) left out of the comparisons, "
                     "their other side having no counted outcome for the same task and attempt")
    return lines


def _served_text(outcome: EvalOutcome) -> str:
    """How the sides were served: the format asked for, and a warning where the trajectories say otherwise."""
    if outcome.dtype == "serving":
        return ""
    other = {fmt: n for fmt, n in outcome.served.items() if fmt and fmt != outcome.dtype}
    if not other:
        return f" (served in {outcome.dtype})"
    found = ", ".join(f"{n} attempts in {fmt}" for fmt, n in sorted(other.items()))
    return f" (asked for {outcome.dtype}, but {found}: is RSI_DTYPE set?)"


def cost_matched_line(c: CostMatchedSummary) -> str:
    """One line: the portfolio's union coverage, best-of-n of the deployed (parent) configuration on the same
    tasks with about the same attempts, and what ships (each configuration's own decoding) on the covered tasks."""
    return (f"  cost-matched: union coverage {c.union_covered}/{c.tasks} train tasks with {c.search_attempts} attempts "
            f"(the portfolio) vs best-of-{c.per_task} of the deployed configuration {c.solved}/{c.tasks} with "
            f"{c.attempts} attempts ({c.sampling}) vs what ships on the {c.transfer_tasks} covered tasks: parent "
            f"{c.parent_solved}/{c.transfer_tasks}, candidate {c.candidate_solved}/{c.transfer_tasks}")



def heldout_cost_matched_line(h: HeldoutCostMatchedSummary, outcome: EvalOutcome) -> str:
    """One line: the parent spending about the candidate's tokens per heldout task as best-of-n, beside the lift."""
    return (f"  cost-matched on heldout: the parent as best-of-{h.per_task} ({h.sampling}) {h.pass_rate:.3f} on "
            f"{h.tasks} tasks at {h.completion_tokens_per_task:.0f} completion tokens/task; lift {h.lift.as_text()} "
            f"vs the candidate's {outcome.lift.lift:+.3f} ({h.basis})")
