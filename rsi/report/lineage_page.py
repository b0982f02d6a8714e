"""Render a `LineageReport` as one offline HTML page: generations side by side, then each one's detail.

The side-by-side table has one column per generation and one row per measure (coverage, lift against the
parent and generation 0 and retention with their 95% intervals, tokens and seconds per task, k needed, the cache's
share, the looks each split has had, each carrier's share where `rsi ablate` measured it, revisions, adapters,
datasets), above a chart of lift and tokens per generation and the ledger chart; fields the ledger gained after
this was written appear in an "other recorded fields" row rather than being dropped. Below it, per
generation: the contract diff it made, the adapter's lineage and the evaluation's outputs.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from html import escape
from typing import Any

from rsi.report.lineage import GenerationColumn, LineageReport
from rsi.report.page import CSP, asset, table


def _rounded(value: Any) -> Any:
    """Floats to 4 significant digits, inside containers too (0.30000000000000004 helps no reader)."""
    if isinstance(value, float):
        return float(f"{value:.4g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    return value


def _value(value: Any) -> str:
    if value is None or value == "" or value == {} or value == []:
        return "<span class='note'>-</span>"
    if isinstance(value, dict | list):
        return f"<code>{escape(json.dumps(_rounded(value), sort_keys=True, default=str))}</code>"
    if isinstance(value, float):
        return f"{value:.4g}"
    return escape(str(value))


def _fraction(part: Any, whole: Any) -> str:
    if part is None or not whole:
        return "<span class='note'>-</span>"
    return f"{part}/{whole} ({part / whole:.1%})"


def _interval(value: Any, ci: Any, signed: bool = False) -> str:
    if value is None:
        return "<span class='note'>-</span>"
    text = f"{value:+.3f}" if signed else f"{value:.3f}"
    if isinstance(ci, list | tuple) and len(ci) == 2:
        text += f" <span class='note'>[{ci[0]:.3f}, {ci[1]:.3f}]</span>"
    return f"<b>{text}</b>"


def _measures(g: GenerationColumn) -> dict[str, str]:
    r = g.row
    kept = (f" <span class='note'>({g.retention_kept}/{g.retention_covered} covered tasks kept)</span>"
            if g.retention_covered is not None else "")
    adapter = r.adapter_id
    return {
        "status": _value(r.status),
        "created": _value(r.created),
        "contract revision": escape(f"{r.contract} r{r.revision_start} -> r{r.revision_end}"),
        "portfolio -> successor": escape(f"{r.portfolio or '-'} -> {r.successor or '-'}"),
        "run": f"<code>{escape(r.run_id or '-')}</code>",
        "run coverage (train)": _fraction(r.covered, r.tasks),
        "cumulative coverage": _fraction(r.cumulative_covered, r.cumulative_tasks),
        "harness promotion": _value(r.harness),
        "dataset": (f"<code>{escape(r.dataset_sha256[:12])}</code> ({r.examples} examples)"
                    if r.dataset_sha256 else _value(None)),
        "adapter": (f"<code>{escape(adapter[:12])}</code> {escape(r.adapter_state)}" if adapter
                    else _value(None)),
        "adapter trained from": _value(r.adapter_parent),
        "candidate contract": _value(r.candidate_ref),
        "heldout pass rate (parent)": (_value(r.heldout_rate) + (f" <span class='note'>({r.parent_heldout_rate:.4g})</span>"
                                                                   if r.parent_heldout_rate is not None else "")),
        "heldout lift vs parent (95% CI)": _interval(r.lift, r.lift_ci95, signed=True),
        "heldout lift vs generation 0 (95% CI)": _interval(r.lift_vs_control, r.lift_vs_control_ci95, signed=True),
        "heldout retention (95% Wilson CI)": _interval(r.retention, g.retention_ci95) + kept,
        "completion tokens / task (x parent)": _number(r.tokens_per_task, ".0f") + (
            f" <span class='note'>({r.token_ratio:.2f}x)</span>" if r.token_ratio is not None else ""),
        "prompt tokens / task": _number(r.prompt_tokens_per_task, ".0f"),
        "seconds / task": _number(r.seconds_per_task, ".1f"),
        "k needed (parent)": _number(r.k_needed, ".2f") + (
            f" <span class='note'>({r.parent_k_needed:.2f})</span>" if r.parent_k_needed is not None else ""),
        "eval cache served": (_value(None) if r.cache_share is None else
                              f"{r.cache_share:.0%} <span class='note'>({r.tokens_not_spent} tokens not spent)</span>"),
        "looks: heldout; sealed test (this candidate)": (
            f"{_number(r.heldout_looks, 'd')}; {_number(r.test_looks, 'd')}"
            + (f" ({r.candidate_test_looks})" if r.candidate_test_looks is not None else "")),
        "carriers' shares (rsi ablate)": _shares(g.ablation),
        "steps": " ".join(f"<span class='step-{escape(str(s))}'>{escape(k)}:{escape(str(s))}</span>"
                          for k, s in r.steps.items()),
        "other recorded fields": _extra(g.extra),
    }


def _number(value: Any, fmt: str) -> str:
    return _value(None) if value is None else escape(format(value, fmt))


def _shares(ablation: dict[str, Any] | None) -> str:
    """What each carrier adds (rsi.generation.ablation rows) and the lift's shares, or '-' without an ablation."""
    if not ablation:
        return _value(None)
    lines = []
    for row in ablation.get("rows") or []:
        lift = row.get("lift")
        what = row["carrier"] if row.get("arm", "without") == "without" else f"{row['carrier']} alone"
        lines.append(f"{escape(what)}: " + (_interval(lift["lift"], lift["lift_ci95"], signed=True) if lift
                                             else "<span class='note'>not measured yet</span>"))
    shares = ablation.get("shares")
    if shares:
        spend = "not measured" if shares.get("spend") is None else f"{shares['spend']:+.3f}"
        lines.append(f"<span class='note'>shares of {shares['total']:+.3f}:</span> harness {shares['harness']:+.3f}, "
                     f"weights {shares['weights']:+.3f}, interaction {shares['interaction']:+.3f}, spend {spend}")
    carried = ", ".join(ablation.get("carried") or []) or "nothing"
    return f"<span class='note'>carries {escape(carried)}</span><br>" + "<br>".join(lines)


