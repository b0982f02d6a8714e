"""`rsi lineage`: the chain of generations with their contract revisions, adapters, datasets and numbers.

`build_lineage(workspace)` reads the generation records (rsi.generation.state) and the adapter
registry (rsi.adapters.registry) into one `LineageRow` per generation: contract revision at its start
and end, portfolio, run and coverage (the run's and the cumulative coverage of the store), dataset
hash and size, adapter id and state (promoted / rejected), the adapter's parent contract, and the
evaluation's numbers: heldout pass rate, lift against the parent and against the frozen generation-0
control (each with its 95% CI), retention and transfer; the carriers of experience it grew (the experience
library's revision and size, the tool library's helpers offered, validated, rejected and used); tokens and
wall time. This is the compounding
ledger: `lineage_png` draws it, and `ledger_stop` reads it for `rsi nightly`'s stop rule. The
compounding and retention questions the Macaron report left open, measured.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

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
    heldout_rate: float | None = Field(default=None, description="The candidate's heldout pass rate (what ships).")
    parent_heldout_rate: float | None = None
    lift: float | None = Field(default=None, description="Heldout lift against the parent.")
    lift_ci95: list[float] | None = None
    lift_vs_control: float | None = Field(default=None, description="Heldout lift against generation 0.")
    lift_vs_control_ci95: list[float] | None = None
    retention: float | None = None
    transfer: float | None = Field(default=None, description="Share of the portfolio-covered train tasks it solves.")
    tokens_per_task: float | None = Field(default=None, description="The candidate's completion tokens per heldout task "
                                          "(what a lift costs where it ships).")
    token_ratio: float | None = Field(default=None, description="tokens_per_task over the parent's.")
    prompt_tokens_per_task: float | None = Field(default=None, description="The candidate's prompt tokens per heldout task.")
    seconds_per_task: float | None = Field(default=None, description="The candidate's attempt seconds per heldout task.")
    cache_share: float | None = Field(default=None, description="Of the evaluation's cacheable replies, the share the "
                                      "response cache served (None: nothing cacheable).")
    tokens_not_spent: int | None = Field(default=None, description="Tokens of the evaluation's replies the cache served.")
    heldout_looks: int | None = Field(default=None, description="Looks the suite's heldout split had when this "
                                      "generation's evaluation read it, that one included (the look ledger).")
    test_looks: int | None = Field(default=None, description="Looks the suite's sealed test split had when this "
                                   "generation's candidate first read it (its final evaluation), that one included.")
    candidate_test_looks: int | None = Field(default=None, description="The candidate's own looks at the sealed split "
                                             "(1: read once, as a final evaluation should be).")
    k_needed: float | None = Field(default=None, description="The candidate's candidates needed per solved heldout task "
                                   "(rsi.evaluation.SideCost.k_needed; None where it checks no candidates).")
    parent_k_needed: float | None = None
    library: str = Field(default="", description="The experience library revision the generation grew or carried.")
    library_entries: int | None = None
    library_added: int | None = Field(default=None, description="Entries it added over its parent revision.")
    tools: str = Field(default="", description="The tool library revision the generation grew or carried.")
    tools_helpers: int | None = Field(default=None, description="Helpers in that revision, inherited included.")
    tools_offered: int | None = Field(default=None, description="Distinct helpers passing train attempts saved.")
    tools_validated: int | None = None
    tools_rejected: int | None = None
    tools_used: int | None = Field(default=None, description="Attempts of the exported runs that imported the library.")
    tokens: int | None = Field(default=None, description="Model tokens of the run, the harvest and the evaluation.")
    wall_s: float | None = Field(default=None, description="Wall time of the generation's steps.")
    steps: dict[str, str] = {}


def build_lineage(workspace: Workspace) -> list[LineageRow]:
    from rsi.adapters.registry import list_adapters
    from rsi.generation.state import list_generations

    adapters = {a.id: a for a in list_adapters(workspace)}
    rows = []
    for state in list_generations(workspace):
        rows.append(_row(workspace, state, adapters))
    return _with_looks(workspace, rows)


def _with_looks(workspace: Workspace, rows: list[LineageRow]) -> list[LineageRow]:
    """Each evaluated generation's heldout looks, and its candidate's looks at the sealed test split (its final
    evaluation, `rsi eval --final`), from the look ledger (rows unchanged without a store)."""
    from rsi.errors import StoreError
    from rsi.store import open_store
    from rsi.store.looks import count_looks, list_looks, look_of

    if not any(r.eval_id or r.candidate_ref for r in rows):
        return rows
    try:
        store = open_store(workspace.db_url)
    except StoreError:
        return rows
    try:
        for row in rows:
            look = look_of(store, row.eval_id, "heldout") if row.eval_id else None
            if look is not None:
                row.heldout_looks = count_looks(store, look.suite, "heldout", before_id=look.id)
        sealed = list_looks(store, split="test")
        for row in rows:
            # the candidate's first look at the sealed split: by its ref, then every look of the same content
            first = next((lk for lk in sealed if row.candidate_ref and lk.candidate_ref == row.candidate_ref), None)
            if first is not None:
                row.test_looks = count_looks(store, first.suite, "test", before_id=first.id)
                row.candidate_test_looks = count_looks(store, first.suite, "test", first.candidate_hash)
    finally:
        store.close()
    return rows


def _row(workspace: Workspace, state: Any, adapters: dict[str, Any]) -> LineageRow:
    """One generation's ledger line, read from its typed step outputs and the adapter registry."""
    from rsi.generation import outputs
    from rsi.generation.state import STEPS
    from rsi.promotion.promote import load_head_contract

    run, train = state.outputs(outputs.RunOutput), state.outputs(outputs.TrainOutput)
    measured, export = state.outputs(outputs.EvaluateOutput), state.outputs(outputs.ExportOutput)
    end = state.summary.revision_end if state.summary is not None else None
    if end is None and state.status != "done":
        try:
            end = load_head_contract(workspace, state.inputs.get("contract", "default")).revision
        except Exception:
            end = None
    record = adapters.get(train.adapter_id)
    lift, versus_control = measured.lift, measured.lift_vs_control
    tokens = [t for t in (run.tokens, state.outputs(outputs.HarvestOutput).tokens, measured.tokens) if t is not None]
    cand, parent = measured.costs.get("candidate"), measured.costs.get("parent")
    hits = sum(c.hits for c in measured.cache.values())
    asked = hits + sum(c.misses for c in measured.cache.values())
    return LineageRow(
        generation=state.id, number=state.number, status=state.status,
        created=state.created.isoformat(timespec="seconds"), contract=state.inputs.get("contract", ""),
        revision_start=state.inputs.get("revision"), revision_end=end,
        portfolio=state.inputs.get("portfolio", ""), successor=state.outputs(outputs.ProposeOutput).portfolio,
        run_id=run.run_id, covered=run.covered, tasks=run.tasks,
        cumulative_covered=run.cumulative_covered, cumulative_tasks=run.cumulative_tasks,
        harness=state.outputs(outputs.PromoteOutput).status,
        dataset_sha256=export.dataset_sha256, examples=export.examples,
        adapter_id=train.adapter_id,
        adapter_state=record.status.state if record else state.outputs(outputs.PromoteAdapterOutput).state,
        adapter_parent=(record.lineage.parent_contract.ref if record else train.parent_ref),
        candidate_ref=train.candidate_ref, eval_id=measured.eval_id,
        heldout_rate=lift.candidate_rate if lift else None, parent_heldout_rate=lift.parent_rate if lift else None,
        lift=lift.lift if lift else None, lift_ci95=list(lift.lift_ci95) if lift else None,
        lift_vs_control=versus_control.lift if versus_control else None,
        lift_vs_control_ci95=list(versus_control.lift_ci95) if versus_control else None,
        retention=measured.retention.retention if measured.retention else None,
        transfer=measured.transfer.transfer if measured.transfer else None,
        tokens_per_task=cand.completion_tokens_per_task if cand else None,
        token_ratio=round(cand.completion_tokens_per_task / parent.completion_tokens_per_task, 2)
        if cand and parent and parent.completion_tokens_per_task else None,
        prompt_tokens_per_task=cand.prompt_tokens_per_task if cand else None,
        seconds_per_task=cand.seconds_per_task if cand else None,
        cache_share=round(hits / asked, 4) if asked else None,
        tokens_not_spent=sum(c.tokens_not_spent for c in measured.cache.values()) if measured.cache else None,
        k_needed=cand.k_needed if cand else None, parent_k_needed=parent.k_needed if parent else None,
        tokens=sum(tokens) if tokens else None, wall_s=_wall_s(state),
        steps={name: state.step(name).status for name in STEPS}, **_carriers(export),
    )


