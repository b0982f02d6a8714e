"""Adapter hand-off from trainer to server: hot-loading a new adapter revision into the running server
against handing off a merged checkpoint, measured side by side on the embedded SmolLM2-135M base.

Both paths start from the same state, a trainer holding a freshly trained LoRA model (PeftModel) in
memory, and end when the server answers a chat completion with the new weights:

- **adapter hand-off**: `save_pretrained` of the adapter (PEFT files, ~1.8 MB at r=8), then
  `POST /v1/load_lora_adapter` to the running `rsi serve` app (real HTTP, uvicorn in a thread, the
  embedded backend) under a new versioned name (`sft@r<i>`), then one completion with that name;
- **merged hand-off**: `merge_and_unload` + `save_pretrained` of the full merged model (+ tokenizer), then
  loading it into a fresh embedded model (in-process: no interpreter start-up is charged to it), then one
  completion.

Each path is repeated `--reps` times; the medians are compared. `--write` replaces the
`## adapter_handoff` section of bench/RESULTS.md.

    .venv/bin/python bench/adapter_handoff.py --reps 3 --write
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import socket
import statistics
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=8)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()

    import httpx
    import uvicorn
    from transformers import AutoTokenizer

    from rsi.contracts.load import load_contract
    from rsi.models.embedded import EmbeddedModel
    from rsi.models.server import create_app
    from rsi.models.weights import hf_folder, quiet_transformers
    from rsi.workspace import shipped_root

    quiet_transformers()
    base_folder = hf_folder(load_contract(shipped_root() / "hcp" / "default.toml").spec.base)
    tokenizer = AutoTokenizer.from_pretrained(base_folder)
    server_model = EmbeddedModel(base_folder, name="SmolLM2-135M-Instruct")
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(server_model, base_name="base"), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    client = httpx.Client(base_url=url, timeout=600)
    while True:
        try:
            if client.get("/health").status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
    body = {"messages": PROMPT, "max_tokens": args.max_tokens, "temperature": 0}
    base_text = client.post("/v1/chat/completions", json={**body, "model": "base"}).json()["choices"][0]["message"]["content"]

    hot, hot_load, merged, merged_load = [], [], [], []
    differs = 0
    work = Path(tempfile.mkdtemp(prefix="rsi-handoff-"))
    try:
        for rep in range(args.reps):
            trainer = _trainer(base_folder, seed=rep + 1)
            # adapter hand-off
            t0 = time.perf_counter()
            folder = work / f"adapter-{rep}"
            trainer.save_pretrained(folder)
            t1 = time.perf_counter()
            response = client.post("/v1/load_lora_adapter", json={"lora_name": f"sft@r{rep + 1}", "lora_path": str(folder)})
            assert response.status_code == 200, response.text
            t2 = time.perf_counter()
            answer = client.post("/v1/chat/completions", json={**body, "model": f"sft@r{rep + 1}"}).json()
            t3 = time.perf_counter()
            hot.append(t3 - t0)
            hot_load.append(t2 - t1)
            differs += answer["choices"][0]["message"]["content"] != base_text
            # merged hand-off (the same trained weights)
            t0 = time.perf_counter()
            merged_folder = work / f"merged-{rep}"
            trainer.merge_and_unload().save_pretrained(merged_folder)
            tokenizer.save_pretrained(merged_folder)
            t1 = time.perf_counter()
            fresh = EmbeddedModel(merged_folder, name="merged")
            t2 = time.perf_counter()
            from rsi.models.base import ChatMessage, GenerationRequest

            fresh.generate(GenerationRequest(messages=[ChatMessage(**m) for m in PROMPT], max_tokens=args.max_tokens,
                                             temperature=0.0))
            t3 = time.perf_counter()
            fresh.close()
            merged.append(t3 - t0)
            merged_load.append(t2 - t1)
            size_mb = sum(p.stat().st_size for p in merged_folder.iterdir()) / 1e6
            adapter_mb = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
            shutil.rmtree(merged_folder, ignore_errors=True)
            del trainer
            print(json.dumps({"rep": rep, "adapter_s": hot[-1], "adapter_load_s": hot_load[-1], "merged_s": merged[-1],
                              "merged_load_s": merged_load[-1]}))
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        server_model.close()
        shutil.rmtree(work, ignore_errors=True)

    hot_s, merged_s = statistics.median(hot), statistics.median(merged)
    result = {"adapter_s": hot_s, "adapter_load_s": statistics.median(hot_load), "merged_s": merged_s,
              "merged_load_s": statistics.median(merged_load), "speedup": merged_s / hot_s,
              "adapter_mb": adapter_mb, "merged_mb": size_mb, "outputs_changed": differs, "reps": args.reps}
    print(json.dumps(result))
    if not args.write:
        return
    block = (
        f"{SECTION}\n\n"
        "Trainer -> server hand-off of a new LoRA revision (r=8, q_proj/v_proj) for the embedded SmolLM2-135M, "
        "from a trained PeftModel in memory to the first completion served with the new weights. Adapter path: "
        "save the adapter, `POST /v1/load_lora_adapter` to the running `rsi serve` app (real HTTP) under a new "
        "versioned name, one completion. Merged path: `merge_and_unload` + `save_pretrained` of the full model, "
        "load it into a fresh embedded model (in-process, so no interpreter start-up is charged), one completion. "
        f"Median of {args.reps} repetitions; completions of {args.max_tokens} tokens. Machine: {platform.node()} "
        f"({os.cpu_count()} cores, {platform.platform()}), 1-minute load average {os.getloadavg()[0]:.1f} (shared); "
        f"date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M')} UTC.\n\n"
        "| hand-off | bytes moved | load step s (median) | total s (median) |\n| --- | ---: | ---: | ---: |\n"
        f"| adapter (hot load, no restart) | {result['adapter_mb']:.1f} MB | {result['adapter_load_s']:.3f} | {hot_s:.3f} |\n"
        f"| merged checkpoint (fresh model) | {result['merged_mb']:.0f} MB | {result['merged_load_s']:.3f} | {merged_s:.3f} |\n\n"
        f"Adapter hand-off is **{result['speedup']:.1f}x** faster than the merged hand-off (the report measured 18.3x "
        f"for Qwen3-4B). The hot-loaded adapter changed the served completion in {differs}/{args.reps} repetitions "
        "(greedy, against the base).\n\n"
        f"Reproduce: `.venv/bin/python bench/adapter_handoff.py --reps {args.reps} --max-tokens {args.max_tokens} --write`\n\n"
    )
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Benchmark results\n"
    pattern = re.compile(rf"^{re.escape(SECTION)}\n.*?(?=^## |\Z)", flags=re.S | re.M)
    text = pattern.sub(lambda _: block, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + block
    RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
