"""Adapter hand-off from trainer to server: hot-loading a new adapter revision into the running server
against handing off a merged checkpoint, measured side by side on the embedded SmolLM2-135M base.

Both paths start from the same state, a trainer holding a freshly trained LoRA model (PeftModel) in
memory, and end when the server can serve the new weights (the first completion is then requested and
checked, and its latency reported apart: it is generation, not hand-off):

- **adapter hand-off**: `save_pretrained` of the adapter (PEFT files, ~1.8 MB at r=8), then
  `POST /v1/load_lora_adapter` to the running `rsi serve` (a real subprocess, real HTTP) under a new
  versioned name (`sft@r<i>`);
- **merged hand-off**: `merge_and_unload` + `save_pretrained` of the full merged model (+ tokenizer), then
  (a) loading it into a fresh embedded model in this process (a lower bound: no server start-up), and
  (b) starting a fresh `rsi serve` on it until `/health` answers (what replacing a merged checkpoint takes:
  a server cannot swap its base weights in place).

Each path is repeated `--reps` times; the medians are compared. `--write` replaces the
`## adapter_handoff` section of bench/RESULTS.md.

    .venv/bin/python bench/adapter_handoff.py --reps 3 --write
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from results import replace_section  # bench/results.py (scripts run from bench/)

SECTION = "## adapter_handoff"
PROMPT = [{"role": "user", "content": "Write a Python function that adds two numbers."}]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _trainer(base_folder: Path, seed: int):
    """A 'trained' LoRA model in memory: r=8 on q_proj/v_proj with random (non-zero) weights."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    base = AutoModelForCausalLM.from_pretrained(base_folder, dtype=torch.float32)
    return get_peft_model(base, LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"],
                                           init_lora_weights=False))


def _start_server(contract: Path | None, port: int, cwd: Path, env: dict[str, str]):
    import subprocess
    import sys

    args = [str(Path(sys.executable).parent / "rsi"), "serve", "--port", str(port)]
    if contract is not None:
        args += ["--contract", str(contract)]
    return subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _wait_healthy(client, process, timeout_s: float = 600.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"rsi serve exited: {process.stderr.read()[-2000:]}")
        try:
            if client.get("/health").status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise RuntimeError("rsi serve did not become healthy")


