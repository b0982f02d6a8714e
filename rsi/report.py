"""The HTML report of one run: a single self-contained file (tables + the coverage plot as base64 PNG).

It renders a `RunSummary` (rsi/run/summary.py), the same model `rsi status/coverage --json` print,
so the report never disagrees with the terminal. No external CSS, scripts or images.
"""

from __future__ import annotations

import base64
import os
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

from rsi.run.summary import RunSummary, summarize_run

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem;color:#222;max-width:72rem}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.85rem}td,th{padding:.25rem .6rem;border-bottom:1px solid #eee;text-align:right}
th{background:#f4f4f4}td.l,th.l{text-align:left}.pass{color:#1a7f37}.none{color:#999}
.kv td{text-align:left}code{font-size:.85rem}
"""


def _table(headers: list[str], rows: list[list[Any]], left: int = 1) -> str:
    head = "".join(f'<th class="{"l" if i < left else ""}">{escape(h)}</th>' for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(f'<td class="{"l" if i < left else ""}">{cell}</td>' for i, cell in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_report(summary: RunSummary, png: bytes | None = None) -> str:
    """The report's HTML text."""
    s = summary
    budget = ", ".join(f"{k} {v}" for k, v in s.budget.items() if v is not None) or "-"
    facts = [
        ["run", f"<code>{escape(s.run_id)}</code>"],
        ["status", escape(s.status)],
        ["portfolio / suite / split", escape(f"{s.portfolio} / {s.suite} / {s.split}")],
        ["created / finished", escape(f"{s.created:%Y-%m-%d %H:%M:%S}Z / "
                                      f"{s.finished:%Y-%m-%d %H:%M:%S}Z" if s.finished else f"{s.created:%Y-%m-%d %H:%M:%S}Z / -")],
        ["budget", escape(budget)],
        ["jobs", str(s.jobs)],
        ["attempts (counted)", f"{s.attempts} ({s.budget_used:.0%} of budget)"],
        ["passes", f"{s.passes} ({s.pass_rate:.1%} of attempts)"],
        ["infrastructure errors", f"{s.errors} (retried; never counted)"],
        ["coverage", f"<b>{s.covered}/{s.tasks}</b> ({s.coverage:.1%})"],
        ["tokens", str(s.tokens)],
        ["seed", str(s.seed)],
    ]
    kv = "<table class='kv'>" + "".join(f"<tr><th class='l'>{k}</th><td>{v}</td></tr>" for k, v in facts) + "</table>"
    plot = (f'<img alt="coverage vs attempts" src="data:image/png;base64,{base64.b64encode(png).decode()}">'
            if png else "<p class='none'>no counted attempts yet</p>")
    configs = _table(
        ["configuration", "hash", "jobs", "attempts", "passes", "pass rate", "tasks solved", "unique", "errors", "tokens"],
        [[escape(c.name), f"<code>{c.config_hash}</code>", c.jobs, c.attempts, c.passes, f"{c.pass_rate:.1%}",
          c.tasks_solved, c.unique_solves, c.errors, c.tokens] for c in s.config_lines],
        left=2,
    )
    jobs = _table(
        ["job", "configuration", "status", "planned", "attempts", "passes", "new covered", "errors", "why"],
        [[j.job_index, escape(j.config_name), escape(j.status), j.planned, j.attempts, j.passes, j.new_covered, j.errors,
          f'<span class="none">{escape(j.reason)}</span>'] for j in s.job_lines],
        left=0,
    )
    tasks = _table(
        ["task", "attempts", "passes", "errors", "first pass (job)", "solved by"],
        [[escape(t.task_key), t.attempts, f'<span class="{"pass" if t.passes else "none"}">{t.passes}</span>', t.errors,
          "-" if t.first_pass_job is None else t.first_pass_job, escape(", ".join(t.solved_by)) or "-"]
         for t in s.task_lines],
    )
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>rsi run {escape(s.run_id)}</title><style>{_CSS}</style></head><body>"
        f"<h1>rsi run <code>{escape(s.run_id)}</code></h1>{kv}"
        f"<h2>Coverage vs attempts</h2>{plot}"
        f"<h2>Per configuration</h2>{configs}"
        f"<h2>Jobs</h2>{jobs}"
        f"<h2>Per task</h2>{tasks}"
        f"<p class='none'>written {now} by rsi</p></body></html>\n"
    )


def write_report(store: Any, run_id: str, path: Path) -> Path:
    """Summarize `run_id` from the store and write its report to `path` (atomically)."""
    from rsi.run.plot import curve_png

    summary = summarize_run(store, run_id)
    png = curve_png(summary.curve, summary.tasks, f"{summary.portfolio} on {summary.suite}") if summary.curve else None
    html = render_report(summary, png)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(html, encoding="utf-8")
    os.replace(tmp, path)
    return path
