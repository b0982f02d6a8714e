"""Issue 11's proof: the README's two commands on a fresh clone, with nothing but Python and git, under load.

A fresh `git clone` of this repository (its HEAD commit), no `.venv`, an empty model cache, and a PATH
from which every service a new user does not have is hidden: bubblewrap, the container engines, SLURM's
commands, PostgreSQL's and Chromium. The PATH is a folder of links to every other executable of the
current PATH, so a hidden tool is *absent* (as on a fresh machine), not a stub that answers. Two
busy-looping processes run throughout (the issue's background load). Then `make demo` and `make test`
alternate, `--rounds` times each, in the clone; each run's wall time, load, pytest counts, every skip
reason, and the demo's closing portfolio lines are recorded.

    .venv/bin/python bench/fresh_proof.py --rounds 3 --write

The first `make` of the clone installs (`make install`, pip from the registry, torch from its pin) and
the first model use converts the GGUF into the empty cache: both are inside that run's wall time, as a
new user waits for them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import results  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
HIDDEN = frozenset(
    ["bwrap", "podman", "docker", "dockerd", "containerd", "runc", "crun", "sbatch", "srun", "salloc", "sinfo", "squeue", "scontrol", "sacct", "scancel", "slurmctld", "slurmd", "slurmdbd", "psql", "pg_ctl", "pg_ctlcluster", "initdb", "postgres", "chromium", "chromium-browser", "google-chrome", "apptainer", "singularity"]
)
SECTION = "## fresh machine proof"
RECORD = "outcomes.jsonl"  # one JSON line per finished run: a stopped proof resumes and renders what ran
UNSET = ("RSI_REQUIRE_SERVICES", "DOCKER_HOST", "RSI_DOCKER_HOST", "RSI_VLLM_PYTHON", "RSI_DB", "RSI_PG_URL",
         "RSI_POSTGRES_URL", "RSI_TORCH_THREADS", "RSI_DTYPE", "RSI_SANDBOX")


@dataclass
class Outcome:
    command: str
    round: int
    started: str
    wall_s: float
    rc: int
    load: str
    summary: str
    skips: list[str] = field(default_factory=list)
    closing: list[str] = field(default_factory=list)


def fresh_path(into: Path) -> str:
    """A folder of links to every executable on PATH except the hidden services: first one of a name wins."""
    into.mkdir(parents=True, exist_ok=True)
    for folder in os.environ["PATH"].split(os.pathsep):
        base = Path(folder)
        if not base.is_dir():
            continue
        for entry in base.iterdir():
            link = into / entry.name
            if entry.name in HIDDEN or link.exists() or link.is_symlink():
                continue
            if entry.is_file() and os.access(entry, os.X_OK):
                link.symlink_to(entry)
    return str(into)


def load() -> float:
    return os.getloadavg()[0]


def run_one(command: str, rnd: int, clone: Path, env: dict[str, str], logs: Path) -> Outcome:
    log = logs / f"{command.replace(' ', '-')}-{rnd}.log"
    if command == "make demo":
        shutil.rmtree(clone / "runs" / "demo-workspace", ignore_errors=True)
    before, started, t0 = load(), datetime.now(UTC).strftime("%H:%M"), time.monotonic()
    with log.open("w") as out:
        rc = subprocess.run(command.split(), cwd=clone, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    wall, text = time.monotonic() - t0, log.read_text(errors="replace")
    outcome = Outcome(command, rnd, started, wall, rc, f"{before:.1f} -> {load():.1f}", "")
    if command == "make test":
        finals = re.findall(r"^=+ (.*(?:passed|failed|error).*) =+$", text, flags=re.M)
        outcome.summary = finals[-1] if finals else "(no pytest summary: see the log)"
        outcome.skips = [line for line in text.splitlines() if line.startswith("SKIPPED")]
    else:
        tail = text[text.rfind("portfolio effect:"):] if "portfolio effect:" in text else text[-1500:]
        outcome.closing = [line for line in tail.splitlines() if line.strip()]
        outcome.summary = outcome.closing[0] if outcome.closing else "(no closing lines: see the log)"
    print(f"{command} round {rnd}: rc {rc}, {wall / 60:.1f} min, load {outcome.load}: {outcome.summary}", flush=True)
    return outcome


def skip_reasons(outcomes: list[Outcome]) -> dict[str, list[int]]:
    """pytest's `-ra` lines ("SKIPPED [n] file:line: reason") summed by reason, one count per test run."""
    tests = [o for o in outcomes if o.command == "make test"]
    by_reason: dict[str, list[int]] = {}
    for i, o in enumerate(tests):
        for line in o.skips:
            match = re.match(r"SKIPPED \[(\d+)\] [^ ]+?(?::\d+)?: (.*)", line)
            if match:
                reason = re.sub(r": Error while.*", "", match.group(2)).strip()  # an engine's error text varies
                by_reason.setdefault(reason, [0] * len(tests))[i] += int(match.group(1))
    return dict(sorted(by_reason.items(), key=lambda item: -sum(item[1])))


