"""Recipe sweep: the training defaults chosen on TRAIN data only (issue 16, item 4), with the asked ablations.

Source data: a copy of a compounding workspace (bench/compounding.py), so nothing of the benchmark is touched:
the trajectories of every coverage run and harvest it holds (not its evaluation runs), pooled as a generation's
export pools them (`rsi trajectories export RUN... --max-per-task 4`, rendered `deployed` or `found`).

The split (fixed before any result was seen): a TRAIN task of the suite is in the VALIDATION slice when
`int(sha256("recipe-sweep/1:" + task_key).hexdigest()[:8], 16) % 5 == 0` (about 20%), else in the FIT slice.
Fit examples come only from fit tasks; the validation slice is every validation task, solved before or
not. Heldout tasks are never read, trained on or scored here.

Arms (each a fresh LoRA from the base contract with rsi's own training stage, `train_stage`, on the CPU):

  defaults   the contract's [training] defaults on the deployed-rendered fit data
  found      the defaults on the same fit solutions rendered `found` (the conversation of the configuration
             that found them): the transfer-rendering ablation
  lr1e-3     learning rate 1e-3 instead of 2e-4
  epochs4    4 epochs instead of 2
  half       the defaults on half the fit tasks (those with an even second hash): the data-size ablation
  rank16     rank 16 (alpha stays the contract's)
  continue   continue-from-parent against fresh: a parent adapter trained (defaults) on the fit examples of every
             source run but the newest generation's (its coverage run and harvest: the two newest runs), then
             that adapter trained further (defaults) on all fit examples, as a generation would continue its
             parent's adapter on the pooled data. `defaults` is its fresh counterpart on the same data.

Each arm is scored with `rsi eval`'s own path (rsi.evaluation.evaluate, `EvalSpec.tasks` = the validation
slice): its candidate contract against the base contract, greedy, one attempt per task, same seeds, paired,
lift with Newcombe's 95% interval (rsi.promotion.decision.paired_lift). Continue-from-parent is not an arm:
rsi trains every generation fresh on the pooled data (docs/nightly.md).

Choice rule (stated before running): the arm with the highest lower bound of the lift's 95% interval;
ties go to the defaults (listed first). Arms that would not finish before `--deadline` are dropped, and
the section says which. A finished arm's result is kept in the workspace (`runs/recipe-sweep/results/ARM.json`)
and reused when the sweep is run again on the same workspace, so a stopped sweep resumes with its next arm.

    .venv/bin/python bench/recipe_sweep.py --source /work/compound-ws --workspace /tmp/sweep-ws --threads 2 --write
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from results import replace_section  # bench/results.py (scripts run from bench/)

SECTION = "## recipe_sweep"
SALT = "recipe-sweep/1:"
SPLIT_RULE = ('validation if int(sha256("recipe-sweep/1:" + task_key).hexdigest()[:8], 16) % 5 == 0, else fit; '
              'half-data arm: fit tasks with int(sha256("recipe-sweep/half:" + task_key)[:8], 16) % 2 == 0')


@dataclass(frozen=True)
class Arm:
    name: str
    render: str  # "deployed" | "found"
    data: str  # "all" | "half"
    overrides: dict[str, Any] = field(default_factory=dict)
    why: str = ""
    parent_data: str | None = None  # "early": first train a parent on the older runs' fit data, then continue it


ARMS = [
    Arm("defaults", "deployed", "all", {}, "the contract's [training] defaults"),
    Arm("found", "found", "all", {}, "rendering ablation: solutions in the conversation that found them"),
    Arm("lr1e-3", "deployed", "all", {"learning_rate": 1e-3}, "learning rate 1e-3"),
    Arm("epochs4", "deployed", "all", {"epochs": 4}, "4 epochs"),
    Arm("half", "deployed", "half", {}, "data-size ablation: half the fit tasks"),
    Arm("rank16", "deployed", "all", {"rank": 16}, "LoRA rank 16"),
    Arm("continue", "deployed", "all", {}, "continue-from-parent: the parent's adapter (fit data of all but the "
        "newest generation's runs) trained further on all fit data", parent_data="early"),
]
NEWEST_RUNS = 2  # the newest generation's coverage run and harvest: what a continuing parent had not seen


def bucket(salt: str, key: str, mod: int) -> int:
    return int(hashlib.sha256((salt + key).encode("utf-8")).hexdigest()[:8], 16) % mod


def is_validation(key: str) -> bool:
    return bucket(SALT, key, 5) == 0


def copy_workspace(source: Path, target: Path) -> None:
    """Files as they are, and the store through SQLite's backup API (a consistent copy of a live database)."""
    shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns("rsi.sqlite*"))
    src = sqlite3.connect(f"file:{source / 'runs' / 'rsi.sqlite'}?mode=ro", uri=True)
    dst = sqlite3.connect(target / "runs" / "rsi.sqlite")
    src.backup(dst)
    dst.close()
    src.close()