def _carriers(export: Any) -> dict[str, Any]:
    """The ledger's experience-library and tool-library fields from the export step's record ({} where off)."""
    found: dict[str, Any] = {}
    if (library := export.experience) is not None:
        found.update(library=library.revision, library_entries=library.entries, library_added=library.added_entries)
    if (tools := export.tools) is not None:
        found.update(tools=tools.revision, tools_helpers=tools.helpers, tools_offered=len(tools.offered),
                     tools_validated=len(tools.validated), tools_rejected=len(tools.rejected), tools_used=tools.used)
    return found


def ledger_stop(rows: list[LineageRow], stop_on_regression: bool, plateau_generations: int) -> str | None:
    """Why no new generation should be proposed, by the contract's `[evaluation.gate]` rule, or None (pure).

    Regression: the latest evaluated generation is worse than generation 0 beyond doubt (the whole
    95% CI of its lift against the control lies below zero). Plateau: the last `plateau_generations`
    finished generations neither promoted an adapter nor raised the best lower bound of the lift
    against generation 0 seen before them; more of the same spends compute for nothing."""
    finished = [r for r in rows if r.status == "done"]
    measured = [r for r in finished if r.lift_vs_control_ci95 is not None]
    if stop_on_regression and measured and measured[-1].lift_vs_control_ci95[1] < 0:  # type: ignore[index]
        last = measured[-1]
        return (f"regression: {last.generation}'s heldout lift against generation 0 is {last.lift_vs_control:+.3f} "
                f"with its 95% CI {last.lift_vs_control_ci95} entirely below zero")
    if plateau_generations <= 0 or len(finished) < plateau_generations:
        return None
    recent = finished[-plateau_generations:]
    before = finished[:-plateau_generations]
    # Generation 0 against itself is a lift of exactly 0: a generation raises the bar only when its
    # lower bound clears both that and every earlier generation's.
    best_before = max([0.0] + [r.lift_vs_control_ci95[0] for r in before if r.lift_vs_control_ci95])
    promoted = [r.generation for r in recent if r.adapter_state == "promoted"]
    lows = [r.lift_vs_control_ci95[0] for r in recent if r.lift_vs_control_ci95]
    if promoted or (lows and max(lows) > best_before):
        return None
    return (f"plateau: the last {plateau_generations} generations ({recent[0].generation}..{recent[-1].generation}) "
            f"promoted no adapter and did not raise the lower 95% bound of the lift against generation 0 above "
            f"{best_before:+.3f}")


