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
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path


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
    parser.add_argument("--out", type=Path, default=None, help="JSON results (default: WORKSPACE/result.json).")
    args = parser.parse_args()
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
    code = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          cwd=Path(__file__).parent).stdout.strip()
    result = {
        "date": datetime.now(UTC).isoformat(timespec="minutes"), "code": code, "machine": platform.node(),
        "cpus": os.cpu_count(), "suite": args.suite, "args": {k: str(v) for k, v in vars(args).items()},
        "generation": state.id, "wall_min": round(time.monotonic() - started, 1) / 60,
        "promote": state.outputs(PromoteOutput).model_dump(mode="json"),
        "evaluate": evaluated.model_dump(mode="json"),
        # the evaluation's own price per side (rsi.evaluation.SideCost): one definition with `rsi eval`
        "sides": {name: cost.model_dump(mode="json") for name, cost in evaluated.costs.items()},
        "steps": {name: [state.step(name).status, (state.step(name).finished - state.step(name).started).total_seconds()
                         if state.step(name).started and state.step(name).finished else None]
                  for name in ("run", "promote", "propose", "harvest", "export", "train", "evaluate", "promote_adapter")},
    }
    out = args.out or workspace.root / "result.json"
    out.write_text(json.dumps(result, indent=2, default=str))
    print(json.dumps(result, indent=2, default=str))


if __name__ == "__main__":
    main()
