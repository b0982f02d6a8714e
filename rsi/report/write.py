"""The report edges: read a run from the store (or the generations from the workspace), write one file.

Writes are atomic (temporary file, then rename): a browser refreshing the report never reads half.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rsi.report.extract import build_run_report
from rsi.report.records import RunReport
from rsi.report.transcripts import COMPRESS_OVER_BYTES, pack_pages, read_transcripts
from rsi.store.rows import planned_keys


def _write_atomic(path: Path, text: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def find_run(store: Any, run_id: str | None) -> Any:
    """The run row of `run_id` (None: the latest run); a missing one is a UserInputError naming recent runs."""
    from rsi.errors import UserInputError

    runs = store.list_runs()
    if run_id is None:
        if not runs:
            raise UserInputError("no runs in the store yet", hint="start one with `rsi run`")
        return runs[-1]
    for run in runs:
        if run.id == run_id:
            return run
    raise UserInputError(f"no run {run_id!r} in {store.url}",
                         hint=f"latest runs: {', '.join(r.id for r in runs[-5:]) or 'none'}")


def load_run_report(store: Any, run_id: str | None, run_dir: Path | None = None) -> RunReport:
    """Read `run_id`'s rows (None: the latest run's) from the store and fold them into a RunReport;
    `run_dir` is the run's folder, where its wall time is kept (rsi.run.summary.run_elapsed)."""
    from rsi.run.summary import run_elapsed

    run = find_run(store, run_id)
    jobs = store.list_jobs(run.id)
    attempts = store.list_attempts(run.id)
    hashes = {j.configuration_hash for j in jobs} | {a.configuration_hash for a in attempts} | set(planned_keys(run)[0])
    return build_run_report(run, jobs, attempts, store.list_configurations(hashes), store.list_tasks(run.suite),
                            run_elapsed(run_dir) if run_dir is not None else None)


def write_report(store: Any, run_id: str | None, path: Path, *, root: Path | None = None,
                 compress_over_bytes: int = COMPRESS_OVER_BYTES, run_dir: Path | None = None) -> Path:
    """Write the run report of `run_id` (None: the latest run) to `path`.

    Relative trajectory paths resolve against `root`. Transcripts above `compress_over_bytes` are
    gzip-compressed in the page (see rsi.report.transcripts).
    """
    from rsi.report.chart import portfolio_png
    from rsi.report.page import render_run_page

    report = load_run_report(store, run_id, run_dir)
    pages = pack_pages(read_transcripts(report.attempts, root), compress_over_bytes=compress_over_bytes)
    p = report.portfolio
    png = (portfolio_png(p.jobs, p.union, p.per_config, p.total, p.best,
                         f"{report.summary.portfolio} on {report.summary.suite}") if p.jobs else None)
    return _write_atomic(path, render_run_page(report, pages, png))


def write_lineage_report(workspace: Any, path: Path) -> Path:
    """Write the lineage report (every generation side by side) of `workspace` to `path`."""
    from rsi.generation.lineage import lineage_png
    from rsi.report.lineage import load_lineage_report
    from rsi.report.lineage_page import lift_tokens_chart, render_lineage_page

    report = load_lineage_report(workspace)
    rows = [g.row for g in report.generations]
    return _write_atomic(path, render_lineage_page(report, lineage_png(rows) if rows else None,
                                                   lift_tokens_chart(report)))
