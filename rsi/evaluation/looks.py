"""An evaluation's looks: the sealed split's once-per-candidate rule, the look recorded, and how it is shown.

- `check_sealed` (before anything runs): a final evaluation (`EvalSpec.split == "test"`) of a candidate that
  has already looked at the suite's sealed test split is refused, one line saying how many looks it had and
  how to override (`second_look`), exit 2. Candidate identity is its contract's content hash, so a new ref
  of the same content is the same candidate.
- `record_eval_look` (after the verdicts are read): one row in the look ledger (rsi/store/looks.py) per
  evaluation run and split, and the counts copied onto the outcome (`looks`, `candidate_looks`).
- `look_lines` / `marked`: what `rsi eval` prints about it; a second look tags every figure line.

An explicit train slice (`EvalSpec.tasks`) reads no heldout or test verdict and takes no look.
"""

from __future__ import annotations

import shlex
import sys
from typing import TYPE_CHECKING

from rsi.errors import UserInputError
from rsi.evaluation.records import EvalOutcome, EvalSpec
from rsi.workspace import Workspace

if TYPE_CHECKING:
    from rsi.store import Store

SECOND_LOOK_TAG = "[second look]"


def looked_split(spec: EvalSpec) -> str | None:
    """The split whose verdicts the evaluation reads (None for an explicit train slice)."""
    return None if spec.tasks else spec.split


def check_sealed(store: Store, spec: EvalSpec, suite: str, candidate_hash: str, candidate_ref: str) -> int:
    """Refuse a second look at the sealed split without `second_look`; returns the candidate's earlier looks."""
    from rsi.store.looks import count_looks

    if looked_split(spec) != "test":
        return 0
    earlier = count_looks(store, suite, "test", candidate_hash)
    if earlier and not spec.second_look:
        raise UserInputError(
            f"{candidate_ref} (content {candidate_hash[:12]}) has already looked at the sealed test split of {suite!r} "
            f"{earlier} time(s); a final evaluation reads it once per candidate: add --second-look to look again "
            "(every figure from it is then marked as a second look)")
    return earlier


def command_line() -> str:
    """The command that is looking, as typed (`rsi eval ...`, `rsi generation ...`)."""
    return " ".join(["rsi", *(shlex.quote(a) for a in sys.argv[1:])])[:500]


def record_eval_look(workspace: Workspace, spec: EvalSpec, outcome: EvalOutcome) -> EvalOutcome:
    """Record the evaluation's look (once per run and split) and copy the counts onto the outcome."""
    from rsi.store import open_store
    from rsi.store.looks import Look, count_looks, record_look

    split = looked_split(spec)
    if split is None:
        return outcome
    store = open_store(workspace.db_url)
    try:
        earlier = count_looks(store, outcome.suite, split, outcome.candidate.content_hash)
        row = record_look(store, Look(
            eval_id=outcome.eval_id, suite=outcome.suite, split=split, candidate_hash=outcome.candidate.content_hash,
            candidate_ref=outcome.candidate.ref, parent_ref=outcome.parent.ref, tasks=len(outcome.heldout_tasks),
            command=spec.command or command_line(), why=spec.why or "rsi eval",
            second_look=split == "test" and earlier > 0))
        looks = count_looks(store, outcome.suite, split, before_id=row.id)
        candidate_looks = count_looks(store, outcome.suite, split, outcome.candidate.content_hash, before_id=row.id)
    finally:
        store.close()
    update: dict[str, object] = {"split": split, "looks": looks, "candidate_looks": candidate_looks,
                                 "second_look": row.second_look}
    if row.second_look and not outcome.decision.reason.startswith(SECOND_LOOK_TAG):
        update["decision"] = outcome.decision.model_copy(
            update={"reason": f"{SECOND_LOOK_TAG} {outcome.decision.reason}"})
    return outcome.model_copy(update=update)


def look_lines(outcome: EvalOutcome) -> list[str]:
    """'  heldout looks: 14 (this candidate: 2)' ('' for an outcome without a look, e.g. a train slice)."""
    if outcome.looks is None:
        return []
    which = "test (sealed) looks" if outcome.split == "test" else "heldout looks"
    tail = "; a final evaluation promotes nothing" if outcome.split == "test" else ""
    return [f"  {which}: {outcome.looks} (this candidate: {outcome.candidate_looks}){tail}"]


def marked(outcome: EvalOutcome, lines: list[str]) -> list[str]:
    """The sealed split's figures named as such, and every line of a second look tagged."""
    if outcome.split == "test":
        lines = [line.replace("  heldout:", "  test (sealed):", 1) for line in lines]
    if outcome.second_look:
        lines = [line if not line.strip() or SECOND_LOOK_TAG in line else
                 (f"{SECOND_LOOK_TAG} {line}" if not line.startswith("  ") else f"  {SECOND_LOOK_TAG} {line[2:]}")
                 for line in lines]
    return lines
