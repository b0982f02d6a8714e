"""Benchmark (issue 41 item 4, serving cost): what several resident LoRA specialists cost the embedded backend.

One embedded SmolLM2-135M (the backend's own choice of threads and number format, and float32, the
evaluation's format, with `--float32`), 8 closed-loop clients, greedy, `--max-tokens` completion tokens per
request. Four LoRA adapters (r=8 on q_proj/v_proj, peft's default initialisation: B = 0, so every adapter
decodes exactly the base's tokens and only the speed differs) are made with peft. Rows, measured as pairs back
to back with the order reversed every round, each against "1 adapter resident, every request on it":

- **4 resident, one in use**: the other three adapters are loaded but idle (what residency alone costs);
- **4 resident, one per client**: client c always uses adapter c mod 4 (every batch mixes adapters);
- **4 resident, switching every turn**: each client's k-th request uses adapter (c + k) mod 4 (a specialist
  switch on every turn of every conversation: the Mixture-of-LoRA proxy's worst case);
- **base, no adapter**: for scale.

Tokens/s is completion tokens over the row's wall time (prompt tokens apart: rsi's one definition).
Stored parameters: the base's parameter count and bytes (its float32 safetensors) plus N adapters' against
N merged copies of the base (what a merge-per-specialist deployment stores), for N = 1..4 and the
`--specialists` count; the source report measured 26% for its setting.

    .venv/bin/python bench/moe_serving.py --rounds 3 --write
    .venv/bin/python bench/moe_serving.py --rounds 1 --per-client 1 --max-tokens 16   # a smoke run

`--write` replaces the `## moe serving` section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from results import replace_section  # bench/results.py (scripts run from bench/)
from run_throughput import PROMPTS, Figure, _folder, _load, make_adapter

SECTION = "## moe serving"
NAMES = ("spec-a", "spec-b", "spec-c", "spec-d")
ROOT = Path(__file__).resolve().parents[1]


def clients(model: Any, label: str, pick: Callable[[int, int], str | None], args: argparse.Namespace) -> Figure:
    """8 client threads; client c's k-th request goes to `pick(c, k)` (None: the base)."""
    from rsi.models.base import ChatMessage, GenerationRequest

    n = 8
    totals, failures = [0] * n, list[str]()
    gate = threading.Barrier(n + 1)

    def client(c: int) -> None:
        gate.wait()
        for k in range(args.per_client):
            request = GenerationRequest(messages=[ChatMessage(role="user", content=PROMPTS[(c * args.per_client + k) % len(PROMPTS)])],
                                        max_tokens=args.max_tokens, specialist=pick(c, k), temperature=0.0)
            try:
                totals[c] += model.generate(request).completion_tokens
            except Exception as error:  # a failed request is a row's figure (0 tokens), not a crash
                failures.append(f"{type(error).__name__}: {str(error)[:120]}")

    threads = [threading.Thread(target=client, args=(c,)) for c in range(n)]
    for thread in threads:
        thread.start()
    before = _load()
    gate.wait()
    started = time.monotonic()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - started
    failed = f" ({len(failures)} failed: {failures[0]})" if failures else ""
    return Figure(f"{label}{failed}", sum(totals), wall, f"{before:.1f} -> {_load():.1f}")


def resident(model: Any, adapters: dict[str, Path], names: tuple[str, ...]) -> None:
    """Make exactly `names` the loaded adapters."""
    for name in set(model.adapters()) - set(names):
        model.unload_adapter(name)
    for name in names:
        if name not in model.adapters():
            model.load_adapter(name, str(adapters[name]))


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from rsi.models.embedded.backend import EmbeddedModel

    folder = _folder()
    model = EmbeddedModel(folder, name="bench", dtype="float32" if args.float32 else "bfloat16", max_batch=8)
    made = Path(tempfile.mkdtemp(prefix="rsi-moe-"))
    adapters = {name: make_adapter(folder, made / name) for name in NAMES}
    one = (NAMES[0],)

    def row(label: str, names: tuple[str, ...], pick: Callable[[int, int], str | None]) -> Callable[[], Figure]:
        def run() -> Figure:
            resident(model, adapters, names)
            return clients(model, label, pick, args)
        return run

    single = row("1 resident, all on it", one, lambda c, k: NAMES[0])
    others = {
        "4 resident, one in use": row("4 resident, all on one", NAMES, lambda c, k: NAMES[0]),
        "4 resident, one per client": row("4 resident, client c on c mod 4", NAMES, lambda c, k: NAMES[c % 4]),
        "4 resident, switching every turn": row("4 resident, request k of client c on (c+k) mod 4", NAMES,
                                                lambda c, k: NAMES[(c + k) % 4]),
        "base, no adapter": row("no adapter resident, base", (), lambda c, k: None),
    }
    pairs: dict[str, list[tuple[Figure, Figure]]] = {name: [] for name in others}
    for r in range(args.rounds):
        print(f"round {r + 1}/{args.rounds} (load {_load():.1f})", flush=True)
        for name, other in others.items():
            if r % 2:
                b = single()
                pairs[name].append((other(), b))
            else:
                a = other()
                pairs[name].append((a, single()))
    result = {"pairs": pairs, "dtype": model.dtype, "threads": model.threads, "storage": storage(folder, adapters[NAMES[0]], args)}
    model.close()
    return result