def _wall_s(state: Any) -> float | None:
    spans = [(r.finished - r.started).total_seconds() for r in state.steps.values() if r.started and r.finished]
    return round(sum(spans), 1) if spans else None


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
    ret_x, ret_y = series([r.retention for r in rows])
    held_x, held_y = series([r.heldout_rate for r in rows])
    tr_x, tr_y = series([r.transfer for r in rows])
    if cov_x:
        axes.plot(cov_x, cov_y, marker="o", color="#1f77b4", label="run coverage, union (train)")
    if tr_x:
        axes.plot(tr_x, tr_y, marker="^", color="#17becf", label="transfer (deployed solves of covered)")
    if held_x:
        axes.plot(held_x, held_y, marker="P", color="#9467bd", label="heldout pass rate (what ships)")
    if ret_x:
        axes.plot(ret_x, ret_y, marker="s", color="#2ca02c", label="retention")
    for attr, color, label, shift in (("lift", "#d62728", "lift vs parent (95% CI)", -0.08),
                                      ("lift_vs_control", "#ff7f0e", "lift vs generation 0 (95% CI)", 0.08)):
        points = [(r.number + shift, getattr(r, attr), getattr(r, f"{attr}_ci95")) for r in rows
                  if getattr(r, attr) is not None and getattr(r, f"{attr}_ci95")]
        if points:
            axes.errorbar([p[0] for p in points], [p[1] for p in points],
                          yerr=[[p[1] - p[2][0] for p in points], [p[2][1] - p[1] for p in points]],
                          marker="D", linestyle="none", color=color, capsize=4, label=label)
    axes.axhline(0.0, color="#999999", linewidth=0.8)
    axes.set_ylim(-1.05, 1.05)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("generation")
    axes.set_ylabel("fraction / difference")
    axes.set_title("rsi lineage: the compounding ledger")
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


