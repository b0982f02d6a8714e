"""Benchmark (issue 37): a user's run on a shared CPU, with another job starting midway.

What issue 37 tried as a new user would, made repeatable: `rsi run` of the default portfolio on a suite of
100+ tasks (`pyfuncs2`'s train split) for `--minutes` of budget, on this machine; at `--spinner-at`
minutes, `--spinners` CPU-bound processes (`while True: pass`) start and run to the end. Each row is a
real `rsi run` (the CLI, a subprocess) in its own fresh workspace (`rsi init` of that code). Read back
from the run's store, split at the moment the spinners started:

- counted attempts per minute, before and after;
- timeouts (`timeout` verdicts: the agent's failure) and infrastructure errors (`error` rows and the
  retried errors they replaced), before and after;
- the run's stop reason, its wall time, the model's use line (`model_use`: its completion tokens per
  busy second and, with this code, its torch thread changes), and the budget the run named.

`--versus-old DIR` adds the same run on an older checkout (a git worktree, e.g. `git worktree add
--detach /work/old-issue37 <commit before issue 37>`), imported through PYTHONPATH with this venv's
packages, so the table reads "before and after" the issue's changes. The old code applies the
contract's attempts budget beside `--budget-minutes` (issue 37 item 1), so its row also gets
`--budget-attempts 100000` to run for the same minutes. Variants run one after another, in the order
given (alternate it between sessions so load drifts hit both).

Unrun when written (issue 37's session shared its 2 cores with another engineer's benchmark): run it
on an otherwise idle machine; it takes `--minutes` (plus a model load) per variant.

    nice -n 5 .venv/bin/python bench/shared_cpu_run.py --minutes 25 --spinner-at 12.5 --write
    nice -n 5 .venv/bin/python bench/shared_cpu_run.py --versus-old /work/old-issue37 --write
    .venv/bin/python bench/shared_cpu_run.py --minutes 3 --spinner-at 1.5 --limit-tasks 20   # a smoke run

Rows go to `--log` (JSON lines) as they finish; `--write` renders every row there into bench/RESULTS.md,
section `## shared CPU run`.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from results import replace_section  # bench/results.py (scripts run from bench/)

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## shared CPU run"
LAUNCH = "import sys; sys.argv[0] = 'rsi'; from rsi.cli.app import main; main()"
SPIN = "while True: pass"


def _commit(code_dir: Path) -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=code_dir, capture_output=True, text=True, check=True).stdout.strip()

    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "rsi")
    return git("rev-parse", "--short=7", "HEAD") + ("+uncommitted" if dirty else "")


def _cli(code_dir: Path, args: list[str], cwd: Path, out: Any = subprocess.DEVNULL) -> subprocess.Popen[bytes]:
    """The `rsi` CLI of `code_dir` (its package first on PYTHONPATH, this venv's libraries), in its own
    process group (a run that outlives its window is killed with its sandboxes)."""
    env = {k: v for k, v in os.environ.items() if k not in ("RSI_TORCH_THREADS", "RSI_DTYPE", "RSI_DB", "PYTHONPATH")}
    env["PYTHONPATH"] = str(code_dir)
    return subprocess.Popen([sys.executable, "-c", LAUNCH, *args], cwd=cwd, env=env, stdout=out, stderr=out,
                            start_new_session=True)


def fresh_workspace(code_dir: Path, folder: Path) -> Path:
    """`rsi init` of `code_dir`'s own code, checked to import the code it claims to measure."""
    if _cli(code_dir, ["init", str(folder)], folder.parent).wait(timeout=300) != 0:
        raise SystemExit(f"rsi init failed for {code_dir}")
    found = subprocess.run([sys.executable, "-c", "import rsi; print(rsi.__file__)"], capture_output=True, text=True,
                           check=True, cwd=folder, env={**os.environ, "PYTHONPATH": str(code_dir)}).stdout.strip()
    if not found.startswith(str(code_dir.resolve())):
        raise SystemExit(f"{code_dir}: imports rsi from {found}")
    return folder


def phase_counts(db: Path, split_at: datetime) -> dict[str, Any]:
    """Per phase (before / after `split_at`, by each attempt's finish): counted attempts, passes,
    timeouts, infrastructure errors; and the run's id."""
    with sqlite3.connect(db) as conn:
        run_id = conn.execute("SELECT id FROM runs ORDER BY created DESC LIMIT 1").fetchone()[0]
        rows = conn.execute("SELECT finished, verdict, counted, passed, error_retries FROM attempts WHERE run_id = ?",
                            (run_id,)).fetchall()
    phases: dict[str, dict[str, int]] = {p: {"attempts": 0, "passes": 0, "timeouts": 0, "errors": 0}
                                         for p in ("before", "after")}
    for finished, verdict, counted, passed, retries in rows:
        if finished is None:
            continue
        phase = phases["before" if datetime.fromisoformat(finished).replace(tzinfo=UTC) < split_at else "after"]
        phase["attempts"] += bool(counted)
        phase["passes"] += bool(passed)
        phase["timeouts"] += verdict == "timeout"
        phase["errors"] += (verdict == "error") + int(retries or 0)
    return {"run_id": run_id, **phases}


def one_row(label: str, code_dir: Path, old: bool, args: argparse.Namespace, tmp: Path, index: int) -> dict[str, Any]:
    """One `rsi run` of `code_dir`, with the spinners started at `args.spinner_at` minutes."""
    ws = fresh_workspace(code_dir, tmp / f"ws-{index}")
    run_args = ["run", "--portfolio", "default", "--suite", args.suite, "--split", "train",
                "--budget-minutes", str(args.minutes), "--json"]
    if old:
        run_args += ["--budget-attempts", "100000"]
    if args.limit_tasks:
        run_args += ["--limit-tasks", str(args.limit_tasks)]
    log_path = tmp / f"run-{index}.log"
    started = time.monotonic()
    with log_path.open("wb") as log:
        proc = _cli(code_dir, run_args, ws, out=log)
    spinners: list[subprocess.Popen[bytes]] = []
    split_at = datetime.now(UTC)
    load_before = load_after = os.getloadavg()[0]
    try:
        try:
            proc.wait(timeout=args.spinner_at * 60)
        except subprocess.TimeoutExpired:
            load_before = os.getloadavg()[0]
            split_at = datetime.now(UTC)
            spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(args.spinners)]
        try:
            proc.wait(timeout=max(60.0, (args.minutes - args.spinner_at) * 60 + args.grace_minutes * 60))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
        load_after = os.getloadavg()[0]
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    wall = time.monotonic() - started
    text = log_path.read_text(encoding="utf-8", errors="replace")
    outcome = _outcome(text)
    run_min = float(outcome.get("elapsed_s", wall)) / 60  # the run's own wall time (model load included)
    before_min = max(1e-9, min(args.spinner_at, run_min)) if spinners else max(1e-9, run_min)
    after_min = max(1e-9, run_min - args.spinner_at)
    counts = phase_counts(ws / "runs" / "rsi.sqlite", split_at)
    return {
        "variant": label, "old": old, "suite": args.suite, "minutes": args.minutes, "spinner_at": args.spinner_at,
        "spinners": args.spinners, "at": f"{split_at:%Y-%m-%d %H:%M}", "command": args.command,
        "load": f"{load_before:.1f} -> {load_after:.1f}", "process_wall_s": round(wall, 1),
        "per_min_before": counts["before"]["attempts"] / before_min,
        "per_min_after": counts["after"]["attempts"] / after_min, **counts,
        "stop_reason": outcome.get("stop_reason", "(no outcome: see the log)"),
        "run_wall_s": outcome.get("elapsed_s"), "budget": outcome.get("budget", ""),
        "model_use": outcome.get("model_use", []),
    }


