"""One real generation on the shipped suite with the embedded model: coverage, adapter lift and retention.

Everything is real: a fresh workspace from the shipped examples, `run_generation` with the shipped
default contract and portfolio, the embedded SmolLM2-135M answering every attempt (no scripted model),
the real sandbox and verifier, LoRA training with the contract's `[training]` defaults, the paired
evaluation of the candidate (served through its adapter) against its parent. The numbers are written
whatever they are. `--write` replaces the `## real_generation` section of bench/RESULTS.md.

    RSI_TORCH_THREADS=1 .venv/bin/python bench/real_generation.py --limit-tasks 16 --budget-attempts 24 \
        --limit-heldout 10 --workers 4 --write
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from results import replace_section  # bench/results.py (scripts run from bench/)

SECTION = "## real_generation"


CPU_PORTFOLIO = """schema_version = 1
[portfolio]
name = "cpu"
base = "default"
description = "Two configurations sized for a shared 2-core CPU: the contract's REPL, and one text completion."

[[variants]]
name = "repl-greedy"
description = "The contract unchanged."

[[variants]]
name = "text-greedy"
description = "One completion that must be the whole solution.py; greedy."
[variants.overrides]
"harness.substrate" = "text"
"harness.system_prompt_file" = "prompts/text.md"
"harness.max_turns" = 1
"harness.sampling.max_tokens" = 256
"""


CPU_PORTFOLIO_TEXT = """schema_version = 1
[portfolio]
name = "cpu"
base = "default"
description = "Two configurations sized for a shared 2-core CPU: the contract's text completion, and a short REPL."

[[variants]]
name = "text-greedy"
description = "The contract unchanged."

