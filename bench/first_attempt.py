"""Benchmark (issue 11 item 3): a new user's first command, on a busy CPU, inside the default timeouts.

In a temporary folder: `rsi init` a fresh workspace, point `RSI_CACHE` at an empty folder (so the
GGUF conversion and the tuning probes happen as on a fresh machine), start `--busy` busy-looping
processes (default two: with the attempt's own work, about twice a 2-core machine's cores), and time `rsi attempt default pyfuncs/add-two --json` under them. Reported: wall time,
verdict, turns, every model call's latency (queue + serving) against `model_s`, the agent time
against `agent_s`, and the load average. Pass: the attempt ends without a model timeout and well
inside the contract's timeouts.

    .venv/bin/python bench/first_attempt.py --write
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from results import replace_section  # bench/results.py (scripts run from bench/)

SECTION = "## first attempt under load"
ROOT = Path(__file__).resolve().parent.parent
RSI = str(ROOT / ".venv" / "bin" / "rsi")


def measure(busy: int, fresh_cache: bool) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="rsi-first-"))
    env = dict(os.environ)
    env.pop("RSI_TORCH_THREADS", None)  # the measured defaults are what is being tested
    env.pop("RSI_DTYPE", None)
    if fresh_cache:
        env["RSI_CACHE"] = str(folder / "cache")
    subprocess.run([RSI, "init", str(folder / "ws")], check=True, capture_output=True, env=env)
    loops = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(busy)]
    try:
        time.sleep(20 if busy else 0)  # let the 1-minute load average see the busy loops
        load_before = os.getloadavg()[0]
        started = time.monotonic()
        done = subprocess.run(
            [RSI, "attempt", "default", "pyfuncs/add-two", "--json"],
            cwd=folder / "ws", capture_output=True, text=True, env=env, timeout=1800,
        )
        wall = time.monotonic() - started
        load_after = os.getloadavg()[0]
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    outcome = json.loads(done.stdout) if done.returncode in (0, 1) and done.stdout.strip().startswith("{") else {}
    trajectory = _trajectory(outcome)
    calls = [step["metrics"] for step in trajectory.get("steps", []) if step.get("metrics")]
    latencies = [float(m.get("latency_s") or 0.0) for m in calls]
    tokens = [(int(m.get("prompt_tokens", 0)), int(m.get("completion_tokens", 0))) for m in calls]
    return {
        "busy": busy, "fresh_cache": fresh_cache, "wall_s": wall, "rc": done.returncode,
        "load": f"{load_before:.1f} -> {load_after:.1f}", "verdict": outcome.get("verdict", "?"),
        "reason": str(outcome.get("reason", "") or done.stderr.strip()[-300:])[:300],
        "agent_wall_s": float(outcome.get("wall_s", 0.0) or 0.0), "latencies": latencies, "tokens": tokens,
        "turns": outcome.get("turns", len(latencies)), "ended_by": outcome.get("ended_by", ""),
    }


def _trajectory(outcome: dict[str, Any]) -> dict[str, Any]:
    path = outcome.get("trajectory_path")
    if not path or not Path(path).is_file():
        return {}
    return dict(json.loads(Path(path).read_text(encoding="utf-8")))


def render(result: dict[str, Any], command: str) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    machine = f"{os.cpu_count()} cores ({platform.machine()}), Python {platform.python_version()}"
    calls = ", ".join(
        f"{s:.1f} ({p} -> {c} tokens)" for s, (p, c) in zip(result["latencies"], result["tokens"], strict=True)
    ) or "none"
    worst = max(result["latencies"], default=0.0)
    return (
        f"{SECTION}\n\n"
        f"Machine: {machine}; {when}; {result['busy']} busy-looping processes running throughout; "
        f"1-minute load average {result['load']} (before -> after the attempt).\n"
        f"A fresh workspace (`rsi init`) and {'an empty `RSI_CACHE` (GGUF conversion and tuning probes included)' if result['fresh_cache'] else 'the existing model cache'}; "
        "`rsi attempt default pyfuncs/add-two` with the measured defaults (no RSI_TORCH_THREADS / RSI_DTYPE). "
        "Default timeouts: agent_s 240, model_s 120 (timed from when the model starts serving a request).\n\n"
        "| wall s (whole command) | agent wall s | verdict | turns | model calls: s (prompt -> completion tokens) | slowest call / model_s |\n"
        "| ---: | ---: | --- | ---: | --- | ---: |\n"
        f"| {result['wall_s']:.1f} | {result['agent_wall_s']:.1f} | {result['verdict']} ({result['ended_by']}) | {result['turns']} | {calls} | "
        f"{worst / 120.0:.2f} |\n\n"
        + (f"Reason recorded: {result['reason']}\n\n" if result["verdict"] not in ("passed", "failed") else "")
        + f"Reproduce: `{command}`\n\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=int, default=2, help="Busy-looping processes (two: with the attempt itself, about twice 2 cores).")
    parser.add_argument("--warm-cache", action="store_true", help="Use the existing RSI_CACHE (no conversion).")
    parser.add_argument("--write", action="store_true", help="Update bench/RESULTS.md.")
    args = parser.parse_args()
    result = measure(args.busy, not args.warm_cache)
    command = ".venv/bin/python bench/first_attempt.py" + (" --warm-cache" if args.warm_cache else "")
    if args.busy != 2:
        command += f" --busy {args.busy}"
    block = render(result, command + " --write")
    print(block)
    if args.write:
        replace_section(SECTION, block)


if __name__ == "__main__":
    main()