MERGED_CONTRACT = """schema_version = 1
[hcp]
name = "merged"
revision = 1
created = 2026-01-01T00:00:00Z
[base]
id = "merged"
source = "{folder}"
format = "hf"
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=8)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()

    import httpx
    from transformers import AutoTokenizer

    from rsi.contracts.load import load_contract
    from rsi.models.base import ChatMessage, GenerationRequest
    from rsi.models.embedded.backend import EmbeddedModel
    from rsi.models.embedded.weights import hf_folder, quiet_transformers
    from rsi.workspace import shipped_root

    quiet_transformers()
    base_folder = hf_folder(load_contract(shipped_root() / "hcp" / "default.toml").spec.base)
    tokenizer = AutoTokenizer.from_pretrained(base_folder)
    work = Path(tempfile.mkdtemp(prefix="rsi-handoff-"))
    env = {k: v for k, v in os.environ.items() if k not in ("RSI_WORKSPACE",)}
    port = _free_port()
    server = _start_server(None, port, work, env)  # the running server: the shipped default contract
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600)
    body = {"messages": PROMPT, "max_tokens": args.max_tokens, "temperature": 0}
    rows: list[dict[str, float]] = []
    differs = 0
    try:
        _wait_healthy(client, server)
        base_text = client.post("/v1/chat/completions", json={**body, "model": "SmolLM2-135M-Instruct"}).json()
        base_text = base_text["choices"][0]["message"]["content"]
        for rep in range(args.reps):
            row: dict[str, float] = {}
            trainer = _trainer(base_folder, seed=rep + 1)
            # adapter hand-off: save the adapter, hot-load it into the running server
            t0 = time.perf_counter()
            folder = work / f"adapter-{rep}"
            trainer.save_pretrained(folder)
            t1 = time.perf_counter()
            response = client.post("/v1/load_lora_adapter", json={"lora_name": f"sft@r{rep + 1}", "lora_path": str(folder)})
            assert response.status_code == 200, response.text
            t2 = time.perf_counter()
            answer = client.post("/v1/chat/completions", json={**body, "model": f"sft@r{rep + 1}"}).json()
            row.update(adapter_save_s=t1 - t0, adapter_load_s=t2 - t1, adapter_s=t2 - t0,
                       adapter_first_completion_s=time.perf_counter() - t2)
            differs += answer["choices"][0]["message"]["content"] != base_text
            adapter_mb = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
            # merged hand-off: merge, save the full checkpoint ...
            t0 = time.perf_counter()
            merged_folder = work / f"merged-{rep}"
            trainer.merge_and_unload().save_pretrained(merged_folder)
            tokenizer.save_pretrained(merged_folder)
            t1 = time.perf_counter()
            merged_mb = sum(p.stat().st_size for p in merged_folder.iterdir()) / 1e6
            # ... (a) into a fresh model in this process
            fresh = EmbeddedModel(merged_folder, name="merged")
            t2 = time.perf_counter()
            fresh.generate(GenerationRequest(messages=[ChatMessage(**m) for m in PROMPT], max_tokens=args.max_tokens))
            row.update(merged_save_s=t1 - t0, merged_inproc_load_s=t2 - t1, merged_inproc_s=t2 - t0,
                       merged_first_completion_s=time.perf_counter() - t2)
            fresh.close()
            # ... (b) into a fresh `rsi serve`
            contract = work / f"merged-{rep}.toml"
            contract.write_text(MERGED_CONTRACT.format(folder=merged_folder))
            merged_port = _free_port()
            t3 = time.perf_counter()
            merged_server = _start_server(contract, merged_port, work, env)
            try:
                with httpx.Client(base_url=f"http://127.0.0.1:{merged_port}", timeout=600) as merged_client:
                    _wait_healthy(merged_client, merged_server)
                    t4 = time.perf_counter()
                    merged_client.post("/v1/chat/completions", json={**body, "model": "merged"})
            finally:
                merged_server.terminate()
                merged_server.wait(timeout=60)
            row.update(merged_server_start_s=t4 - t3, merged_server_s=(t1 - t0) + (t4 - t3))
            shutil.rmtree(merged_folder, ignore_errors=True)
            del trainer
            rows.append(row)
            print(json.dumps({"rep": rep, **{k: round(v, 3) for k, v in row.items()}}))
    finally:
        server.terminate()
        server.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)

    med = {key: statistics.median(r[key] for r in rows) for key in rows[0]}
    inproc_x = med["merged_inproc_s"] / med["adapter_s"]
    server_x = med["merged_server_s"] / med["adapter_s"]
    result = {**med, "speedup_vs_inproc": inproc_x, "speedup_vs_server": server_x, "adapter_mb": adapter_mb,
              "merged_mb": merged_mb, "outputs_changed": differs, "reps": args.reps}
    print(json.dumps(result))
    if not args.write:
        return
    block = (
        f"{SECTION}\n\n"
        "Trainer -> server hand-off of a new LoRA revision (r=8, q_proj/v_proj) for the embedded SmolLM2-135M, from a "
        "trained PeftModel in memory until the server can serve the new weights. Adapter: save the adapter, "
        "`POST /v1/load_lora_adapter` to a running `rsi serve` subprocess (real HTTP) under a new versioned name. "
        "Merged: `merge_and_unload` + `save_pretrained` of the full float32 model, then (a) load it into a fresh "
        "embedded model in-process (lower bound) or (b) start a fresh `rsi serve` on it until `/health` answers (what "
        "a merged hand-off costs in practice: a server cannot swap its base weights in place). "
        f"Median of {args.reps} repetitions. Machine: {platform.node()} ({os.cpu_count()} cores, {platform.platform()}), "
        f"1-minute load average {os.getloadavg()[0]:.1f} (shared with other jobs); date: "
        f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M')} UTC.\n\n"
        "| hand-off | bytes written | save s | load s | hand-off total s | vs adapter |\n"
        "| --- | ---: | ---: | ---: | ---: | ---: |\n"
        f"| adapter, hot load into the running server | {adapter_mb:.1f} MB | {med['adapter_save_s']:.3f} | "
        f"{med['adapter_load_s']:.3f} | {med['adapter_s']:.3f} | 1x |\n"
        f"| merged checkpoint, fresh model in-process | {merged_mb:.0f} MB | {med['merged_save_s']:.3f} | "
        f"{med['merged_inproc_load_s']:.3f} | {med['merged_inproc_s']:.3f} | {inproc_x:.1f}x |\n"
        f"| merged checkpoint, fresh `rsi serve` | {merged_mb:.0f} MB | {med['merged_save_s']:.3f} | "
        f"{med['merged_server_start_s']:.3f} | {med['merged_server_s']:.3f} | {server_x:.1f}x |\n\n"
        f"Adapter hand-off is **{server_x:.1f}x** faster than handing off a merged checkpoint to a fresh server, and "
        f"{inproc_x:.1f}x faster than even the in-process lower bound (the report measured 18.3x for Qwen3-4B, 2.85x "
        f"for Qwen3-30B). The hot-loaded adapter changed the served greedy completion in {differs}/{args.reps} "
        f"repetitions. First completion after the hand-off (not counted above): adapter "
        f"{med['adapter_first_completion_s']:.2f} s, merged in-process {med['merged_first_completion_s']:.2f} s "
        "(generation, not hand-off; the adapter's completion runs in the server subprocess through peft's mixed-adapter LoRA path, the merged one in this process on a plain model: not a like-for-like comparison, but a gap worth profiling).\n\n"
        f"Reproduce: `.venv/bin/python bench/adapter_handoff.py --reps {args.reps} --max-tokens {args.max_tokens} --write`\n\n"
    )
    replace_section(SECTION, block)


if __name__ == "__main__":
    main()
