"""The run report's portfolio chart: cumulative unique coverage over chronological jobs, against each
configuration's own cumulative coverage (the chart the Macaron report leads with), as PNG bytes.

matplotlib (Agg) is imported lazily: it costs about half a second, paid only when a report is written.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence


def portfolio_png(jobs: Sequence[int], union: Sequence[int], per_config: Mapping[str, Sequence[int]],
                  total_tasks: int, best: str = "", title: str = "") -> bytes:
    """PNG bytes: union coverage (bold) and every configuration's own coverage after each job.

    `jobs` are the job indexes (x); `union` and each `per_config` series hold one value per job.
    The best single configuration is drawn dashed and labelled, so the gap between what the
    portfolio reached and what any one configuration reached is the first thing a reader sees.
    """
    import matplotlib  # lazy: a plot costs ~0.5 s of imports

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    figure = Figure(figsize=(8.0, 4.2), dpi=100)
    axes = figure.add_subplot(1, 1, 1)
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
    if total_tasks:
        axes.axhline(total_tasks, color="#999999", linestyle=":", linewidth=1, label=f"all {total_tasks} tasks")
        axes.set_ylim(0, total_tasks * 1.05 + 0.5)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("chronological jobs")
    axes.set_ylabel("tasks covered (cumulative, unique)")
    axes.set_title(title or "portfolio coverage against single configurations")
    axes.grid(True, alpha=0.3)
    axes.legend(loc="upper left", fontsize=7, ncol=2, framealpha=0.85)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()
