"""The run report's portfolio chart: cumulative unique coverage over chronological jobs, against each
configuration's own cumulative coverage (the chart the Macaron report leads with), as PNG bytes.

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
