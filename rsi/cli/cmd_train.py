"""CLI commands: `rsi train`, `rsi adapters list|show`, `rsi eval`, `rsi generation`, `rsi nightly`, `rsi lineage`.

Each parses flags, calls one core function (rsi.training.stage.train_stage, rsi.training.registry,
rsi.evaluation.evaluate/apply_decision, rsi.generation.generation.run_generation,
rsi.generation.nightly.run_nightly, rsi.generation.lineage.build_lineage) and renders.
Exit codes: 0 done; 1 runtime failure, or (`rsi eval`) the gate rejected the adapter; 2 bad input;
`rsi nightly` documents its own (docs/nightly.md).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from rsi.cli.render import console, print_json
from rsi.cli.state import state

adapters_app = typer.Typer(help="The adapter registry (runs/adapters/): immutable revisions with lineage.",
                           no_args_is_help=True)


def _say(json_output: bool) -> Any:
    """Progress lines: stdout normally, stderr under --json (stdout then holds one JSON document)."""
    stream = sys.stderr if json_output else sys.stdout

    def say(line: str) -> None:
        stream.write(line + "\n")
        stream.flush()

    return say


def _tracker(command: str, json_output: bool) -> Any:
    """The progress of a long command, shown as `rsi run` shows itself: a live view on a TTY, plain
    timestamped lines otherwise (stderr under --json, where stdout holds one JSON document)."""
    from rsi.cli.render import is_tty
    from rsi.progress import PlainProgress, RichProgress, Tracker

    if json_output:
        return Tracker(command, PlainProgress(sys.stderr))
    return Tracker(command, RichProgress() if is_tty() else PlainProgress(sys.stdout))


def train(
    dataset: Annotated[Path | None, typer.Argument(help="Exported dataset folder (train.jsonl + manifest.json); SFT only.")] = None,
    contract: Annotated[str, typer.Option("--contract", help="Contract ref whose base and [training] are used.")] = "default",
    method: Annotated[str | None, typer.Option("--method", help="sft or grpo (default: the contract's [training] method).")] = None,
    group_size: Annotated[int | None, typer.Option("--group-size", help="GRPO: rollouts per task per step.", rich_help_panel="GRPO")] = None,
    prompts_per_step: Annotated[int | None, typer.Option("--prompts-per-step", help="GRPO: tasks per step.", rich_help_panel="GRPO")] = None,
    limit_tasks: Annotated[int | None, typer.Option("--limit-tasks", help="GRPO: only the first N train tasks.", rich_help_panel="GRPO")] = None,
    sandbox: Annotated[str, typer.Option("--sandbox", help="GRPO: auto, local or docker.", rich_help_panel="GRPO")] = "auto",
    executor: Annotated[str, typer.Option("--executor", help="local (this machine) or slurm (a GPU job).")] = "local",
    max_steps: Annotated[int | None, typer.Option("--max-steps", help="Stop after N optimizer steps.")] = None,
    epochs: Annotated[int | None, typer.Option("--epochs", help="Override [training] epochs.")] = None,
    learning_rate: Annotated[float | None, typer.Option("--learning-rate", help="Override [training] learning_rate.")] = None,
    rank: Annotated[int | None, typer.Option("--rank", help="Override [training] rank.")] = None,
    batch_size: Annotated[int | None, typer.Option("--batch-size", help="Override [training] batch_size.")] = None,
    max_length: Annotated[int | None, typer.Option("--max-length", help="Override [training] max_length.")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Override [training] seed.")] = None,
    threads: Annotated[int | None, typer.Option("--threads", help="torch CPU threads (1 is fastest on a busy machine).")] = None,
    gpus: Annotated[int, typer.Option("--gpus", help="SLURM: GPUs for the job.", rich_help_panel="SLURM")] = 1,
    cpus: Annotated[int, typer.Option("--cpus", help="SLURM: CPUs for the job.", rich_help_panel="SLURM")] = 4,
    mem_gb: Annotated[float, typer.Option("--mem-gb", help="SLURM: memory in GB.", rich_help_panel="SLURM")] = 32.0,
    time_min: Annotated[int, typer.Option("--time-min", help="SLURM: time limit in minutes.", rich_help_panel="SLURM")] = 120,
    partition: Annotated[str, typer.Option("--partition", help="SLURM: partition.", rich_help_panel="SLURM")] = "",
    candidate: Annotated[bool, typer.Option("--candidate/--no-candidate", help="Write the candidate contract revision.")] = True,
    json_output: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
) -> None:
    """Fine-tune a LoRA adapter (SFT on DATASET, or GRPO on the suite's train tasks), register it, write the candidate."""
    from rsi.errors import UserInputError
    from rsi.training.stage import TrainStageSpec, train_stage

    if executor not in ("local", "slurm"):
        raise UserInputError(f"--executor {executor!r}: use local or slurm")
    if method not in (None, "sft", "grpo"):
        raise UserInputError(f"--method {method!r}: use sft or grpo")
    if sandbox not in ("auto", "local", "docker"):
        raise UserInputError(f"--sandbox {sandbox!r}: use auto, local or docker")
    spec = TrainStageSpec(
        dataset=dataset, contract=contract, method=method, executor=executor, max_steps=max_steps,  # type: ignore[arg-type]
        epochs=epochs, learning_rate=learning_rate, rank=rank, batch_size=batch_size, max_length=max_length, seed=seed,
        threads=threads, candidate=candidate, group_size=group_size, prompts_per_step=prompts_per_step,
        limit_tasks=limit_tasks, sandbox=sandbox,  # type: ignore[arg-type]
        slurm={"gpus": gpus, "cpus": cpus, "mem_gb": mem_gb, "time_min": time_min, "partition": partition},
    )
    tracker = _tracker("train", json_output)

    def progress(p: Any) -> None:
        if tracker.current_stage != "training":
            tracker.stage("training", total=p.total_steps)
        if hasattr(p, "mean_reward"):  # a GRPO step (rsi.training.grpo.GrpoProgress)
            tracker.advance(p.step, reward=round(p.mean_reward, 3), rollouts=p.rollouts, loss=round(p.loss, 4))
        else:
            tracker.advance(p.step, **{"epoch": p.epoch, "loss": round(p.loss, 4), "tok/s": round(p.tokens_per_s)})

    try:
        outcome = train_stage(state.workspace(), spec, progress=progress, on_note=tracker.say)
    finally:
        tracker.close()
    if json_output:
        print_json(outcome.model_dump(mode="json"))
        return
    m = outcome.metrics
    console.print(f"adapter {outcome.adapter_id[:12]} ({'registered' if outcome.registered else 'already registered'}): "
                  f"{m['steps']} steps, loss {m['first_loss']:.4f} -> {m['final_loss']:.4f}, "
                  f"{m['tokens_per_s']:.0f} tok/s, {m['wall_s']:.0f}s on {m['device']}", markup=False)
    if m.get("method") == "grpo":
        console.print(f"  GRPO: {m['rollouts']} rollouts; mean reward per step "
                      f"{' '.join(f'{r:.2f}' for r in m['rewards_per_step'])}", markup=False)
    console.print(f"  folder {outcome.adapter_dir}", markup=False)
    if outcome.candidate:
        c = outcome.candidate
        console.print(f"  candidate {c['ref']} ({'written' if c['written'] else 'already written'}); "
                      f"evaluate it: rsi eval {c['ref']} --against {outcome.lineage['parent_contract']['ref']}",
                      markup=False)


@adapters_app.command("list")
def adapters_list(
    json_output: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Registered adapter revisions, oldest first."""
    from rsi.training.registry import list_adapters

    records = list_adapters(state.workspace())
    if json_output:
        print_json([r.summary() for r in records])
        return
    if not records:
        console.print("no adapters registered (train one with `rsi train DATASET`)", markup=False)
        return
    for r in records:
        lineage = r.lineage
        console.print(
            f"{r.short_id}  {lineage.name:<6} {r.status.state:<10} {lineage.created.strftime('%Y-%m-%d %H:%M')}  "
            f"parent {lineage.parent_contract.get('ref', '?'):<16} data {lineage.dataset.get('sha256', '')[:12]} "
            f"({lineage.dataset.get('examples', '?')} ex)  loss {lineage.metrics.get('first_loss', 0):.3f}->"
            f"{lineage.metrics.get('final_loss', 0):.3f}",
            markup=False,
        )


@adapters_app.command("show")
def adapters_show(
    adapter: Annotated[str, typer.Argument(help="Adapter id (at least 6 hex digits) or NAME@ID.")],
    json_output: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """One adapter revision: its lineage, metrics and status."""
    from rsi.training.registry import find_adapter

    record = find_adapter(state.workspace(), adapter)
    summary = record.summary()
    if json_output:
        print_json(summary)
        return
    lineage = summary["lineage"]
    lines = [
        f"adapter {record.id}",
        f"  name       {lineage['name']}  state {record.status.state}",
        f"  folder     {record.adapter_dir}",
        f"  created    {lineage['created']}",
        f"  base       {lineage['base']['id']} v{lineage['base']['version']} sha256 {lineage['base']['sha256'][:16]}",
        f"  dataset    {lineage['dataset']['sha256'][:16]} ({lineage['dataset']['examples']} examples) {lineage['dataset']['folder']}",
        f"  runs       {', '.join(lineage['source_runs']) or '-'}",
        f"  parent     {lineage['parent_contract'].get('ref')} {lineage['parent_contract'].get('content_hash', '')[:12]}",
        "  hyper      " + ", ".join(f"{k}={v}" for k, v in sorted(lineage["hyperparameters"].items())),
        f"  training   {lineage['metrics']['steps']} steps, loss {lineage['metrics']['first_loss']:.4f} -> "
        f"{lineage['metrics']['final_loss']:.4f}, {lineage['metrics']['tokens_per_s']:.1f} tok/s on {lineage['metrics']['device']}",
        f"  code       rsi {lineage['code']['rsi_version']} {lineage['code']['git_sha'][:12]}"
        f"{' (dirty)' if lineage['code']['git_dirty'] else ''}",
    ]
    status = record.status
    if status.candidate:
        lines.append(f"  candidate  {status.candidate.get('ref')}")
    if status.evaluation:
        lift, retention = status.evaluation.get("lift", {}), status.evaluation.get("retention", {})
        lines.append(f"  evaluation {status.evaluation.get('eval_id')}: lift {lift.get('lift', 0):+.3f} CI95 "
                     f"{lift.get('lift_ci95')}, retention {retention.get('retention')}")
    if status.promotion:
        lines.append(f"  promoted   into {status.promotion.get('ref')}")
    for line in lines:
        console.print(line, markup=False)


def eval_command(
    candidate: Annotated[str, typer.Argument(help="Candidate contract ref (e.g. default-candidate@r2).")] = "",
    against: Annotated[str, typer.Option("--against", help="Parent contract ref (e.g. default@r1).")] = "",
    suite: Annotated[str | None, typer.Option("--suite", help="Task suite; default: the parent's.")] = None,
    attempts_per_task: Annotated[int | None, typer.Option("--attempts-per-task", help="Default: the parent's.")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Default: the parent's evaluation.seed.")] = None,
    limit_heldout: Annotated[int | None, typer.Option("--limit-heldout", help="Only the first N heldout tasks.")] = None,
    limit_covered: Annotated[int | None, typer.Option("--limit-covered", help="At most N covered train tasks.")] = None,
    covered_run: Annotated[list[str] | None, typer.Option("--covered-run", help="Covered tasks of these runs (default: the parent's own).")] = None,
    workers: Annotated[int | None, typer.Option("--workers", help="Attempts at once.")] = None,
    sandbox: Annotated[str, typer.Option("--sandbox", help="auto, local or docker.")] = "auto",
    control: Annotated[str | None, typer.Option("--control", help="The frozen generation-0 contract ref: lift against it too.")] = None,
    transfer_run: Annotated[list[str] | None, typer.Option("--transfer-run", help="Runs whose union coverage measures transfer.")] = None,
    resume: Annotated[str | None, typer.Option("--resume", help="Resume an evaluation run id.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Evaluate and decide, but promote/reject nothing.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
) -> None:
    """Evaluate CANDIDATE against its parent on heldout and covered tasks; promote the adapter if the gate passes."""
    from rsi.errors import UserInputError
    from rsi.evaluation import EvalSpec, apply_decision, eval_lines, evaluate

    if not resume and (not candidate or not against):
        raise UserInputError("give CANDIDATE and --against PARENT (or --resume EVAL_ID)")
    if sandbox not in ("auto", "local", "docker"):
        raise UserInputError(f"--sandbox {sandbox!r}: use auto, local or docker")
    spec = EvalSpec(candidate=candidate or "-", parent=against or "-", suite=suite, attempts_per_task=attempts_per_task,
                    seed=seed, limit_heldout=limit_heldout, limit_covered=limit_covered, covered_runs=covered_run or [],
                    workers=workers, sandbox=sandbox, resume=resume, control=control,  # type: ignore[arg-type]
                    transfer_runs=transfer_run or [])
    workspace = state.workspace()
    tracker = _tracker("eval", json_output)
    try:
        outcome = evaluate(workspace, spec, on_note=tracker.say, tracker=tracker)
    finally:
        tracker.close()
    if not dry_run:
        outcome = apply_decision(workspace, outcome)
    if json_output:
        print_json(outcome.model_dump(mode="json"))
    else:
        for line in eval_lines(outcome):
            console.print(line, markup=False)
        verdict = "PROMOTE" if outcome.promote else "REJECT"
        console.print(f"  decision: {verdict}: {outcome.decision.reason}", markup=False)
        if outcome.applied:
            console.print(f"  applied: {outcome.applied.get('state')}"
                          f"{' as ' + outcome.applied['revision']['ref'] if outcome.applied.get('revision') else ''}",
                          markup=False)
    if not outcome.promote:
        raise typer.Exit(1)


# Options shared by `rsi generation` and `rsi nightly` (the same GenerationSpec fields).
ContractOpt = Annotated[str, typer.Option("--contract", help="Contract name the generation improves.")]
PortfolioOpt = Annotated[str | None, typer.Option("--portfolio", help="Portfolio to run (default: the last successor).")]
BudgetOpt = Annotated[int | None, typer.Option("--budget-attempts", help="Run budget.")]
LimitTasksOpt = Annotated[int | None, typer.Option("--limit-tasks", help="Only the first N train tasks.")]
WorkersOpt = Annotated[int | None, typer.Option("--workers", help="Attempts at once.")]
SandboxOpt = Annotated[str, typer.Option("--sandbox", help="auto, local or docker.")]
MaxStepsOpt = Annotated[int | None, typer.Option("--max-steps", help="Training step cap.")]
ThreadsOpt = Annotated[int | None, typer.Option("--threads", help="torch threads for training.")]
MaxLengthOpt = Annotated[int | None, typer.Option("--max-length", help="Training max_length.")]
LimitHeldoutOpt = Annotated[int | None, typer.Option("--limit-heldout", help="Heldout tasks in evaluation.")]
LimitCoveredOpt = Annotated[int | None, typer.Option("--limit-covered", help="Covered train tasks in evaluation.")]
WeakOpt = Annotated[bool, typer.Option("--allow-weak-isolation",
                                       help="Promote and export evidence of weakly isolated attempts (rlimits only).")]


def _generation_spec(**values: Any) -> Any:
    from rsi.generation.generation import GenerationSpec

    return GenerationSpec.model_validate({k: v for k, v in values.items() if v is not None})


def generation(
    contract: ContractOpt = "default",
    portfolio: PortfolioOpt = None,
    budget_attempts: BudgetOpt = None,
    limit_tasks: LimitTasksOpt = None,
    workers: WorkersOpt = None,
    sandbox: SandboxOpt = "auto",
    seed: Annotated[int | None, typer.Option("--seed", help="Run seed.")] = None,
    max_steps: MaxStepsOpt = None,
    threads: ThreadsOpt = None,
    max_length: MaxLengthOpt = None,
    limit_heldout: LimitHeldoutOpt = None,
    limit_covered: LimitCoveredOpt = None,
    allow_weak_isolation: WeakOpt = False,
    train_method: Annotated[str | None, typer.Option("--train-method", help="sft or grpo (default: the contract's).")] = None,
    resume: Annotated[str | None, typer.Option("--resume", help="Resume this generation id (e.g. g0003).")] = None,
    new: Annotated[bool, typer.Option("--new", help="Start a new generation even if one is unfinished.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print the generation record as JSON.")] = False,
) -> None:
    """Run one full generation (run, promote, propose, export, train, evaluate, promote adapter), resumably."""
    from rsi.generation.generation import run_generation
    from rsi.generation.nightly import summary_line

    spec = _generation_spec(contract=contract, portfolio=portfolio, budget_attempts=budget_attempts,
                            limit_tasks=limit_tasks, workers=workers, sandbox=sandbox, seed=seed, max_steps=max_steps,
                            threads=threads, max_length=max_length, limit_heldout=limit_heldout,
                            limit_covered=limit_covered, train_method=train_method,
                            allow_weak_isolation=allow_weak_isolation)
    tracker = _tracker("generation", json_output)
    try:
        result = run_generation(state.workspace(), spec, on_note=tracker.say, resume=resume, new=new)
    finally:
        tracker.close()
    if json_output:
        print_json(result.model_dump(mode="json", by_alias=True))
    else:
        console.print(f"{result.id} {result.status}: {summary_line(result.summary)}", markup=False)


def nightly(
    contract: ContractOpt = "default",
    portfolio: PortfolioOpt = None,
    budget_attempts: BudgetOpt = None,
    limit_tasks: LimitTasksOpt = None,
    workers: WorkersOpt = None,
    sandbox: SandboxOpt = "auto",
    max_steps: MaxStepsOpt = None,
    threads: ThreadsOpt = None,
    max_length: MaxLengthOpt = None,
    limit_heldout: LimitHeldoutOpt = None,
    limit_covered: LimitCoveredOpt = None,
    allow_weak_isolation: WeakOpt = False,
) -> None:
    """Cron entry point: one generation under a lock (resuming an interrupted one); exit codes in docs/nightly.md."""
    from rsi.generation.nightly import run_nightly

    spec = _generation_spec(contract=contract, portfolio=portfolio, budget_attempts=budget_attempts,
                            limit_tasks=limit_tasks, workers=workers, sandbox=sandbox, max_steps=max_steps,
                            threads=threads, max_length=max_length, limit_heldout=limit_heldout,
                            limit_covered=limit_covered, allow_weak_isolation=allow_weak_isolation)
    outcome = run_nightly(state.workspace(), spec, log=_say(False))
    raise typer.Exit(outcome.exit_code)


def lineage(
    plot: Annotated[Path | None, typer.Option("--plot", help="PNG path (default: runs/generations/lineage.png).")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the lineage as JSON.")] = False,
) -> None:
    """The chain of generations: contract revisions, adapters, datasets, coverage, lift and retention (+ a PNG plot)."""
    from rsi.generation.lineage import build_lineage, lineage_json, write_lineage_png
    from rsi.generation.state import generations_dir

    workspace = state.workspace()
    rows = build_lineage(workspace)
    path = write_lineage_png(rows, plot or generations_dir(workspace) / "lineage.png") if rows else None
    if json_output:
        print_json({"generations": lineage_json(rows), "plot": str(path) if path else None})
        return
    if not rows:
        console.print("no generations yet (run `rsi generation` or `rsi nightly`)", markup=False)
        return
    from rich.table import Table

    from rsi.generation.lineage import LEDGER_COLUMNS, ledger_cells

    # Generations side by side, one quantity per row: compounding reads left to right, and a row of
    # thirteen numbers per generation would not fit a terminal. As many as fit, the latest ones.
    fit = max(1, (console.width - 26) // 24)
    shown = rows[-fit:]
    table = Table(title="the compounding ledger", title_justify="left")
    table.add_column("", no_wrap=True)
    for r in shown:
        table.add_column(r.generation, no_wrap=True)
    cells = [ledger_cells(r) for r in shown]
    for index, name in enumerate(LEDGER_COLUMNS[1:], start=1):
        table.add_row(name, *(c[index] for c in cells))
    console.print(table)
    if len(rows) > len(shown):
        console.print(f"(the {len(shown)} latest of {len(rows)} generations; a wider terminal, --json or "
                      f"`rsi report --lineage` shows them all)", markup=False)
    console.print(f"plot: {path}", markup=False)


def register(app: typer.Typer) -> None:
    app.command("train")(train)
    app.add_typer(adapters_app, name="adapters")
    app.command("eval")(eval_command)
    app.command("generation")(generation)
    app.command("nightly")(nightly)
    app.command("lineage")(lineage)