[[variants]]
name = "repl-short"
description = "The stateful REPL, two turns of 192 tokens."
[variants.overrides]
"harness.substrate" = "repl"
"harness.system_prompt_file" = "prompts/repl.md"
"harness.max_turns" = 2
"harness.sampling.max_tokens" = 192
"""


def size_for_cpu(workspace, max_turns: int, max_tokens: int, substrate: str = "repl") -> None:
    """Revise the shipped contract to fewer turns and tokens (as the shipped 4 x 320 tokens times out at
    240 s per attempt on a loaded 2-core CPU), and commit a two-configuration portfolio."""
    import git

    from rsi.contracts.revisions import revise_contract

    sets: dict[str, object] = {}
    if substrate == "text":
        sets.update({"harness.substrate": "text", "harness.system_prompt_file": "prompts/text.md"})
    if max_turns:
        sets["harness.max_turns"] = max_turns
    if max_tokens:
        sets["harness.sampling.max_tokens"] = max_tokens
    revise_contract(workspace, "default", sets, "size the harness for a shared 2-core CPU (bench/real_generation.py)")
    workspace.portfolio_path("cpu").write_text(CPU_PORTFOLIO if substrate == "repl" else CPU_PORTFOLIO_TEXT)
    repo = git.Repo(workspace.root)
    repo.index.add(["portfolios/cpu.toml"])
    repo.index.commit("portfolio cpu: two configurations sized for the CPU")
    repo.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit-tasks", type=int, default=16)
    parser.add_argument("--budget-attempts", type=int, default=24)
    parser.add_argument("--limit-heldout", type=int, default=10)
    parser.add_argument("--limit-covered", type=int, default=None)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--workspace", type=Path, default=None, help="Reuse (resume in) this workspace.")
    parser.add_argument("--max-turns", type=int, default=2, help="Contract harness.max_turns for this CPU (0: as shipped).")
    parser.add_argument("--max-tokens", type=int, default=192, help="Contract max_tokens for this CPU (0: as shipped).")
    parser.add_argument("--substrate", choices=["repl", "text"], default="repl",
                        help="Contract substrate (text: one completion is the solution; with --max-turns 1).")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("RSI_TORCH_THREADS", str(args.threads))
    for var, value in {"GIT_AUTHOR_NAME": "rsi bench", "GIT_AUTHOR_EMAIL": "bench@rsi.local",
                       "GIT_COMMITTER_NAME": "rsi bench", "GIT_COMMITTER_EMAIL": "bench@rsi.local"}.items():
        os.environ.setdefault(var, value)
    os.environ.pop("RSI_DB", None)
    os.environ.pop("RSI_MODEL_OVERRIDE", None)

    from rsi.generation.generation import GenerationSpec, run_generation
    from rsi.workspace import Workspace, init_workspace

    if args.workspace is not None and (args.workspace / "hcp").is_dir():
        workspace = Workspace(args.workspace.resolve())
    else:
        target = args.workspace or Path(tempfile.mkdtemp(prefix="rsi-realgen-")) / "ws"
        workspace = init_workspace(target)
        if args.max_turns or args.max_tokens:
            size_for_cpu(workspace, args.max_turns, args.max_tokens, args.substrate)
    portfolio = "cpu" if workspace.portfolio_path("cpu").is_file() else None
    spec = GenerationSpec(portfolio=portfolio, budget_attempts=args.budget_attempts, limit_tasks=args.limit_tasks,
                          workers=args.workers,
                          threads=args.threads, limit_heldout=args.limit_heldout, limit_covered=args.limit_covered)
    started = time.monotonic()

    def note(line: str) -> None:
        print(f"{time.monotonic() - started:7.1f}s {line}", flush=True)

    state = run_generation(workspace, spec, on_note=note)
    wall = time.monotonic() - started
    summary = state.summary
    out = {name: state.step(name).outputs for name in state.steps}
    timings = {name: ((s.finished - s.started).total_seconds() if s.started and s.finished else None)
               for name, s in state.steps.items()}
    print(json.dumps({"workspace": str(workspace.root), "summary": summary, "timings": timings}, indent=2, default=str))
    if not args.write:
        return
    lift, retention = summary.get("lift") or {}, summary.get("retention") or {}
    train = out["train"]
    ci = lift.get("lift_ci95", [None, None])
    block = (
        f"{SECTION}\n\n"
        "One real generation (`rsi.generation.run_generation`) in a fresh workspace from the shipped examples, "
        f"the default contract revised to the {args.substrate} substrate, {args.max_turns or 'the shipped'} turn(s) of "
        f"{args.max_tokens or 'the shipped'} tokens (the shipped REPL, 4 x 320 tokens, times out at 240 s per attempt on "
        "this loaded CPU) and a two-configuration portfolio (the contract, and the other substrate), the embedded "
        "SmolLM2-135M answering every attempt (no scripted model), "
        "the real sandbox and verifier, LoRA training with the contract's `[training]` defaults, and the paired "
        "evaluation of the candidate (every turn served by its adapter) against its parent. "
        f"Slice: the first {args.limit_tasks} train tasks, {args.budget_attempts} attempts, {args.workers} workers; "
        f"evaluation on the first {args.limit_heldout} heldout tasks and the run's covered train tasks. "
        f"Machine: {platform.node()} ({os.cpu_count()} cores, {platform.platform()}), shared (1-minute load average "
        f"{os.getloadavg()[0]:.1f} at the end); torch threads {args.threads}; date: "
        f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M')} UTC; wall time {wall / 60:.1f} min.\n\n"
        "| quantity | value |\n| --- | --- |\n"
        f"| run coverage (train slice) | {out['run'].get('covered')}/{out['run'].get('tasks')} tasks in "
        f"{out['run'].get('attempts')} attempts |\n"
        f"| harness promotion | {out['promote'].get('status', state.step('promote').status)} "
        f"({(out['promote'].get('reason') or '')[:120]}) |\n"
        f"| dataset | {out['export'].get('examples', 0)} examples "
        f"{('sha256 ' + out['export']['dataset_sha256'][:12]) if out['export'].get('dataset_sha256') else state.step('export').reason} |\n"
        f"| training | {train.get('steps', '-')} steps, loss {train.get('first_loss', float('nan')):.4f} -> "
        f"{train.get('final_loss', float('nan')):.4f}, {train.get('tokens_per_s', 0):.1f} tok/s |\n"
        f"| heldout pass rate candidate / parent | {lift.get('candidate_rate', '-')} / {lift.get('parent_rate', '-')} "
        f"on {lift.get('tasks', '-')} tasks |\n"
        f"| **lift** (95% CI, Newcombe paired) | **{lift.get('lift', '-')}** [{ci[0]}, {ci[1]}] |\n"
        f"| **retention** (covered train tasks still solved) | **{retention.get('retention', '-')}** "
        f"({retention.get('still_solved', '-')}/{retention.get('covered', '-')}; parent re-solved "
        f"{retention.get('parent_resolved', '-')}) |\n"
        f"| adapter decision | {summary.get('adapter')} |\n"
        f"| step wall times (s) | " + ", ".join(f"{k} {v:.0f}" for k, v in timings.items() if v is not None) + " |\n\n"
        f"Reproduce: `RSI_TORCH_THREADS={args.threads} .venv/bin/python bench/real_generation.py --limit-tasks "
        f"{args.limit_tasks} --budget-attempts {args.budget_attempts} --limit-heldout {args.limit_heldout} "
        f"--workers {args.workers} --substrate {args.substrate} --max-turns {args.max_turns} --max-tokens {args.max_tokens} --write`\n\n"
    )
    replace_section(SECTION, block)


if __name__ == "__main__":
    main()
