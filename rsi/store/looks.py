"""The look ledger: every evaluation that read a heldout or sealed test split's verdicts, and the counts.

A split that chooses among many candidates stops being evidence: each look is one more chance for a
candidate of no real lift to clear the gate by luck (bench/gate_looks.py measures how fast). So every
evaluation records its look here (rsi.evaluation.execute: one row per evaluation run and split, written
again by a resume only if missing), and `rsi eval`, `rsi lineage` and the report show how many looks a split
has had. The sealed test split is read once per candidate (rsi.evaluation.plan refuses a second look
without `second_look`, which is then marked on the row and on every figure derived from it).

    record_look(store, Look(...))           idempotent by (eval_id, split): returns the stored row
    count_looks(store, suite, split)        every look at the split; with candidate_hash, that candidate's
    list_looks(store, suite, split)         oldest first
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import Table, func, insert, select

from rsi.store.rows import LookRow
from rsi.store.types import utc_now

if TYPE_CHECKING:
    from rsi.store.store import Store

L: Table = LookRow.__table__  # type: ignore[attr-defined]

# The splits whose reads are counted: the one that gates (heldout) and the sealed one (test).
COUNTED_SPLITS = ("heldout", "test")


@dataclass(frozen=True)
class Look:
    """What one look read: which evaluation, of which candidate (its content hash is its identity), on which
    suite and split, how many tasks, by which command and why."""

    eval_id: str
    suite: str
    split: str
    candidate_hash: str
    candidate_ref: str = ""
    parent_ref: str = ""
    tasks: int = 0
    command: str = ""
    why: str = ""
    second_look: bool = False
    created: datetime | None = None


def _row(look: Look) -> dict[str, object]:
    return {"eval_id": look.eval_id, "suite": look.suite, "split": look.split, "candidate_ref": look.candidate_ref,
            "candidate_hash": look.candidate_hash, "parent_ref": look.parent_ref, "tasks": look.tasks,
            "command": look.command, "why": look.why, "second_look": look.second_look,
            "created": look.created or utc_now()}


def record_look(store: Store, look: Look) -> LookRow:
    """Record one look (a resumed or re-measured evaluation keeps its first row: one look per run and split)."""
    if look.split not in COUNTED_SPLITS:
        raise ValueError(f"looks are counted on {' and '.join(COUNTED_SPLITS)}, not {look.split!r}")
    with store._write() as conn:
        found = conn.execute(select(L).where(L.c.eval_id == look.eval_id, L.c.split == look.split)).first()
        if found is None:
            conn.execute(insert(L).values(**_row(look)))
            found = conn.execute(select(L).where(L.c.eval_id == look.eval_id, L.c.split == look.split)).first()
    return LookRow.model_validate(dict(found._mapping))  # type: ignore[union-attr]


def count_looks(store: Store, suite: str, split: str, candidate_hash: str | None = None,
                before_id: int | None = None) -> int:
    """Looks at `suite`'s `split` (of one candidate, with `candidate_hash`; up to and including row
    `before_id`, with it: how many looks the split had when that one was taken)."""
    query = select(func.count()).select_from(L).where(L.c.suite == suite, L.c.split == split)
    if candidate_hash is not None:
        query = query.where(L.c.candidate_hash == candidate_hash)
    if before_id is not None:
        query = query.where(L.c.id <= before_id)
    with store._read() as conn:
        return int(conn.execute(query).scalar() or 0)


def list_looks(store: Store, suite: str | None = None, split: str | None = None) -> list[LookRow]:
    """The ledger, oldest first (of one suite and split where given)."""
    query = select(L).order_by(L.c.id)
    if suite is not None:
        query = query.where(L.c.suite == suite)
    if split is not None:
        query = query.where(L.c.split == split)
    with store._read() as conn:
        return [LookRow.model_validate(dict(r._mapping)) for r in conn.execute(query)]


def look_of(store: Store, eval_id: str, split: str) -> LookRow | None:
    """The look an evaluation run took (None: it took none, or was made before the ledger existed)."""
    with store._read() as conn:
        found = conn.execute(select(L).where(L.c.eval_id == eval_id, L.c.split == split)).first()
    return LookRow.model_validate(dict(found._mapping)) if found is not None else None
