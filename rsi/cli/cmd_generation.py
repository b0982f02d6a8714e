"""CLI commands: `rsi eval`, `rsi generation`, `rsi nightly`, `rsi lineage` (the generation noun).

Each parses flags, calls one core function (rsi.evaluation.evaluate/apply_decision,
rsi.generation.generation.run_generation, rsi.generation.nightly.run_nightly,
rsi.generation.lineage.build_lineage) and renders. Exit codes: 0 done; 1 runtime failure, or (`rsi eval`)
the gate rejected the adapter; 2 bad input; `rsi nightly` documents its own (docs/nightly.md).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, get_args

import typer

from rsi.cli.options import SandboxOpt, method_options, with_options
from rsi.cli.render import console, print_json, progress_tracker
from rsi.cli.state import state


def _say(json_output: bool) -> Any:
    """Plain lines for cron (`rsi nightly`): stdout normally, stderr under --json."""
    stream = sys.stderr if json_output else sys.stdout

    def say(line: str) -> None:
        stream.write(line + "\n")
        stream.flush()

    return say


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
    sandbox: SandboxOpt = "auto",
    control: Annotated[str | None, typer.Option("--control", help="The frozen generation-0 contract ref: lift against it too.")] = None,
    transfer_run: Annotated[list[str] | None, typer.Option("--transfer-run", help="Runs whose union coverage measures transfer.")] = None,
    best_of_n: Annotated[bool, typer.Option("--best-of-n", help=(
        "Also run the parent as best-of-n (sampled) on the train tasks the transfer runs tried, with about their "
        "attempts: the cost-matched baseline beside union coverage (needs --transfer-run)."))] = False,
    cost_matched_from: Annotated[str | None, typer.Option("--cost-matched-from", help=(
        "Also run the parent as best-of-n on the heldout tasks, n chosen so it spends the candidate's completion "
        "tokens per task as measured in this earlier evaluation of the same pair (n = round(C / P)): the spend "
        "the lift is read beside."))] = None,
    cost_matched_n: Annotated[int | None, typer.Option("--cost-matched-n", help=(
        "As --cost-matched-from, with n attempts per heldout task given."))] = None,
    dtype: Annotated[str | None, typer.Option("--dtype", help=(
        "Number format every side is served in: float32, bfloat16, float16, or serving (each contract's own); "
        "default: the parent's [evaluation] dtype."))] = None,
    resume: Annotated[str | None, typer.Option("--resume", help="Resume an evaluation run id.")] = None,
    final: Annotated[bool, typer.Option("--final", help=(
        "The final evaluation: measure on the suite's sealed test split instead of heldout, once per candidate; "
        "it promotes nothing (docs/tasks.md)."))] = False,
    second_look: Annotated[bool, typer.Option("--second-look", help=(
        "With --final: allow this candidate a second look at the sealed split; every figure is marked."))] = False,
    why: Annotated[str, typer.Option("--why", help="Why you are looking (recorded in the look ledger).")] = "",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Evaluate and decide, but promote/reject nothing.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
) -> None:
    """Evaluate CANDIDATE against its parent on heldout and covered tasks; promote the adapter if the gate passes."""
    from rsi.cli.render_eval import eval_lines
    from rsi.contracts.schema import EvalDtype
    from rsi.errors import UserInputError
    from rsi.evaluation import EvalSpec, apply_decision, evaluate

    if not resume and (not candidate or not against):
        raise UserInputError("give CANDIDATE and --against PARENT (or --resume EVAL_ID)")
    if dtype is not None and dtype not in get_args(EvalDtype):
        raise UserInputError(f"--dtype {dtype!r}: use one of {', '.join(get_args(EvalDtype))}")
    if dtype is not None and resume:
        raise UserInputError("--dtype with --resume: a resumed evaluation keeps the number format it started with")
    if (final or second_look) and resume:
        raise UserInputError("--final/--second-look with --resume: a resumed evaluation keeps the split it started with")
    if second_look and not final:
        raise UserInputError("--second-look is for a final evaluation: add --final")
    matched_n, matched_basis = _cost_matched(cost_matched_from, cost_matched_n, resume)
    spec = EvalSpec(candidate=candidate or "-", parent=against or "-", suite=suite, attempts_per_task=attempts_per_task,
                    seed=seed, limit_heldout=limit_heldout, limit_covered=limit_covered, covered_runs=covered_run or [],
                    workers=workers, sandbox=sandbox, resume=resume, control=control,  # type: ignore[arg-type]
                    transfer_runs=transfer_run or [], best_of_n=best_of_n, dtype=dtype,  # type: ignore[arg-type]
                    split="test" if final else "heldout", second_look=second_look, why=why or "rsi eval",
                    cost_matched_n=matched_n, cost_matched_basis=matched_basis)
    workspace = state.workspace()
    tracker = progress_tracker("eval", json_output)
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
        if outcome.split == "test":  # a final evaluation measures the claim; nothing is promoted from it
            verdict = ("PASS" if outcome.promote else "FAIL") + " on the sealed split (nothing promoted)"
        console.print(f"  decision: {verdict}: {outcome.decision.reason}", markup=False)
        if outcome.applied is not None:
            revision = outcome.applied.revision
            console.print(f"  applied: {outcome.applied.state}{' as ' + revision.ref if revision else ''}", markup=False)
    if not outcome.promote:
        raise typer.Exit(1)


def _cost_matched(from_eval: str | None, n: int | None, resume: str | None) -> tuple[int | None, str]:
    """n and how it was derived for the heldout cost-matched side (None: no such side); a bad value exits 2."""
    from rsi.errors import UserInputError
    from rsi.evaluation import cost_matched_from, load_eval_outcome

    if from_eval is None and n is None:
        return None, ""
    if resume:
        raise UserInputError("--cost-matched-* with --resume: a resumed evaluation keeps the sides it started with")
    if from_eval is not None and n is not None:
        raise UserInputError("give --cost-matched-from EVAL_ID or --cost-matched-n N, not both")
    if n is not None:
        if not 1 <= n <= 64:
            raise UserInputError(f"--cost-matched-n {n}: give 1 to 64 attempts per task")
        return n, f"n = {n}, given (--cost-matched-n)"
    return cost_matched_from(load_eval_outcome(state.workspace(), str(from_eval)))


def _spec_options(
    contract: Annotated[str, typer.Option("--contract", help="Contract name the generation improves.")] = "default",
    portfolio: Annotated[str | None, typer.Option("--portfolio", help="Portfolio to run (default: the last successor).")] = None,
    budget_attempts: Annotated[int | None, typer.Option("--budget-attempts", help="Run budget.")] = None,
    limit_tasks: Annotated[int | None, typer.Option("--limit-tasks", help="Only the first N train tasks.")] = None,
    workers: Annotated[int | None, typer.Option("--workers", help="Attempts at once.")] = None,
    sandbox: SandboxOpt = "auto",
    max_steps: Annotated[int | None, typer.Option("--max-steps", help="Training step cap.")] = None,
    threads: Annotated[int | None, typer.Option("--threads", help="torch threads for training.")] = None,
    train_option: Annotated[list[str] | None, typer.Option("--train-option", help=(
        "The training method's own option KEY=VALUE (VALUE read as TOML; repeatable), as `rsi train --option`: "
        "e.g. --train-option group_size=8 for grpo."))] = None,
    max_length: Annotated[int | None, typer.Option("--max-length", help="Training max_length.")] = None,
    limit_heldout: Annotated[int | None, typer.Option("--limit-heldout", help="Heldout tasks in evaluation.")] = None,
    limit_covered: Annotated[int | None, typer.Option("--limit-covered", help="Covered train tasks in evaluation.")] = None,
    allow_weak_isolation: Annotated[bool, typer.Option(
        "--allow-weak-isolation", help="Promote and export evidence of weakly isolated attempts (rlimits only).")] = False,
    harvest_per_task: Annotated[int | None, typer.Option("--harvest-per-task", help=(
        "Harvest up to N distinct passing solutions per train task after the run (default 0: no harvest)."))] = None,
    harvest_budget: Annotated[int | None, typer.Option("--harvest-budget", help="Harvest attempt budget (default: the run's).")] = None,
    max_per_task: Annotated[int | None, typer.Option("--max-per-task", help="Exported examples per task at most (default 2).")] = None,
    render: Annotated[str | None, typer.Option("--render", help=(
        "Export in the conversation that found each solution (`found`, default) or in the deployed contract's own "
        "(`deployed`)."))] = None,
    accumulate: Annotated[bool, typer.Option("--accumulate", help=(
        "Train on every earlier generation's runs and harvests too (pooled data, fresh adapter)."))] = False,
    best_of_n: Annotated[bool, typer.Option("--best-of-n", help=(
        "The evaluation also runs the parent as best-of-n with the coverage search's attempt budget "
        "(rsi eval --best-of-n)."))] = False,
    continue_adapter: Annotated[bool, typer.Option("--continue-adapter", help=(
        "Train from the previous generation's adapter instead of a fresh LoRA."))] = False,
    specialists_by: Annotated[str | None, typer.Option("--specialists-by", help=(
        "Train a specialist per part of the train evidence: `tag` (each task's first tag), `cluster` (k-means over "
        "the instructions, [training] clusters parts) or `none` (one adapter; default: the contract's "
        "[training] specialists_by)."))] = None,
    select_tasks: Annotated[int | None, typer.Option("--select-tasks", help=(
        "Paired selection: the run's top configurations and the contract's own each attempt the same N train tasks, "
        "and the harness is chosen on those attempts alone (default 0: on the run's coverage-search evidence)."))] = None,
    select_top: Annotated[int | None, typer.Option("--select-top", help=(
        "Configurations the paired selection compares beside the contract's own (default 3)."))] = None,
    experience: Annotated[bool, typer.Option("--experience", help=(
        "Grow the experience library from the exported runs and carry it into the candidate contract "
        "(docs/experience.md)."))] = False,
    tools: Annotated[bool, typer.Option("--tools", help=(
        "Validate the helpers that passing REPL attempts saved (save_tool) and carry the new tool-library revision "
        "into the candidate contract (docs/experience.md)."))] = False,
) -> None:
    """The options `rsi generation` and `rsi nightly` share (GenerationSpec fields; `with_options` adds them to
    both). Never called: only its signature is read."""


def _generation_spec(flags: dict[str, Any]) -> Any:
    """The GenerationSpec of a command's flags (those that are spec fields and were given); a bad value is one
    line naming its flag (exit 2)."""
    from pydantic import ValidationError

    from rsi.errors import UserInputError
    from rsi.generation.generation import GenerationSpec

    flags = {**flags, "train_options": method_options(flags.pop("train_option", None) or [], {}, {},
                                                      flag="--train-option") or None}
    given = {k: v for k, v in flags.items() if k in GenerationSpec.model_fields and v is not None}
    try:
        return GenerationSpec.model_validate(given)
    except ValidationError as error:
        first = error.errors()[0]
        flag = "--" + str(first["loc"][0]).replace("_", "-") if first["loc"] else "a flag"
        raise UserInputError(f"{flag}: {str(first['msg']).removeprefix('Value error, ')}") from None


@with_options(_spec_options)
def generation(
    seed: Annotated[int | None, typer.Option("--seed", help="Run seed.")] = None,
    train_method: Annotated[str | None, typer.Option("--train-method", help="A training method: sft, grpo, ... (default: the contract's).")] = None,
    resume: Annotated[str | None, typer.Option("--resume", help="Resume this generation id (e.g. g0003).")] = None,
    new: Annotated[bool, typer.Option("--new", help="Start a new generation even if one is unfinished.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print the generation record as JSON.")] = False,
    **options: Any,
) -> None:
    """Run one full generation (run, promote, propose, harvest, export, train, evaluate, promote adapter), resumably."""
    from rsi.generation.generation import run_generation
    from rsi.generation.nightly import summary_line

    spec = _generation_spec({**options, "seed": seed, "train_method": train_method})
    tracker = progress_tracker("generation", json_output)
    try:
        result = run_generation(state.workspace(), spec, on_note=tracker.say, resume=resume, new=new)
    finally:
        tracker.close()
    if json_output:
        print_json(result.model_dump(mode="json", by_alias=True))
    else:
        console.print(f"{result.id} {result.status}: {summary_line(result.summary)}", markup=False)


@with_options(_spec_options)
def nightly(**options: Any) -> None:
    """Cron entry point: one generation under a lock (resuming an interrupted one); exit codes in docs/nightly.md."""
    from rsi.generation.nightly import run_nightly

    spec = _generation_spec(options)
    outcome = run_nightly(state.workspace(), spec, log=_say(False))
    raise typer.Exit(outcome.exit_code)


def lineage(
    plot: Annotated[Path | None, typer.Option("--plot", help="PNG path (default: runs/generations/lineage.png).")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the lineage as JSON.")] = False,
) -> None:
    """The chain of generations: contract revisions, adapters, datasets, coverage, lift and retention (+ a PNG plot)."""
    from rsi.generation.ablation import ablation_lines
    from rsi.generation.lineage import build_lineage, lineage_json, write_lineage_png
    from rsi.generation.state import generations_dir

    workspace = state.workspace()
    rows = build_lineage(workspace)
    path = write_lineage_png(rows, plot or generations_dir(workspace) / "lineage.png") if rows else None
    if json_output:
        ablated = _latest_ablation(workspace, rows)
        print_json({"generations": lineage_json(rows), "plot": str(path) if path else None,
                    "ablation": ablated.model_dump(mode="json") if ablated else None})
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
    ablated = _latest_ablation(workspace, rows)
    for line in ablation_lines(ablated) if ablated else ():
        console.print(line, markup=False)
    console.print(f"plot: {path}", markup=False)


def _latest_ablation(workspace: Any, rows: list[Any]) -> Any:
    """The ablation of the latest generation that has one (None without)."""
    from rsi.generation.ablation import read_ablation

    return next((found for r in reversed(rows) if (found := read_ablation(workspace, r.generation))), None)


def ablate(
    generation: Annotated[str | None, typer.Option("--generation", help="Generation id (default: the latest with a "
                                                   "candidate contract).")] = None,
    carriers: Annotated[str, typer.Option("--carriers", help="Comma-separated carriers to remove, one evaluation each "
                                          "(exemplars, tools, adapter, harness: two, the candidate with its parent's harness and the parent with the "
                                          "candidate's, with the cost-matched spend).")] = "exemplars,tools,adapter,harness",
    limit_heldout: Annotated[int | None, typer.Option("--limit-heldout", help="Only the first N heldout tasks.")] = None,
    workers: Annotated[int | None, typer.Option("--workers")] = None,
    sandbox: Annotated[str, typer.Option("--sandbox", help="Sandbox backend of the evaluations.")] = "auto",
    json_output: Annotated[bool, typer.Option("--json", help="Print the ablation record as JSON.")] = False,
) -> None:
    """What each carrier of experience adds: the generation's candidate against itself without exemplars, without
    its tool library, without its adapter, with its parent's harness, and the parent with the candidate's harness
    and as cost-matched best-of-n; the lift's shares (harness, weights, spend). Resumable; docs/nightly.md."""
    from pydantic import ValidationError

    from rsi.errors import UserInputError
    from rsi.generation.ablation import AblationSpec, ablate_generation, ablation_lines

    try:
        spec = AblationSpec(generation=generation, carriers=[c.strip() for c in carriers.split(",") if c.strip()],
                            limit_heldout=limit_heldout, workers=workers, sandbox=sandbox)
    except ValidationError as error:
        first = error.errors()[0]
        raise UserInputError(f"--{str(first['loc'][0]).replace('_', '-')}: {first['msg']}") from None
    tracker = progress_tracker("ablate", json_output)
    try:
        record = ablate_generation(state.workspace(), spec, on_note=tracker.say)
    finally:
        tracker.close()
    if json_output:
        print_json(record.model_dump(mode="json"))
        return
    for line in ablation_lines(record):
        console.print(line, markup=False)


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
    app.command("generation")(generation)
    app.command("nightly")(nightly)
    app.command("lineage")(lineage)
    app.command("ablate")(ablate)
