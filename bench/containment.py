"""Containment: the hostile corpus on every sandbox backend present, per verifier kind.

Plays every payload of tests/verifier/hostile_payloads.py (a scripted model writing hostile files
through the real attempt path: HarnessAttempt -> REPL in the sandbox -> verifier -> stored evidence)
on each backend this machine has, and counts per backend and kind: hostile attempts that passed or
escaped (a `passed` verdict, a marker file written on the host, the host's loopback listener
reached, or stored evidence that differs from the trajectory), hostile attempts that ended in
`error`, and honest controls that passed. Known residuals (attacks docs/sandbox.md says a kind does
not stop) are counted apart.

    .venv/bin/python bench/containment.py --write            # every backend present
    .venv/bin/python bench/containment.py --backends local-bare --workers 2

`--write` replaces the `## containment` section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from results import replace_section  # bench/results.py (scripts run from bench/)

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SECTION = "## containment"
BACKENDS = ("local-bwrap", "local-namespaces", "local-userns", "local-bare", "docker")


def make(name: str) -> tuple[Any | None, str]:
    """The backend, or None and why it is absent (the test suite's own constructor)."""
    from tests.sandbox.conftest import make_backend

    try:
        return make_backend(name), ""
    except BaseException as absent:  # noqa: BLE001 - pytest's skip outcome names the missing service
        return None, str(absent) or type(absent).__name__


def escaped(played: Any, connections: int) -> bool:
    return (
        played.verdict == "passed"
        or bool(played.marks)
        or not played.evidence_consistent
        or (played.payload == "loopback_network" and connections > 0)
    )


def measure(name: str, backend: Any, workers: int) -> dict[str, Any]:
    from tests.sandbox.conftest import Listener
    from tests.verifier.hostile_payloads import KINDS, PAYLOADS, run_corpus

    listener = Listener()
    started = time.monotonic()
    try:
        ran = run_corpus(backend, f"bench-{name}", PAYLOADS, listener.port, workers=workers)
        time.sleep(0.2)
        connections = len(listener.connections)
    finally:
        listener.close()
    row: dict[str, Any] = {
        "backend": name, "mode": ran["isolation"].backend, "weak": ran["isolation"].weak, "wall_s": time.monotonic() - started
    }
    for kind in KINDS:
        controls = [p for p in ran["played"] if p.kind == kind and p.honest]
        unavailable = [p.reason for p in controls if p.verdict == "error" and p.reason.startswith("no interpreter")]
        if unavailable:  # the kind says before any attempt that this sandbox cannot run it
            row[kind] = {"unavailable": unavailable[0]}
            continue
        hostile = [p for p in ran["played"] if p.kind == kind and not p.honest and not p.residual]
        honest = [p for p in ran["played"] if p.kind == kind and p.honest]
        residual = [p for p in ran["played"] if p.kind == kind and p.residual]
        row[kind] = {
            "escaped": sorted(p.payload for p in hostile if escaped(p, connections)),
            "errors": sorted(p.payload for p in hostile if p.verdict == "error"),
            "total": len(hostile),
            "honest_passed": sum(p.verdict == "passed" for p in honest),
            "honest": len(honest),
            "residual_passed": sorted(p.payload for p in residual if p.verdict == "passed"),
            "residual": len(residual),
        }
    row["changed"] = sorted(k for k in ran["before"] if ran["before"][k] != ran["after"].get(k)) + (
        ["leftover attempt folders"] if ran["leftovers"] else []
    )
    return row


def render(rows: list[dict[str, Any]], absent: dict[str, str], command: str) -> str:
    from tests.verifier.hostile_payloads import KINDS, PAYLOADS

    load = os.getloadavg()
    lines = [
        SECTION,
        "",
        f"Measured {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')} on {platform.node()} ({os.cpu_count()} CPUs, "
        f"load average {load[0]:.1f} / {load[1]:.1f} at the end), {len(PAYLOADS)} payloads "
        f"(tests/verifier/hostile_payloads.py), each through HarnessAttempt (scripted model, REPL, sandbox, verifier, "
        "stored evidence). A cell: hostile attempts that passed or escaped (passed verdict, a marker written on the host, "
        "the host's loopback listener reached, stored evidence differing from the trajectory) of all hostile attempts "
        "of that kind; then hostile attempts that ended in `error`; then honest controls that passed.",
        "",
        f"    {command}",
        "",
        "| backend (mode) | " + " | ".join(f"{k} kind: escaped / errors / total" for k in KINDS) + " | honest controls | host unchanged | wall |",
        "|---|" + "---|" * len(KINDS) + "---|---|---|",
    ]
    for row in rows:
        kinds = [k for k in KINDS if "unavailable" not in row[k]]
        cells = [
            f"{len(row[k]['escaped'])} / {len(row[k]['errors'])} / {row[k]['total']}" if k in kinds
            else "n/a: no pytest in this sandbox" for k in KINDS
        ]
        honest = sum(row[k]["honest_passed"] for k in kinds)
        total = sum(row[k]["honest"] for k in kinds)
        unchanged = "yes" if not row["changed"] else "NO: " + ", ".join(row["changed"])
        lines.append(
            f"| {row['backend']} ({row['mode']}{'; weak: rlimits only' if row['weak'] else ''}) | " + " | ".join(cells)
            + f" | {honest}/{total} passed | {unchanged} | {row['wall_s']:.0f} s |"
        )
    for name, why in absent.items():
        lines.append(f"| {name} | absent here: {why[:120]} |" + " |" * (len(KINDS) + 2))
    lines.append("")
    if any(row["weak"] for row in rows):
        lines.append("A weak mode isolates neither the file system, the network nor PIDs (rsi falls back to it only where no "
                     "namespace can be had, says so at `rsi run`, and export/promote refuse its evidence): its escapes are "
                     "reads, writes, network and daemons, which only isolation can contain.")
        lines.append("")
    for row in rows:
        for kind in KINDS:
            cell = row[kind]
            if "unavailable" in cell:
                lines.append(f"- {row['backend']}, {kind}: every verification is an `error` before any attempt: {cell['unavailable'][:200]}")
                continue
            if cell["escaped"] or cell["errors"]:
                lines.append(f"- {row['backend']}, {kind}: escaped {', '.join(cell['escaped']) or '-'}; "
                             f"errors {', '.join(cell['errors']) or '-'}")
            if cell["residual"]:
                lines.append(f"- {row['backend']}, {kind}: known residual (docs/sandbox.md), passed "
                             f"{len(cell['residual_passed'])} of {cell['residual']}: {', '.join(cell['residual_passed']) or '-'}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backends", nargs="*", default=list(BACKENDS), choices=BACKENDS)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="replace the section in bench/RESULTS.md")
    args = parser.parse_args()
    rows, absent = [], {}
    for name in args.backends:
        backend, why = make(name)
        if backend is None:
            absent[name] = why
            continue
        print(f"{name}: running the corpus ...", flush=True)
        rows.append(measure(name, backend, args.workers))
    command = "python bench/containment.py " + " ".join(sys.argv[1:])
    text = render(rows, absent, command)
    print(text)
    if args.write:
        replace_section(SECTION, text)


if __name__ == "__main__":
    main()
