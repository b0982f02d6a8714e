"""One decoding step's attention: rsi's two-matmul path against transformers' SDPA path, alternated.

The shape is SmolLM2-135M's at batch 8 (9 query heads on 3 key heads, head size 64), one query a
row, left padding on one row, at two cache lengths, in bfloat16 and float32, on one torch thread.
Each of 7 rounds times both paths back to back (100 calls each); the figure is the median of the
rounds' time ratios, so a load that drifts between rounds cancels out.

    .venv/bin/python bench/attention_kernel.py [--write]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from results import replace_section  # bench/results.py (scripts run from bench/)

SECTION = "## decode attention kernel"
BATCH, HEADS, KV_HEADS, DIM, ROUNDS, CALLS = 8, 9, 3, 64, 7, 100


def mean_us(call: Any) -> float:
    started = time.perf_counter()
    for _ in range(CALLS):
        call()
    return (time.perf_counter() - started) / CALLS * 1e6


def measure() -> list[tuple[int, str, list[float]]]:
    import torch
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    from rsi.models.decode_attention import decode_attention

    torch.set_num_threads(1)
    module = SimpleNamespace(num_key_value_groups=HEADS // KV_HEADS, is_causal=True)
    rows = []
    for columns in (250, 600):
        for dtype in (torch.bfloat16, torch.float32):
            query = torch.randn(BATCH, HEADS, 1, DIM, dtype=dtype)
            key, value = (torch.randn(BATCH, KV_HEADS, columns, DIM, dtype=dtype) for _ in range(2))
            mask = torch.ones(BATCH, 1, 1, columns, dtype=torch.bool)
            mask[0, ..., :40] = False

            def sdpa() -> Any:
                return sdpa_attention_forward(module, query, key, value, mask, scaling=DIM**-0.5)  # noqa: B023

            def ours() -> Any:
                return decode_attention(module, query, key, value, mask, scaling=DIM**-0.5)  # noqa: B023

            sdpa(), ours()
            ratios = [mean_us(ours) / mean_us(sdpa) for _ in range(ROUNDS)]
            rows.append((columns, str(dtype).removeprefix("torch."), ratios))
            print(columns, dtype, f"{statistics.median(ratios):.2f}", flush=True)
    return rows


def render(rows: list[tuple[int, str, list[float]]], load: tuple[float, float], command: str) -> str:
    lines = [
        SECTION, "",
        f"Machine: {os.cpu_count()} cores ({platform.machine()}), Python {platform.python_version()}; "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M UTC}; 1-minute load average {load[0]:.1f} at the start, {load[1]:.1f} at "
        f"the end. Batch {BATCH}, {HEADS} query heads on {KV_HEADS} key heads of size {DIM}, one thread; each round "
        f"times {CALLS} calls of each path back to back; a ratio is rsi's time over SDPA's (below 1: rsi's is faster).",
        "", "| cached columns | dtype | median ratio | rounds |", "| ---: | --- | ---: | --- |",
    ]
    for columns, dtype, ratios in rows:
        each = ", ".join(f"{r:.2f}" for r in ratios)
        lines.append(f"| {columns} | {dtype} | **{statistics.median(ratios):.2f}** | {each} |")
    return "\n".join([*lines, "", f"Reproduce: `{command}`"]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="Update bench/RESULTS.md.")
    args = parser.parse_args()
    start = os.getloadavg()[0]
    rows = measure()
    text = render(rows, (start, os.getloadavg()[0]), "python bench/attention_kernel.py " + " ".join(sys.argv[1:]))
    print(text)
    if args.write:
        replace_section(SECTION, text)


if __name__ == "__main__":
    main()
