"""The reports' charts as PNG bytes. The run report's portfolio chart: cumulative unique coverage over
chronological jobs, against each configuration's own cumulative coverage (the chart the Macaron report leads
with). The lineage report's lift and tokens per generation (`lift_tokens_png`): whether generations compound,
and at what price.

matplotlib (Agg) is imported lazily: it costs about half a second, paid only when a report is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def portfolio_png(jobs: Sequence[int], union: Sequence[int], per_config: Mapping[str, Sequence[int]],
                  total_tasks: int, best: str = "", title: str = "") -> bytes:
    """PNG bytes: union coverage (bold) and every configuration's own coverage after each job.

    `jobs` are the job indexes (x); `union` and each `per_config` series hold one value per job.
    The best single configuration is drawn dashed and labelled, so the gap between what the
    portfolio reached and what any one configuration reached is the first thing a reader sees.
    """
    import matplotlib  # lazy, as in coverage_axes: here only for its colour maps

    from rsi.run.plot import coverage_axes, coverage_png

    figure, axes = coverage_axes(8.0, 4.2)
    xs = [j + 1 for j in jobs]  # jobs are counted from 1 on the axis, as people count them
    colors = [matplotlib.colormaps["tab10"](i) for i in range(10)]
    ranked = sorted(per_config, key=lambda name: -(per_config[name][-1] if per_config[name] else 0))
    for i, name in enumerate(ranked):
        ys = list(per_config[name])
        if name == best:
            continue
        label = name if i < 9 else None  # a legend of 30 names helps nobody; the rest stay unlabelled lines
        axes.step(xs, ys, where="post", color=colors[(i + 1) % len(colors)], linewidth=1.0, alpha=0.75, label=label)
    if best in per_config:
        ys = list(per_config[best])
        axes.step(xs, ys, where="post", color="#d62728", linewidth=1.8, linestyle="--",
                  label=f"best single: {best} ({ys[-1] if ys else 0})")
        if ys:
            axes.annotate(f"best single {ys[-1]}", (xs[-1], ys[-1]), textcoords="offset points", xytext=(-4, -12),
                          ha="right", fontsize=8, color="#d62728")
    axes.step(xs, list(union), where="post", color="#1f3b73", linewidth=2.6,
              label=f"portfolio (union) {union[-1] if union else 0}")
    return coverage_png(figure, axes, total_tasks, total_style=":", xlabel="chronological jobs",
                        ylabel="tasks covered (cumulative, unique)",
                        title=title or "portfolio coverage against single configurations",
                        loc="upper left", fontsize=7, ncol=2, framealpha=0.85)


def lift_tokens_png(generations: Sequence[int], lifts: Mapping[str, Sequence[tuple[float, float, float] | None]],
                    tokens: Mapping[str, Sequence[float | None]], title: str = "") -> bytes:
    """PNG bytes of the compounding ledger's two questions, one generation per x position: did it lift (top: each
    lift series with its 95% interval, e.g. against the parent and against generation 0) and what did the lift cost
    (bottom: each token series per heldout task, e.g. completion and prompt tokens). A missing value is a gap."""
    import io

    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    figure = Figure(figsize=(7.2, 5.2), dpi=100)
    top, bottom = figure.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    colors = ("#d62728", "#ff7f0e", "#9467bd", "#2ca02c")
    shift = 0.08 if len(lifts) > 1 else 0.0
    for i, (label, values) in enumerate(lifts.items()):
        points = [(x + (i - (len(lifts) - 1) / 2) * shift, v) for x, v in zip(generations, values, strict=True) if v]
        if points:
            top.errorbar([p[0] for p in points], [p[1][0] for p in points],
                         yerr=[[p[1][0] - p[1][1] for p in points], [p[1][2] - p[1][0] for p in points]],
                         marker="D", capsize=4, color=colors[i % len(colors)], label=f"{label} (95% CI)")
    top.axhline(0.0, color="#999999", linewidth=0.8)
    top.set_ylabel("lift (pass rate difference)")
    top.grid(True, alpha=0.3)
    for i, (label, spent) in enumerate(tokens.items()):
        drawn = [(x, v) for x, v in zip(generations, spent, strict=True) if v is not None]
        if drawn:
            bottom.plot([p[0] for p in drawn], [p[1] for p in drawn], marker="o", color=colors[(i + 2) % len(colors)],
                        label=label)
    bottom.set_ylabel("tokens per heldout task")
    bottom.set_xlabel("generation")
    bottom.set_ylim(bottom=0)
    bottom.grid(True, alpha=0.3)
    bottom.xaxis.set_major_locator(MaxNLocator(integer=True))
    for axes in (top, bottom):
        if axes.get_legend_handles_labels()[0]:
            axes.legend(loc="best", fontsize=8, framealpha=0.85)
    top.set_title(title or "lift and its price per generation")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()
