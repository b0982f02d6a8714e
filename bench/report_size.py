"""The run report at 10,000 attempts: file size, write time, and how fast headless Chromium opens it.

Builds a synthetic run through the store's own API on real SQLite (8 configurations, 400 tasks of
which 80 heldout, 500 jobs of 20 attempts; verdicts drawn from a seeded per-(configuration, task)
pass rate, with timeouts and infrastructure errors) and writes one trajectory file per attempt
shaped like the harness's (system prompt, task instruction, 2-4 agent turns with code and output,
the final solution). Then `rsi.report.write_report` writes the report and headless Chromium (driven
over the DevTools protocol, tests/report/cdp.py) measures, median of `--loads` fresh loads:

- load: navigation start to the load event (the index is parsed and the overview drawn by then);
- matrix: drawing the configuration x task matrix (first page of 100 task rows);
- transcript: click a cell, inflate and parse its transcript page, draw the conversation;
- search: one search across every transcript (inflates and parses every page), then a second one.

    .venv/bin/python bench/report_size.py [--attempts 10000] [--loads 3] [--write]

`--write` replaces the `## report_size` section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from results import replace_section  # bench/results.py (scripts run from bench/)

from rsi.harness.trajectory import (
    ConfigurationRef,
    FinalMetrics,
    FinalOutcome,
    ModelRef,
    StepMetrics,
    TaskRef,
    Trajectory,
)
from rsi.sandbox.base import Isolation
from rsi.store import AttemptRecord, ConfigInfo, TaskInfo, open_store
from rsi.verdict import Verdict

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "report"))
import cdp  # noqa: E402  (tests/report/cdp.py: the DevTools client the browser tests use)

SECTION = "## report_size"
SUITE = "bench"
SYSTEM = ("You are a careful Python programmer working in a persistent Python session.\n"
          "Reply with exactly one ```python code block per turn. The code runs and you see its output.\n"
          "Write the requested function into the file solution.py, test it, and call submit() when it is correct.")
ISOLATION = Isolation(backend="local-bwrap", network_isolated=True, filesystem_readonly=True, pid_namespace=True,
                      unprivileged_user=True, notes="bubblewrap as nobody")


def _prose(rng: random.Random, vocabulary: list[str], words: int) -> str:
    return " ".join(rng.choice(vocabulary) for _ in range(words))


def _trajectory(rng: random.Random, task: TaskInfo, config: ConfigInfo, verdict: Verdict, seed: int,
                vocabulary: list[str]) -> Trajectory:
    t = Trajectory(
        attempt_id=f"{task.task_id}-{config.config_hash[:8]}-s{seed}",
        task=TaskRef(key=task.key, suite=SUITE, id=task.task_id, content_hash="c" * 16, solution_file="solution.py"),
        configuration=ConfigurationRef(name=config.name, contract_ref="default@r1", config_hash=config.config_hash,
                                       substrate="repl", prompt_style="plain"),
        model=ModelRef(name="embedded:SmolLM2-135M-Instruct"), sandbox=ISOLATION, seed=seed,
    )
    t.add_step("system", message=SYSTEM)
    t.add_step("user", message=f"# {task.task_id}\n\nWrite a Python file `solution.py` that defines the function:\n\n"
                               f"    def {task.task_id.replace('-', '_')}(values):\n\n" + "Explain the rules. " * 12)
    code = ""
    for turn in range(1, rng.randint(2, 4) + 1):
        body = "\n".join(f"    total = total + values[{i}] * {rng.randint(1, 99)}" for i in range(rng.randint(4, 12)))
        code = f"def {task.task_id.replace('-', '_')}(values):\n    total = 0\n{body}\n    return total\n"
        # verbose: the model thinks aloud (random words: compresses worse than real text) and prints more
        thoughts = _prose(rng, vocabulary, rng.randint(300, 800)) if vocabulary else "Let me write it."
        lines = rng.randint(5, 30) if vocabulary else rng.randint(1, 6)
        t.add_step("agent", turn=turn, message=f"{thoughts}\n```python\n{code}```", code=code,
                   observation="".join(f"[{rng.randint(0, 10**6)}, {rng.randint(0, 10**6)}]\n" for _ in range(lines)),
                   metrics=StepMetrics(prompt_tokens=rng.randint(200, 900), completion_tokens=rng.randint(40, 200)))
    reason = {"passed": "6/6 cases passed", "failed": f"{rng.randint(0, 5)}/6 cases passed",
              "timeout": "agent time limit reached", "error": "sandbox failed to start"}[verdict.value]
    t.outcome = FinalOutcome(verdict=verdict, reason=reason, ended_by="submit", final_code=code)
    t.final_metrics = FinalMetrics(turns=turn, wall_s=rng.uniform(2, 60))
    return t


def build(folder: Path, attempts: int, verbose: bool, seed: int = 0) -> tuple[object, str]:
    """A store with one run of `attempts` attempts (20 per job) and their trajectory files."""
    rng = random.Random(seed)
    vocabulary = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 10)))
                  for _ in range(3000)] if verbose else []
    store = open_store(f"sqlite:///{folder / 'rsi.sqlite'}")
    configs = [ConfigInfo(f"{c:02d}" + "f" * 62, f"variant-{c}") for c in range(8)]
    tags = ["strings", "math", "lists", "parsing", "dicts", "recursion"]
    tasks = [TaskInfo(SUITE, f"task-{t:03d}", "heldout" if t % 5 == 4 else "train", (tags[t % 6], tags[(t * 7) % 6]))
             for t in range(400)]
    skill = {(c.config_hash, t.key): rng.random() ** 3 for c in configs for t in tasks}
    store.record_configurations(configs)
    store.record_tasks(tasks)
    train = [t for t in tasks if t.split == "train"]
    run = store.create_run(portfolio="bench", suite=SUITE, budget={"attempts": attempts}, scheduler="thompson",
                           args={"tasks": [t.key for t in train], "configs": [c.config_hash for c in configs]})
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for job_index in range(attempts // 20):
        config = configs[rng.randrange(len(configs))]
        planned = rng.sample(tasks, 20)
        store.start_job(run.id, config.config_hash, [t.key for t in planned], 1, job_index=job_index,
                        details={"reason": f"thompson: {rng.randint(1, 20)} of {rng.randint(20, 320)} open tasks rate "
                                           "this configuration best", "scheduler": "thompson"})
        records = []
        for i, task in enumerate(planned):
            roll = rng.random()
            verdict = (Verdict.ERROR if roll < 0.01 else Verdict.TIMEOUT if roll < 0.05
                       else Verdict.PASSED if rng.random() < skill[(config.config_hash, task.key)] else Verdict.FAILED)
            path = folder / "attempts" / f"j{job_index:04d}" / f"{task.task_id}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(_trajectory(rng, task, config, verdict, job_index * 100 + i, vocabulary).model_dump_json())
            when = start + timedelta(seconds=job_index * 60 + i)
            records.append(AttemptRecord(task_key=task.key, verdict=verdict, seed=i, reason="", tokens=rng.randint(500, 4000),
                                         wall_s=rng.uniform(2, 60), trajectory_path=str(path), started=when, finished=when))
        store.record_attempts(run.id, job_index, records)
        store.finish_job(run.id, job_index)
    store.finish_run(run.id)
    return store, run.id


def measure(report: Path, loads: int) -> dict[str, float]:
    """Median seconds of `loads` fresh loads (a new tab connection each) and of the views' work."""
    browser = cdp.Browser(cdp.chromium_path(os.environ.get("RSI_CHROMIUM")) or "chromium")
    timings: dict[str, list[float]] = {"load": [], "matrix": [], "transcript": [], "search": [], "search_again": []}
    try:
        for _ in range(loads):
            page = browser.page()
            page.navigate("about:blank")
            timings["load"].append(page.navigate(report.as_uri()))
            assert page.errors == [], page.errors
            started = time.monotonic()
            page.evaluate("location.hash = '#matrix'")
            page.wait_for("document.querySelectorAll('td.cell').length", timeout_s=60)
            timings["matrix"].append(time.monotonic() - started)
            started = time.monotonic()
            page.click("td.cell.failed")
            page.wait_for("document.querySelectorAll('#viewer-attempt .step').length", timeout_s=60)
            timings["transcript"].append(time.monotonic() - started)
            page.evaluate("document.getElementById('viewer-close').click(); location.hash = '#search'")
            started = time.monotonic()
            page.evaluate("document.getElementById('search-input').value = 'sandbox failed';"
                          " document.getElementById('search-form').requestSubmit()")
            page.wait_for("/match/.test(document.getElementById('search-status').textContent)", timeout_s=600)
            timings["search"].append(time.monotonic() - started)
            started = time.monotonic()  # a second search: every transcript's text is cached by now
            page.evaluate("document.getElementById('search-status').textContent = '';"
                          "document.getElementById('search-input').value = 'cases passed';"
                          " document.getElementById('search-form').requestSubmit()")
            page.wait_for("/match/.test(document.getElementById('search-status').textContent)", timeout_s=600)
            timings["search_again"].append(time.monotonic() - started)
            assert page.errors == [], page.errors
            page.close()
    finally:
        browser.close()
    return {k: statistics.median(v) for k, v in timings.items()}


