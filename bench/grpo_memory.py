"""Peak training memory of one GRPO group against group size and response length: batched vs replay.

Each cell runs in a fresh subprocess: load the base with a fresh LoRA (rsi.training.train.load_lora_model),
build one group (a random prompt of --prompt tokens, G random responses of L tokens, advantages +-1),
reset the process's peak-RSS counter (`echo 5 > /proc/self/clear_refs`), note the RSS, run the real
`rsi.training.grpo_loss.backward_group` (reference pass with the LoRA disabled, policy pass, backward)
and read the peak (VmHWM). The cell's number is peak - RSS before the pass: the memory the pass itself
needed (activations, logits, autograd graph, gradients), with the weights already resident. torch has
no allocator statistics for the CPU, and tracemalloc does not see torch's allocations.

Modes: `batched` = the whole group in one padded forward/backward; `replay` = response-only replay (one
response's graph alive at a time, prompt state detached); `exact` = replay plus the prompt's own graph,
so gradients are exact. `--device cuda` measures torch.cuda.max_memory_allocated instead.

    nice -n 10 .venv/bin/python bench/grpo_memory.py --groups 2 4 8 16 --lengths 64 256 --prompt 128 --write
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

SECTION = "## grpo_memory"
MODES = ("batched", "replay", "exact")


def _rss_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def cell(group: int, length: int, prompt: int, mode: str, device: str, base: str) -> dict[str, float]:
    """One measurement, in this (fresh) process."""
    import torch

    from rsi.contracts.schema import TrainingSpec
    from rsi.training.grpo_loss import TrainGroup, backward_group
    from rsi.training.train import load_lora_model

    torch.set_num_threads(1)
    _, model = load_lora_model(base, TrainingSpec(), device, torch.float32 if device == "cpu" else torch.bfloat16)
    vocab = model.get_base_model().config.vocab_size
    g = torch.Generator().manual_seed(0)
    train = TrainGroup(prompt_ids=torch.randint(0, vocab, (prompt,), generator=g).tolist(),
                       responses=[torch.randint(0, vocab, (length,), generator=g).tolist() for _ in range(group)],
                       masks=[[True] * length for _ in range(group)],
                       advantages=[1.0 if i % 2 else -1.0 for i in range(group)])
    with torch.no_grad():  # page the (memory-mapped) weights in, so the pass measures only itself
        model(input_ids=torch.tensor([train.prompt_ids[:4]], device=device))
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
    else:
        Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
        before = _rss_kb("VmRSS") * 1024
    started = time.monotonic()
    backward_group(model, train, clip=0.2, kl_weight=0.04, scale=1.0 / group, replay=mode != "batched",
                   exact=mode == "exact")
    if device == "cuda":
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
    else:
        peak = _rss_kb("VmHWM") * 1024
    return {"peak_mb": (peak - before) / 2**20, "seconds": time.monotonic() - started}


def measure(group: int, length: int, prompt: int, mode: str, device: str, base: str) -> dict[str, float]:
    """One cell in a fresh subprocess (peak RSS is per process and never goes down)."""
    code = (f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import grpo_memory as b; "
            f"print(json.dumps(b.cell({group}, {length}, {prompt}, {mode!r}, {device!r}, {base!r})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=3600,
                          env={**os.environ, "TOKENIZERS_PARALLELISM": "false"})
    if done.returncode != 0:
        raise RuntimeError(f"cell G={group} L={length} {mode} failed: {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def base_folder() -> str:
    from rsi.contracts.load import load_contract
    from rsi.models.embedded.weights import hf_folder
    from rsi.workspace import shipped_root

    return str(hf_folder(load_contract(shipped_root() / "hcp" / "default.toml").spec.base))


def table(results: dict[tuple[int, int, str], dict[str, float]], groups: list[int], lengths: list[int]) -> str:
    head = "| response tokens | group size | " + " | ".join(f"{m} MB" for m in MODES) + " | " + \
        " | ".join(f"{m} s" for m in MODES) + " |\n| ---: | ---: |" + " ---: |" * (2 * len(MODES)) + "\n"
    rows = []
    for length in lengths:
        for group in groups:
            r = [results.get((group, length, m)) for m in MODES]
            if not any(r):
                continue
            rows.append(f"| {length} | {group} | " + " | ".join(f"{x['peak_mb']:.0f}" if x else "-" for x in r)
                        + " | " + " | ".join(f"{x['seconds']:.1f}" if x else "-" for x in r) + " |")
    return head + "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, nargs="+", default=[2, 4, 8, 16])
    parser.add_argument("--lengths", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--prompt", type=int, default=128)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json-out", type=Path, default=None)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--write-from", type=Path, default=None,
                        help="Write the section from a --json-out file of an earlier run (with --load).")
    parser.add_argument("--load", type=float, default=None, help="With --write-from: the load average measured.")
    args = parser.parse_args()
    results: dict[tuple[int, int, str], dict[str, float]] = {}
    load = args.load if args.load is not None else os.getloadavg()[0]
    if args.write_from is not None:
        for key, value in json.loads(args.write_from.read_text()).items():
            g, n, m = key.split(",")
            results[(int(g), int(n), m)] = value
        args.groups = sorted({g for g, _, _ in results})
        args.lengths = sorted({n for _, n, _ in results})
    else:
        base = base_folder()
        for length in args.lengths:
            for group in args.groups:
                for mode in MODES:
                    results[(group, length, mode)] = measure(group, length, args.prompt, mode, args.device, base)
                    print(f"L={length} G={group} {mode}: {results[(group, length, mode)]}", flush=True)
    text = table(results, args.groups, args.lengths)
    print(text)
    if args.json_out is not None:
        args.json_out.write_text(json.dumps({f"{g},{n},{m}": v for (g, n, m), v in results.items()}, indent=1))
    if not args.write and args.write_from is None:
        return
    from results import replace_section  # bench/results.py (scripts run from bench/)

    unit = "torch.cuda.max_memory_allocated" if args.device == "cuda" else "peak RSS (VmHWM) above the RSS"
    block = (
        f"{SECTION}\n\n"
        "Memory one GRPO group's training pass needs (`rsi.training.grpo_loss.backward_group`: reference pass "
        "with the LoRA disabled, policy pass, backward; KL weight 0.04) on the embedded SmolLM2-135M with a "
        f"fresh LoRA r=8 on q/v, float32, {args.device}; a random prompt of {args.prompt} tokens and G random "
        f"responses of L tokens; {unit} before the pass, each cell in a fresh process. `batched`: the group in "
        "one padded forward; `replay`: response-only replay (prompt state detached); `exact`: replay plus the "
        "prompt's graph (exact gradients). Seconds are wall time of the pass on a shared machine (noisy). "
        f"Machine: {platform.node()} ({os.cpu_count()} cores), shared; 1-minute load average about {load:.0f} while it "
        f"ran; date {datetime.now(UTC).strftime('%Y-%m-%d %H:%M')} UTC.\n\n"
        f"{text}\n\n"
        f"Reproduce: `nice -n 10 .venv/bin/python bench/grpo_memory.py --groups {' '.join(map(str, args.groups))} "
        f"--lengths {' '.join(map(str, args.lengths))} --prompt {args.prompt} --device {args.device} --write`\n"
    )
    replace_section(SECTION, block)


if __name__ == "__main__":
    main()
