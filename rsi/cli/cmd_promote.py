"""CLI commands: `rsi promote`, `rsi propose`.

Each parses flags, calls one core function (rsi.promotion.promote.promote_run,
rsi.promotion.successor.propose_portfolio) and renders.
Exit codes: 0 done (or already done), 1 promotion refused by the gate or runtime failure, 2 bad input.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from rsi.cli.render import console, print_json
from rsi.cli.state import state

if TYPE_CHECKING:
    from rsi.promotion.decision import PromotionDecision

def _render_decision(decision: PromotionDecision, targets: list[str]) -> None:
    evidence = decision.evidence
    console.print(f"evidence: {evidence.split} split of run(s) {', '.join(evidence.run_ids) or '-'}; "
                  f"{len(evidence.configs)} configuration(s), coverage {_coverage(evidence, targets)}")
    for config in sorted(evidence.configs, key=lambda c: (-c.pass_ci.low, c.config_name)):
        mark = "*" if decision.candidate and config.config_hash == decision.candidate.config_hash else " "
        console.print(
            f" {mark} {config.config_name:<28} {config.passes:>3}/{config.attempts:<3} pass {config.pass_rate:.3f} "
            f"{config.pass_ci.as_text()}  solved {len(config.tasks_solved):>3}  marginal {len(config.marginal)}",
            markup=False,
        )
    if decision.heldout_halves is not None:
        choosing, gating = decision.heldout_halves
        console.print(f"heldout fallback: {choosing} heldout tasks chose the candidate; the other {gating} gate it "
                      "(split by a seeded hash of the task key)", markup=False)
    if decision.lift is not None:
        lift = decision.lift
        console.print(
            f"heldout: candidate {lift.candidate_rate:.3f} vs parent {lift.parent_rate:.3f} on {lift.tasks} tasks; "
            f"lift {lift.lift:+.3f} CI95 {lift.ci.as_text()} ({lift.method}); retention {lift.retention_text()}",
            markup=False,
        )
    if decision.prices:
        from rsi.promotion.price import price_text

        console.print(f"price: {price_text(decision.prices.get('candidate'), decision.prices.get('parent'))}",
                      markup=False)
    if decision.unequal_attempts:
        console.print(f"equal attempts: {decision.unequal_attempts} counted heldout attempt(s) left out so both sides "
                      "count as many attempts per task", markup=False)
    for route in decision.routing:
        console.print(f"route: {route.tag} -> {route.config_name} ({route.solved}/{route.tasks})", markup=False)


def _coverage(evidence: Any, targets: list[str]) -> str:
    """Coverage as `rsi coverage` and `rsi status` word it (the runs' target tasks of the split), with
    how many of them the evidence attempted."""
    from rsi.run.summary import coverage_text

    covered = len(set(evidence.covered) & set(targets)) if targets else len(evidence.covered)
    total = len(targets) if targets else len(evidence.tasks)
    return f"{coverage_text(covered, total, evidence.split)}, {len(evidence.tasks)} attempted"


def _split_targets(runs: list[str], split: str) -> list[str]:
    from rsi.run.summary import split_targets
    from rsi.store import open_store

    with open_store(state.workspace().db_url) as store:
        return split_targets(store, runs, split)


def promote(
    runs: Annotated[list[str], typer.Argument(help="Run id(s) of one suite, as `rsi status` lists them.")],
    contract: Annotated[str, typer.Option("--contract", help="Contract to promote into (hcp/NAME.toml).")] = "default",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the decision and the diff; write nothing.")] = False,
    ci_method: Annotated[
        str, typer.Option("--ci-method", help="Interval of the heldout lift: newcombe (default) or bootstrap.")
    ] = "newcombe",
    routing: Annotated[bool, typer.Option("--routing/--no-routing", help="Compute the per-tag routing rule.")] = True,
    allow_weak: Annotated[
        bool, typer.Option("--allow-weak-isolation", help="Use evidence from weakly isolated (rlimits-only) attempts; "
                           "the record says so.")
    ] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
) -> None:
    """Promote the best configuration of RUN as the next contract revision, if it passes the gate."""
    from rsi.errors import UserInputError
    from rsi.promotion.promote import promote_run

    if ci_method not in ("newcombe", "bootstrap"):
        raise UserInputError(f"--ci-method {ci_method!r}: use newcombe or bootstrap")
    method: Literal["newcombe", "bootstrap"] = "bootstrap" if ci_method == "bootstrap" else "newcombe"
    outcome = promote_run(state.workspace(), runs, contract, dry_run=dry_run, method=method, routing=routing,
                          allow_weak_isolation=allow_weak)
    targets = _split_targets(runs, outcome.decision.evidence.split)
    if json_output:
        print_json({**outcome.summary(), "coverage": {
            "covered": len(set(outcome.decision.evidence.covered) & set(targets)), "tasks": len(targets),
            "split": outcome.decision.evidence.split, "attempted": len(outcome.decision.evidence.tasks)}})
    else:
        _render_decision(outcome.decision, targets)
        if outcome.status == "promoted":
            console.print(f"[green]promoted[/] {outcome.decision.candidate.config_name if outcome.decision.candidate else ''} "
                          f"as {contract} r{outcome.revision} ({outcome.tag}, commit {str(outcome.commit)[:12]})")
            console.print(outcome.decision.reason, markup=False)
        elif outcome.status == "already":
            console.print(f"already promoted: {contract} r{outcome.revision} ({outcome.tag}, commit {str(outcome.commit)[:12]})")
        elif outcome.status == "dry-run":
            from rsi.cli.cmd_hcp import render_diff

            console.print(f"dry run: would write {contract} r{outcome.parent_revision + 1}: {outcome.decision.reason}",
                          markup=False)
            render_diff(outcome.diff)
            for key, value in outcome.trailers.items():
                console.print(f"  {key}: {value}", markup=False)
        else:
            console.print("[red]not promoted:[/] ", end="")
            console.print(outcome.decision.reason, markup=False)
            if outcome.decision.hint:
                console.print(f"[dim]hint: {outcome.decision.hint}[/]")
        for note in outcome.notes:
            console.print(f"note: {note}", markup=False)
        if outcome.isolation is not None and outcome.isolation.weak:
            console.print(f"note: evidence isolation: {outcome.isolation.as_text()}", markup=False)
    if outcome.status == "refused":
        raise typer.Exit(1)


def propose(
    runs: Annotated[list[str], typer.Argument(help="Run id(s) of one suite.")],
    out: Annotated[Path, typer.Option("--out", help="Successor portfolio file, e.g. portfolios/gen2.toml.")],
    max_new: Annotated[int, typer.Option("--max-new", min=0, help="New variants to add at most.")] = 6,
    reflect: Annotated[
        bool, typer.Option("--reflect", help="Also ask the contract's model for a revised prompt from failures.")
    ] = False,
    contract: Annotated[str, typer.Option("--contract", help="Contract whose model --reflect uses.")] = "default",
    json_output: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
) -> None:
    """Write the successor portfolio of RUN: justified winners kept, dominated dropped, new variants added."""
    from rsi.promotion.successor import propose_portfolio

    workspace = state.workspace()
    model = None
    if reflect:
        from rsi.contracts.refs import resolve_ref
        from rsi.models.factory import make_model

        model = make_model(resolve_ref(workspace, contract).spec, workspace)
    try:
        outcome = propose_portfolio(workspace, runs, out, max_new=max_new, reflect_model=model)
    finally:
        if model is not None:
            model.close()
    proposal = outcome.proposal
    if json_output:
        print_json({
            "path": str(outcome.path), "name": outcome.name, "base": outcome.base,
            "kept": [{"name": v.name, "reason": v.reason, "parents": list(v.parents)} for v in proposal.kept],
            "dropped": [{"name": d.name, "config_hash": d.config_hash, "reason": d.reason} for d in proposal.dropped],
            "new": [{"name": v.name, "operator": v.operator, "reason": v.reason, "parents": list(v.parents),
                     "overrides": v.overrides} for v in proposal.new],
            "notes": list(proposal.notes),
            "configurations": {c.name: c.config_hash for c in outcome.configurations},
        })
        return
    console.print(f"wrote {outcome.path} (base {outcome.base}): {len(proposal.kept)} kept, "
                  f"{len(proposal.dropped)} dropped, {len(proposal.new)} new", markup=False)
    for v in proposal.kept:
        console.print(f"  keep  {v.name}: {v.reason}", markup=False)
    for d in proposal.dropped:
        console.print(f"  drop  {d.name}: {d.reason}", markup=False)
    for v in proposal.new:
        console.print(f"  new   {v.name} <- {', '.join(v.parents)} [{v.operator}]: {v.reason}", markup=False)
    for note in proposal.notes:
        console.print(f"  note  {note}", markup=False)


def register(app: typer.Typer) -> None:
    """Add `rsi promote` and `rsi propose` to the root app."""
    app.command("promote")(promote)
    app.command("propose")(propose)
