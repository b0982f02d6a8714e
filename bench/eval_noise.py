"""Evaluation noise: how often a greedy evaluation of the same frozen contract changes its verdict on a task.

A paired lift counts the heldout tasks where candidate and parent disagree. If two evaluations of one
unchanged contract already disagree on some tasks, those flips enter every comparison as discordant tasks that carry no
signal. This script measures that floor from evaluations already on disk: every `runs/*/eval.json` of the
given workspaces (`rsi eval` writes one per evaluation), grouped by the content hash of each side's
contract and the number format the evaluation served it in (`[evaluation] dtype`), and for every pair of evaluations of the same contract the number of heldout tasks whose verdict
differs. Evaluations are identified by their run id, so a workspace copied from another (an ablation's
copy of a ledger's) does not count the same evaluation twice. Beside the verdicts it compares what the model
wrote (the agent's messages in each attempt's trajectory.json): a flip with the same text would be the
verifier's doing, a flip with different text the decoding's. Nothing is run; it reads JSON.

    .venv/bin/python bench/eval_noise.py --workspace /work/compound4 --workspace /work/compound5 --write
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from results import replace_section  # bench/results.py (scripts run from bench/)

SECTION = "## evaluation noise"


@dataclass(frozen=True)
class SideOutcome:
    """One side of one stored evaluation: which contract, and its verdict on each heldout task."""

    run_id: str
    ref: str
    content_hash: str
    dtype: str  # the evaluation's number format ("serving": the contract's own [serving] dtype)
    solved: dict[str, bool]
    texts: dict[str, str]  # task -> a digest of what the model wrote (tasks whose trajectory is on disk)


def agent_text_digest(trajectory: Path) -> str | None:
    """A digest of the agent's messages in one attempt, or None when the trajectory is not there."""
    from rsi.harness.trajectory import read_trajectory

    if not trajectory.is_file():
        return None
    text = "\n".join(step.message for step in read_trajectory(trajectory).steps if step.source == "agent")
    return hashlib.sha256(text.encode()).hexdigest()


def sides_of(eval_json: Path) -> list[SideOutcome]:
    """The sides of one evaluation that carry heldout verdicts (the control only when it is a side of its own)."""
    from rsi.evaluation import BEST_OF_N, SIDES
    from rsi.run.layout import RunLayout

    record = json.loads(eval_json.read_text(encoding="utf-8"))
    heldout = set(record["heldout_tasks"])
    layout = RunLayout(eval_json.parent)
    out = []
    # The run's job i is the i-th side present, in rsi.evaluation's side order (_Plan.side_of); best-of-n,
    # always the last, has no heldout verdicts (eval.json keeps it under "cost_matched").
    present = [SIDES[side] for side in sorted(SIDES) if side != BEST_OF_N and record.get(SIDES[side])]
    for job, side in enumerate(present):
        contract = record[side]
        solved = {task: bool(verdicts[side]) for task, verdicts in record["per_task"].items()
                  if task in heldout and side in verdicts}
        digests = {task: agent_text_digest(layout.attempt_dir(job, task, 0) / "trajectory.json") for task in solved}
        out.append(SideOutcome(run_id=eval_json.parent.name,
                               ref=contract["ref"], content_hash=contract["content_hash"],
                               dtype=record.get("dtype", "serving"), solved=solved,
                               texts={task: digest for task, digest in digests.items() if digest}))
    return out


def collect(workspaces: list[Path]) -> dict[tuple[str, str], list[SideOutcome]]:
    """(contract content hash, number format) -> its evaluations, one per run id (the first workspace that holds it)."""
    seen: set[tuple[str, str]] = set()
    by_contract: dict[tuple[str, str], list[SideOutcome]] = {}
    for workspace in workspaces:
        for eval_json in sorted(workspace.glob("runs/*/eval.json")):
            for side in sides_of(eval_json):
                key = (side.run_id, side.content_hash)
                if key in seen:
                    continue
                seen.add(key)
                by_contract.setdefault((side.content_hash, side.dtype), []).append(side)
    return by_contract


def flips(a: SideOutcome, b: SideOutcome) -> tuple[int, int]:
    """(tasks whose verdict differs, tasks both evaluated)."""
    common = a.solved.keys() & b.solved.keys()
    return sum(a.solved[t] != b.solved[t] for t in common), len(common)


def table(by_contract: dict[tuple[str, str], list[SideOutcome]]) -> tuple[list[str], dict[str, list[int]]]:
    """Markdown rows for every contract evaluated at least twice in one number format, and every pairwise flip
    count by number format."""
    rows: list[str] = []
    every: dict[str, list[int]] = {}
    for (content_hash, dtype), outcomes in sorted(by_contract.items(), key=lambda kv: -len(kv[1])):
        if len(outcomes) < 2:
            continue
        pairs = [flips(a, b) for a, b in itertools.combinations(outcomes, 2)]
        counts = [n for n, _ in pairs]
        every.setdefault(dtype, []).extend(counts)
        ever = {t for a in outcomes for t in a.solved if any(o.solved.get(t) != a.solved[t] for o in outcomes)}
        solved = [sum(o.solved.values()) for o in outcomes]
        texts = {t: {o.texts[t] for o in outcomes if t in o.texts} for t in outcomes[0].solved}
        varied = {t for t, digests in texts.items() if len(digests) > 1}
        same_text_flips = sorted(t for t in ever if len(texts.get(t, ())) == 1)
        rows.append(f"| {outcomes[0].ref} ({content_hash[:12]}) | {dtype} | {len(outcomes)} | {min(n for _, n in pairs)} | "
                    f"{min(solved)}-{max(solved)} | {statistics.mean(counts):.2f} | {min(counts)}-{max(counts)} | "
                    f"{len(ever)} | {len(varied)} | {len(ever & varied)} | {', '.join(same_text_flips) or 'none'} |")
    return rows, every


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", type=Path, action="append", required=True)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--notes", type=Path, help="Markdown appended to the section (the reading).")
    args = parser.parse_args()
    by_contract = collect(args.workspace)
    rows, every = table(by_contract)
    if not rows:
        raise SystemExit("eval_noise: no contract was evaluated twice in these workspaces")
    runs = sorted({o.run_id for outcomes in by_contract.values() for o in outcomes})
    lines = [SECTION, "",
             __doc__.split("\n\n")[1].replace("\n", " "), "",
             f"Workspaces: {', '.join(str(w) for w in args.workspace)}; {len(runs)} evaluations "
             f"({runs[0]} to {runs[-1]}). Each row: one contract evaluated more than once, greedy, one attempt a task.", "",
             "| contract | served in | evaluations | heldout tasks | solved | flips per pair, mean | range | tasks that ever flipped "
             "| tasks whose text ever differed | flipped tasks whose text differed | flipped with the same text |",
             "|---|---|---:|---:|---|---:|---|---:|---:|---:|---|", *rows, "",
             *[f"{'As each contract serves (`serving`)' if dtype == 'serving' else 'In ' + dtype}, over all {len(counts)} pairs: {statistics.mean(counts):.2f} flipped tasks on "
               f"average (range {min(counts)}-{max(counts)})." for dtype, counts in sorted(every.items())], "",
             *([args.notes.read_text(encoding="utf-8").strip(), ""] if args.notes else []),
             f"Reproduce: `.venv/bin/python bench/eval_noise.py {' '.join('--workspace ' + str(w) for w in args.workspace)} --write`"]
    block = "\n".join(lines)
    print(block)
    if args.write:
        replace_section(SECTION, block)


if __name__ == "__main__":
    main()
