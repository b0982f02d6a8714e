"""One attempt from references, as `rsi attempt` runs it: resolve, build the model, run, close.

`resolve_configuration` accepts a contract reference (path, NAME, NAME@rN, GITREV:path) or
`portfolio:variant`; `resolve_task_ref` accepts `suite/task-id` or a task folder. Bad references
raise UserInputError (exit 2). `run_single_attempt` never raises for the attempt itself (see
`run_attempt`); it raises only when the model cannot even be built (ModelError, exit 1).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rsi.config import Configuration
from rsi.errors import UserInputError, VerifierUnavailable
from rsi.harness.attempt import AttemptOutcome, new_attempt_id, run_attempt
from rsi.harness.trajectory import Step, Trajectory
from rsi.tasks.kinds import kind_of
from rsi.tasks.spec import Task
from rsi.workspace import Workspace


def resolve_configuration(workspace: Workspace, ref: str) -> Configuration:
    """A contract reference, or `portfolio:variant` naming one configuration of a portfolio."""
    head, _, variant = ref.partition(":")
    portfolio_file = workspace.portfolio_path(head)
    if variant and portfolio_file.is_file():
        from rsi.portfolio import load_portfolio

        configurations = load_portfolio(workspace, head)
        for configuration in configurations:
            if configuration.name == variant:
                return configuration
        names = ", ".join(c.name for c in configurations)
        raise UserInputError(f"{portfolio_file}: no variant {variant!r}", hint=f"variants: {names}")
    from rsi.config import configuration_from_contract
    from rsi.contracts.refs import resolve_ref

    return configuration_from_contract(resolve_ref(workspace, ref))


def resolve_task_ref(workspace: Workspace, ref: str) -> Task:
    """`suite/task-id` (a suite of the workspace or a suite folder), or a task folder."""
    from rsi.tasks.load import load_task, resolve_task

    folder = Path(ref).expanduser()
    if (folder / "task.toml").is_file():
        return load_task(folder.resolve())
    if "/" not in ref.strip("/"):
        raise UserInputError(f"{ref}: expected SUITE/TASK-ID or a task folder", hint="see `rsi tasks list`")
    return resolve_task(workspace, ref)


def run_single_attempt(
    workspace: Workspace,
    configuration: Configuration,
    task: Task,
    *,
    sandbox_name: str = "auto",
    seed: int = 0,
    out_dir: Path | None = None,
    on_step: Callable[[Trajectory, Step], None] | None = None,
) -> AttemptOutcome:
    """Build the contract's model and the sandbox, run one attempt, release the model. A task whose kind
    cannot be judged on this machine (no Chromium for a ui task) is VerifierUnavailable before any model runs."""
    from rsi.models.cache import with_cache
    from rsi.models.factory import make_model, specialist_paths
    from rsi.sandbox.select import make_sandbox

    missing = kind_of(task).unavailable()
    if missing:
        raise VerifierUnavailable(f"{task.key}: {missing}", hint="`rsi doctor` says what this machine has")
    sandbox = make_sandbox(sandbox_name)
    attempt_id = new_attempt_id(task, configuration, seed)
    out = out_dir or workspace.runs_dir / "attempts" / attempt_id
    model = make_model(configuration.spec, workspace)  # ModelError here: nothing was attempted
    model = with_cache(model, configuration.spec, workspace.root, specialist_paths(configuration.spec, workspace),
                       origin=f"attempt:{attempt_id}")
    try:
        return run_attempt(
            configuration, task, model, sandbox, out, seed, attempt_id, tools_root=workspace.runs_dir / "tools", on_step=on_step
        )
    finally:
        model.close()
