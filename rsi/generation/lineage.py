"""`rsi lineage`: the chain of generations with their contract revisions, adapters, datasets and numbers.

`build_lineage(workspace)` reads the generation records (rsi.generation.state) and the adapter
registry (rsi.training.registry) into one `LineageRow` per generation: contract revision at its start
and end, portfolio, run and coverage (the run's and the cumulative coverage of the store), dataset
hash and size, adapter id and state (promoted / rejected), the adapter's parent contract, and the
evaluation's lift (with its 95% CI) and retention. `lineage_png` draws coverage, lift (CI as error
bars) and retention across generations: the compounding and retention questions the Macaron report
left open, measured.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rsi.workspace import Workspace


class LineageRow(BaseModel):
    generation: str
    number: int
    status: str
    created: str
    contract: str
    revision_start: int | None = None
    revision_end: int | None = None
    portfolio: str = ""
    successor: str = ""
    run_id: str = ""
    covered: int | None = None
    tasks: int | None = None
    cumulative_covered: int | None = None
    cumulative_tasks: int | None = None
    harness: str = ""
    dataset_sha256: str = ""
    examples: int | None = None
    adapter_id: str = ""
    adapter_state: str = ""
    adapter_parent: str = ""
    candidate_ref: str = ""
    eval_id: str = ""
    lift: float | None = None
    lift_ci95: list[float] | None = None
    retention: float | None = None
    steps: dict[str, str] = {}


def build_lineage(workspace: Workspace) -> list[LineageRow]:
    from rsi.generation.state import STEPS, list_generations
    from rsi.promotion.promote import load_head_contract
    from rsi.training.registry import list_adapters

    adapters = {a.id: a for a in list_adapters(workspace)}
    rows = []
    for state in list_generations(workspace):
        out = {name: state.step(name).outputs for name in STEPS}
        summary = state.summary
        end = summary.get("revision_end")
        if end is None and state.status != "done":
            try:
                end = load_head_contract(workspace, state.inputs.get("contract", "default")).revision
            except Exception:
                end = None
        adapter_id = out["train"].get("adapter_id", "")
        record = adapters.get(adapter_id)
        lift = out["evaluate"].get("lift") or {}
        retention = out["evaluate"].get("retention") or {}
        rows.append(LineageRow(
            generation=state.id, number=state.number, status=state.status,
            created=state.created.isoformat(timespec="seconds"), contract=state.inputs.get("contract", ""),
            revision_start=state.inputs.get("revision"), revision_end=end,
            portfolio=state.inputs.get("portfolio", ""), successor=out["propose"].get("portfolio", ""),
            run_id=out["run"].get("run_id", ""), covered=out["run"].get("covered"), tasks=out["run"].get("tasks"),
            cumulative_covered=out["run"].get("cumulative_covered"), cumulative_tasks=out["run"].get("cumulative_tasks"),
            harness=out["promote"].get("status", ""),
            dataset_sha256=out["export"].get("dataset_sha256", ""), examples=out["export"].get("examples"),
            adapter_id=adapter_id, adapter_state=record.status.state if record else "",
            adapter_parent=(record.lineage.parent_contract.get("ref", "") if record else out["train"].get("parent_ref", "")),
            candidate_ref=out["train"].get("candidate_ref", ""), eval_id=out["evaluate"].get("eval_id", ""),
            lift=lift.get("lift"), lift_ci95=lift.get("lift_ci95"), retention=retention.get("retention"),
            steps={name: state.step(name).status for name in STEPS},
        ))
    return rows


def lineage_png(rows: list[LineageRow]) -> bytes:
    """PNG bytes: coverage fraction, lift (95% CI error bars) and retention per generation."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    figure = Figure(figsize=(7.2, 4.0), dpi=100)
    axes = figure.add_subplot(1, 1, 1)
    xs = [r.number for r in rows]

    def series(values: list[float | None]) -> tuple[list[int], list[float]]:
        pairs = [(x, v) for x, v in zip(xs, values, strict=True) if v is not None]
        return [p[0] for p in pairs], [p[1] for p in pairs]

    cov_x, cov_y = series([r.covered / r.tasks if r.covered is not None and r.tasks else None for r in rows])
    cum_x, cum_y = series([r.cumulative_covered / r.cumulative_tasks if r.cumulative_covered is not None
                           and r.cumulative_tasks else None for r in rows])
    ret_x, ret_y = series([r.retention for r in rows])
    if cov_x:
        axes.plot(cov_x, cov_y, marker="o", color="#1f77b4", label="run coverage (train)")
    if cum_x:
        axes.plot(cum_x, cum_y, marker=".", linestyle=":", color="#1f77b4", label="cumulative coverage")
    if ret_x:
        axes.plot(ret_x, ret_y, marker="s", color="#2ca02c", label="retention")
    lifted = [r for r in rows if r.lift is not None]
    if lifted:
        low = [r.lift - r.lift_ci95[0] if r.lift_ci95 else 0.0 for r in lifted]  # type: ignore[operator]
        high = [r.lift_ci95[1] - r.lift if r.lift_ci95 else 0.0 for r in lifted]  # type: ignore[operator]
        axes.errorbar([r.number for r in lifted], [float(r.lift or 0.0) for r in lifted], yerr=[low, high], marker="D",
                      color="#d62728", capsize=4, label="heldout lift (95% CI)")
    axes.axhline(0.0, color="#999999", linewidth=0.8)
    axes.set_ylim(-1.05, 1.05)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("generation")
    axes.set_ylabel("fraction / difference")
    axes.set_title("rsi lineage: coverage, adapter lift and retention")
    axes.grid(True, alpha=0.3)
    if rows:
        axes.legend(loc="lower left", fontsize=8)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def write_lineage_png(rows: list[LineageRow], path: Path) -> Path:
    data = lineage_png(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return path


def lineage_json(rows: list[LineageRow]) -> list[dict[str, Any]]:
    return [r.model_dump(mode="json") for r in rows]
