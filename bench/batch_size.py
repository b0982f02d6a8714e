"""Tokens per second of the embedded backend at several `max_batch` values, side by side.

One backend per value, each with as many closed-loop clients as its `max_batch` (greedy, `--max-tokens` a
request), measured in alternating order for `--rounds` rounds so load drifts hit every value. Reports each
row's tokens/s, mean time of a decoding step and mean rows per step: what `[serving] max_batch` buys.

    .venv/bin/python bench/batch_size.py [--sizes 8,16,24] [--rounds 2] [--max-tokens 256]
"""

from __future__ import annotations

import argparse

from run_throughput import _folder, _load, closed_loop  # bench/run_throughput.py (scripts run from bench/)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="8,16,24")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=256)
    args = parser.parse_args()
    from rsi.models.embedded.backend import EmbeddedModel

    sizes = [int(s) for s in args.sizes.split(",")]
    folder = _folder()
    models = {b: EmbeddedModel(folder, name=f"batch-{b}", max_batch=b) for b in sizes}
    first = models[sizes[0]]
    print(f"number format {first.dtype.value} ({first.dtype.why}); threads {first.threads.value} ({first.threads.why})")
    print("| round | max_batch | tokens/s | step ms | rows per step | load |")
    print("| ---: | ---: | ---: | ---: | ---: | --- |")
    for r in range(args.rounds):
        for b in sizes if r % 2 == 0 else sizes[::-1]:
            model = models[b]
            model.stats.__init__()  # type: ignore[misc]  # a fresh account for this row
            before = _load()
            tokens, wall = closed_loop(model, b, max(1, 16 // b), args.max_tokens, None, [])
            s = model.stats
            print(f"| {r + 1} | {b} | {tokens / wall:.1f} | {s.step_ms / max(1, s.steps):.1f} | "
                  f"{s.row_steps / max(1, s.steps):.1f} | {before:.1f} -> {_load():.1f} |", flush=True)
    for model in models.values():
        model.close()


if __name__ == "__main__":
    main()
