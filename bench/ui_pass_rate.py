"""The embedded model's pass rate on the `ui` suite, by split and by layer, and the UI judge's cost per task.

Issue 50 item 4. Every part is real: a fresh workspace from the shipped examples (`rsi init`), the shipped
`ui` portfolio's configuration (`--variant`, default `ui-text-greedy`: the text substrate, the ui system
prompt, one greedy completion of at most 1024 tokens), the embedded SmolLM2-135M answering, the real
sandbox and the hidden verifier judging each page in headless Chromium. One attempt per task of the
suite's train and heldout splits (`rsi.harness.attempt.run_attempt`, the code behind `rsi attempt`, with one
model loaded for the whole run), `--workers` at once (their requests batch in the model), rows in task-key order.

    nice -n 0 .venv/bin/python bench/ui_pass_rate.py [--variant ui-text-greedy] [--limit N]

Recorded per task: split, verdict, reason, the verifier's layer scores and wall time, the attempt's wall
time and completion tokens. The section "ui pass rate (VARIANT)" of bench/RESULTS.md is rendered from the
result file (`render_result`): pass rate per split, the mean score of each layer per split, and the
verifier's seconds per task. A machine without Chromium is refused before any model loads.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import results  # bench/results.py (a benchmark runs as a script: bench/ is on its path)

LAYERS = ("viability", "task", "interaction", "constraints", "visual")
SPLITS = ("train", "heldout")


def measure(variant: str, limit: int | None, folder: Path, workers: int = 4) -> list[dict[str, Any]]:
    from rsi.harness.attempt import run_attempt
    from rsi.harness.single import resolve_configuration
    from rsi.harness.trajectory import read_trajectory
    from rsi.models.factory import make_model
    from rsi.sandbox.select import make_sandbox
    from rsi.tasks.kinds import kind_of
    from rsi.tasks.load import load_suite
    from rsi.workspace import init_workspace

    workspace = init_workspace(folder / "ws")
    config = resolve_configuration(workspace, f"ui:{variant}")
    tasks = sorted((t for t in load_suite(workspace.tasks_dir, config.spec.evaluation.suite) if t.spec.split in SPLITS),
                   key=lambda t: t.key)[:limit]
    missing = {kind_of(t).unavailable() for t in tasks} - {""}
    if missing:
        raise SystemExit(f"error: {sorted(missing)[0]}")
    sandbox = make_sandbox("auto")
    model = make_model(config.spec, workspace)
    def attempt(task: Any) -> dict[str, Any]:
        outcome = run_attempt(config, task, model, sandbox, folder / "attempts" / task.id, seed=0)
        final = read_trajectory(outcome.trajectory_path).outcome if outcome.trajectory_path else None
        print(f"{time.strftime('%H:%M:%S')} {task.key} {outcome.verdict.value}", flush=True)
        return {
            "task": task.key, "split": task.spec.split, "verdict": outcome.verdict.value, "reason": outcome.reason[:200],
            "layers": dict(final.layer_scores) if final else {},
            "verifier_s": round(final.verifier_wall_s, 2) if final else 0.0,
            "wall_s": round(outcome.wall_s, 2), "completion_tokens": outcome.completion_tokens,
        }

    # Attempts at once share the one model, whose requests batch (as a run's workers do); rows stay in key order.
    from concurrent.futures import ThreadPoolExecutor

    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(attempt, tasks))
    finally:
        model.close()


def _share(values: list[float]) -> str:
    return f"{sum(values) / len(values):.2f}" if values else "-"


def render_result(result: dict[str, Any]) -> str:
    """Pass rate per split and mean layer scores per split, from the result file's rows alone."""
    f = result["figures"]
    rows: list[dict[str, Any]] = f["rows"]
    lines = [f"Configuration `ui:{f['variant']}` (portfolios/ui.toml), one attempt per task, {len(rows)} tasks.", "",
             "| split | tasks | passed | pass rate | errors | " + " | ".join(LAYERS) + " | verifier s/task |",
             "| --- | ---: | ---: | ---: | ---: | " + " | ".join("---:" for _ in LAYERS) + " | ---: |"]
    for split in (*SPLITS, "all"):
        chosen = [r for r in rows if split == "all" or r["split"] == split]
        if not chosen:
            continue
        passed = sum(r["verdict"] == "passed" for r in chosen)
        errors = sum(r["verdict"] == "error" for r in chosen)
        judged = [r for r in chosen if r["layers"]]
        layers = [_share([r["layers"][layer] for r in judged if layer in r["layers"]]) for layer in LAYERS]
        verifier = _share([float(r["verifier_s"]) for r in chosen])
        lines.append(f"| {split} | {len(chosen)} | {passed} | {passed / len(chosen):.1%} | {errors} | "
                     + " | ".join(layers) + f" | {verifier} |")
    lines += ["", "A layer's figure is the mean, over the tasks the judge scored, of the share of that layer's checks "
              "the page passed (a task without a check in a layer does not count there); errors are attempts the "
              "judge or the harness could not conclude (never a pass)."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", default="ui-text-greedy", help="A configuration of portfolios/ui.toml.")
    parser.add_argument("--limit", type=int, default=None, help="Only the first N tasks (by key): a partial run.")
    parser.add_argument("--workers", type=int, default=4, help="Attempts at once (their requests batch in the model).")
    parser.add_argument("--write", action="store_true", help="Re-render bench/RESULTS.md after the run.")
    results.add_arguments(parser)
    args = parser.parse_args()
    section = f"ui pass rate ({args.variant})" + (f", first {args.limit} tasks" if args.limit else "")
    run = results.start("ui_pass_rate", seeds=[0], allow_dirty=args.allow_dirty, section=section, params=vars(args))
    for var, value in {"GIT_AUTHOR_NAME": "rsi bench", "GIT_AUTHOR_EMAIL": "bench@rsi.local",
                       "GIT_COMMITTER_NAME": "rsi bench", "GIT_COMMITTER_EMAIL": "bench@rsi.local"}.items():
        os.environ.setdefault(var, value)
    folder = Path(tempfile.mkdtemp(prefix="rsi-ui-bench-"))
    folder.chmod(0o711)  # the sandbox user walks down to each attempt's working directory
    try:
        started = time.monotonic()
        rows = measure(args.variant, args.limit, folder, args.workers)
        figures = json.loads(json.dumps({"variant": args.variant, "rows": rows,
                                         "wall_min": round((time.monotonic() - started) / 60, 1)}))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    results.finish(run, figures)
    print(render_result(run.data))
    print(f"result file: {run.path}", flush=True)
    if args.write:
        results.render_now()


if __name__ == "__main__":
    main()
