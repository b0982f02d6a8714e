"""Where a real `rsi run` spends its CPU: ticks of every process of its tree, and the run's Python stacks.

A fresh workspace (as bench/run_throughput.py makes one), the shipped default portfolio's text
configurations on the first `--tasks` tasks of the pyfuncs train split, for `--minutes`, then SIGINT.
Every `--every` seconds it reads /proc for the CPU ticks of each process under the run, and prints them
by kind (the `rsi run` process, the verifiers' sandboxed Python, bwrap, ...). With `--py-spy PATH` (the
py-spy binary; it is not a dependency of the project) it also records the `rsi run` process's stacks for
`--spy-s` seconds after `--spy-after` seconds, and prints the model thread's share by rsi call site.

    .venv/bin/python bench/profile_run.py --minutes 3 [--py-spy /path/to/py-spy]
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import run_throughput as rt  # bench/run_throughput.py (scripts run from bench/)

KINDS = ("verifier", "repl_server", "pytest", "bwrap", "unshare", " run ")


def _tree(root: int) -> dict[int, tuple[str, int]]:
    """pid -> (command line, user+system ticks) for `root` and its descendants."""
    stats: dict[int, tuple[int, int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                text = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            fields = text[text.rfind(")") + 2 :].split()
            stats[int(name)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    children = collections.defaultdict(list)
    for pid, (parent, _) in stats.items():
        children[parent].append(pid)
    found, stack = {}, [root]
    while stack:
        pid = stack.pop()
        if pid in stats:
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                command = "?"
            found[pid] = (command, stats[pid][1])
        stack.extend(children[pid])
    return found


def _kind(command: str) -> str:
    return next((k.strip() for k in KINDS if k in command), command[:60] or "?")


def spy_summary(raw: Path, top: int = 20) -> list[str]:
    """The model thread's samples by rsi call chain (py-spy's raw format, recorded with --threads)."""
    shares: collections.Counter[str] = collections.Counter()
    threads: collections.Counter[str] = collections.Counter()
    for line in raw.read_text().splitlines():
        stack, count = line.rsplit(" ", 1)
        frames = stack.split(";")
        threads[re.sub(r"\d+", "N", frames[0])] += int(count)
        if "rsi-embedded" in frames[0]:
            chain = " <- ".join(f.split(" (")[0] + ":" + f.rsplit(":", 1)[-1].rstrip(")") for f in frames if "rsi/" in f)
            shares[chain[-110:]] += int(count)
    total, model = sum(threads.values()), sum(shares.values())
    lines = ["threads: " + ", ".join(f"{name} {n / total:.1%}" for name, n in threads.most_common(4))]
    lines += [f"{n / model:6.1%} {chain}" for chain, n in shares.most_common(top)]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--every", type=float, default=0.2)
    parser.add_argument("--py-spy", default="")
    parser.add_argument("--spy-after", type=float, default=25.0)
    parser.add_argument("--spy-s", type=float, default=60.0)
    args = parser.parse_args()
    variant = rt.Variant("this code", rt.ROOT, flags=("--stop-grace-s", "0"), new=True, key="new")
    with tempfile.TemporaryDirectory(prefix="rsi-profile-") as folder:
        ws = rt.fresh_workspace(variant, Path(folder) / "ws")
        run_args = ["run", "-p", "text", "--budget-attempts", "100000", "--limit-tasks", str(args.tasks), "--seed", "7",
                    "--no-report", "--json", *variant.flags]
        started = time.monotonic()
        proc = rt._cli(variant, run_args, ws, Path(folder) / "run.log")
        spy = None
        ticks: dict[int, tuple[str, int]] = {}
        while time.monotonic() - started < args.minutes * 60:
            for pid, (command, used) in _tree(proc.pid).items():
                ticks[pid] = (command, max(used, ticks.get(pid, ("", 0))[1]))
            if args.py_spy and spy is None and time.monotonic() - started > args.spy_after:
                spy = subprocess.Popen([args.py_spy, "record", "--pid", str(proc.pid), "-d", str(int(args.spy_s)), "-r", "100",
                                        "--nonblocking", "--threads", "--format", "raw", "-o", str(Path(folder) / "spy.txt")],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(args.every)
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        by_kind: collections.Counter[str] = collections.Counter()
        for command, used in ticks.values():
            by_kind[_kind(command)] += used
        total = sum(by_kind.values()) or 1
        print(f"CPU ticks of the run's tree over {args.minutes} min ({os.cpu_count()} cores):")
        for kind, used in by_kind.most_common(8):
            print(f"  {used / total:6.1%}  {kind}")
        summary = [line for line in (Path(folder) / "run.log").read_text(errors="replace").splitlines() if "decoding steps" in line]
        print("\n".join(s.strip().strip('",') for s in summary))
        if spy is not None:
            spy.wait()
            print("\n".join(spy_summary(Path(folder) / "spy.txt")))


if __name__ == "__main__":
    sys.exit(main())