def _outcome(text: str) -> dict[str, Any]:
    """The `--json` outcome at the end of a run's output (stderr lines come before it)."""
    start = text.rfind("\n{")
    try:
        return dict(json.loads(text[start + 1 if start >= 0 else 0:]))
    except ValueError:
        return {}


def render(rows: list[dict[str, Any]]) -> str:
    lines = [SECTION, "",
             "`bench/shared_cpu_run.py`: `rsi run` of the default portfolio on a 100+-task suite for its minutes of",
             "budget, with CPU-bound processes started midway; before / after they started.", "",
             "| variant | when | load | attempts/min before -> after | timeouts before -> after | "
             "infrastructure errors before -> after | stop | run wall s |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        b, a = r["before"], r["after"]
        lines.append(f"| {r['variant']} | {r['at']} | {r['load']} | {r['per_min_before']:.2f} -> {r['per_min_after']:.2f} "
                     f"| {b['timeouts']} -> {a['timeouts']} | {b['errors']} -> {a['errors']} | {r['stop_reason']} "
                     f"| {round(r['run_wall_s']) if r['run_wall_s'] else '-'} |")
    lines += ["", "Commands:", ""] + sorted({f"    {r['command']}" for r in rows})
    notes = [f"- {r['variant']} ({r['at']}): {'; '.join(r['model_use'])}" for r in rows if r["model_use"]]
    notes += [f"- {r['variant']} ({r['at']}), read afterwards: {r['note']}" for r in rows if r.get("note")]
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--minutes", type=float, default=25.0, help="--budget-minutes of each run (default 25)")
    parser.add_argument("--spinner-at", type=float, default=12.5, help="minutes after the start when the spinners start")
    parser.add_argument("--spinners", type=int, default=1, help="CPU-bound processes started midway (default 1)")
    parser.add_argument("--suite", default="pyfuncs2", help="task suite of 100+ tasks (default pyfuncs2)")
    parser.add_argument("--limit-tasks", type=int, default=0, help="only the first N tasks (0: all; smoke runs)")
    parser.add_argument("--grace-minutes", type=float, default=3.0,
                        help="how long past its budget a run may take to end before SIGINT")
    parser.add_argument("--versus-old", default="", help="also run a checkout of older code (a git worktree)")
    parser.add_argument("--log", default=str(ROOT / "bench" / "shared_cpu_run.jsonl"), help="JSON lines, one per row")
    parser.add_argument("--write", action="store_true", help="render every row of --log into bench/RESULTS.md")
    parser.add_argument("--keep", default="", help="keep each run's workspace and output under this folder "
                        "(default: a temporary folder, removed at the end)")
    args = parser.parse_args()
    args.command = "nice -n 5 .venv/bin/python bench/shared_cpu_run.py " + " ".join(sys.argv[1:])
    variants = [(f"{_commit(ROOT)} (this code)", ROOT, False)]
    if args.versus_old:
        old = Path(args.versus_old).resolve()
        variants.insert(0, (f"{_commit(old)} (older code)", old, True))
    with tempfile.TemporaryDirectory(prefix="rsi-shared-cpu-") as scratch:
        folder = args.keep or scratch
        Path(folder).mkdir(parents=True, exist_ok=True)
        for index, (label, code_dir, old_code) in enumerate(variants):
            row = one_row(label, code_dir, old_code, args, Path(folder), index)
            print(json.dumps(row), flush=True)
            with open(args.log, "a", encoding="utf-8") as log:
                log.write(json.dumps(row) + "\n")
    if args.write:
        rows = [json.loads(line) for line in Path(args.log).read_text(encoding="utf-8").splitlines() if line.strip()]
        replace_section(SECTION, render(rows))


if __name__ == "__main__":
    main()
