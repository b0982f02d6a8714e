"""One real generation with execution feedback in the search space, measured against generation 0.

Issue 35's benchmark. Every step is real (`rsi.generation.run_generation`, the code behind
`rsi generation`): a fresh workspace from the shipped examples; the shipped contract deployed on the text
substrate (one greedy completion of at most 384 tokens, the default portfolio's `text-greedy`) on a suite;
the shipped **default portfolio**, whose axes now include public checks, greedy-first sampling and repair
turns; the embedded SmolLM2-135M answering every attempt; the real sandbox and hidden verifier.

  run       coverage search of the train split with the default portfolio (`--budget-attempts`)
  promote   the configuration the TRAIN evidence ranks first (Wilson lower bound of its pass rate);
            deferred: its heldout gate is this generation's evaluation (heldout tasks never choose)
  harvest   up to `--harvest-per-task` distinct passing solutions per covered train task
  export    rendered into the deployed contract's conversation
  train     a fresh LoRA (the contract's `[training]` defaults); the candidate contract carries the
            chosen harness beside the adapter
  evaluate  every heldout task, float32 (exact): candidate against its parent, which is generation 0

Costs are read from the evaluation's own attempts: completion tokens per task from each trajectory (every
candidate and repair turn counted), seconds per task from each attempt's wall time.

    nice -n 0 .venv/bin/python bench/feedback_generation.py --suite pyfuncs2 --workspace /tmp/rsi-feedback

The run's record is a result file (bench/results.py), written before the workspace is made (commit, tree,
machine, load, seed, command) and completed with the figures when the generation is done; a dirty tree is
refused unless `--allow-dirty`. Rerunning the same command on the same workspace resumes the generation and
reopens the same result file. `python bench/render.py` renders the section "feedback generation (SUITE)"
from it (`render_result` below); nothing about the run is typed.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import results  # bench/results.py (a benchmark runs as a script: bench/ is on its path)

STEPS = ("run", "promote", "propose", "harvest", "export", "train", "evaluate", "promote_adapter")


def prepare(target: Path, suite: str, max_tokens: int):  # -> Workspace
    import git

    from rsi.contracts.refs import resolve_ref
    from rsi.contracts.revisions import revise_contract
    from rsi.workspace import init_workspace

    workspace = init_workspace(target)
    shipped = resolve_ref(workspace, "default")
    if (shipped.spec.evaluation.suite, shipped.spec.evaluation.dtype) != (suite, "float32"):
        revise_contract(workspace, "default", {"evaluation.suite": suite, "evaluation.dtype": "float32"},
                        f"the shipped contract on {suite} (bench/feedback_generation.py)")
    base = resolve_ref(workspace, "default").revision
    sets: dict[str, object] = {"harness.substrate": "text", "harness.system_prompt_file": "prompts/text.md",
                               "harness.max_turns": 1, "harness.sampling.max_tokens": max_tokens,
                               "evaluation.suite": suite, "evaluation.dtype": "float32"}
    revise_contract(workspace, "default", sets, f"deploy the text substrate on {suite} (bench/feedback_generation.py)")
    # The default portfolio's variants are overrides of the shipped (REPL) contract: pin its base to that
    # contract on the suite, so the search space is the shipped one while the deployed contract (the next
    # revision, generation 0) is the text substrate.
    path = workspace.portfolio_path("default")
    path.write_text(path.read_text().replace('base = "default" ', f'base = "default@r{base}"', 1))
    repo = git.Repo(workspace.root)
    repo.index.add(["portfolios/default.toml"])
    repo.index.commit(f"portfolio default: variants over the shipped contract on the suite (default@r{base})")
    repo.close()
    return workspace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default="pyfuncs2")
    parser.add_argument("--budget-attempts", type=int, default=240)
    parser.add_argument("--harvest-per-task", type=int, default=2)
    parser.add_argument("--harvest-budget", type=int, default=120)
    parser.add_argument("--limit-covered", type=int, default=40)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=384)
    parser.add_argument("--select-tasks", type=int, default=0,
                        help="Paired selection on N train tasks before promotion (rsi generation --select-tasks).")
    parser.add_argument("--select-top", type=int, default=3)
    parser.add_argument("--workspace", type=Path, required=True, help="Created if new; resumed if it exists.")
    parser.add_argument("--out", type=Path, default=None, help="A copy of the figures (default: WORKSPACE/result.json).")
    results.add_arguments(parser)
    args = parser.parse_args()
    # Before any work: the record of what is about to run (the same command reopens it after a kill).
    run = results.start("feedback_generation", seeds=[0], allow_dirty=args.allow_dirty,
                        section=f"feedback generation ({args.suite})", params=vars(args))
    for var, value in {"GIT_AUTHOR_NAME": "rsi bench", "GIT_AUTHOR_EMAIL": "bench@rsi.local",
                       "GIT_COMMITTER_NAME": "rsi bench", "GIT_COMMITTER_EMAIL": "bench@rsi.local"}.items():
        os.environ.setdefault(var, value)
    from rsi.generation.generation import GenerationSpec, run_generation
    from rsi.generation.outputs import EvaluateOutput, PromoteOutput
    from rsi.generation.state import list_generations
    from rsi.workspace import Workspace

    target = args.workspace.resolve()
    workspace = Workspace(target) if (target / "hcp").is_dir() else prepare(target, args.suite, args.max_tokens)
    started = time.monotonic()

    def note(line: str) -> None:
        print(f"{datetime.now(UTC):%H:%M:%S} {time.monotonic() - started:7.0f}s load {os.getloadavg()[0]:4.1f} {line}",
              flush=True)

    states = list_generations(workspace)
    spec = GenerationSpec(portfolio="default", budget_attempts=args.budget_attempts, workers=args.workers,
                          harvest_per_task=args.harvest_per_task, harvest_budget=args.harvest_budget,
                          render="deployed", seed=0, limit_covered=args.limit_covered,
                          select_tasks=args.select_tasks, select_top=args.select_top)
    state = states[-1] if states and states[-1].status == "done" else run_generation(workspace, spec, on_note=note)
    evaluated = state.outputs(EvaluateOutput)
    figures = {
        "suite": args.suite, "generation": state.id, "wall_min": round((time.monotonic() - started) / 60, 1),
        "promote": state.outputs(PromoteOutput).model_dump(mode="json"),
        "evaluate": evaluated.model_dump(mode="json"),
        # the evaluation's own price per side (rsi.evaluation.SideCost): one definition with `rsi eval`
        "sides": {name: cost.model_dump(mode="json") for name, cost in evaluated.costs.items()},
        "steps": {name: [state.step(name).status, (state.step(name).finished - state.step(name).started).total_seconds()
                         if state.step(name).started and state.step(name).finished else None]
                  for name in STEPS},
    }
    figures = json.loads(json.dumps(figures, default=str))  # what the result file will hold, exactly
    results.finish(run, figures)
    out = args.out or workspace.root / "result.json"
    out.write_text(json.dumps(figures, indent=2))
    print(render_result(run.data))
    print(f"result file: {run.path}", flush=True)


def _chosen_on(promote: dict[str, Any], params: dict[str, Any]) -> str:
    if promote.get("selection_run_id"):
        return f"paired selection: {params.get('select_top')} configurations x {params.get('select_tasks')} train tasks"
    return f"coverage-search evidence, {params.get('budget_attempts')} attempts"


def render_result(result: dict[str, Any]) -> str:
    """bench/RESULTS.md's section from one result file of this benchmark (bench/render.py calls it)."""
    f, params = result["figures"], result["params"]
    lift, decision = f["evaluate"]["lift"], f["evaluate"]["decision"]
    table, train = lift["table"], f["evaluate"].get("retention") or {}
    cand, parent = f["sides"]["candidate"], f["sides"]["parent"]
    base_tokens = parent["completion_tokens_per_task"]
    ratio = cand["completion_tokens_per_task"] / base_tokens if base_tokens else float("nan")
    low, high = lift["lift_ci95"]
    solved_by_parent = table["both"] + table["parent_only"]
    train_kept = train.get("kept", train.get("still_solved"))
    row = [
        f"{f['suite']} ({lift['tasks']} heldout)", f"`{result['short_commit']}`",
        f"{f['promote'].get('candidate') or '-'} ({_chosen_on(f['promote'], params)})",
        f"{lift['lift']:+.3f} [{low:+.3f}, {high:+.3f}] ({lift['parent_rate']:.3f} -> {lift['candidate_rate']:.3f}; "
        f"{lift['method']})",
        f"{table['candidate_only']}:{table['parent_only']}",
        f"{table['both']}/{solved_by_parent}" if solved_by_parent else "no tasks",
        f"{train_kept}/{train.get('parent_resolved')}" if train.get("parent_resolved") else "no tasks",
        f"{cand['completion_tokens_per_task']:.1f} vs {parent['completion_tokens_per_task']:.1f} ({ratio:.2f}x)",
        f"{cand['seconds_per_task']:.1f} vs {parent['seconds_per_task']:.1f}",
        "promoted" if decision["promote"] else "rejected", f"{f['wall_min']:.0f} min",
    ]
    steps = ", ".join(f"{name} {seconds:.0f}" for name, (_status, seconds) in f["steps"].items() if seconds is not None)
    return "\n".join([
        "`bench/feedback_generation.py` (its docstring says every step): one real generation on a fresh workspace, "
        "the candidate (chosen harness + new adapter) against generation 0 on every heldout task, float32. "
        f"Generation {f['generation']}.",
        "",
        "| suite | code | promoted harness (chosen on) | heldout lift vs generation 0 (95% CI) | gained:lost | "
        "heldout retention (gen 0's solved tasks kept) | covered-train retention (in-sample) | completion tokens / "
        "heldout task (x gen 0) | s / task | gate | wall |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        "| " + " | ".join(row) + " |",
        "",
        f"Gate: {decision['reason']}",
        "",
        f"Steps (s): {steps}.",
    ])


if __name__ == "__main__":
    main()
