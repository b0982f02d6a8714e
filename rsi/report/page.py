"""Render a `RunReport` (+ packed transcripts and the chart PNG) into one self-contained HTML page.

Static parts (facts, chart, splits, configurations, jobs) are HTML written here; the matrix, the
trajectory viewer and the search are drawn by the page's own script (assets/report.js) from a
compact index embedded as JSON. Transcripts sit in one `<script type="application/json">` per page
of attempts and are parsed only when opened, so a 10,000-attempt report opens as fast as a small
one. A Content-Security-Policy forbids every network request: the file works offline and cannot
leak what it shows.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from functools import cache
from html import escape
from importlib import resources
from typing import Any

from rsi.report.records import VERDICTS, RunReport
from rsi.report.transcripts import TranscriptPages, embed_json

CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
       "connect-src data: blob:")
INDEX_REASON_CHARS = 240


@cache
def asset(name: str) -> str:
    """A file of rsi/report/assets (the page's CSS and script), read once per process."""
    return resources.files("rsi.report").joinpath("assets", name).read_text(encoding="utf-8")


def table(headers: list[str], rows: list[list[Any]], left: int | set[int] = 1, cls: str = "") -> str:
    """An HTML table; cells are trusted HTML (callers escape). Text columns align left: the first
    `left` columns, or the column numbers in `left`."""
    lefts = set(range(left)) if isinstance(left, int) else left
    head = "".join(f'<th class="{"l" if i in lefts else ""}">{escape(h)}</th>' for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(f'<td class="{"l" if i in lefts else ""}">{c}</td>' for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _pct(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def _facts(report: RunReport) -> str:
    s = report.summary
    budget = ", ".join(f"{k} {v}" for k, v in s.budget.items() if v is not None) or "-"
    finished = f"{s.finished:%Y-%m-%d %H:%M:%S}Z" if s.finished else "-"
    p = report.portfolio
    facts = [
        ["run", f"<code>{escape(s.run_id)}</code>"],
        ["status", escape(s.status)],
        ["portfolio / suite / split", escape(f"{s.portfolio} / {s.suite} / {s.split}")],
        ["scheduler", escape(report.scheduler or "-")],
        ["created / finished", escape(f"{s.created:%Y-%m-%d %H:%M:%S}Z / {finished}")],
        ["budget", escape(budget)],
        ["jobs / configurations / tasks", f"{s.jobs} / {len(report.configs)} / {len(report.tasks)}"],
        ["attempts (counted)", f"{s.attempts} ({s.budget_used:.0%} of budget)"],
        ["passes", f"{s.passes} ({s.pass_rate:.1%} of attempts)"],
        ["infrastructure errors", f"{s.errors} (retried; never counted)"],
        ["coverage", f"<b>{s.covered}/{s.tasks}</b> {escape(s.coverage_text.split(' ', 1)[1])}"],
        ["best single configuration", f"{escape(p.best or '-')} ({p.best_covered}/{p.total})"],
        ["wall time of the run", escape(f"{s.wall_s:.0f} s" + ("" if s.wall_from == "sessions" else f" ({s.wall_from})"))],
        ["tokens (prompt + completion) / attempts' summed time", f"{s.tokens} / {s.attempt_s:.1f} s"],
        ["seed", str(s.seed)],
    ]
    return "<table class='kv'>" + "".join(f"<tr><th class='l'>{k}</th><td class='l'>{v}</td></tr>"
                                          for k, v in facts) + "</table>"


def _splits(report: RunReport) -> str:
    rows = [[escape(s.split), s.tasks, f"{s.covered} ({_pct(s.covered, s.tasks)})", s.attempts, s.passes,
             _pct(s.passes, s.attempts)] for s in report.splits]
    out = table(["split", "tasks", "covered", "attempts", "passes", "pass rate"], rows)
    names = [c.name for c in report.configs]
    if len(report.splits) > 1 and names:
        by = [[escape(n), *[s.solved_by_config.get(n, 0) for s in report.splits]] for n in names]
        out += "<p class='note'>tasks solved per configuration and split</p>"
        out += table(["configuration", *[s.split for s in report.splits]], by)
    return out


def _configs(report: RunReport) -> str:
    return table(
        ["configuration", "hash", "contract", "attempts", "passes", "pass rate", "tasks solved", "unique", "errors",
         "tokens", "wall s"],
        [[escape(c.name), f"<code>{c.config_hash[:12]}</code>", escape(c.contract_ref or "-"), c.attempts, c.passes,
          _pct(c.passes, c.attempts), c.tasks_solved, c.unique_solves, c.errors, c.tokens, f"{c.wall_s:.1f}"]
         for c in sorted(report.configs, key=lambda c: (-c.tasks_solved, c.name))],
        left=3,
    )


def _detail_text(details: dict[str, Any]) -> str:
    return "; ".join(f"{k}={v}" for k, v in details.items())


def _jobs(report: RunReport) -> str:
    intro = []
    if report.common_reason:
        intro.append(f"every job's stored reason reads <q>{escape(report.common_reason)}</q> (N: its own "
                     "numbers, visible in the columns below)")
    if report.common_details:
        intro.append("every job's details: " + escape(_detail_text(report.common_details)))
    show_reason = any(j.reason for j in report.jobs)
    show_details = any(j.details for j in report.jobs)
    headers = ["job", "configuration", "status", "open before", "planned (open)", "x", "attempts", "passes",
               "new covered", "covered after", "errors", "tokens", "wall s"]
    headers += ["reason"] * show_reason + ["details"] * show_details
    rows = []
    for j in report.jobs:
        row: list[Any] = [j.job_index, escape(j.config_name), escape(j.status), j.open_before,
                          f"{j.tasks_planned} ({j.planned_open})", j.attempts_per_task, j.attempts, j.passes,
                          f"<b>{j.new_covered}</b>" if j.new_covered else "0", j.covered_after, j.errors, j.tokens,
                          f"{j.wall_s:.1f}"]
        if show_reason:
            row.append(f"<span class='note'>{escape(j.reason)}</span>")
        if show_details:
            row.append(f"<span class='note'>{escape(_detail_text(j.details))}</span>")
        rows.append(row)
    note = "".join(f"<p class='note'>{line}</p>" for line in intro)
    return note + table(headers, rows, left={1, 2, 13, 14}, cls="jobs")


def _index(report: RunReport, pages: TranscriptPages) -> dict[str, Any]:
    """The compact index the script reads at load: arrays, not objects, to keep 10,000 attempts small."""
    code = {v: i for i, v in enumerate(VERDICTS)}
    return {
        "run": report.summary.run_id,
        "verdicts": list(VERDICTS),
        "configs": [[c.name, c.config_hash[:12], c.attempts, c.passes, c.tasks_solved] for c in report.configs],
        "tasks": [[t.key, t.split, t.tags, int(t.target)] for t in report.tasks],
        "tags": report.tags,
        "attempts": [[a.job, a.config, a.task, a.attempt_index, code.get(a.verdict, 3), a.tokens, a.wall_s,
                      a.reason[:INDEX_REASON_CHARS], a.error_class, a.started, a.error_retries,
                      pages.page_of.get(a.n, -1), int(bool(a.trajectory_path))] for a in report.attempts],
        "cells": [[c.config, c.task, *[c.counts.get(v, 0) for v in VERDICTS], c.attempts] for c in report.cells],
        "pages": len(pages.pages),
        "compressed": pages.compressed,
    }


def _blobs(pages: TranscriptPages) -> str:
    kind = "application/x-rsi-gzip-base64" if pages.compressed else "application/json"
    parts = [f'<script type="application/json" id="rsi-strings">{embed_json(pages.strings)}</script>']
    parts += [f'<script type="{kind}" id="rsi-page-{i}">{page}</script>' for i, page in enumerate(pages.pages)]
    return "\n".join(parts)


def render_run_page(report: RunReport, pages: TranscriptPages, png: bytes | None) -> str:
    """The report's HTML text."""
    s = report.summary
    chart = (f'<img class="chart" alt="portfolio coverage against single configurations" '
             f'src="data:image/png;base64,{base64.b64encode(png).decode()}">'
             if png else "<p class='note'>no jobs yet</p>")
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>rsi run {escape(s.run_id)}</title><style>{asset('report.css')}</style></head><body>"
        f"<header><h1>rsi run <code>{escape(s.run_id)}</code></h1><nav id='tabs'>"
        "<a href='#overview' data-view='overview'>Overview</a><a href='#matrix' data-view='matrix'>Matrix</a>"
        "<a href='#jobs' data-view='jobs'>Jobs</a><a href='#search' data-view='search'>Search</a></nav></header>"
        "<main>"
        f"<section id='view-overview' class='view'>{_facts(report)}"
        f"<h2>Portfolio coverage over chronological jobs</h2>{chart}"
        f"<h2>Train / heldout</h2>{_splits(report)}"
        f"<h2>Configurations</h2>{_configs(report)}</section>"
        "<section id='view-matrix' class='view' hidden><div id='matrix-controls' class='controls'></div>"
        "<div id='matrix'></div><div id='matrix-pager' class='pager'></div></section>"
        f"<section id='view-jobs' class='view' hidden><h2>Jobs: what the scheduler knew and chose</h2>{_jobs(report)}"
        "</section>"
        "<section id='view-search' class='view' hidden><form id='search-form' class='controls'>"
        "<input id='search-input' type='search' placeholder='search transcripts, code, reasons' size='40'>"
        "<button type='submit'>Search</button> <span id='search-status' class='note'></span></form>"
        "<div id='search-results'></div></section>"
        "</main>"
        "<aside id='viewer' hidden><div class='viewer-head'><span id='viewer-title'></span>"
        "<button id='viewer-close' title='close (Esc)'>close</button></div>"
        "<div class='viewer-body'><ol id='viewer-list'></ol><div id='viewer-attempt'></div></div></aside>"
        f"<footer class='note'>written {now} by rsi</footer>"
        f'<script type="application/json" id="rsi-index">{embed_json(_index(report, pages))}</script>\n'
        f"{_blobs(pages)}\n"
        f"<script>{asset('report.js')}</script></body></html>\n"
    )
