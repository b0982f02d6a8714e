"""`make demo`: the main job on the embedded defaults, in a throwaway workspace under runs/.

Runs the commands a new user would type, in order, so the demo doubles as a walkthrough:
create a workspace (a git repository of its own, so the demo never commits to this one), check
the machine, validate the shipped contract and portfolio, then a real `rsi run` of the default
portfolio on tasks/pyfuncs with the embedded SmolLM2 model, bounded to about ten minutes on two
cores, and finally the coverage tables and the HTML report.

The run targets the trivial and easy train tasks (the 135M model solves some of those and almost
none of the rest), so ten minutes show coverage growing rather than a flat line.

Environment knobs (for slower or faster machines): RSI_DEMO_MINUTES (run budget, default 7),
RSI_DEMO_ATTEMPTS (default 48), RSI_DEMO_TASKS (slice size, default 16), RSI_DEMO_WORKSPACE
(default runs/demo-workspace).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _rsi() -> str:
    return shutil.which("rsi", path=str(Path(sys.executable).parent)) or "rsi"


def _step(title: str, *args: str, capture: bool = False) -> subprocess.CompletedProcess[str]:
    print(f"\n== {title}\n$ rsi {shlex.join(args)}", flush=True)
    done = subprocess.run([_rsi(), *args], text=True, capture_output=capture)
    if done.returncode != 0:
        if capture:
            sys.stderr.write(done.stdout + done.stderr)
        sys.exit(f"demo step failed ({done.returncode}): rsi {shlex.join(args)}")
    return done


def main() -> None:
    workspace = Path(os.environ.get("RSI_DEMO_WORKSPACE", REPO / "runs" / "demo-workspace"))
    minutes = os.environ.get("RSI_DEMO_MINUTES", "7")
    attempts = os.environ.get("RSI_DEMO_ATTEMPTS", "48")
    tasks = os.environ.get("RSI_DEMO_TASKS", "16")
    if not (workspace / "hcp").is_dir():
        _step("create a workspace (its own git repository)", "init", str(workspace))
    ws = ["--workspace", str(workspace)]
    _step("what this machine can do", *ws, "doctor")
    _step("validate the shipped contract", *ws, "hcp", "validate", str(workspace / "hcp" / "default.toml"))
    _step("the default portfolio", *ws, "portfolio", "show", "default")
    _step(
        "run the default portfolio on tasks/pyfuncs with the embedded model",
        *ws, "run", "--portfolio", "default", "--suite", "pyfuncs", "--split", "train",
        "--difficulty", "trivial,easy", "--limit-tasks", tasks, "--job-size", "4", "--workers", "4",
        "--budget-minutes", minutes, "--budget-attempts", attempts,
    )
    status = _step("where the run stands", *ws, "status", "--json", capture=True)
    run_id = json.loads(status.stdout)["run_id"]
    _step("coverage of the run", *ws, "coverage", run_id)
    report = _step("the HTML report", *ws, "report", run_id, "--json", capture=True)
    print(f"\nreport: {json.loads(report.stdout)['report']}")


if __name__ == "__main__":
    main()