def render(outcomes: list[Outcome], commit: str, rounds: int, args_line: str, busy: int, note: str = "") -> str:
    lines = [
        SECTION, "",
        f"Issue 11's proof, {datetime.now(UTC):%Y-%m-%d}: a fresh `git clone` of commit `{commit}` (no `.venv`, an",
        "empty `RSI_CACHE`), on this 2-core machine with bubblewrap, podman/docker, SLURM, PostgreSQL and Chromium",
        "*absent* from PATH (a folder of links to every other executable), no service variables set, and",
        f"{busy} busy-looping process(es) for the whole time. `make demo` and `make test` alternate, {rounds} times each;",
        "the first command of the clone includes `make install` and the model's conversion.", "",
        "| command | round | started (UTC) | wall | exit | 1-min load start -> end | result |",
        "|---|---:|---|---:|---:|---|---|",
    ]
    for o in outcomes:
        lines.append(f"| `{o.command}` | {o.round} | {o.started} | {o.wall_s / 60:.1f} min | {o.rc} | {o.load} | "
                     f"{o.summary} |")
    lines += ["", "What the `make test` runs skipped, by reason (tests skipped per run; each names what is absent):", ""]
    lines += [f"- {reason}: {', '.join(str(n) for n in counts)}" for reason, counts in skip_reasons(outcomes).items()]
    for o in outcomes:
        if o.closing:
            lines += ["", f"`make demo` round {o.round}, its closing lines:", "", *[f"    {c}" for c in o.closing]]
    lines += ["", note] if note else []
    lines += ["", f"Reproduce: `{args_line}`"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None, help="where the clone, PATH and logs go")
    parser.add_argument("--busy", type=int, default=2, help="busy-looping processes beside the runs")
    parser.add_argument("--only", choices=["both", "test", "demo"], default="both")
    parser.add_argument("--write", action="store_true", help="replace the section in bench/RESULTS.md")
    parser.add_argument("--note", default="", help="a paragraph for the section (what else ran, and when)")
    args = parser.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="rsi-fresh-proof-"))
    root.mkdir(parents=True, exist_ok=True)
    clone, logs = root / "clone", root / "logs"
    logs.mkdir(exist_ok=True)
    if not clone.exists():
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True,
                            check=True).stdout.strip()
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env["PATH"] = fresh_path(root / "bin")
    env["RSI_CACHE"] = str(root / "cache")
    print(f"fresh proof in {root} (commit {commit}); logs in {logs}", flush=True)
    line = (f".venv/bin/python bench/fresh_proof.py --rounds {args.rounds} --busy {args.busy}"
            + (f" --only {args.only}" if args.only != "both" else "") + " --write")
    record = root / RECORD
    outcomes = [Outcome(**json.loads(row)) for row in record.read_text().splitlines()] if record.exists() else []
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    commands = {"both": ["make demo", "make test"], "test": ["make test"], "demo": ["make demo"]}[args.only]
    try:
        for rnd in range(1, args.rounds + 1):
            for command in commands:
                if any(o.command == command and o.round == rnd for o in outcomes):
                    continue  # recorded by an earlier, stopped invocation on the same folder
                outcomes.append(run_one(command, rnd, clone, env, logs))
                with record.open("a") as out:  # each run is kept as soon as it ends
                    out.write(json.dumps(asdict(outcomes[-1])) + "\n")
                if args.write:
                    results.replace_section(SECTION, render(outcomes, commit, args.rounds, line, args.busy, args.note))
    finally:
        for process in busy:
            process.kill()
    print(render(outcomes, commit, args.rounds, line, args.busy, args.note))

if __name__ == "__main__":
    main()