def _extra(extra: dict[str, Any]) -> str:
    """Fields this page has no row for; `X` beside `X_ci95` reads as one interval."""
    lines = []
    for key, value in extra.items():
        if key.endswith("_ci95") and key.removesuffix("_ci95") in extra:
            continue
        ci = extra.get(f"{key}_ci95")
        shown = _interval(value, ci, signed=True) if isinstance(value, int | float) and ci is not None else _value(value)
        lines.append(f"{escape(key)}: {shown}")
    return "<br>".join(lines) or _value(None)


def _side_by_side(report: LineageReport) -> str:
    columns = [_measures(g) for g in report.generations]
    headers = ["", *[g.row.generation for g in report.generations]]
    names = list(columns[0]) if columns else []
    rows = [[f"<b>{escape(name)}</b>", *[c[name] for c in columns]] for name in names]
    return table(headers, rows, left=set(range(len(headers))), cls="lineage")


def _diff(g: GenerationColumn) -> str:
    d = g.diff
    if d is None:
        return "<p class='note'>no contract revisions recorded</p>"
    if d.problem:
        return f"<p class='warn'>{escape(d.a_ref)} -> {escape(d.b_ref)}: {escape(d.problem)}</p>"
    if not d.changes:
        return f"<p class='note'>{escape(d.a_ref)} -> {escape(d.b_ref)}: no change</p>"
    rows = [[escape(c.section), f"<code>{escape(c.key)}</code>", escape(c.kind),
             f"<pre>{escape(c.text_diff)}</pre>" if c.text_diff else _value(c.old),
             "" if c.text_diff else _value(c.new)] for c in d.changes]
    moved = ", ".join(d.clocks_moved) or "none"
    return (f"<p>{escape(d.a_ref)} -> {escape(d.b_ref)} <span class='note'>(clocks moved: {escape(moved)})</span></p>"
            + table(["section", "key", "change", "old", "new"], rows, left=set(range(5))))


def _kv(data: dict[str, Any]) -> str:
    if not data:
        return "<p class='note'>-</p>"
    return "<table class='kv'>" + "".join(f"<tr><th class='l'>{escape(str(k))}</th><td class='l'>{_value(v)}</td></tr>"
                                          for k, v in data.items()) + "</table>"


def _detail(g: GenerationColumn) -> str:
    name = escape(g.row.generation)
    lineage = dict(g.adapter.get("lineage") or {})
    adapter = {k: lineage.get(k) for k in ("name", "base", "dataset", "source_runs", "parent_contract",
                                           "hyperparameters", "metrics") if k in lineage}
    return (f"<details id='gen-{name}' open><summary><h2>{name}</h2></summary>"
            f"<h3>contract diff</h3>{_diff(g)}"
            f"<h3>dataset</h3>{_kv(g.dataset)}"
            f"<h3>adapter</h3>{_kv(adapter)}"
            f"<h3>evaluation</h3>{_kv(g.evaluate)}</details>")


def lift_tokens_chart(report: LineageReport) -> bytes | None:
    """The lift against the parent and generation 0 (95% intervals) and the candidate's completion and prompt tokens
    per heldout task, per generation (rsi.report.chart.lift_tokens_png); None before any generation was evaluated."""
    from rsi.report.chart import lift_tokens_png

    rows = [g.row for g in report.generations]
    if not any(r.lift is not None or r.tokens_per_task is not None for r in rows):
        return None

    def interval(value: float | None, ci: list[float] | None) -> tuple[float, float, float] | None:
        return (value, ci[0], ci[1]) if value is not None and ci else None

    return lift_tokens_png(
        [r.number for r in rows],
        {"lift vs parent": [interval(r.lift, r.lift_ci95) for r in rows],
         "lift vs generation 0": [interval(r.lift_vs_control, r.lift_vs_control_ci95) for r in rows]},
        {"completion tokens / task": [r.tokens_per_task for r in rows],
         "prompt tokens / task": [r.prompt_tokens_per_task for r in rows]},
        title="heldout lift and its price per generation")


def _img(png: bytes | None, alt: str, name: str) -> str:
    return (f'<img class="chart" id="{name}" alt="{escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'
            if png else "")


def render_lineage_page(report: LineageReport, png: bytes | None = None, lift_png: bytes | None = None) -> str:
    """The lineage report's HTML text: `png` the ledger chart (coverage, lift, retention), `lift_png` the lift and
    tokens per generation (`lift_tokens_chart`)."""
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    if not report.generations:
        body = "<p class='note'>no generations yet (run `rsi generation` or `rsi nightly`)</p>"
    else:
        chart = (_img(lift_png, "heldout lift (95% CI) and tokens per task per generation", "chart-lift-tokens")
                 + _img(png, "coverage, lift and retention per generation", "chart-ledger"))
        body = (f"<h2>Generations side by side</h2>{_side_by_side(report)}{chart}"
                + "".join(_detail(g) for g in report.generations))
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>rsi lineage</title><style>{asset('report.css')}</style></head><body>"
        "<header><h1>rsi lineage</h1></header>"
        f"<main>{body}</main><footer class='note'>written {now} by rsi</footer></body></html>\n"
    )