def open_copy(source: Path, target: Path) -> Any:
    """The benchmark's own copy of `source` (made once, then reused), opened with a bench git identity and
    no store or model override from the caller's environment."""
    for var, value in {"GIT_AUTHOR_NAME": "rsi bench", "GIT_AUTHOR_EMAIL": "bench@rsi.local",
                       "GIT_COMMITTER_NAME": "rsi bench", "GIT_COMMITTER_EMAIL": "bench@rsi.local"}.items():
        os.environ.setdefault(var, value)
    for var in ("RSI_DB", "RSI_MODEL_OVERRIDE"):
        os.environ.pop(var, None)
    from rsi.workspace import Workspace

    if not target.resolve().exists():
        copy_workspace(source.resolve(), target.resolve())
    return Workspace(target.resolve())


def make_note(started: float) -> Any:
    """A progress printer: UTC time, seconds since `started`, the 1-minute load, the line."""
    def note(line: str) -> None:
        print(f"{datetime.now(UTC):%H:%M:%S} {time.monotonic() - started:6.0f}s load {os.getloadavg()[0]:4.1f} "
              f"{line}", flush=True)
    return note


def head_commit() -> str:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          cwd=Path(__file__).parent).stdout.strip()


def source_runs(workspace: Any, suite: str) -> list[str]:
    """Every finished coverage run and harvest of the suite (evaluation runs hold no training data)."""
    from rsi.run.kinds import EVAL_SCHEDULER
    from rsi.store import open_store

    store = open_store(workspace.db_url)
    try:
        return [r.id for r in store.list_runs(suite) if r.scheduler != EVAL_SCHEDULER and r.status == "done"]
    finally:
        store.close()


def export(workspace: Any, runs: list[str], render: str, base: str, max_per_task: int, out: Path) -> dict[str, Any]:
    from rsi.trajectories.export import export_trajectories
    from rsi.trajectories.select import SelectionPolicy

    outcome = export_trajectories(workspace, runs, out, SelectionPolicy(max_per_task=max_per_task), contract=base,
                                  render=render)  # type: ignore[arg-type]
    return outcome.manifest


def subset(export_dir: Path, out: Path, keep: set[str], note: str) -> int:
    """The export's lines whose task is in `keep`, with a manifest that says so (the training stage checks
    the dataset against the manifest's sha256)."""
    manifest = json.loads((export_dir / "manifest.json").read_text())
    lines = (export_dir / "train.jsonl").read_text().splitlines()
    kept_sources: list[dict[str, Any]] = []
    kept_lines: list[str] = []
    for source in sorted(manifest["source"]["attempts"], key=lambda s: s["line"]):
        if source["task"] in keep:
            kept_sources.append({**source, "line": len(kept_lines)})
            kept_lines.append(lines[source["line"]])
    data = ("\n".join(kept_lines) + "\n").encode("utf-8")
    manifest["source"]["attempts"] = kept_sources
    manifest["counts"]["per_task"] = {k: v for k, v in manifest["counts"]["per_task"].items() if k in keep}
    manifest["dataset"] = {**manifest["dataset"], "sha256": hashlib.sha256(data).hexdigest(), "examples": len(kept_lines)}
    manifest["recipe_sweep"] = {"subset": note, "rule": SPLIT_RULE, "tasks_kept": len(keep)}
    out.mkdir(parents=True, exist_ok=True)
    (out / "train.jsonl").write_bytes(data)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return len(kept_lines)


