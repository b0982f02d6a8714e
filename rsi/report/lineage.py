"""The lineage report's data: every generation side by side, from what the ledger already records.

`build_lineage_report` is pure: it takes the `rsi lineage` rows (rsi.generation.lineage.LineageRow), each
generation's step outputs, the adapter registry's summaries and the contract diffs, and returns a
`LineageReport`. The page has its own rows for the fields in KNOWN_FIELDS and keeps every other field of
the row in `extra`, so a ledger that grows new fields shows them without a change here. A generation that was
ablated (`rsi ablate`) carries its record, so the page shows each carrier's share. `load_lineage_report` is the edge:
it reads the workspace and computes the diffs with git.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from rsi.evaluation.records import upgrade_retention
from rsi.generation.lineage import LineageRow
from rsi.promotion.evidence import wilson_interval

# LineageRow fields the side-by-side table shows in its own rows; any other field lands in `extra`.
KNOWN_FIELDS = frozenset({
    "generation", "number", "status", "created", "contract", "revision_start", "revision_end", "portfolio",
    "successor", "run_id", "covered", "tasks", "cumulative_covered", "cumulative_tasks", "harness",
    "dataset_sha256", "examples", "adapter_id", "adapter_state", "adapter_parent", "candidate_ref", "eval_id",
    "lift", "lift_ci95", "retention", "steps",
    # the compounding figures (issue 49): lift against generation 0, the price, the cache, the looks
    "heldout_rate", "parent_heldout_rate", "lift_vs_control", "lift_vs_control_ci95", "tokens_per_task", "token_ratio",
    "prompt_tokens_per_task", "seconds_per_task", "k_needed", "parent_k_needed", "cache_share", "tokens_not_spent",
    "heldout_looks", "test_looks", "candidate_test_looks",
})


class ChangeView(BaseModel):
    section: str
    key: str
    kind: str
    old: Any = None
    new: Any = None
    text_diff: str | None = None
    bookkeeping: bool = False


class DiffView(BaseModel):
    """The contract diff a generation made (its start revision -> its end revision)."""

    a_ref: str
    b_ref: str
    equal: bool = False
    clocks_moved: list[str] = Field(default_factory=list)
    changes: list[ChangeView] = Field(default_factory=list)
    problem: str = Field(default="", description="Why no diff could be computed ('' when it was).")


class GenerationColumn(BaseModel):
    """One generation: its lineage row, the numbers with intervals, and what it produced."""

    row: LineageRow = Field(description="The generation's `rsi lineage` row.")
    retention_covered: int | None = Field(default=None, description="Retention's denominator: the covered train "
                                          "tasks the parent solved (records before `kept`: all covered tasks).")
    retention_kept: int | None = None
    retention_ci95: list[float] | None = Field(default=None, description="Wilson 95% interval of retention.")
    evaluate: dict[str, Any] = Field(default_factory=dict, description="The evaluate step's outputs.")
    dataset: dict[str, Any] = Field(default_factory=dict, description="The export step's outputs.")
    adapter: dict[str, Any] = Field(default_factory=dict, description="The registry's summary of the adapter.")
    diff: DiffView | None = None
    ablation: dict[str, Any] | None = Field(default=None, description="The generation's `rsi ablate` record "
                                            "(rsi.generation.ablation.AblationRecord, as JSON): each carrier's share.")
    extra: dict[str, Any] = Field(default_factory=dict, description="Row fields this report has no row for.")


class LineageReport(BaseModel):
    generations: list[GenerationColumn]


def _retention(evaluate: dict[str, Any]) -> tuple[int | None, int | None, list[float] | None]:
    """The gate's (heldout) retention: what the parent solved, what the candidate kept, and its Wilson interval. A
    record from when `retention` was the in-sample figure is read as upgrade_retention reads it."""
    upgraded = upgrade_retention(evaluate)
    retention = (upgraded.get("retention") if isinstance(upgraded, dict) else None) or {}
    if isinstance(retention.get("kept"), int):  # what the parent solved, and of it what the candidate kept
        covered, kept = retention.get("parent_resolved"), retention.get("kept")
    else:  # a record from before `kept` existed: its retention was still_solved / covered
        covered, kept = retention.get("covered"), retention.get("still_solved")
    if not isinstance(covered, int) or not isinstance(kept, int) or not 0 <= kept <= covered or covered == 0:
        return (covered if isinstance(covered, int) else None), (kept if isinstance(kept, int) else None), None
    interval = wilson_interval(kept, covered)
    return covered, kept, [round(interval.low, 4), round(interval.high, 4)]


def build_lineage_report(rows: list[LineageRow], outputs: dict[str, dict[str, dict[str, Any]]],
                         adapters: dict[str, dict[str, Any]], diffs: dict[str, DiffView],
                         ablations: dict[str, dict[str, Any]] | None = None) -> LineageReport:
    """One column per generation (rows in generation order; outputs, diffs and ablation records keyed by
    generation id)."""
    columns = []
    for row in rows:
        steps = outputs.get(row.generation, {})
        evaluate = dict(steps.get("evaluate") or {})
        covered, kept, ci = _retention(evaluate)
        recorded = row.model_dump(mode="json")
        columns.append(GenerationColumn(
            row=row, retention_covered=covered, retention_kept=kept, retention_ci95=ci, evaluate=evaluate,
            dataset=dict(steps.get("export") or {}), adapter=adapters.get(row.adapter_id, {}),
            diff=diffs.get(row.generation), ablation=(ablations or {}).get(row.generation), extra={k: v for k, v in recorded.items() if k not in KNOWN_FIELDS},
        ))
    return LineageReport(generations=columns)


def contract_diff(workspace: Any, name: str, start: int | None, end: int | None) -> DiffView | None:
    """The semantic diff of hcp/NAME from revision `start` to `end` (git tags), or why there is none."""
    if not name or start is None or end is None:
        return None
    a_ref, b_ref = f"{name}@r{start}", f"{name}@r{end}"
    if start == end:
        return DiffView(a_ref=a_ref, b_ref=b_ref, equal=True)
    from rsi.contracts.diff import diff_contracts
    from rsi.contracts.refs import resolve_ref
    from rsi.errors import RsiError

    try:
        result = diff_contracts(resolve_ref(workspace, a_ref), resolve_ref(workspace, b_ref))
    except RsiError as error:
        return DiffView(a_ref=a_ref, b_ref=b_ref, problem=error.message)
    return DiffView(a_ref=a_ref, b_ref=b_ref, equal=result.equal, clocks_moved=list(result.clocks_moved),
                    changes=[ChangeView(**c.to_json()) for c in result.changes])


def load_lineage_report(workspace: Any) -> LineageReport:
    """Read the generations, the adapter registry and the contract history of `workspace`."""
    from rsi.adapters.registry import list_adapters
    from rsi.generation.ablation import read_ablation
    from rsi.generation.lineage import build_lineage
    from rsi.generation.state import list_generations

    rows = build_lineage(workspace)
    outputs = {s.id: {name: dict(step.outputs) for name, step in s.steps.items()} for s in list_generations(workspace)}
    adapters = {a.id: a.summary() for a in list_adapters(workspace)}
    diffs = {}
    for row in rows:
        diff = contract_diff(workspace, row.contract, row.revision_start, row.revision_end)
        if diff is not None:
            diffs[row.generation] = diff
    ablations = {row.generation: found.model_dump(mode="json") for row in rows
                 if (found := read_ablation(workspace, row.generation)) is not None}
    return build_lineage_report(rows, outputs, adapters, diffs, ablations)
