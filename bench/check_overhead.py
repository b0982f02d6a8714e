"""What a checked candidate costs beyond its tokens: the public checks of one candidate, in the attempt's sandbox.

Issue 35 item 5: a candidate's checks must not cost a fresh sandbox each; all its examples run in one
process (rsi/verifier/check_runner.py), candidates of an attempt share its sandbox backend. This measures,
on real pyfuncs2 tasks with their reference solutions (passing) and their environment stubs (failing at
the first call), the wall time of `CandidateChecker.check` per candidate (scratch copy, one sandboxed
process, removal), and, beside it, the hidden verifier's time on the same files (the floor an attempt
already pays once).

    .venv/bin/python bench/check_overhead.py --tasks 40
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--sandbox", default="local")
    args = parser.parse_args()
    from rsi.harness.checks import CandidateChecker
    from rsi.sandbox.select import make_sandbox
    from rsi.tasks.load import load_suite, prepare_workdir
    from rsi.verifier import verify

    sandbox = make_sandbox(args.sandbox)
    tasks = [t for t in load_suite(REPO / "tasks", "pyfuncs2") if t.spec.public.declared][: args.tasks]
    checks: dict[str, list[float]] = {"reference": [], "stub": []}
    verifier: list[float] = []
    passed = {"reference": 0, "stub": 0}
    root = Path(tempfile.mkdtemp(prefix="rsi-check-overhead-"))
    root.chmod(0o755)
    try:
        for task in tasks:
            work = prepare_workdir(task, root / task.id / "workdir")
            checker = CandidateChecker(task, sandbox, work, root / task.id / "checks")
            for kind, code in (("reference", (task.solution_dir / task.spec.solution_file).read_text()),
                               ("stub", (task.environment_dir / task.spec.solution_file).read_text())):
                started = time.perf_counter()
                record = checker.check(code)
                checks[kind].append(time.perf_counter() - started)
                passed[kind] += record.all_passed
            (work / task.spec.solution_file).write_text((task.solution_dir / task.spec.solution_file).read_text())
            started = time.perf_counter()
            verify(task, work, sandbox)
            verifier.append(time.perf_counter() - started)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    code = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO).stdout.strip()
    result = {
        "date": datetime.now(UTC).isoformat(timespec="minutes"), "code": code, "machine": platform.node(),
        "cpus": os.cpu_count(), "load_1min": round(os.getloadavg()[0], 2), "sandbox": sandbox.isolation().backend,
        "tasks": len(tasks), "passed": passed,
        "check_ms": {kind: {"median": round(statistics.median(v) * 1000, 1), "p90": round(sorted(v)[int(0.9 * len(v))] * 1000, 1)}
                     for kind, v in checks.items()},
        "verifier_ms": {"median": round(statistics.median(verifier) * 1000, 1)},
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
