"""What the response cache saves a generation's evaluation: generation 2's evaluation after generation 1's.

Issue 48's evidence at a small budget (the full generation before/after does not fit one sitting on the
2-core machine). Every part is real: a fresh workspace from the shipped examples, `rsi eval`'s code
(`rsi.evaluation.evaluate`), the embedded SmolLM2-135M in float32 (the contract's evaluation dtype), the
sandbox and the hidden verifier, the workspace's response cache (rsi/models/cache.py).

Three contracts, each a revision of the shipped one on the text substrate (one greedy completion):
  G0  generation 0: the shipped `text-greedy` configuration          (default@r2)
  X   generation 1's candidate: G0 with the worked-example prompt   (default@r3)
  Y   generation 2's candidate: X with a shorter completion budget  (default@r4)

  eval 1   X against G0 (G0 is also the control: one side)   -- what generation 1 pays, cold cache
  eval 2   Y against X, control G0                             -- generation 2: X and G0 were asked before
  eval 2'  the same as eval 2 with `RSI_REPLY_CACHE=off` (--cold)    -- what generation 2 pays without the cache

For each evaluation: wall seconds, and per side the cacheable replies served from the cache (the store's
per-attempt `cache_hits`/`cache_misses`), plus whether the sides asked again gave the verdicts they gave
before (exactness: 0 flips expected). Goal (issue 48): eval 2 serves >= 90% of G0's and the parent's
replies from the cache and costs at most half of eval 1.

    nice -n 5 .venv/bin/python bench/eval_reuse.py --tasks 16 --workspace runs/bench-eval-reuse [--cold]

Resume: the same command on the same workspace skips the evaluations already done, resumes one a kill cut short
(its missing attempts only; its wall time is then that session's, marked `resumed`) and reopens the same result
file; the workspace must survive (keep it under runs/, or outside the checkout for another session).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import results  # bench/results.py (a benchmark runs as a script: bench/ is on its path)

SUITE = "pyfuncs2"
TEXT = {"harness.substrate": "text", "harness.system_prompt_file": "prompts/text.md", "harness.max_turns": 1,
        "harness.sampling.max_tokens": 384, "evaluation.suite": SUITE, "evaluation.dtype": "float32"}
CHANGES = [
    ("G0", TEXT, "generation 0: the shipped text-greedy configuration (bench/eval_reuse.py)"),
    ("X", {"harness.system_prompt_file": "prompts/text_example.md", "harness.prompt_style": "example"},
     "generation 1's candidate: the worked-example prompt (bench/eval_reuse.py)"),
    ("Y", {"harness.sampling.max_tokens": 320}, "generation 2's candidate: a shorter completion budget (bench/eval_reuse.py)"),
]
SIDE_OF_JOB = {0: "parent", 1: "candidate", 2: "control"}


def prepare(target: Path) -> tuple[Any, dict[str, str]]:
    """The workspace and the refs of G0, X and Y (made once; read back on a resume)."""
    from rsi.contracts.refs import resolve_ref
    from rsi.contracts.revisions import revise_contract
    from rsi.workspace import Workspace, init_workspace

    refs_file = target / "bench-refs.json"
    if refs_file.exists():
        return Workspace(target), json.loads(refs_file.read_text())
    workspace = init_workspace(target)
    refs = {}
    for name, sets, why in CHANGES:
        revise_contract(workspace, "default", dict(sets), why)
        refs[name] = f"default@r{resolve_ref(workspace, 'default').revision}"
    refs_file.write_text(json.dumps(refs))
    return workspace, refs


def side_figures(workspace: Any, run_id: str) -> dict[str, dict[str, Any]]:
    """Per side of an evaluation run: counted attempts, passes per task, and the cache's replies (from the store)."""
    from rsi.store import open_store

    store = open_store(workspace.db_url)
    try:
        rows = [r for r in store.list_attempts(run_id) if r.counted]
    finally:
        store.close()
    sides: dict[str, dict[str, Any]] = {}
    for row in rows:
        side = sides.setdefault(SIDE_OF_JOB[row.job_index], {"attempts": 0, "hits": 0, "misses": 0,
                                                               "tokens_not_spent": 0, "wall_s": 0.0, "passed": {}})
        side["attempts"] += 1
        side["hits"] += row.cache_hits
        side["misses"] += row.cache_misses
        side["tokens_not_spent"] += row.tokens_not_spent
        side["wall_s"] = round(side["wall_s"] + row.wall_s, 2)
        side["passed"][row.task_key] = side["passed"].get(row.task_key, False) or row.passed
    return sides