def one(attempts: int, loads: int, verbose: bool) -> dict[str, float]:
    """Build, write and open one synthetic run; its numbers."""
    from rsi.report import write_report

    with tempfile.TemporaryDirectory(prefix="rsi-report-bench-") as tmp:
        folder = Path(tmp)
        started = time.monotonic()
        store, run_id = build(folder, attempts, verbose)
        build_s = time.monotonic() - started
        trajectories = sum(p.stat().st_size for p in (folder / "attempts").rglob("*.json"))
        started = time.monotonic()
        report = write_report(store, run_id, folder / "report.html")
        write_s = time.monotonic() - started
        numbers = {"trajectories": trajectories, "build_s": build_s, "write_s": write_s, "size": report.stat().st_size}
        numbers.update(measure(report, loads))
    print(("verbose" if verbose else "compact"), {k: round(v, 3) for k, v in numbers.items()}, flush=True)
    return numbers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=10_000)
    parser.add_argument("--loads", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="replace the section in bench/RESULTS.md")
    args = parser.parse_args()
    load_start = os.getloadavg()
    shapes = {"compact": one(args.attempts, args.loads, False), "verbose": one(args.attempts, args.loads, True)}
    load_end = os.getloadavg()
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    c, v = shapes["compact"], shapes["verbose"]
    per = {k: s["trajectories"] / args.attempts / 1024 for k, s in shapes.items()}
    rows = [
        ("trajectory files on disk", f"{c['trajectories']:,} bytes ({per['compact']:.1f} KiB/attempt)",
         f"{v['trajectories']:,} bytes ({per['verbose']:.1f} KiB/attempt)"),
        ("report.html", f"**{c['size']:,} bytes** ({c['size'] / 2**20:.1f} MiB)",
         f"**{v['size']:,} bytes** ({v['size'] / 2**20:.1f} MiB)"),
        (f"write_report (store + {args.attempts:,} trajectory files, chart, render)", f"{c['write_s']:.1f} s",
         f"{v['write_s']:.1f} s"),
        (f"browser: navigation to load event (median of {args.loads})", f"**{c['load']:.2f} s**", f"**{v['load']:.2f} s**"),
        ("browser: draw the matrix (100 task rows x 8 configurations)", f"{c['matrix']:.2f} s", f"{v['matrix']:.2f} s"),
        ("browser: click a cell -> its transcript drawn", f"{c['transcript']:.2f} s", f"{v['transcript']:.2f} s"),
        (f"browser: search across all {args.attempts:,} transcripts", f"{c['search']:.2f} s", f"{v['search']:.2f} s"),
        ("browser: a second search (texts cached)", f"{c['search_again']:.2f} s", f"{v['search_again']:.2f} s"),
    ]
    table = "\n".join(["| measure | compact transcripts | verbose transcripts |", "|---|---|---|",
                        *[f"| {a} | {b} | {d} |" for a, b, d in rows]])
    print(table)
    print(f"load average {load_start[0]:.2f} at start, {load_end[0]:.2f} at end; {date}")
    if not args.write:
        return
    body = "\n".join([
        f"The run report of a synthetic {args.attempts:,}-attempt run (8 configurations, 400 tasks, "
        f"{args.attempts // 20} jobs; real SQLite through the store's API; one trajectory file per attempt shaped like "
        "the harness's), opened in headless Chromium from Debian over the DevTools protocol. Two transcript shapes: "
        "*compact* (2-4 short turns) and *verbose* (each turn 300-800 random words of thinking aloud and 5-30 "
        "output lines: random words compress worse than real text, so this is the harder case). Transcript pages "
        "are gzip+base64 in both. Machine: 2 shared cores, busy with other jobs; 1-minute load average "
        f"{load_start[0]:.2f} at the start, {load_end[0]:.2f} at the end ({date}).",
        "", table, "",
        f"Reproduce: `nice -n 10 .venv/bin/python bench/report_size.py --attempts {args.attempts} --loads {args.loads} "
        "--write`",
    ])
    replace_section(SECTION, f"{SECTION}\n\n{body}")


if __name__ == "__main__":
    main()
