"""The coverage-vs-attempts curve, drawn two ways: a PNG (matplotlib, Agg) and a text plot for terminals."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def coverage_axes(width: float, height: float) -> tuple[Any, Any]:
    """A matplotlib (Agg) figure and its one axes, for a coverage chart (this run's curve, or the run
    report's portfolio chart)."""
    import matplotlib  # lazy: a plot costs ~0.5 s of imports

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=100)
    return figure, figure.add_subplot(1, 1, 1)


def coverage_png(figure: Any, axes: Any, total_tasks: int, *, total_style: str, xlabel: str, ylabel: str,
                 title: str, **legend: Any) -> bytes:
    """PNG bytes of a coverage chart once its series are drawn: the suite's size as a grey line, whole
    numbers on both axes, the labels, a grid and the legend (`legend`: its placement)."""
    from matplotlib.ticker import MaxNLocator

    if total_tasks:
        axes.axhline(total_tasks, color="#999999", linestyle=total_style, linewidth=1, label=f"all {total_tasks} tasks")
        axes.set_ylim(0, total_tasks * 1.05 + 0.5)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    axes.grid(True, alpha=0.3)
    axes.legend(**legend)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def curve_png(curve: Sequence[int], total_tasks: int, title: str = "") -> bytes:
    """PNG bytes of covered tasks (y) after each counted attempt (x)."""
    figure, axes = coverage_axes(6.4, 3.6)
    xs = list(range(1, len(curve) + 1))
    axes.step(xs, list(curve), where="post", color="#1f77b4", linewidth=1.8, label="covered tasks")
    return coverage_png(figure, axes, total_tasks, total_style="--", xlabel="counted attempts",
                        ylabel="tasks covered", title=title or "cumulative unique coverage",
                        loc="lower right", fontsize=8)


def write_curve_png(curve: Sequence[int], total_tasks: int, path: Path, title: str = "") -> Path:
    """Write the PNG atomically (a reader never sees half a file)."""
    import os

    data = curve_png(curve, total_tasks, title)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return path


def text_curve(curve: Sequence[int], total_tasks: int, width: int = 60, height: int = 10) -> list[str]:
    """A small character plot of the curve: y = covered tasks, x = attempts (resampled to `width`)."""
    if not curve:
        return ["(no counted attempts yet)"]
    # The y axis spans what was covered, not the whole suite: 5 of 164 tasks on a 164-high axis
    # would draw nothing at all. The header names the suite's size instead.
    top = max(max(curve), 1)
    width = max(1, min(width, len(curve)))
    # Sample the curve at `width` evenly spaced attempts (the last column is the last attempt).
    columns = [curve[min(len(curve) - 1, round((i + 1) * len(curve) / width) - 1)] for i in range(width)]
    height = max(1, min(height, top))
    rows = [f"tasks covered (of {total_tasks})" if total_tasks else "tasks covered"]
    for level in range(height, 0, -1):
        threshold = top * (level - 0.5) / height
        label = f"{round(top * level / height):>4} |" if level in (height, 1) or level == (height + 1) // 2 else "     |"
        rows.append(label + "".join("#" if value >= threshold else " " for value in columns))
    rows.append("     +" + "-" * width)
    rows.append(f"      1{' ' * max(0, width - len(str(len(curve))) - 1)}{len(curve)}  attempts")
    return rows


def sparkline(curve: Sequence[int], total_tasks: int, width: int = 40) -> str:
    """One line of block characters, for status lines (the line beside it gives the numbers)."""
    if not curve:
        return ""
    blocks = " ▁▂▃▄▅▆▇█"
    top = max(max(curve), 1)  # relative to what was covered: low coverage must still show its shape
    width = max(1, min(width, len(curve)))
    columns = [curve[min(len(curve) - 1, round((i + 1) * len(curve) / width) - 1)] for i in range(width)]
    return "".join(blocks[round(value / top * (len(blocks) - 1))] for value in columns)
