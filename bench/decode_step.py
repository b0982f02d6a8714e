"""The embedded backend's decoding step, each change against what it replaced, side by side.

Two changes of the step, each measured with 8 closed-loop clients on one loaded embedded model (its
measured threads and number format) against the code it replaced, put back by a patch for its row:

- **KV cache**: `rsi/models/embedded/spare_cache.py` writes each step's keys and values into spare columns of
  a buffer; before it, every layer's cache was concatenated anew at every step (a copy of the whole
  cache per token). The copy grows with the context, so it is measured at two shapes of greedy request:
  **short** (the paired-ratios shape: prompts of about 40 tokens, 64 new tokens) and **run-shaped**
  (prompts of about 230 tokens, up to 288 new tokens, near what a run's text configurations send).
- **sampling**: a sampled row finds its nucleus among its 64 most likely tokens and draws one uniform
  on it (`rsi/models/embedded/rows.py`); before, it sorted the whole 49k vocabulary and called
  `torch.multinomial` over it at every step. Measured run-shaped, at the default portfolio's sampling
  (temperature 0.7, top_p 0.95), seeded.

Each pair runs back to back, the order reversed every round.

    .venv/bin/python bench/decode_step.py [--rounds 3] [--write]
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

SECTION = "## decoding step"
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

    import rsi.models.embedded.spare_cache as spare_cache

    original = spare_cache.spare_columns_cache
    spare_cache.spare_columns_cache = lambda layers: DynamicCache()  # type: ignore[assignment]
    return lambda: setattr(spare_cache, "spare_columns_cache", original)


def full_sort() -> Any:
    """Make sampled rows sort the whole vocabulary and call multinomial over it (before 7c2005c); the undo."""
    import torch

    import rsi.models.embedded.rows as rows

    def pick_token(logits: Any, temperature: float, top_p: float, generator: Any) -> int:
        if generator is None:
            return int(torch.argmax(logits))
        probs = torch.softmax(logits.float().cpu() / temperature, dim=-1)
        if top_p < 1.0:
            ordered, order = torch.sort(probs, descending=True)
            keep = torch.cumsum(ordered, dim=-1) - ordered < top_p
            probs = torch.zeros_like(probs).scatter(0, order[keep], ordered[keep])
        return int(torch.multinomial(probs, 1, generator=generator))

    original = rows.pick_token
    rows.pick_token = pick_token
    return lambda: setattr(rows, "pick_token", original)


SAMPLING = (0.7, 0.95)  # the default portfolio's sampled configurations
# comparison name -> (new variant, old variant, the patch that puts the old code back, shape, sampling)
COMPARISONS: dict[str, tuple[str, str, Any, str, tuple[float, float] | None]] = {
    "spare / concatenating, short": ("spare", "concatenating", concatenating, "short", None),
    "spare / concatenating, run-shaped": ("spare", "concatenating", concatenating, "run-shaped", None),
    "nucleus / full sort, run-shaped sampled": ("nucleus", "full sort", full_sort, "run-shaped", SAMPLING),
}


def row(model: Any, variant: str, patch: Any, shape: str, sampling: tuple[float, float] | None,
        per_client: int) -> Figure:
    prompts, max_tokens = SHAPES[shape]
    undo = patch() if patch is not None else (lambda: None)
    try:
        before, failures = _load(), list[str]()
        tokens, wall = closed_loop(model, 8, per_client, max_tokens, None, failures, prompts, sampling)
    finally:
        undo()
    failed = f" ({len(failures)} failed: {failures[0]})" if failures else ""
    return Figure(f"{variant}, {tokens} tokens{failed}", tokens, wall, f"{before:.1f} -> {_load():.1f}")


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from rsi.models.embedded.backend import EmbeddedModel

    model = EmbeddedModel(_folder(), name="bench", dtype="bfloat16", max_batch=8)
    chosen = [name for name in COMPARISONS if any(key in name for key in args.only.split(","))]
    pairs: dict[str, list[tuple[Figure, Figure]]] = {name: [] for name in chosen}
    started = time.perf_counter()
    try:
        for r in range(args.rounds):
            for name in chosen:
                new, old, patch, shape, sampling = COMPARISONS[name]
                order = [(new, None), (old, patch)] if r % 2 == 0 else [(old, patch), (new, None)]
                figures = {v: row(model, v, p, shape, sampling, args.per_client) for v, p in order}
                pairs[name].append((figures[new], figures[old]))
                print(f"round {r + 1} {name}: {figures[new].tps:.1f} / {figures[old].tps:.1f} tokens/s", flush=True)
    finally:
        model.close()
    return {"pairs": pairs, "dtype": model.dtype, "threads": model.threads, "wall_s": time.perf_counter() - started,
            "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "start_load": args.start_load}


def render(result: dict[str, Any], command: str) -> str:
    rows, summary = pair_lines(result["pairs"], lambda name: None)
    return "\n".join([
        SECTION, "",
        f"Machine: {os.cpu_count()} cores ({platform.machine()}), Python {platform.python_version()}; finished "
        f"{result['when']}; load average at start {result['start_load']:.1f}; {result['wall_s']:.0f} s in all. The "
        f"embedded backend chose {result['threads'].value} torch thread(s) ({result['threads'].why}) and "
        f"{result['dtype'].value} ({result['dtype'].why}). 8 closed-loop clients (greedy unless the row says sampled); each pair back to back, "
        "its order reversed every round; a ratio is the first row's tokens/s over the second's.", "",
        *PAIR_TABLE_HEAD, *rows, "", "Ratios:", "", *summary, "", f"Reproduce: `{command}`"]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="concatenating,full sort", help="Comparisons whose name has one of these.")
    parser.add_argument("--per-client", type=int, default=1, help="Requests each of the 8 clients sends per row.")
    parser.add_argument("--write", action="store_true", help="Update bench/RESULTS.md.")
    args = parser.parse_args()
    args.start_load = _load()
    result = measure(args)
    text = render(result, "python bench/decode_step.py " + " ".join(sys.argv[1:]))
    print(text)
    if args.write:
        replace_section(SECTION, text)


if __name__ == "__main__":
    main()
