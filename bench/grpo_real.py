"""One real generation with GRPO as its training step: the embedded SmolLM2-135M on the pyfuncs train split.

Everything is real: a fresh workspace from the shipped examples, the default contract revised to the
text substrate (one completion of `--max-tokens`, as bench/real_generation.py sizes it for this CPU) and
to `[training] method = "grpo"`, `run_generation(train_method="grpo")` = `rsi generation
--train-method grpo`: a run of the contract on the train split (its covered tasks are what retention is
measured on), then GRPO (rollouts of train tasks under the candidate's harness, rewarded by the hidden
verifier in the sandbox, the LoRA policy served by the embedded backend), then the paired evaluation of
the candidate against its parent on heldout tasks (lift with its CI) and the covered train tasks
(retention). The numbers are written whatever they are.

    RSI_TORCH_THREADS=1 nice -n 10 .venv/bin/python bench/grpo_real.py --steps 16 --json-out /tmp/grpo.json
    .venv/bin/python bench/grpo_real.py --write-from /tmp/grpo.json      # the ## grpo_real section
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
from typing import Any

SECTION = "## grpo_real"
SOLO = 'schema_version = 1\n[portfolio]\nname = "solo"\nbase = "default"\n[[variants]]\nname = "solo"\n'


def prepare(workspace: Any, args: argparse.Namespace) -> None:
    import git

    from rsi.contracts.revisions import revise_contract

    sets: dict[str, object] = {
        "harness.substrate": "text", "harness.system_prompt_file": "prompts/text.md", "harness.max_turns": 1,
        "harness.sampling.max_tokens": args.max_tokens, "training.method": "grpo", "training.grpo.steps": args.steps,
        "training.grpo.group_size": args.group_size, "training.grpo.prompts_per_step": args.prompts_per_step,
        "training.grpo.temperature": args.temperature, "training.grpo.kl_weight": args.kl_weight,
        "training.learning_rate": args.learning_rate, "harness.timeouts.model_s": args.model_s,
        "harness.timeouts.agent_s": args.agent_s,
    }
    revise_contract(workspace, "default", sets, "text substrate sized for the CPU; GRPO training (bench/grpo_real.py)")
    workspace.portfolio_path("solo").write_text(SOLO)
    repo = git.Repo(workspace.root)
    repo.index.add(["portfolios/solo.toml"])
    repo.index.commit("portfolio solo: the contract alone")
    repo.close()


def run(args: argparse.Namespace) -> dict[str, Any]:
    from rsi.adapters.registry import find_adapter
    from rsi.generation.generation import GenerationSpec, run_generation
    from rsi.workspace import init_workspace

    workspace = init_workspace(Path(tempfile.mkdtemp(prefix="rsi-grpo-")) / "ws")
    prepare(workspace, args)
    spec = GenerationSpec(portfolio="solo", budget_attempts=args.run_attempts, limit_tasks=args.run_attempts,
                          workers=args.workers, threads=args.threads, limit_heldout=args.limit_heldout,
                          train_method="grpo")
    started = time.monotonic()

    def note(line: str) -> None:
        print(f"{time.monotonic() - started:7.1f}s load {os.getloadavg()[0]:.1f} {line}", flush=True)

    state = run_generation(workspace, spec, on_note=note)
    out = {name: state.step(name).outputs for name in state.steps}
    timings = {name: ((s.finished - s.started).total_seconds() if s.started and s.finished else None)
               for name, s in state.steps.items()}
    adapter = out["train"].get("adapter_id")
    metrics = find_adapter(workspace, adapter).lineage.metrics if adapter else {}
    return {"workspace": str(workspace.root), "args": vars(args), "summary": state.summary, "outputs": out,
            "timings": timings, "metrics": metrics, "wall_s": time.monotonic() - started,
            "load_end": os.getloadavg()[0], "machine": f"{platform.node()} ({os.cpu_count()} cores)",
            "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M")}


def section(data: dict[str, Any]) -> str:
    a, m, out, s = data["args"], data["metrics"], data["outputs"], data["summary"]
    lift, retention = s.get("lift") or {}, s.get("retention") or {}
    ci = lift.get("lift_ci95", [None, None])
    rows = "\n".join(
        f"| {r['step']} | {', '.join(t.split('/')[-1] for t in r['tasks'])} | "
        f"{' / '.join(' '.join(f'{x:.2f}' for x in g) for g in r['rewards'])} | {r['mean_reward']:.3f} | "
        f"{r['passed']}/{r['rollouts']} | {r['groups_trained']} | {r['loss']:+.4f} | {r['kl']:.5f} | "
        f"{r['sample_s']:.0f} | {r['train_s']:.0f} |" for r in m.get("records", []))
    timings = ", ".join(f"{k} {v:.0f}" for k, v in data["timings"].items() if v is not None)
    return (
        f"{SECTION}\n\n"
        "One real generation with GRPO as its training step (`rsi generation --train-method grpo`, "
        "bench/grpo_real.py): a fresh workspace from the shipped examples, the default contract on the text "
        f"substrate (1 completion of {a['max_tokens']} tokens; model_s {a['model_s']} s and agent_s {a['agent_s']} s, as "
        "a batch of 8 completions of 256 tokens took over the shipped 120 s at load 14), a run of it on {a['run_attempts']} train tasks (the "
        f"covered tasks retention is measured on), then GRPO: {a['steps']} steps x {a['prompts_per_step']} train tasks "
        f"x {a['group_size']} rollouts at temperature {a['temperature']}, reward = share of hidden cases passed, "
        f"LoRA r=8 q/v, lr {a['learning_rate']}, KL weight {a['kl_weight']}, exact replay, the policy served by the "
        "embedded backend (bf16) and trained in float32 on the CPU with 1 torch thread; then the paired evaluation "
        f"(greedy, as deployed) on the first {a['limit_heldout']} heldout tasks and the run's covered train tasks. "
        f"Machine: {data['machine']}, shared with other jobs (1-minute load average {data['load_end']:.1f} at the "
        f"end); date {data['date']} UTC; wall time {data['wall_s'] / 60:.1f} min.\n\n"
        "| step | tasks | rewards per group | mean reward | passed | groups trained | loss | KL | sample s | train s |\n"
        "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
        f"{rows}\n\n"
        "| quantity | value |\n| --- | --- |\n"
        f"| run coverage (train) | {out['run'].get('covered')}/{out['run'].get('tasks')} in "
        f"{out['run'].get('attempts')} attempts |\n"
        f"| GRPO | {m.get('steps')} steps, {m.get('rollouts')} rollouts, {m.get('wall_s', 0) / 60:.1f} min "
        f"({m.get('seconds_per_step', 0):.0f} s/step), {m.get('trained_tokens')} trained tokens |\n"
        f"| heldout pass rate candidate / parent | {lift.get('candidate_rate', '-')} / {lift.get('parent_rate', '-')} "
        f"on {lift.get('tasks', '-')} tasks |\n"
        f"| **lift** (95% CI, Newcombe paired) | **{lift.get('lift', '-')}** [{ci[0]}, {ci[1]}] |\n"
        f"| **retention** | **{retention.get('retention', '-')}** ({retention.get('still_solved', '-')}/"
        f"{retention.get('covered', '-')}) |\n"
        f"| adapter decision | {s.get('adapter')} |\n"
        f"| step wall times (s) | {timings} |\n\n"
        f"Reproduce: `RSI_TORCH_THREADS=1 nice -n 10 .venv/bin/python bench/grpo_real.py --steps {a['steps']} "
        f"--group-size {a['group_size']} --prompts-per-step {a['prompts_per_step']} --run-attempts {a['run_attempts']} "
        f"--limit-heldout {a['limit_heldout']} --model-s {a['model_s']} --agent-s {a['agent_s']} --json-out grpo.json` then "
        "`.venv/bin/python bench/grpo_real.py --write-from grpo.json`\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--prompts-per-step", type=int, default=2)
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--kl-weight", type=float, default=0.04)
    parser.add_argument("--learning-rate", type=float, default=5e-4)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--model-s", type=int, default=600,
                        help="harness.timeouts.model_s: a batch of 8 x 256 tokens passes 120 s at load 14 on 2 cores")
    parser.add_argument("--agent-s", type=int, default=900, help="harness.timeouts.agent_s")
    parser.add_argument("--run-attempts", type=int, default=61, help="Train tasks (one attempt each) in the run.")
    parser.add_argument("--limit-heldout", type=int, default=22)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json-out", type=Path, default=None)
    parser.add_argument("--write-from", type=Path, default=None, help="Write the RESULTS section from this JSON.")
    args = parser.parse_args()
    if args.write_from is not None:
        from results import replace_section  # bench/results.py (scripts run from bench/)

        replace_section(SECTION, section(json.loads(args.write_from.read_text())))
        return
    os.environ.setdefault("RSI_TORCH_THREADS", str(args.threads))
    for var, value in {"GIT_AUTHOR_NAME": "rsi bench", "GIT_AUTHOR_EMAIL": "bench@rsi.local",
                       "GIT_COMMITTER_NAME": "rsi bench", "GIT_COMMITTER_EMAIL": "bench@rsi.local"}.items():
        os.environ.setdefault(var, value)
    for var in ("RSI_DB", "RSI_MODEL_OVERRIDE", "RSI_GRPO_ROLLOUT_OVERRIDE"):
        os.environ.pop(var, None)
    data = run(args)
    text = json.dumps(data, indent=2, default=str)
    print(text)
    if args.json_out is not None:
        args.json_out.write_text(text)


if __name__ == "__main__":
    main()