@dataclass
class ArmResult:
    arm: Arm
    examples: int
    steps: int = 0
    first_loss: float = 0.0
    final_loss: float = 0.0
    train_s: float = 0.0
    eval_s: float = 0.0
    candidate_rate: float = 0.0
    base_rate: float = 0.0
    lift: float = 0.0
    ci: tuple[float, float] = (0.0, 0.0)
    tasks: int = 0
    load: str = ""
    eval_id: str = ""
    adapter: str = ""


def run_arm(workspace: Any, arm: Arm, datasets: dict[str, Path], sizes: dict[str, int], args: argparse.Namespace,
            validation: list[str], note: Any) -> ArmResult:
    from rsi.evaluation import EvalSpec, evaluate
    from rsi.training.stage import TrainStageSpec, train_stage

    load0 = os.getloadavg()[0]
    started = time.monotonic()
    init_adapter = None
    if arm.parent_data:  # the parent is trained first, fresh, with the same overrides; its time counts as the arm's
        parent = train_stage(workspace, TrainStageSpec(dataset=datasets[f"{arm.render}-{arm.parent_data}"],
                                                       contract=args.base, threads=args.threads,
                                                       max_steps=args.max_steps, candidate=False, **arm.overrides),
                             on_note=note)
        init_adapter = parent.adapter_id
        note(f"{arm.name}: parent adapter {parent.adapter_id[:12]} ({parent.metrics.steps} steps on "
             f"{sizes[f'{arm.render}-{arm.parent_data}']} examples)")
    key = f"{arm.render}-{arm.data}"
    trained = train_stage(workspace, TrainStageSpec(dataset=datasets[key], contract=args.base, threads=args.threads,
                                                    max_steps=args.max_steps, init_adapter=init_adapter,
                                                    **arm.overrides), on_note=note)
    examples = sizes[key]
    train_s = time.monotonic() - started
    assert trained.candidate is not None, "train_stage writes the candidate revision"
    note(f"{arm.name}: trained {trained.metrics.steps} steps in {train_s:.0f}s -> {trained.candidate.ref}")
    started = time.monotonic()
    outcome = evaluate(workspace, EvalSpec(candidate=trained.candidate.ref, parent=args.base, tasks=validation,
                                           limit_covered=0, attempts_per_task=1, workers=args.workers),
                       on_note=note)
    lift = outcome.lift
    return ArmResult(arm, examples, trained.metrics.steps, trained.metrics.first_loss, trained.metrics.final_loss,
                     train_s, time.monotonic() - started, lift.candidate_rate, lift.parent_rate, lift.lift,
                     lift.lift_ci95, lift.tasks, f"{load0:.1f}-{os.getloadavg()[0]:.1f}", outcome.eval_id,
                     trained.adapter_id[:12])


def _result_path(workspace: Any, arm: Arm) -> Path:
    return Path(workspace.runs_dir) / "recipe-sweep" / "results" / f"{arm.name}.json"


def _settings(arm: Arm, args: argparse.Namespace) -> Any:
    """What a kept result must have been measured with to be reused: the arm and the sweep's settings."""
    from dataclasses import asdict

    return json.loads(json.dumps({"arm": asdict(arm), "base": args.base, "suite": args.suite,
                                  "max_per_task": args.max_per_task, "max_steps": args.max_steps,
                                  "val_limit": args.val_limit}))


def save_result(workspace: Any, result: ArmResult, args: argparse.Namespace) -> None:
    """Kept atomically, so a sweep stopped later resumes with the next arm."""
    from dataclasses import asdict

    from rsi.atomic import write_json_atomic

    record = {**asdict(result), "arm": result.arm.name, "settings": _settings(result.arm, args)}
    write_json_atomic(_result_path(workspace, result.arm), record)


def load_result(workspace: Any, arm: Arm, args: argparse.Namespace) -> ArmResult | None:
    """The arm's kept result, if it was measured for this same arm and these settings."""
    path = _result_path(workspace, arm)
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    if data.pop("settings", None) != _settings(arm, args):
        return None  # the arm or the settings changed since: measure it again
    data.pop("arm")
    data["ci"] = tuple(data["ci"])
    return ArmResult(arm=arm, **data)


def chosen(results: list[ArmResult]) -> ArmResult | None:
    """Highest lower CI bound; ties to the earlier arm (the defaults are first)."""
    best: ArmResult | None = None
    for r in results:
        if best is None or r.ci[0] > best.ci[0] + 1e-12:
            best = r
    return best


