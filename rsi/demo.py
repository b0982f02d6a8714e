"""`make demo`: the main job on the embedded defaults, in a throwaway workspace under runs/.

Runs the commands a new user would type, in order, so the demo doubles as a walkthrough:
create a workspace (a git repository of its own, so the demo never commits to this one), check
the machine, validate the shipped contract and portfolio, then a real `rsi run` of the default
portfolio on tasks/pyfuncs with the embedded SmolLM2 model, bounded to about ten minutes on two
cores, and finally the coverage tables and the HTML report.

The run searches the text-substrate configurations of the default portfolio (`default:text-*`:
one completion per attempt, a few seconds each on a CPU); the REPL configurations stay in the shipped
portfolio, but with this 135M model on a CPU they cost about a minute an attempt and rarely help, so
one of them would eat the demo. The slice is the trivial and easy train tasks, where the model
solves some and not most. The demo ends with what a portfolio is for: the tasks its configurations
reached together (union coverage) against what each configuration reached alone, with pass rates.

Environment knobs (for slower or faster machines): RSI_DEMO_MINUTES (run budget, default 7),
RSI_DEMO_ATTEMPTS (default 96), RSI_DEMO_TASKS (slice size, default 24), RSI_DEMO_PORTFOLIO
(default `default:text-*`), RSI_DEMO_WORKSPACE (default runs/demo-workspace).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def portfolio_effect(coverage: dict[str, Any]) -> list[str]:
    """The demo's closing lines, from `rsi coverage RUN --json`: union coverage against each
    configuration's own coverage and pass rate, and what the best single one could not do.

    Coverage search sends no configuration to a task another has already covered, so a
    configuration's own count is over the tasks it was given. The honest portfolio effect is
    therefore counted on the tasks the best single configuration tried and FAILED, that another
    configuration then solved; tasks it never tried are reported apart."""
    configs = [c for c in coverage["configurations"] if c["attempts"] or c["errors"]]
    union, total = coverage["covered"], coverage["tasks"]
    tasks = coverage["tasks_detail"]
    lines = [f"portfolio effect: union coverage {union}/{total} tasks"]
    width = max((len(c["name"]) for c in configs), default=13)
    for c in sorted(configs, key=lambda c: (-c["tasks_solved"], c["name"])):
        tried = sum(1 for t in tasks if c["name"] in t.get("tried_by", []))
        lines.append(f"  {c['name']:<{width}}  alone {c['tasks_solved']:>3} of {tried:>3} tried   pass rate "
                     f"{c['pass_rate']:>6.1%} ({c['passes']}/{c['attempts']} attempts)   only it: {c['unique_solves']}")
    if not configs:
        return lines
    best = max(configs, key=lambda c: (c["tasks_solved"], c["pass_rate"]))["name"]
    failed_by_best = [t for t in tasks if best in t.get("tried_by", []) and best not in t["solved_by"]]
    rescued = [t["task_key"] for t in failed_by_best if t["solved_by"]]
    untried = [t for t in tasks if t["solved_by"] and best not in t.get("tried_by", [])]
    lines.append(f"  best single configuration: {best}. Of the {len(failed_by_best)} task(s) it tried and failed, "
                 f"other configurations solved {len(rescued)}" + (f" ({', '.join(rescued)})" if rescued else "") + ";")
    lines.append(f"  {len(untried)} more covered task(s) were solved by others before {best} was tried on them.")
    return lines


def main() -> None:
    workspace = Path(os.environ.get("RSI_DEMO_WORKSPACE", REPO / "runs" / "demo-workspace"))
    minutes = os.environ.get("RSI_DEMO_MINUTES", "7")
    attempts = os.environ.get("RSI_DEMO_ATTEMPTS", "96")
    tasks = os.environ.get("RSI_DEMO_TASKS", "24")
    portfolio = os.environ.get("RSI_DEMO_PORTFOLIO", "default:text-*")
    if not (workspace / "hcp").is_dir():
        _step("create a workspace (its own git repository)", "init", str(workspace))
    ws = ["--workspace", str(workspace)]
    _step("what this machine can do", *ws, "doctor")
    _step("validate the shipped contract", *ws, "hcp", "validate", str(workspace / "hcp" / "default.toml"))
    _step("the configurations this demo searches", *ws, "portfolio", "show", portfolio)
    _step(
        "run them on tasks/pyfuncs with the embedded model",
        *ws, "run", "--portfolio", portfolio, "--suite", "pyfuncs", "--split", "train",
        "--difficulty", "trivial,easy", "--limit-tasks", tasks, "--job-size", "4", "--workers", "4",
        "--budget-minutes", minutes, "--budget-attempts", attempts,
    )
    status = _step("where the run stands", *ws, "status", "--json", capture=True)
    run_id = json.loads(status.stdout)["run_id"]
    _step("coverage of the run", *ws, "coverage", run_id)
    coverage = _step("coverage, for the comparison below", *ws, "coverage", run_id, "--json", capture=True)
    report = _step("the HTML report", *ws, "report", run_id, "--json", capture=True)
    print()
    for line in portfolio_effect(json.loads(coverage.stdout)):
        print(line)
    print(f"report: {json.loads(report.stdout)['report']}")


if __name__ == "__main__":
    main()