def run_eval(workspace: Any, label: str, candidate: str, parent: str, control: str | None, tasks: int, workers: int,
             done: dict[str, Any], save: Any, cold: bool = False) -> dict[str, Any]:
    """One evaluation's figures: read back when done, resumed (not restarted) when a kill cut it short."""
    if label in done and "wall_s" in done[label]:
        return done[label]
    from rsi.evaluation import EvalSpec, evaluate

    started_id = done.get(label, {}).get("run_id")
    if started_id:  # a resumed evaluation runs only its missing attempts: its wall time is this session's
        spec = EvalSpec(candidate="-", parent="-", resume=started_id)
    else:
        spec = EvalSpec(candidate=candidate, parent=parent, control=control, suite=SUITE, limit_heldout=tasks,
                        limit_covered=0, workers=workers, sandbox="auto")

    def created(run_id: str) -> None:
        done[label] = {"run_id": run_id}
        save()
    previous = os.environ.get("RSI_REPLY_CACHE")
    if cold:
        os.environ["RSI_REPLY_CACHE"] = "off"
    started = time.monotonic()
    try:
        outcome = evaluate(workspace, spec, on_note=lambda line: print(f"  [{label}] {line}", flush=True),
                           on_created=created)
    finally:
        if cold and previous is None:
            os.environ.pop("RSI_REPLY_CACHE", None)
        elif cold:
            os.environ["RSI_REPLY_CACHE"] = previous
    figures = {"label": label, "run_id": outcome.eval_id, "wall_s": round(time.monotonic() - started, 1),
               "candidate": candidate, "parent": parent, "control": control,
               "sides": side_figures(workspace, outcome.eval_id), "promote": outcome.decision.promote,
               "resumed": bool(started_id)}
    done[label] = figures
    save()
    return figures


def flips(before: dict[str, bool], after: dict[str, bool]) -> int:
    return sum(1 for task, passed in after.items() if task in before and before[task] != passed)


def render_result(result: dict[str, Any]) -> str:
    f = result["figures"]
    rows = ["| evaluation | sides | wall s | replies served from the cache, per side | tokens not spent |",
            "| --- | --- | ---: | --- | ---: |"]
    for e in f["evals"]:
        served = ", ".join(f"{side} {s['hits']}/{s['hits'] + s['misses']}" for side, s in e["sides"].items())
        spared = sum(s["tokens_not_spent"] for s in e["sides"].values())
        rows.append(f"| {e['label']} | {e['candidate']} vs {e['parent']}" + (f", control {e['control']}" if e["control"]
                    else "") + f" | {e['wall_s']:.0f} | {served} | {spared} |")
    g = f["goal"]
    lines = rows + ["",
                    f"- Eval 2 served {g['reused_share']:.1%} of the parent's and control's cacheable replies from the "
                    f"cache (goal >= 90%): **{'met' if g['reused_share'] >= 0.9 else 'not met'}**.",
                    f"- Eval 2 took {g['ratio']:.2f}x eval 1's wall time (goal <= 0.5x): "
                    f"**{'met' if g['ratio'] <= 0.5 else 'not met'}**."]
    if g.get("cold_ratio") is not None:
        lines.append(f"- Without the cache, eval 2 took {g['cold_ratio']:.2f}x eval 1's wall time: the cache made it "
                     f"{g['cold_ratio'] / g['ratio']:.2f}x faster.")
    lines.append(f"- Verdict flips on the sides asked again (X as parent against X as candidate, G0 as control "
                 f"against G0 as parent): {g['flips']} of {g['compared']} tasks.")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=16, help="Heldout tasks each evaluation runs (the first N).")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cold", action="store_true", help="Also run eval 2 with the cache off, for its cost.")
    parser.add_argument("--workspace", type=Path, required=True, help="Created if new; resumed if it exists.")
    parser.add_argument("--write", action="store_true", help="Re-render bench/RESULTS.md after the run.")
    results.add_arguments(parser)
    args = parser.parse_args()
    run = results.start("eval_reuse", seeds=[0], allow_dirty=args.allow_dirty, params=vars(args))
    for var, value in {"GIT_AUTHOR_NAME": "rsi bench", "GIT_AUTHOR_EMAIL": "bench@rsi.local",
                       "GIT_COMMITTER_NAME": "rsi bench", "GIT_COMMITTER_EMAIL": "bench@rsi.local"}.items():
        os.environ.setdefault(var, value)
    target = args.workspace.resolve()
    workspace, refs = prepare(target)
    progress_file = target / "bench-evals.json"
    done: dict[str, Any] = json.loads(progress_file.read_text()) if progress_file.exists() else {}

    def save() -> None:  # a resume skips what is done and resumes what was started
        progress_file.write_text(json.dumps(done))

    def step(*a: Any, **k: Any) -> dict[str, Any]:
        return run_eval(workspace, *a, done=done, save=save, **k)

    first = step("eval 1", refs["X"], refs["G0"], refs["G0"], args.tasks, args.workers)
    second = step("eval 2", refs["Y"], refs["X"], refs["G0"], args.tasks, args.workers)
    cold = step("eval 2 (cache off)", refs["Y"], refs["X"], refs["G0"], args.tasks, args.workers, cold=True) \
        if args.cold else None
    asked_again = [second["sides"]["parent"], second["sides"]["control"]]
    hits = sum(s["hits"] for s in asked_again)
    cacheable = sum(s["hits"] + s["misses"] for s in asked_again)
    compared = [(first["sides"]["candidate"]["passed"], second["sides"]["parent"]["passed"]),
                (first["sides"]["parent"]["passed"], second["sides"]["control"]["passed"])]
    goal = {"reused_share": hits / cacheable if cacheable else 0.0, "ratio": second["wall_s"] / first["wall_s"],
            "cold_ratio": cold["wall_s"] / first["wall_s"] if cold else None,
            "flips": sum(flips(a, b) for a, b in compared), "compared": sum(len(b) for _, b in compared)}
    evals = [e for e in (first, second, cold) if e is not None]
    results.finish(run, {"tasks": args.tasks, "refs": refs, "evals": evals, "goal": goal})
    print(render_result(run.data))
    if args.write:
        results.render_now()


if __name__ == "__main__":
    main()