def section(results: list[ArmResult], dropped: list[str], info: dict[str, Any], args: argparse.Namespace) -> str:
    rows = ["| arm | what | examples | steps | loss first -> last | validation pass rate (arm / base) | "
            "paired lift vs base, 95% CI (Newcombe) | train / eval wall (s) | load |", "|" + "---|" * 9]
    for r in results:
        rows.append(f"| {r.arm.name} | {r.arm.why} | {r.examples} | {r.steps} | {r.first_loss:.3f} -> "
                    f"{r.final_loss:.3f} | {r.candidate_rate:.3f} / {r.base_rate:.3f} ({r.tasks} tasks) | "
                    f"{r.lift:+.3f} [{r.ci[0]:.3f}, {r.ci[1]:.3f}] | {r.train_s:.0f} / {r.eval_s:.0f} | {r.load} |")
    pick = chosen(results)
    verdict = (f"**Chosen by the rule: `{pick.arm.name}`** (lower CI bound {pick.ci[0]:.3f})." if pick else
               "No arm finished: nothing chosen.")
    small = " (a smoke setting, not a measurement)" if args.max_steps or args.val_limit else ""
    return (
        f"{SECTION}\n\n"
        f"Training recipe chosen on TRAIN data only{small} (bench/recipe_sweep.py; its docstring says what each "
        f"arm is). Source: a copy of the compounding workspace ({info['source']}), pooled trajectories of "
        f"{len(info['runs'])} coverage runs and harvests ({', '.join(info['runs'])}), at most {args.max_per_task} "
        f"per task. Split of the {info['train']} train tasks of {args.suite}: {SPLIT_RULE}. Fit: {info['fit']} "
        f"tasks ({info['fit_covered']} with examples); validation: {info['val']} tasks"
        f"{' (first ' + str(args.val_limit) + ')' if args.val_limit else ''}, every one scored whether or not "
        f"it was ever solved. Each arm: a fresh LoRA on {args.base} (rsi's train_stage, CPU, {args.threads} "
        f"threads{', max_steps ' + str(args.max_steps) if args.max_steps else ''}), then `rsi eval`'s path "
        f"(EvalSpec.tasks = the validation slice): its candidate vs {args.base}, greedy, one attempt per task, "
        f"paired, {args.workers} attempts in flight. Heldout tasks were not read, trained on or scored.\n\n"
        "Rule stated before running: the arm with the highest lower bound of the lift's 95% interval; ties "
        "go to the defaults.\n\n"
        + "\n".join(rows) + "\n\n" + verdict + "\n\n"
        + "".join(f"`continue`'s parent ({key}): {n} fit examples from the {len(info['runs']) - NEWEST_RUNS} older "
                  f"runs; the arm's train time includes the parent's.\n\n" for key, n in info["early"].items())
        + f"Dropped (not run, to finish by {args.deadline} UTC): {', '.join(dropped) if dropped else 'none'}.\n\n"
        f"Code {info['commit']}; machine {info['node']} ({os.cpu_count()} cores, shared), "
        f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M')} UTC, total wall {info['wall_s'] / 60:.1f} min.\n\n"
        f"Reproduce: `.venv/bin/python bench/recipe_sweep.py --source {info['source']} --workspace DIR "
        f"--arms {','.join(a for a in args.arms.split(','))} --threads {args.threads} --workers {args.workers}"
        f"{' --max-steps ' + str(args.max_steps) if args.max_steps else ''}"
        f"{' --val-limit ' + str(args.val_limit) if args.val_limit else ''} --write`\n"
    )


