"""The ablations that explain the compounding benchmark's lift (issue 16): data size, transfer rendering, and
continuing the parent's adapter against training fresh, each measured on the heldout split against generation 0.

Source: a copy of the compounding workspace (bench/compounding.py's `--workspace`) after its third generation,
so nothing of the benchmark is touched. The data is what generation 3 trained on: every coverage run and
harvest of the suite, pooled, at most `--max-per-task` distinct solutions per task (`rsi trajectories export`'s
path, bench/recipe_sweep.py's `export`). Every arm trains one adapter with rsi's own training stage on the
generation-0 contract's `[training]` defaults and is scored by `rsi eval`'s path: its candidate against the
generation-0 contract, greedy, one attempt per heldout task, both sides in the same evaluation, paired lift
with Newcombe's 95% interval. This reports what each choice did; it chooses nothing (the recipe was fixed
before, on train data only: "## recipe_sweep"), so measuring it on heldout tasks tunes nothing.

Arms (one changed factor each, against `fresh`):

  fresh     generation 3's recipe again: a fresh LoRA on all pooled examples, rendered `deployed`
  continue  the same data and recipe, starting from the parent generation's adapter (`rsi train
            --from-adapter`): continue against fresh
  half      a fresh LoRA on the examples of half the tasks (those with an even hash, a rule fixed before
            running): the data-size ablation
  found     a fresh LoRA on the same solutions rendered `found` (the conversation of the configuration that
            found them) instead of `deployed`: the transfer-rendering ablation

    .venv/bin/python bench/compounding_ablations.py --source /work/compound-ws --workspace DIR \\
        --parent-adapter 31d8be887324 --write
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from recipe_sweep import (  # bench/ (scripts run from bench/)
    bucket,
    export,
    head_commit,
    make_note,
    open_copy,
    source_runs,
    subset,
)
from results import replace_section

SECTION = "## compounding_ablations"
HALF_RULE = 'half: tasks with int(sha256("ablation/half:" + task_key).hexdigest()[:8], 16) % 2 == 0'


@dataclass(frozen=True)
class Arm:
    name: str
    render: str  # "deployed" | "found"
    data: str  # "all" | "half"
    continues: bool
    why: str


ARMS = [
    Arm("fresh", "deployed", "all", False, "generation 3's recipe: fresh LoRA, all pooled examples, deployed"),
    Arm("continue", "deployed", "all", True, "continue the parent generation's adapter on the same data"),
    Arm("half", "deployed", "half", False, "data size: the examples of half the tasks"),
    Arm("found", "found", "all", False, "rendering: solutions in the conversation that found them"),
]


@dataclass
class Measured:
    arm: Arm
    examples: int
    steps: int = 0
    losses: str = ""
    train_s: float = 0.0
    eval_s: float = 0.0
    rates: str = ""
    lift: float = 0.0
    ci: tuple[float, float] = (0.0, 0.0)
    discordant: str = ""
    load: str = ""
    adapter: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def datasets(workspace: Any, args: argparse.Namespace, note: Any) -> tuple[list[str], dict[str, Path], dict[str, int]]:
    runs = source_runs(workspace, args.suite)
    root = workspace.runs_dir / "ablations"
    paths: dict[str, Path] = {}
    sizes: dict[str, int] = {}
    for render in sorted({a.render for a in args.selected}):
        manifest = export(workspace, runs, render, args.base, args.max_per_task, root / f"export-{render}")
        tasks = set(manifest["counts"]["per_task"])
        half = {k for k in tasks if bucket("ablation/half:", k, 2) == 0}
        for data, keep in (("all", tasks), ("half", half)):
            if any(a.render == render and a.data == data for a in args.selected):
                out = root / f"{render}-{data}"
                sizes[f"{render}-{data}"] = subset(root / f"export-{render}", out, keep, f"ablation ({data})")
                paths[f"{render}-{data}"] = out
                note(f"dataset {render}-{data}: {sizes[f'{render}-{data}']} examples of {len(keep)} tasks")
    return runs, paths, sizes


def run_arm(workspace: Any, arm: Arm, dataset: Path, examples: int, args: argparse.Namespace, note: Any) -> Measured:
    from rsi.evaluation import EvalSpec, evaluate
    from rsi.training.stage import TrainStageSpec, train_stage

    load0, started = os.getloadavg()[0], time.monotonic()
    spec = TrainStageSpec(dataset=dataset, contract=args.base, threads=args.threads,
                          init_adapter=args.parent_adapter if arm.continues else None)
    trained = train_stage(workspace, spec, on_note=note)
    train_s = time.monotonic() - started
    assert trained.candidate is not None, "train_stage writes the candidate revision"
    note(f"{arm.name}: trained {trained.metrics.steps} steps in {train_s:.0f}s -> {trained.candidate.ref}")
    started = time.monotonic()
    outcome = evaluate(workspace, EvalSpec(candidate=trained.candidate.ref, parent=args.base, limit_covered=0,
                                           attempts_per_task=1, workers=args.workers), on_note=note)
    lift = outcome.lift
    return Measured(
        arm, examples, trained.metrics.steps, f"{trained.metrics.first_loss:.3f} -> {trained.metrics.final_loss:.3f}",
        train_s, time.monotonic() - started, f"{lift.candidate_rate:.3f} / {lift.parent_rate:.3f} ({lift.tasks})",
        lift.lift, lift.lift_ci95, f"{lift.table.candidate_only}:{lift.table.parent_only}",
        f"{load0:.1f}-{os.getloadavg()[0]:.1f}", trained.adapter_id[:12],
    )


def section(done: list[Measured], info: dict[str, Any], args: argparse.Namespace) -> str:
    rows = ["| arm | one change against `fresh` | examples | steps | loss first -> last | heldout pass rate "
            "(arm / gen 0, tasks) | lift vs gen 0, 95% CI | discordant (arm:gen 0) | train / eval s | load |",
            "|" + "---|" * 10]
    for m in done:
        rows.append(f"| {m.arm.name} | {m.arm.why} | {m.examples} | {m.steps} | {m.losses} | {m.rates} | "
                    f"{m.lift:+.3f} [{m.ci[0]:+.3f}, {m.ci[1]:+.3f}] | {m.discordant} | "
                    f"{m.train_s:.0f} / {m.eval_s:.0f} | {m.load} |")
    missing = [a.name for a in args.selected if a.name not in {m.arm.name for m in done}]
    return (
        f"{SECTION}\n\n"
        f"What explains the compounding benchmark's lift (bench/compounding_ablations.py; its docstring says what "
        f"each arm is). Source: a copy of the compounding workspace ({args.source}) after generation 3; data: the "
        f"{len(info['runs'])} coverage runs and harvests of {args.suite} pooled, at most {args.max_per_task} per "
        f"task. Each arm: one adapter (rsi's train_stage on {args.base}'s [training] defaults, CPU, "
        f"{args.threads} thread(s)), scored by `rsi eval`'s path on every heldout task against {args.base} "
        f"(generation 0), greedy, paired, {args.workers} attempts in flight. `continue` starts from the parent "
        f"generation's adapter {args.parent_adapter}. Half-data rule (fixed before running): {HALF_RULE}. "
        "Reported, not chosen on: nothing here picks a recipe.\n\n"
        + "\n".join(rows) + "\n\n"
        + (f"Not run (time): {', '.join(missing)}.\n\n" if missing else "")
        + f"Code {info['commit']}; machine {info['node']} ({os.cpu_count()} cores, shared; the load column is the "
        f"1-minute load average at an arm's start and end), {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, total wall "
        f"{info['wall_s'] / 60:.1f} min.\n\n"
        f"Reproduce: `.venv/bin/python bench/compounding_ablations.py --source {args.source} --workspace DIR "
        f"--parent-adapter {args.parent_adapter} --arms {args.arms} --threads {args.threads} --workers "
        f"{args.workers} --write`\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=Path("/work/compound-ws"), help="Workspace to copy (read only).")
    parser.add_argument("--workspace", type=Path, required=True, help="The copy (made if missing; written to).")
    parser.add_argument("--suite", default="pyfuncs2")
    parser.add_argument("--base", default="default@r2", help="The generation-0 contract.")
    parser.add_argument("--parent-adapter", required=True, help="The parent generation's adapter id (continue arm).")
    parser.add_argument("--arms", default=",".join(a.name for a in ARMS), help="Comma list, in this order.")
    parser.add_argument("--max-per-task", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    by_name = {a.name: a for a in ARMS}
    args.selected = [by_name[n] for n in args.arms.split(",")]
    started = time.monotonic()
    note = make_note(started)
    workspace = open_copy(args.source, args.workspace)
    runs, paths, sizes = datasets(workspace, args, note)
    info: dict[str, Any] = {"runs": runs, "commit": head_commit(), "node": os.uname().nodename}
    done: list[Measured] = []
    for arm in args.selected:
        key = f"{arm.render}-{arm.data}"
        done.append(run_arm(workspace, arm, paths[key], sizes[key], args, note))
        m = done[-1]
        note(f"{arm.name}: {m.rates}, lift {m.lift:+.3f} [{m.ci[0]:+.3f}, {m.ci[1]:+.3f}]")
        info["wall_s"] = time.monotonic() - started
        if args.write:  # after every arm, so a stopped run still leaves what it measured
            replace_section(SECTION, section(done, info, args))
    info["wall_s"] = time.monotonic() - started
    print(section(done, info, args))


if __name__ == "__main__":
    main()
