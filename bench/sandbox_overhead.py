"""Per-attempt overhead of each sandbox backend against a bare subprocess, and of one verification.

Each backend runs `python3 -c pass` N times in a fresh working directory; we report the median
and p90 wall time per run and the median overhead over a bare `subprocess.run` of the same
interpreter (the sandbox's own Python, /usr/bin/python3). The cases verifier also starts one
sandboxed process per verification, so this is the verifier's fixed cost too.

    .venv/bin/python bench/sandbox_overhead.py --runs 30 --docker-runs 15 --write

Docker is measured against $RSI_DOCKER_HOST (or a known engine socket) and skipped when none
answers. `--write` replaces the `## sandbox overhead` section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from results import replace_section  # bench/results.py (scripts run from bench/)

SECTION = "## sandbox overhead"
LOAD_AT_START = os.getloadavg()


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]


def time_runs(runs: int, once: Callable[[Path], None]) -> list[float]:
    folder = Path(tempfile.mkdtemp(prefix="rsi-bench-sandbox-"))
    folder.chmod(0o711)
    samples = []
    try:
        once(_fresh(folder, -1))  # warm-up: caches, image layers, the bwrap probe
        for index in range(runs):
            work = _fresh(folder, index)
            started = time.perf_counter()
            once(work)
            samples.append(time.perf_counter() - started)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return samples


def _fresh(folder: Path, index: int) -> Path:
    work = folder / f"w{index + 1}"
    work.mkdir()
    return work


def measure(runs: int, docker_runs: int) -> tuple[dict[str, list[float]], dict[str, str]]:
    from rsi.errors import SandboxError
    from rsi.sandbox.base import Limits
    from rsi.sandbox.docker import DockerSandbox
    from rsi.sandbox.local import MODES, LocalSandbox, probe_mode, system_python

    python = system_python() or "python3"
    limits = Limits(wall_s=60)
    samples: dict[str, list[float]] = {}
    notes: dict[str, str] = {}

    def bare_subprocess(work: Path) -> None:
        subprocess.run([python, "-c", "pass"], cwd=work, check=True)

    samples["bare subprocess"] = time_runs(runs, bare_subprocess)

    def via(sandbox) -> Callable[[Path], None]:
        def once(work: Path) -> None:
            result = sandbox.run([sandbox.python, "-c", "pass"], work, limits)
            if result.exit_code != 0:
                raise RuntimeError(result.stderr)

        return once

    for mode in MODES:
        works, why = probe_mode(mode)
        if works:
            sandbox = LocalSandbox(mode=mode)
            samples[f"local ({mode})"] = time_runs(runs, via(sandbox))
            notes[f"local ({mode})"] = _memory_note(sandbox) + ("; WEAK: rlimits only" if mode == "bare" else "")
        else:
            notes[f"local ({mode})"] = f"unavailable: {why}"
    docker = DockerSandbox()
    try:
        version = docker.engine_version()
        samples["docker"] = time_runs(docker_runs, via(docker))
        notes["docker"] = f"{version}, image {docker.image}"
    except SandboxError as error:
        notes["docker"] = f"skipped: {error.message}"
    _measure_verify(runs, docker_runs, samples, notes, docker if "docker" in samples else None)
    return samples, notes


def _memory_note(sandbox) -> str:
    iso = sandbox.isolation()
    return "memory cgroup per run" if iso.memory_per_attempt else "no memory cgroup"


def _measure_verify(runs: int, docker_runs: int, samples, notes, docker) -> None:
    """The whole `cases` verification of a correct 6-case solution (fresh dir, staging, judge)."""
    import json

    from rsi.sandbox.local import MODES, LocalSandbox, probe_mode
    from rsi.tasks.spec import Task, TaskSpec, VerifierSpec
    from rsi.verdict import Verdict
    from rsi.verifier import verify

    root = Path(tempfile.mkdtemp(prefix="rsi-bench-task-"))
    try:
        (root / "tests").mkdir()
        cases = [{"args": [x], "expected": 2 * x} for x in (0, 1, -3, 7, 2.5, 1000)]
        (root / "tests" / "cases.json").write_text(json.dumps({"function": "double", "cases": cases}))
        task = Task(
            suite="bench", spec=TaskSpec(id="double", title="double", verifier=VerifierSpec(kind="cases")),
            root=root, instruction="", content_hash="0" * 64,
        )

        def via(sandbox) -> Callable[[Path], None]:
            def once(work: Path) -> None:
                (work / "solution.py").write_text("def double(x):\n    return 2 * x\n")
                outcome = verify(task, work, sandbox)
                if outcome.verdict is not Verdict.PASSED:
                    raise RuntimeError(outcome.reason)

            return once

        for mode in MODES:
            if probe_mode(mode)[0]:
                samples[f"verify, 6 cases (local-{mode})"] = time_runs(runs, via(LocalSandbox(mode=mode)))
        if docker is not None:
            samples["verify, 6 cases (docker)"] = time_runs(docker_runs, via(docker))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def render(samples: dict[str, list[float]], notes: dict[str, str], command: str) -> str:
    base = statistics.median(samples["bare subprocess"])
    lines = [
        SECTION,
        "",
        f"Per-run wall time of `python3 -c pass`; machine: {platform.node()} ({os.cpu_count()} cores, "
        f"{platform.platform()}); date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; load average at the end "
        f"{os.getloadavg()[0]:.1f} (1-minute; at the start {LOAD_AT_START[0]:.1f}; a shared machine: absolute "
        "numbers are noisy, compare rows).",
        "",
        f"Reproduce: `{command}`",
        "",
        "The `verify` rows are a whole `cases` verification (fresh directory, staging, sandboxed runner,",
        "6 cases judged on the host): the per-attempt cost of the hidden verifier.",
        "",
        "| backend | runs | median ms | p90 ms | overhead vs bare (median) ms | notes |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name, values in samples.items():
        median = statistics.median(values)
        over = "-" if name == "bare subprocess" else f"{1000 * (median - base):.1f}"
        lines.append(
            f"| {name} | {len(values)} | {1000 * median:.1f} | {1000 * p90(values):.1f} | {over} | {notes.get(name, '')} |"
        )
    for name, note in notes.items():
        if name not in samples:
            lines.append(f"| {name} | 0 | - | - | - | {note} |")
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="Runs per local backend.")
    parser.add_argument("--docker-runs", type=int, default=15, help="Runs for the docker backend.")
    parser.add_argument("--write", action="store_true", help="Update bench/RESULTS.md.")
    args = parser.parse_args()
    samples, notes = measure(args.runs, args.docker_runs)
    command = f".venv/bin/python bench/sandbox_overhead.py --runs {args.runs} --docker-runs {args.docker_runs} --write"
    block = render(samples, notes, command)
    print(block)
    if args.write:
        replace_section(SECTION, block)


if __name__ == "__main__":
    main()