def prepare_data(workspace: Any, args: argparse.Namespace, note: Any) -> tuple[dict[str, Any], dict[str, Path],
                                                                                  dict[str, int], list[str]]:
    from rsi.tasks.load import load_suite

    train = sorted(t.key for t in load_suite(workspace, args.suite) if t.spec.split == "train")
    validation = [k for k in train if is_validation(k)]
    fit = set(train) - set(validation)
    half = {k for k in fit if bucket("recipe-sweep/half:", k, 2) == 0}
    runs = source_runs(workspace, args.suite)
    sweep = workspace.runs_dir / "recipe-sweep"
    datasets: dict[str, Path] = {}
    sizes: dict[str, int] = {}
    fit_covered = 0
    for render in sorted({a.render for a in args.selected}):
        manifest = export(workspace, runs, render, args.base, args.max_per_task, sweep / f"export-{render}")
        fit_covered = len([k for k in manifest["counts"]["per_task"] if k in fit])
        if any(a.render == render and a.parent_data == "early" for a in args.selected):
            export(workspace, runs[:-NEWEST_RUNS], render, args.base, args.max_per_task, sweep / f"export-{render}-early")
            out = sweep / f"fit-{render}-early"
            sizes[f"{render}-early"] = subset(sweep / f"export-{render}-early", out, fit, "fit tasks (older runs)")
            datasets[f"{render}-early"] = out
            note(f"dataset {render}-early ({len(runs) - NEWEST_RUNS} older runs): {sizes[f'{render}-early']} examples")
        for data, keep in (("all", fit), ("half", half)):
            if any(a.render == render and a.data == data for a in args.selected):
                out = sweep / f"fit-{render}-{data}"
                sizes[f"{render}-{data}"] = subset(sweep / f"export-{render}", out, keep, f"fit tasks ({data})")
                datasets[f"{render}-{data}"] = out
                note(f"dataset {render}-{data}: {sizes[f'{render}-{data}']} examples")
    info = {"runs": runs, "train": len(train), "fit": len(fit), "val": len(validation), "fit_covered": fit_covered,
            "early": {k: v for k, v in sizes.items() if k.endswith("-early")}}
    return info, datasets, sizes, validation[: args.val_limit] if args.val_limit else validation


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=Path("/work/compound-ws"), help="Workspace to copy (read only).")
    parser.add_argument("--workspace", type=Path, required=True, help="The copy (made if missing; written to).")
    parser.add_argument("--suite", default="pyfuncs2")
    parser.add_argument("--base", default="default@r2", help="The generation-0 contract every arm trains on.")
    parser.add_argument("--arms", default=",".join(a.name for a in ARMS), help="Comma list, in priority order.")
    parser.add_argument("--max-per-task", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--max-steps", type=int, default=None, help="Smoke setting: cap every training.")
    parser.add_argument("--val-limit", type=int, default=None, help="Smoke setting: first N validation tasks.")
    parser.add_argument("--deadline", default="19:00", help="HH:MM UTC: drop arms that would end after it.")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    by_name = {a.name: a for a in ARMS}
    args.selected = [by_name[n] for n in args.arms.split(",")]
    started = time.monotonic()
    note = make_note(started)
    workspace = open_copy(args.source, args.workspace)
    info, datasets, sizes, validation = prepare_data(workspace, args, note)
    note(f"split: {info['fit']} fit / {info['val']} validation train tasks; scoring {len(validation)}")
    info.update(source=str(args.source), commit=head_commit(), node=os.uname().nodename)
    hh, mm = (int(x) for x in args.deadline.split(":"))
    deadline = datetime.now(UTC).replace(hour=hh, minute=mm, second=0, microsecond=0).timestamp()
    results: list[ArmResult] = []
    dropped: list[str] = []
    for arm in args.selected:
        estimate = max((r.train_s + r.eval_s for r in results), default=0.0)
        if results and time.time() + estimate > deadline:
            dropped.append(arm.name)
            note(f"{arm.name}: dropped (about {estimate:.0f}s would end after {args.deadline})")
            continue
        kept = load_result(workspace, arm, args)
        if kept is not None:
            note(f"{arm.name}: measured before (evaluation {kept.eval_id}), reused")
            results.append(kept)
        else:
            results.append(run_arm(workspace, arm, datasets, sizes, args, validation, note))
            save_result(workspace, results[-1], args)
        r = results[-1]
        note(f"{arm.name}: {r.candidate_rate:.3f} vs base {r.base_rate:.3f}, lift {r.lift:+.3f} "
             f"[{r.ci[0]:.3f}, {r.ci[1]:.3f}]")
        info["wall_s"] = time.monotonic() - started
        block = section(results, dropped + [a.name for a in args.selected[len(results) + len(dropped):]], info, args)
        if args.write:  # after every arm, so a stopped sweep still leaves what it measured
            replace_section(SECTION, block)
    info["wall_s"] = time.monotonic() - started
    block = section(results, dropped, info, args)
    print(block)
    if args.write:
        replace_section(SECTION, block)


if __name__ == "__main__":
    main()
