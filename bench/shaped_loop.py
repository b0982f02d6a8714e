"""Tokens per second of the embedded backend in a closed loop shaped like a run, one code version against another.

`--clients` threads (the run's attempts in flight) each send requests back to back: a system prompt and one
of the shipped pyfuncs task instructions (prompts of about 250 tokens, as a run's), greedy, with
`max_tokens` drawn from 64-511 per request (completions end at different steps, so rows join and leave and
the batch carries left padding, as in a run). Each version runs in its own process (`PYTHONPATH` set to
its checkout), alternating for `--rounds` rounds, for `--seconds` each. Reports completion tokens per
second, the mean decoding step, rows per step and the time spent prefilling.

    .venv/bin/python bench/shaped_loop.py --code /path/to/old/checkout --code . [--rounds 2] [--seconds 60]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SYSTEM = ("You are a careful Python programmer. Read the task, think about edge cases, then write the complete "
          "function in one ```python block. Do not print anything, do not read input, keep the signature exact. ") * 3


def one_loop(seconds: float, clients: int) -> dict[str, float | str]:
    """The loop, in this process (the code on `PYTHONPATH`)."""
    import random
    import threading
    import time

    from run_throughput import _folder, _load

    import rsi
    from rsi.models.base import ChatMessage, GenerationRequest
    from rsi.models.embedded.backend import EmbeddedModel

    tasks = [p.read_text() for p in sorted((ROOT / "tasks" / "pyfuncs").glob("*/instruction.md"))]
    model = EmbeddedModel(_folder(), name="loop", max_batch=clients)
    tokens = [0] * clients
    stop = time.monotonic() + seconds

    def client(c: int) -> None:
        rng = random.Random(c)
        while time.monotonic() < stop:
            request = GenerationRequest(
                messages=[ChatMessage(role="system", content=SYSTEM), ChatMessage(role="user", content=rng.choice(tasks))],
                max_tokens=rng.randrange(64, 512), temperature=0.0,
            )
            tokens[c] += model.generate(request).completion_tokens

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    before, started = _load(), time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    s = model.stats
    return {"code": str(Path(rsi.__file__).parent.parent), "tokens_per_s": sum(tokens) / wall,
            "step_ms": s.step_ms / max(1, s.steps), "rows": s.row_steps / max(1, s.steps),
            "prefill_share": s.prefill_ms / 1000 / wall, "load": f"{before:.1f} -> {_load():.1f}",
            "format": str(model.dtype.value), "threads": str(model.threads.value)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", action="append", required=True, help="A checkout to measure (repeat).")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a child: run one loop, print JSON
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_loop(args.seconds, args.clients)))
        return
    codes = [str(Path(c).resolve()) for c in args.code]
    print("| round | code | tokens/s | step ms | rows per step | prefilling | load |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | --- |")
    for r in range(args.rounds):
        for code in codes if r % 2 == 0 else codes[::-1]:
            env = {**os.environ, "PYTHONPATH": code}
            done = subprocess.run(
                [sys.executable, str(HERE / "shaped_loop.py"), "--code", code, "--one", "--seconds", str(args.seconds),
                 "--clients", str(args.clients)], env=env, cwd=HERE, capture_output=True, text=True, check=True,
            )
            row = json.loads(done.stdout.strip().splitlines()[-1])
            if row["code"] != code:
                raise SystemExit(f"{code}: the child imported rsi from {row['code']}")
            print(f"| {r + 1} | {code} | {row['tokens_per_s']:.1f} | {row['step_ms']:.1f} | {row['rows']:.1f} | "
                  f"{row['prefill_share']:.0%} | {row['load']} |", flush=True)


if __name__ == "__main__":
    main()
