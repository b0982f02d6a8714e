"""Adapter recheck: adapters whose ledger was measured in bfloat16, evaluated again in float32 against the base.

The ledgers recorded before `[evaluation] dtype` existed served every evaluation in bfloat16, where a greedy
completion depends on the other rows of its batch: two evaluations of the unchanged base disagree on about
2.8 of 207 heldout verdicts (bench/RESULTS.md "## evaluation noise"), and every paired lift carried that
noise. Each adapter named here is evaluated again (`rsi.evaluation.evaluate`, the code behind `rsi eval`)
on every heldout task of its workspace's suite, in float32, against the base contract, with no covered
train tasks (the lift is the question). Beside it: the lift against generation 0 its ledger recorded in
bfloat16. The base is evaluated once per adapter, so its float32 verdicts and texts are compared across
those evaluations too: identical verdicts are what make the float32 lift a measurement.

The adapters to name are chosen before any float32 result: each ledger's last generation (the one the
issue's goal is about), and the best bfloat16 lift of the main ledger (generation 1), to see whether a
best-looking result holds when the noise is gone. A killed recheck resumes from `--state` (each adapter's
evaluation id is kept there once it finishes).

    .venv/bin/python bench/adapter_recheck.py --adapter /work/compound4:default-candidate@r2 \
        --adapter /work/compound6:default-candidate@r4 --state /tmp/recheck.json --write
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import time
from datetime import UTC, datetime
from pathlib import Path

from eval_noise import flips, sides_of  # bench/eval_noise.py (scripts run from bench/)
from results import replace_section  # bench/results.py

SECTION = "## adapter recheck in float32"


def ledger_entry(workspace, ref: str) -> dict:
    """What the workspace's ledger recorded for the generation that trained `ref`."""
    from rsi.evaluation import load_eval_outcome
    from rsi.generation.lineage import build_lineage

    row = next((r for r in build_lineage(workspace) if r.candidate_ref == ref), None)
    if row is None:
        raise SystemExit(f"adapter_recheck: no generation of {workspace.root} trained {ref}")
    recorded = load_eval_outcome(workspace, row.eval_id)
    versus = recorded.lift_vs_control or recorded.lift
    return {"generation": row.generation, "examples": row.examples, "bf16_eval": row.eval_id,
            "bf16_lift": versus.model_dump(mode="json"), "bf16_dtype": recorded.dtype}


def recheck(workspace_dir: Path, ref: str, against: str) -> dict:
    from rsi.evaluation import EvalSpec, evaluate
    from rsi.workspace import Workspace

    workspace = Workspace(workspace_dir)
    entry = {"workspace": str(workspace_dir), "ref": ref, **ledger_entry(workspace, ref)}
    started = time.monotonic()
    outcome = evaluate(workspace, EvalSpec(candidate=ref, parent=against, limit_covered=0, dtype="float32"),
                       on_note=lambda line: print(f"{datetime.now(UTC):%H:%M:%S} {line}", flush=True))
    return {**entry, "eval": outcome.eval_id, "lift": outcome.lift.model_dump(mode="json"),
            "wall_s": round(time.monotonic() - started, 1), "load": os.getloadavg()[0]}


def cell(lift: dict) -> str:
    t = lift["table"]
    low, high = lift["lift_ci95"]
    return f"{lift['lift']:+.3f} [{low:+.3f}, {high:+.3f}] ({t['candidate_only']}:{t['parent_only']})"


def base_agreement(entries: list[dict]) -> list[str]:
    """The base (parent) side of every float32 evaluation against every other: verdicts and model text."""
    parents = []
    for e in entries:
        sides = sides_of(Path(e["workspace"]) / "runs" / e["eval"] / "eval.json")
        parents.append((e, sides[0]))  # job 0 is the parent
    lines = []
    for (ea, a), (eb, b) in itertools.combinations(parents, 2):
        flipped, common = flips(a, b)
        texts = a.texts.keys() & b.texts.keys()
        differed = sum(a.texts[t] != b.texts[t] for t in texts)
        lines.append(f"| {ea['eval']} | {eb['eval']} | {common} | {flipped} | {differed} of {len(texts)} |")
    return lines


def section(entries: list[dict], notes: str) -> str:
    rows = [f"| {Path(e['workspace']).name} {e['generation']} | {e['ref']} | {e['examples']} | {cell(e['bf16_lift'])} | "
            f"{cell(e['lift'])} | {e['lift']['parent_rate'] * e['lift']['tasks']:.0f} | "
            f"{e['lift']['candidate_rate'] * e['lift']['tasks']:.0f} | {e['wall_s'] / 60:.1f} |" for e in entries]
    loads = [e["load"] for e in entries]
    command = " ".join(f"--adapter {e['workspace']}:{e['ref']}" for e in entries)
    return "\n".join([
        SECTION, "", __doc__.split("\n\n")[1].replace("\n", " "), "",
        f"Machine {platform.node()} ({os.cpu_count()} cores), shared (1-minute load average {min(loads):.1f}-"
        f"{max(loads):.1f} at the end of each evaluation); {datetime.now(UTC):%Y-%m-%d %H:%M} UTC. "
        "Cells: lift against the base on the heldout split [95% interval, Newcombe] (discordant tasks "
        "candidate:base).", "",
        "| ledger, generation | adapter | examples | recorded lift vs generation 0 (bfloat16) | lift vs the base "
        "(float32) | base solved (float32) | candidate solved (float32) | minutes |",
        "|---|---|---:|---|---|---:|---:|---:|", *rows, "",
        "The base's float32 verdicts and text, evaluation against evaluation:", "",
        "| evaluation | evaluation | heldout tasks | verdicts that differ | tasks whose text differs |",
        "|---|---|---:|---:|---|", *base_agreement(entries), "",
        *([notes, ""] if notes else []),
        f"Reproduce: `.venv/bin/python bench/adapter_recheck.py {command} --state FILE --write`",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--adapter", action="append", required=True, metavar="WORKSPACE:REF",
                        help="A workspace and the candidate revision one of its generations trained.")
    parser.add_argument("--against", default="default@r2", help="The base contract (generation 0).")
    parser.add_argument("--state", type=Path, required=True, help="Finished rechecks (JSON), for a resume.")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--notes", type=Path, help="Markdown appended to the section (the reading).")
    args = parser.parse_args()
    done = json.loads(args.state.read_text()) if args.state.exists() else {}
    for item in args.adapter:
        folder, _, ref = item.rpartition(":")
        if item not in done:
            done[item] = recheck(Path(folder), ref, args.against)
            args.state.write_text(json.dumps(done, indent=2))
    block = section([done[item] for item in args.adapter], args.notes.read_text().strip() if args.notes else "")
    print(block)
    if args.write:
        replace_section(SECTION, block)


if __name__ == "__main__":
    main()
