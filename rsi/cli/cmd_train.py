"""CLI commands: `rsi train`, `rsi adapters list|show` (the training noun).

Each parses flags, calls one core function (rsi.training.stage.train_stage, rsi.adapters.registry) and
renders. Exit codes: 0 done; 1 runtime failure; 2 bad input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rsi.cli.options import SANDBOX_HELP, method_options, registered
from rsi.cli.render import console, print_json, progress_tracker
from rsi.cli.state import state
from rsi.executors.registry import training_executor_name
from rsi.sandbox.select import sandbox_name
from rsi.training.methods import training_method_name

METHOD_PANEL = "Method options"
# The flags that spell out a method's option (docs/training.md): each fills `method_options[key]`, which the
# chosen method's recipe checks (a method without that option refuses it); the CLI does not interpret them.
OPTION_FLAGS = {"--group-size": "group_size", "--prompts-per-step": "prompts_per_step", "--limit-tasks": "limit_tasks"}

adapters_app = typer.Typer(help="The adapter registry (runs/adapters/): immutable revisions with lineage.",
                           no_args_is_help=True)


def train(
    dataset: Annotated[Path | None, typer.Argument(help="Exported dataset folder (train.jsonl + manifest.json); SFT only.")] = None,
    contract: Annotated[str, typer.Option("--contract", help="Contract ref whose base and [training] are used.")] = "default",
    method: Annotated[str | None, typer.Option("--method", help="A training method: sft, grpo, ... (default: the contract's [training] method).",
                                               callback=registered("--method", training_method_name))] = None,
    options: Annotated[list[str] | None, typer.Option("--option", help="A method's own option KEY=VALUE (VALUE read as TOML), "
                                                      "repeatable; grpo: any [training.grpo] key, limit_tasks.", rich_help_panel=METHOD_PANEL)] = None,
    group_size: Annotated[int | None, typer.Option("--group-size", help="--option group_size (grpo: rollouts per task per step).", rich_help_panel=METHOD_PANEL)] = None,
    prompts_per_step: Annotated[int | None, typer.Option("--prompts-per-step", help="--option prompts_per_step (grpo: tasks per step).", rich_help_panel=METHOD_PANEL)] = None,
    limit_tasks: Annotated[int | None, typer.Option("--limit-tasks", help="--option limit_tasks (grpo: only the first N train tasks).", rich_help_panel=METHOD_PANEL)] = None,
    sandbox: Annotated[str, typer.Option("--sandbox", help="Where a method's attempts run (grpo's rollouts). " + SANDBOX_HELP,
                                         rich_help_panel=METHOD_PANEL, callback=registered("--sandbox", sandbox_name))] = "auto",
    executor: Annotated[str, typer.Option("--executor", help="An executor that trains: local (this machine), slurm (a GPU job), ...",
                                          callback=registered("--executor", training_executor_name))] = "local",
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
    from_adapter: Annotated[str | None, typer.Option("--from-adapter", help="SFT: continue training this registered adapter (id prefix) instead of a fresh LoRA.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
) -> None:
    """Fine-tune a LoRA adapter (SFT on DATASET, or GRPO on the suite's train tasks), register it, write the candidate."""
    from rsi.training.methods import TrainingProgress, training_recipe
    from rsi.training.stage import TrainStageSpec, train_stage

    flags = {"--group-size": group_size, "--prompts-per-step": prompts_per_step, "--limit-tasks": limit_tasks}
    spec = TrainStageSpec(
        dataset=dataset, contract=contract, method=method, executor=executor, max_steps=max_steps,
        epochs=epochs, learning_rate=learning_rate, rank=rank, batch_size=batch_size, max_length=max_length, seed=seed,
        threads=threads, candidate=candidate, method_options=method_options(options or [], flags, OPTION_FLAGS),
        sandbox=sandbox, init_adapter=from_adapter,  # type: ignore[arg-type]
        slurm={"gpus": gpus, "cpus": cpus, "mem_gb": mem_gb, "time_min": time_min, "partition": partition},
    )
    tracker = progress_tracker("train", json_output)

    def progress(p: TrainingProgress) -> None:
        if tracker.current_stage != "training":
            tracker.stage("training", total=p.total_steps)
        tracker.advance(p.step, **p.figures())

    try:
        outcome = train_stage(state.workspace(), spec, progress=progress, on_note=tracker.say)
    finally:
        tracker.close()
    if json_output:
        print_json(outcome.model_dump(mode="json"))
        return
    m = outcome.metrics
    console.print(f"adapter {outcome.adapter_id[:12]} ({'registered' if outcome.registered else 'already registered'}): "
                  f"{m.steps} steps, loss {m.first_loss:.4f} -> {m.final_loss:.4f}, "
                  f"{m.tokens_per_s:.0f} tok/s, {m.wall_s:.0f}s on {m.device}", markup=False)
    own = training_recipe(outcome.lineage.method).summary(m.model_extra or {})  # GRPO: rollouts, rewards per step
    if own:
        console.print(f"  {own}", markup=False)
    console.print(f"  folder {outcome.adapter_dir}", markup=False)
    if outcome.candidate is not None:
        c = outcome.candidate
        console.print(f"  candidate {c.ref} ({'written' if c.written else 'already written'}); "
                      f"evaluate it: rsi eval {c.ref} --against {outcome.lineage.parent_contract.ref}",
                      markup=False)


@adapters_app.command("list")
def adapters_list(
    json_output: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Registered adapter revisions, oldest first."""
    from rsi.adapters.registry import list_adapters

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
            f"parent {lineage.parent_contract.ref or '?':<16} data {lineage.dataset.sha256[:12]} "
            f"({lineage.dataset.examples} ex)  loss {lineage.metrics.get('first_loss', 0):.3f}->"
            f"{lineage.metrics.get('final_loss', 0):.3f}",
            markup=False,
        )


@adapters_app.command("show")
def adapters_show(
    adapter: Annotated[str, typer.Argument(help="Adapter id (at least 6 hex digits) or NAME@ID.")],
    json_output: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """One adapter revision: its lineage, metrics and status."""
    from rsi.adapters.registry import find_adapter

    record = find_adapter(state.workspace(), adapter)
    if json_output:
        print_json(record.summary())
        return
    lineage = record.lineage
    base, data, parent, metrics, code = lineage.base, lineage.dataset, lineage.parent_contract, lineage.metrics, lineage.code
    hyper = lineage.hyperparameters.model_dump(mode="json")  # every stored key, typed or not
    lines = [
        f"adapter {record.id}",
        f"  name       {lineage.name}  state {record.status.state}",
        f"  folder     {record.adapter_dir}",
        f"  created    {lineage.created.isoformat()}",
        f"  base       {base.id} v{base.version} sha256 {base.sha256[:16]}",
        f"  dataset    {data.sha256[:16] or '-'} ({data.examples} examples) {data.folder}",
        f"  runs       {', '.join(lineage.source_runs) or '-'}",
        f"  parent     {parent.ref} {parent.content_hash[:12]}",
        "  hyper      " + ", ".join(f"{k}={v}" for k, v in sorted(hyper.items())),
        # an imported adapter has no training of rsi's to show ({} metrics)
        (f"  training   {metrics['steps']} steps, loss {metrics['first_loss']:.4f} -> {metrics['final_loss']:.4f}, "
         f"{metrics['tokens_per_s']:.1f} tok/s on {metrics['device']}" if metrics else "  training   - (not trained by rsi)"),
        f"  code       rsi {code.rsi_version} {code.git_sha[:12]}{' (dirty)' if code.git_dirty else ''}",
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


def register(app: typer.Typer) -> None:
    app.command("train")(train)
    app.add_typer(adapters_app, name="adapters")