LEDGER_COLUMNS = ("generation", "status", "harness", "adapter", "examples", "coverage", "transfer", "heldout",
                  "lift vs parent (95% CI)", "lift vs gen 0 (95% CI)", "heldout looks", "test looks (this candidate)",
                  "tokens/task (x parent)",
                  "prompt tokens, s/task", "k needed (parent)", "retention", "eval cache served",
                  "library (+new)", "tools (validated/offered, used)", "tokens", "wall")


def ledger_cells(row: LineageRow) -> list[str]:
    """One ledger line as text cells, in LEDGER_COLUMNS order ("-" where a step has not measured it)."""

    def ci(value: float | None, bounds: list[float] | None) -> str:
        return f"{value:+.3f} [{bounds[0]:+.3f}, {bounds[1]:+.3f}]" if value is not None and bounds else "-"

    def number(value: float | None, fmt: str) -> str:
        return "-" if value is None else format(value, fmt)

    revision = f"r{row.revision_start}->r{row.revision_end}" if row.revision_start is not None else "-"
    return [
        row.generation, row.status, f"{revision} {row.harness or ''}".strip(),
        f"{row.adapter_id[:12] or '-'} {row.adapter_state}".strip(), number(row.examples, "d"),
        f"{row.covered}/{row.tasks}" if row.covered is not None else "-", number(row.transfer, ".3f"),
        number(row.heldout_rate, ".3f"), ci(row.lift, row.lift_ci95), ci(row.lift_vs_control, row.lift_vs_control_ci95),
        number(row.heldout_looks, "d"),
        "-" if row.test_looks is None else f"{row.test_looks} ({row.candidate_test_looks})",
        number(row.tokens_per_task, ".0f") + (f" ({row.token_ratio:.1f}x)" if row.token_ratio is not None else ""),
        f"{number(row.prompt_tokens_per_task, '.0f')}, {number(row.seconds_per_task, '.1f')}",
        number(row.k_needed, ".2f") + (f" ({row.parent_k_needed:.2f})" if row.parent_k_needed is not None else ""),
        number(row.retention, ".3f"),
        "-" if row.cache_share is None else f"{row.cache_share:.0%} ({row.tokens_not_spent} tok)",
        f"{row.library} {row.library_entries} (+{row.library_added})" if row.library_entries is not None else "-",
        f"{row.tools or 'none'} {row.tools_helpers} ({row.tools_validated}/{row.tools_offered}, used {row.tools_used})"
        if row.tools_offered is not None else "-",
        number(row.tokens, "d"), number(row.wall_s, ".0f") + ("s" if row.wall_s else ""),
    ]


def lineage_json(rows: list[LineageRow]) -> list[dict[str, Any]]:
    return [r.model_dump(mode="json") for r in rows]
