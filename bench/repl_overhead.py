"""What the stateful REPL substrate costs, and what keeping state resident saves.

Measured with the real local sandbox (bubblewrap when it works here) and no model:

- REPL start: `ReplSession.start()` until the server's ready frame (once per attempt);
- one cell round trip for a trivial cell (`x += 1`) — the harness's fixed cost per turn;
- a step that needs a large intermediate value (a 10^6-element list, then one query of it):
  in the REPL the value stays resident, so each step only queries it; without state every step
  is a fresh sandboxed process that rebuilds the value first;
- one whole scripted attempt (2 turns, then the hidden verifier) on pyfuncs/add-two.

    .venv/bin/python bench/repl_overhead.py --cells 50 --starts 10 --write

`--write` replaces the `## repl_overhead` section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from results import replace_section  # bench/results.py (scripts run from bench/)

SECTION = "## repl_overhead"
REPO = Path(__file__).resolve().parent.parent
BUILD = "data = list(range(1_000_000))"
QUERY = "sum(data[::1000])"


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]


def ms(values: list[float]) -> tuple[float, float]:
    return statistics.median(values) * 1000, p90(values) * 1000


def measure(cells: int, starts: int) -> tuple[list[tuple[str, int, float, float]], str]:
    from rsi.harness.repl import ReplSession
    from rsi.sandbox.base import Limits
    from rsi.sandbox.select import make_sandbox

    sandbox = make_sandbox("local")
    base = Path(tempfile.mkdtemp(prefix="rsi-bench-repl-"))
    base.chmod(0o755)
    rows: list[tuple[str, int, float, float]] = []
    limits = Limits(wall_s=600, cpu_s=600)

    def session(index: int) -> ReplSession:
        work = base / f"w{index}"
        work.mkdir()
        return ReplSession(sandbox, work, limits, python=sandbox.python, step_s=30, tools=["submit"])

    try:
        start_times = []
        for index in range(starts):
            repl = session(index)
            began = time.perf_counter()
            repl.start()
            start_times.append(time.perf_counter() - began)
            repl.close()
        rows.append(("REPL start (until ready)", starts, *ms(start_times)))

        repl = session(starts)
        repl.start()
        repl.run("x = 0")
        trivial = []
        for _ in range(cells):
            began = time.perf_counter()
            repl.run("x += 1")
            trivial.append(time.perf_counter() - began)
        rows.append(("cell round trip, trivial cell", cells, *ms(trivial)))

        repl.run(BUILD)
        resident = []
        for _ in range(cells):
            began = time.perf_counter()
            result = repl.run(QUERY)
            resident.append(time.perf_counter() - began)
        assert result.error is None, result.error
        rows.append(("step on a resident 10^6 list (REPL)", cells, *ms(resident)))
        repl.close()

        fresh_dir = base / "fresh"
        fresh_dir.mkdir()
        stateless = []
        for _ in range(max(cells // 5, 5)):
            began = time.perf_counter()
            done = sandbox.run([sandbox.python, "-c", f"{BUILD}\nprint({QUERY})"], fresh_dir, limits)
            stateless.append(time.perf_counter() - began)
        assert done.exit_code == 0, done.stderr
        rows.append(("same step, stateless (fresh sandboxed process)", len(stateless), *ms(stateless)))

        rows.append(("scripted attempt: 2 turns + verifier (add-two)", 5, *ms(_attempts(sandbox, base, 5))))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return rows, sandbox.isolation().backend


def _attempts(sandbox, base: Path, count: int) -> list[float]:  # noqa: ANN001 - a Sandbox
    from rsi.config import Configuration
    from rsi.contracts.schema import ContractSpec
    from rsi.harness.attempt import run_attempt
    from rsi.models.scripted import ScriptedModel
    from rsi.tasks.load import load_suite
    from rsi.verdict import Verdict

    task = next(t for t in load_suite(REPO / "tasks", "pyfuncs") if t.id == "add-two")
    spec = ContractSpec.model_validate(
        {
            "hcp": {"name": "bench", "revision": 1, "created": "2026-01-01T00:00:00Z"},
            "base": {"id": "none", "file": "none.gguf"},
        }
    )
    config = Configuration(name="bench", contract_ref="bench", spec=spec, system_prompt="")
    write = "```python\nopen('solution.py', 'w').write('def add(a, b):\\n    return a + b\\n')\n```"
    times = []
    for index in range(count):
        model = ScriptedModel([write, "```python\nsubmit()\n```"])
        began = time.perf_counter()
        outcome = run_attempt(config, task, model, sandbox, base / f"attempt{index}", seed=index)
        times.append(time.perf_counter() - began)
        assert outcome.verdict is Verdict.PASSED, outcome.reason
    return times


def render(rows: list[tuple[str, int, float, float]], backend: str, command: str) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        SECTION,
        "",
        f"Machine: {platform.node() or 'vm'} ({_cores()} cores, {platform.platform()}), shared with other jobs; "
        f"sandbox backend {backend}; {now}.",
        "",
        f"Reproduce: `{command}`",
        "",
        "| measurement | n | median ms | p90 ms |",
        "|---|---:|---:|---:|",
    ]
    lines += [f"| {name} | {n} | {median:.2f} | {high:.2f} |" for name, n, median, high in rows]
    return "\n".join(lines) + "\n"


def _cores() -> int:
    import os

    return os.cpu_count() or 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=50)
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--write", action="store_true", help="replace this section of bench/RESULTS.md")
    args = parser.parse_args()
    rows, backend = measure(args.cells, args.starts)
    command = f".venv/bin/python bench/repl_overhead.py --cells {args.cells} --starts {args.starts} --write"
    text = render(rows, backend, command)
    print(text)
    if args.write:
        replace_section(SECTION, text)


if __name__ == "__main__":
    main()
