"""The embedded backend's KV cache: spare columns against Hugging Face's concatenation, side by side.

`rsi/models/spare_cache.py` writes each decoding step's keys and values into spare columns of a
buffer; before it, every layer's cache was concatenated anew at every step (a copy of the whole cache
per token). The copy grows with the context, so this measures two shapes of request, each with 8
closed-loop clients on one loaded embedded model (its measured threads and number format):

- **short**: the paired-ratios shape (prompts of about 40 tokens, 64 new tokens);
- **run-shaped**: prompts of about 230 tokens and up to 288 new tokens, near what a run's text
  configurations send (session 7: about 220-token prompts, 290-token completions).

Each pair runs back to back, the order reversed every round; the `concatenating` variant is the same
backend with its prefill given a plain `DynamicCache` (what the model made before spare columns).

    .venv/bin/python bench/kv_cache.py [--rounds 3] [--write]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from datetime import UTC, datetime
from typing import Any

from paired_ratios import PAIR_TABLE_HEAD, pair_lines
from results import replace_section  # bench/results.py (scripts run from bench/)
from run_throughput import PROMPTS, Figure, _folder, _load, closed_loop

SECTION = "## kv cache"
# A run's text configuration sends its task framing before the task; this stands in for it (about 190 tokens).
PREAMBLE = (
    "You are a careful Python programmer. You will be given a task. Read it completely before you answer. "
    "Write one complete solution in a single fenced code block, with every import it needs at the top. "
    "Do not print anything, do not read input, and do not write files: the solution is imported and its "
    "functions are called by hidden tests that check the returned values exactly, including edge cases such as "
    "empty inputs, negative numbers, repeated elements and very large values. Prefer clear code over clever code, "
    "name variables after what they hold, and keep helper functions small. If the task is ambiguous, choose the "
    "most common reading and say in one comment which one you chose. After the code block, explain in a few "
    "sentences why the solution is correct and what its running time is, then list the edge cases you considered "
    "and how the code handles each of them.\n\nTask: "
)
SHAPES = {"short": ([*PROMPTS], 64), "run-shaped": ([PREAMBLE + p for p in PROMPTS], 288)}


def concatenating() -> Any:
    """Make the backend's prefill use Hugging Face's concatenating cache; returns the undo."""
    from transformers.cache_utils import DynamicCache

    import rsi.models.spare_cache as spare_cache

    original = spare_cache.spare_columns_cache
    spare_cache.spare_columns_cache = lambda layers: DynamicCache()  # type: ignore[assignment]

    def undo() -> None:
        spare_cache.spare_columns_cache = original

    return undo


def row(model: Any, variant: str, shape: str, per_client: int) -> Figure:
    prompts, max_tokens = SHAPES[shape]
    undo = concatenating() if variant == "concatenating" else (lambda: None)
    try:
        before, failures = _load(), list[str]()
        tokens, wall = closed_loop(model, 8, per_client, max_tokens, None, failures, prompts)
    finally:
        undo()
    failed = f" ({len(failures)} failed: {failures[0]})" if failures else ""
    return Figure(f"{variant}, {tokens} tokens{failed}", tokens, wall, f"{before:.1f} -> {_load():.1f}")


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from rsi.models.embedded import EmbeddedModel

    model = EmbeddedModel(_folder(), name="bench", dtype="bfloat16", max_batch=8)
    pairs: dict[str, list[tuple[Figure, Figure]]] = {shape: [] for shape in args.shapes.split(",")}
    started = time.perf_counter()
    try:
        for r in range(args.rounds):
            order = ["spare", "concatenating"] if r % 2 == 0 else ["concatenating", "spare"]
            for shape in pairs:
                figures = {variant: row(model, variant, shape, args.per_client) for variant in order}
                pairs[shape].append((figures["spare"], figures["concatenating"]))
                print(f"round {r + 1} {shape}: spare {figures['spare'].tps:.1f}, concatenating "
                      f"{figures['concatenating'].tps:.1f} tokens/s", flush=True)
    finally:
        model.close()
    return {"pairs": pairs, "dtype": model.dtype, "threads": model.threads, "wall_s": time.perf_counter() - started,
            "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "start_load": args.start_load}


def render(result: dict[str, Any], command: str) -> str:
    rows, summary = pair_lines({f"spare / concatenating, {shape}": measured for shape, measured in result["pairs"].items()},
                               lambda name: None)
    return "\n".join([
        SECTION, "",
        f"Machine: {os.cpu_count()} cores ({platform.machine()}), Python {platform.python_version()}; finished "
        f"{result['when']}; load average at start {result['start_load']:.1f}; {result['wall_s']:.0f} s in all. The "
        f"embedded backend chose {result['threads'].value} torch thread(s) ({result['threads'].why}) and "
        f"{result['dtype'].value} ({result['dtype'].why}). 8 closed-loop clients, greedy; each pair back to back, "
        "its order reversed every round; a ratio is the first row's tokens/s over the second's.", "",
        *PAIR_TABLE_HEAD, *rows, "", "Ratios:", "", *summary, "", f"Reproduce: `{command}`"]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--shapes", default="short,run-shaped")
    parser.add_argument("--per-client", type=int, default=1, help="Requests each of the 8 clients sends per row.")
    parser.add_argument("--write", action="store_true", help="Update bench/RESULTS.md.")
    args = parser.parse_args()
    args.start_load = _load()
    result = measure(args)
    text = render(result, "python bench/kv_cache.py " + " ".join(sys.argv[1:]))
    print(text)
    if args.write:
        replace_section(SECTION, text)


if __name__ == "__main__":
    main()
