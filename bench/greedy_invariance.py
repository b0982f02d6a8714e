"""Greedy batch invariance: does the embedded model write the same text for a prompt alone and in a batch?

"## evaluation noise" found that two greedy evaluations of one unchanged contract wrote different text
for most heldout tasks, and that this is what flips verdicts. This measures the suspected cause directly,
for each number format: the same prompts (the deployed conversation of heldout tasks, read from a stored
evaluation's trajectories) decoded greedily one at a time and then all submitted together (one running
batch), and counts the prompts whose completion differs. The embedded backend's own docs say float32
decodes the same tokens alone or batched (tests/models/test_embedded.py checks it on a random model);
this checks it on the real one, with the run's prompt and answer lengths, and prices it in time.

    .venv/bin/python bench/greedy_invariance.py --eval-run /work/compound6/runs/RUN --prompts 8 --write
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from results import replace_section  # bench/results.py (scripts run from bench/)

SECTION = "## greedy invariance"


def prompts_of(eval_run: Path, count: int) -> list[tuple[str, list[dict[str, str]]]]:
    """(task, system + user messages) of the parent side's first `count` heldout attempts, by task key."""
    from rsi.evaluation import PARENT
    from rsi.harness.trajectory import read_trajectory
    from rsi.run.layout import RunLayout

    record = json.loads((eval_run / "eval.json").read_text(encoding="utf-8"))
    layout = RunLayout(eval_run)
    out = []
    for task in sorted(record["heldout_tasks"])[:count]:
        steps = read_trajectory(layout.attempt_dir(PARENT, task, 0) / "trajectory.json").steps  # the parent is job 0
        messages = [{"role": s.source, "content": s.message} for s in steps if s.source in ("system", "user")]
        out.append((task, messages))
    return out


def decode(model, prompts, max_tokens: int, together: bool) -> tuple[list[str], float]:
    from rsi.models.base import ChatMessage, GenerationRequest

    requests = [GenerationRequest(messages=[ChatMessage(**m) for m in messages], max_tokens=max_tokens)
                for _task, messages in prompts]
    started = time.monotonic()
    if together:
        with ThreadPoolExecutor(len(requests)) as pool:
            results = list(pool.map(model.generate, requests))
    else:
        results = [model.generate(request) for request in requests]
    return [r.completions[0].text for r in results], time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-run", type=Path, required=True, help="A stored evaluation run (its eval.json).")
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--notes", type=Path, help="Markdown appended to the section (the reading).")
    args = parser.parse_args()

    from rsi.contracts.load import load_contract
    from rsi.models.embedded.backend import EmbeddedModel
    from rsi.models.embedded.weights import hf_folder
    from rsi.workspace import shipped_root

    prompts = prompts_of(args.eval_run, args.prompts)
    folder = hf_folder(load_contract(shipped_root() / "hcp" / "default.toml").spec.base)  # the shipped base
    rows = []
    for dtype in ("bfloat16", "float32"):
        model = EmbeddedModel(folder, name=f"smol-{dtype}", dtype=dtype, max_batch=8)
        try:
            decode(model, prompts[:1], 8, together=False)  # warm-up
            alone, alone_s = decode(model, prompts, args.max_tokens, together=False)
            batched, batched_s = decode(model, prompts, args.max_tokens, together=True)
            differ = [task for (task, _), a, b in zip(prompts, alone, batched, strict=True) if a != b]
            rows.append(f"| {dtype} -> {model.dtype.value} ({model.dtype.why}) | {model.threads.value} | {len(prompts)} | "
                        f"{len(differ)} | {alone_s:.0f} | {batched_s:.0f} | {', '.join(differ) or 'none'} |")
        finally:
            model.close()
        print(rows[-1], flush=True)
    load = os.getloadavg()[0]
    block = "\n".join([
        SECTION, "", __doc__.split("\n\n")[1].replace("\n", " "), "",
        f"Prompts: the first {len(prompts)} heldout tasks (by key) of evaluation {args.eval_run.name}, as the "
        f"deployed contract asked them; greedy, at most {args.max_tokens} tokens; 1-minute load average at the end "
        f"{load:.1f}; machine {os.cpu_count()} cores.", "",
        "| format asked (chosen) | torch threads | prompts | completions that differ, alone vs batched | "
        "alone (s) | batched (s) | tasks that differ |",
        "|---|---:|---:|---:|---:|---:|---|", *rows, "",
        *([args.notes.read_text(encoding="utf-8").strip(), ""] if args.notes else []),
        f"Reproduce: `.venv/bin/python bench/greedy_invariance.py --eval-run RUN --prompts {args.prompts} --write`"])
    print(block)
    if args.write:
        replace_section(SECTION, block)


if __name__ == "__main__":
    main()
