"""Training throughput of the LoRA recipe on this machine: tokens/s and seconds per optimizer step.

The dataset is built from the shipped pyfuncs suite the way an export looks (system prompt, task
message, one assistant turn that writes the reference solution and submits), written with a manifest
like `rsi trajectories export` writes, and trained with `rsi.training.train.train_adapter` (real peft on
the embedded SmolLM2-135M base, float32 on the CPU, r=8 on q_proj/v_proj) for a fixed number of steps,
once per thread count. `--write` replaces the `## training_throughput` section of bench/RESULTS.md.

    .venv/bin/python bench/training_throughput.py --steps 6 --threads 1 2 --write
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from results import replace_section  # bench/results.py (scripts run from bench/)

SECTION = "## training_throughput"
REPO = Path(__file__).resolve().parent.parent


def build_dataset(folder: Path, examples: int) -> int:
    from rsi.tasks.load import load_suite
    from rsi.workspace import shipped_root

    root = shipped_root()
    system = (root / "hcp" / "prompts" / "repl.md").read_text()
    lines = []
    for task in load_suite(root, "pyfuncs"):
        if task.spec.split != "train":
            continue
        code = (task.solution_dir / task.spec.solution_file).read_text()
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": task.instruction},
            {"role": "assistant", "content": f"```python\nopen({task.spec.solution_file!r}, 'w').write({code!r})\nsubmit()\n```"},
        ]
        lines.append(json.dumps({"messages": messages}, sort_keys=True))
        if len(lines) == examples:
            break
    data = ("\n".join(lines) + "\n").encode()
    (folder / "train.jsonl").write_bytes(data)
    (folder / "manifest.json").write_text(json.dumps({"schema": "rsi-sft-export/1", "dataset": {
        "file": "train.jsonl", "sha256": hashlib.sha256(data).hexdigest(), "examples": len(lines)}, "source": {"runs": []}}))
    return len(lines)


def measure(threads: int, steps: int, batch: int, max_length: int, examples: int) -> dict:
    from rsi.contracts.load import load_contract
    from rsi.contracts.schema import TrainingSpec
    from rsi.models.embedded.weights import hf_folder
    from rsi.training.train import TrainRequest, train_adapter
    from rsi.workspace import shipped_root

    base = hf_folder(load_contract(shipped_root() / "hcp" / "default.toml").spec.base)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        n = build_dataset(folder, examples)
        hyper = TrainingSpec(batch_size=batch, max_length=max_length, epochs=max(1, -(-steps * batch // n)))
        outcome = train_adapter(TrainRequest(base_folder=str(base), dataset_dir=str(folder), out_dir=str(folder / "out"),
                                             hyper=hyper, max_steps=steps, threads=threads, device="cpu"))
    return {"threads": threads, "steps": outcome.steps, "tokens": outcome.tokens, "wall_s": outcome.wall_s,
            "tokens_per_s": outcome.tokens_per_s, "s_per_step": outcome.seconds_per_step,
            "tokens_per_step": outcome.tokens / outcome.steps, "first_loss": outcome.first_loss,
            "final_loss": outcome.final_loss, "examples": n}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--examples", type=int, default=24)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    rows = [measure(t, args.steps, args.batch, args.max_length, args.examples) for t in args.threads]
    for row in rows:
        print(json.dumps(row))
    if not args.write:
        return
    load = os.getloadavg()[0]
    command = (f".venv/bin/python bench/training_throughput.py --steps {args.steps} --batch {args.batch} "
               f"--max-length {args.max_length} --examples {args.examples} --threads {' '.join(map(str, args.threads))} --write")
    table = "".join(
        f"| {r['threads']} | {r['steps']} | {r['tokens_per_step']:.0f} | {r['s_per_step']:.2f} | {r['tokens_per_s']:.1f} | "
        f"{r['first_loss']:.3f} -> {r['final_loss']:.3f} |\n" for r in rows)
    block = (
        f"{SECTION}\n\n"
        f"LoRA SFT (`rsi.training.train`, peft r=8 on q_proj/v_proj, float32, AdamW) of the embedded SmolLM2-135M "
        f"on {rows[0]['examples']} pyfuncs conversations shaped like an export (system prompt, task, one assistant "
        f"turn), batch {args.batch}, max_length {args.max_length}; tokens are non-padding input tokens (the loss is "
        f"on assistant tokens only). Machine: {platform.node()} ({os.cpu_count()} cores, {platform.platform()}), "
        f"1-minute load average {load:.1f} at the end (the machine is shared); date: "
        f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M')} UTC.\n\n"
        "| torch threads | steps | tokens/step | s/step | tokens/s | loss first -> last |\n"
        "| ---: | ---: | ---: | ---: | ---: | --- |\n" + table +
        "\nOn a loaded shared machine one thread beats two (OpenMP threads spin against other processes); "
        "`--threads` / `RSI_TORCH_THREADS` choose.\n\n"
        f"Reproduce: `{command}`\n\n"
    )
    replace_section(SECTION, block)


if __name__ == "__main__":
    main()