def _adapter_params(path: Path) -> int:
    """Parameters of every tensor in an adapter's safetensors file."""
    from safetensors.torch import load_file

    return sum(t.numel() for t in load_file(str(path)).values())


def storage(folder: Path, adapter: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Stored parameters: base + N adapters against N merged copies, N = 1..max(4, --specialists)."""
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(folder)
    # Tied embeddings are one tensor: count each parameter once, as a saved checkpoint stores it.
    base_params = sum(p.numel() for p in base.parameters())
    adapter_params = _adapter_params(adapter / "adapter_model.safetensors")
    rows = []
    for n in sorted({1, 2, 3, 4, args.specialists}):
        shared = base_params + n * adapter_params
        merged = n * base_params
        rows.append({"n": n, "shared": shared, "merged": merged, "share": shared / merged})
    return {"base_params": base_params, "adapter_params": adapter_params, "rows": rows}


def render(result: dict[str, Any], command: str, started_load: float) -> str:
    lines = [SECTION, "",
             f"Machine: {os.cpu_count()} cores ({platform.machine()}), Python {platform.python_version()}; finished "
             f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; code {_commit()}; load average at start {started_load:.1f}. The "
             f"embedded backend chose {result['threads'].value} torch thread(s) ({result['threads'].why}) and "
             f"{result['dtype'].value} ({result['dtype'].why}). Each pair was measured back to back, its order reversed "
             "every round; a ratio is the row's completion tokens/s over the paired `1 resident, all on it` row's.", "",
             "| row | round | row tokens/s (load) | 1 resident tokens/s (load) | ratio |", "| --- | ---: | --- | --- | ---: |"]
    summary = []
    for name, measured in result["pairs"].items():
        for k, (a, b) in enumerate(measured, 1):
            lines.append(f"| {a.label} | {k} | {a.tps:.1f} ({a.load}) | {b.tps:.1f} ({b.load}) | {a.tps / b.tps if b.tps else 0:.2f} |")
        ratios = [a.tps / b.tps for a, b in measured if b.tps]
        if ratios:
            summary.append(f"- {name} / 1 resident: median **{statistics.median(ratios):.2f}** over {len(ratios)} pairs "
                           f"(range {min(ratios):.2f}-{max(ratios):.2f})")
    stored = result["storage"]
    lines += ["", "Ratios:", "", *summary, "",
              f"Stored parameters (base {stored['base_params']:,}; one r=8 q_proj/v_proj adapter {stored['adapter_params']:,}, "
              f"{stored['adapter_params'] / stored['base_params']:.2%} of the base):", "",
              "| specialists N | base + N adapters | N merged copies | share |", "| ---: | ---: | ---: | ---: |"]
    lines += [f"| {r['n']} | {r['shared']:,} | {r['merged']:,} | {r['share']:.1%} |" for r in stored["rows"]]
    lines += ["", f"Reproduce: `{command}`"]
    return "\n".join(lines) + "\n"


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False)
    return done.stdout.strip() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--per-client", type=int, default=2, help="Requests each of the 8 clients sends.")
    parser.add_argument("--specialists", type=int, default=4, help="Also show storage for this many specialists.")
    parser.add_argument("--float32", action="store_true", help="Serve in float32 (the evaluation's format).")
    parser.add_argument("--write", action="store_true", help="Update bench/RESULTS.md.")
    args = parser.parse_args()
    started_load = _load()
    started = time.monotonic()
    result = measure(args)
    command = (f".venv/bin/python bench/moe_serving.py --rounds {args.rounds} --max-tokens {args.max_tokens} "
               f"--per-client {args.per_client}" + (" --float32" if args.float32 else "") + " --write")
    block = render(result, command, started_load) + f"\n({time.monotonic() - started:.0f} s in all.)\n"
    print(block)
    if args.write:
        replace_section(SECTION, block)


if __name__ == "__main__":
    main()
