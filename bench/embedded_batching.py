"""Benchmark: tokens/s of the embedded backend for 8 concurrent callers vs the same 8 requests in turn.

Both are measured side by side in one process on one loaded model: first the requests one at a time,
then the same requests from 8 threads released together (the continuous batch decodes them in
shared steps). Greedy decoding, so both runs must produce the same
texts; the benchmark reports how many matched. Target: batched >= 3x sequential tokens/s.
`--write` replaces the `## embedded batching` section of bench/RESULTS.md.

    .venv/bin/python bench/embedded_batching.py --write
"""

from __future__ import annotations

import argparse
import os
import platform
import threading
import time
from datetime import UTC, datetime

from results import replace_section  # bench/results.py (scripts run from bench/)

SECTION = "## embedded batching"
PROMPTS = [
    "Explain how a hash table works.",
    "Describe the water cycle in detail.",
    "Write a short story about a robot learning to paint.",
    "Explain recursion to a beginner programmer.",
    "What are the benefits of regular exercise?",
    "Describe how a compiler turns source code into machine code.",
    "Explain the difference between TCP and UDP.",
    "Write a poem about the ocean at night.",
]


def generate_together(model, requests: list) -> tuple[list, float]:
    """Every request from its own thread, released at once (one barrier): the results, in request order, and
    the seconds from release to the last one. Resets `model.stats.largest_batch_rows` first, so it then says
    how many rows the backend batched at most. Shared with bench/gpu_check.py."""
    results: list = [None] * len(requests)
    gate = threading.Barrier(len(requests) + 1)

    def call(i: int) -> None:
        gate.wait()
        results[i] = model.generate(requests[i])

    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(requests))]
    for thread in threads:
        thread.start()
    model.stats.largest_batch_rows = 0
    gate.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    return results, time.perf_counter() - started


def measure(requests: int, max_tokens: int, dtype: str) -> dict[str, float | int | str]:
    from rsi.contracts.schema import BaseModelSpec
    from rsi.models.base import ChatMessage, GenerationRequest
    from rsi.models.embedded.backend import EmbeddedModel
    from rsi.models.embedded.weights import hf_folder

    folder = hf_folder(BaseModelSpec(id="SmolLM2-135M-Instruct", file="SmolLM2-135M-Instruct.Q4_1.gguf"))
    model = EmbeddedModel(folder, name="bench", dtype=dtype, max_batch=requests)
    batch = [
        GenerationRequest(
            messages=[ChatMessage(role="user", content=PROMPTS[i % len(PROMPTS)])], max_tokens=max_tokens
        )
        for i in range(requests)
    ]
    model.generate(batch[0].model_copy(update={"max_tokens": 4}))  # warm-up: first-call allocations

    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    alone = [model.generate(r) for r in batch]
    sequential_s = time.perf_counter() - started
    sequential_tokens = sum(r.completion_tokens for r in alone)

    together, concurrent_s = generate_together(model, batch)
    concurrent_tokens = sum(r.completion_tokens for r in together)
    batches = model.stats.largest_batch_rows
    load_after = os.getloadavg()[0]
    model.close()
    same = sum(a.completions[0].text == b.completions[0].text for a, b in zip(alone, together, strict=True))
    sequential_tps = sequential_tokens / sequential_s
    concurrent_tps = concurrent_tokens / concurrent_s
    return {
        "requests": requests,
        "max_tokens": max_tokens,
        "dtype": f"{model.dtype.value} ({model.dtype.why})",
        "threads": f"{model.threads.value} ({model.threads.why})",
        "sequential_tokens": sequential_tokens,
        "sequential_s": sequential_s,
        "sequential_tps": sequential_tps,
        "concurrent_tokens": concurrent_tokens,
        "concurrent_s": concurrent_s,
        "concurrent_tps": concurrent_tps,
        "speedup": concurrent_tps / sequential_tps,
        "batches": batches,
        "same_texts": same,
        "load": f"{load_before:.1f} -> {load_after:.1f}",
    }


def render(result: dict[str, float | int | str], command: str) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    machine = f"{os.cpu_count()} cores ({platform.machine()}), Python {platform.python_version()}"
    return (
        f"{SECTION}\n\n"
        f"Machine: {machine}; {when}; 1-minute load average during the run: {result['load']} "
        f"(the machine is shared with other jobs, so absolute numbers are noisy; the ratio is the point).\n\n"
        f"{result['requests']} greedy requests of {result['max_tokens']} tokens each (number format {result['dtype']}; torch threads "
        f"{result['threads']}), served one at a time, then from {result['requests']} threads at once through the "
        f"continuous batch. Target: concurrent >= 3x sequential tokens/s.\n\n"
        "| mode | completion tokens | wall s | tokens/s |\n| --- | ---: | ---: | ---: |\n"
        f"| one at a time | {result['sequential_tokens']} | {result['sequential_s']:.2f} | {result['sequential_tps']:.1f} |\n"
        f"| {result['requests']} concurrent (up to {result['batches']} rows per step) | {result['concurrent_tokens']} | "
        f"{result['concurrent_s']:.2f} | {result['concurrent_tps']:.1f} |\n\n"
        f"Speedup: **{result['speedup']:.2f}x**. Same texts batched as alone: {result['same_texts']}/{result['requests']} "
        "(in bfloat16 rounding differs with padding and batch shape, so greedy near-ties can flip; float32 agrees).\n\n"
        f"Reproduce: `{command}`\n\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument(
        "--dtype", default="bfloat16", choices=["bfloat16", "float32"], help="Asked for; on a CPU see rsi.models.embedded.tuning."
    )
    parser.add_argument("--write", action="store_true", help="Update bench/RESULTS.md.")
    args = parser.parse_args()
    result = measure(args.requests, args.max_tokens, args.dtype)
    threads = os.environ.get("RSI_TORCH_THREADS")
    command = (
        f"RSI_TORCH_THREADS={threads} " if threads else ""
    ) + ".venv/bin/python bench/embedded_batching.py"
    if (args.requests, args.max_tokens, args.dtype) != (8, 64, "bfloat16"):
        command += f" --requests {args.requests} --max-tokens {args.max_tokens} --dtype {args.dtype}"
    block = render(result, command + " --write")
    print(block)
    if args.write:
        replace_section(SECTION, block)


if __name__ == "__main__":
    main()
