"""CLI commands: `rsi router fit` (a learned router from train evidence; rsi/trajectories/router_fit.py).

Parses flags, calls the core (fit_contract, apply_router) and renders. Exit codes: 0 written or reused;
2 bad input (unknown contract or run, no evidence: one located line).
"""

from __future__ import annotations

from typing import Annotated

import typer

from rsi.cli.render import console, print_json
from rsi.cli.state import state

router_app = typer.Typer(help="Learned routers: which specialist acts on a turn, fitted on train evidence.",
                         no_args_is_help=True)


@router_app.command("fit")
def fit_command(
    contract: Annotated[str, typer.Option("--contract", help="The contract whose specialists the router picks from.")] = "default",
    runs: Annotated[list[str] | None, typer.Option("--runs", help="Runs whose train attempts are the evidence "
                                                   "(default: every run of the contract's suite).")] = None,
    apply: Annotated[bool, typer.Option("--apply", help="Write [routing] policy = \"learned\" with the router and "
                                        "its sha256 into the contract file.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
) -> None:
    """Fit a per-specialist naive-Bayes router on train pass records and write hcp/routers/<contract>-r<N>.json
    (an identical refit reuses the latest revision); print the evidence and the router's accuracy."""
    from rsi.adapters.registry import code_version
    from rsi.trajectories.router_fit import apply_router, fit_contract

    workspace = state.workspace()
    outcome = fit_contract(workspace, contract, runs or [], code_version().git_sha)
    if apply:
        apply_router(workspace.contract_path(contract), outcome)
    acc = outcome.accuracy
    if json_output:
        print_json({"router": str(outcome.path), "sha256": outcome.sha256, "revision": outcome.record.revision,
                    "reused": outcome.reused, "applied": apply, "evidence": outcome.record.evidence.model_dump(),
                    "specialists": [{"specialist": s.specialist, "attempts": s.attempts, "passes": s.passes}
                                    for s in outcome.record.specialists],
                    "accuracy": acc.__dict__})
        return
    verb = "reused" if outcome.reused else "wrote"
    console.print(f"{verb} {outcome.path} (r{outcome.record.revision}, sha256 {outcome.sha256[:12]}) from "
                  f"{outcome.record.evidence.attempts} train attempts on {len(outcome.record.evidence.tasks)} tasks "
                  f"of {len(outcome.record.evidence.runs)} run(s)", markup=False)
    for stats in outcome.record.specialists:
        rate = f"{stats.passes / stats.attempts:.2f}" if stats.attempts else "-"
        console.print(f"  {stats.specialist or 'base':<16} {stats.attempts:>5} attempts  train pass rate {rate}",
                      markup=False)
    console.print(f"picks a passing specialist on {acc.in_sample}/{acc.tasks} tasks in sample, {acc.leave_one_out}/"
                  f"{acc.tasks} leaving each task out (oracle {acc.oracle}/{acc.tasks})", markup=False)
    if apply:
        console.print(f"applied: {workspace.contract_path(contract)} [routing] policy = \"learned\"", markup=False)


def register(app: typer.Typer) -> None:
    app.add_typer(router_app, name="router")
