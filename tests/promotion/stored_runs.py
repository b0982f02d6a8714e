"""Build real stored runs for promotion/export tests: F's store write API, E's trajectory schema, B's tasks.

Nothing is faked below the store: runs, configurations, tasks, jobs and attempts go through
`rsi.store.Store`, and every attempt has a trajectory JSON file written with
`rsi.harness.trajectory.write_trajectory`, shaped like the harness writes them (system, user, then one
agent step per turn with the reply, its code and the observation shown back).
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from rsi.config import Configuration, configuration_from_contract
from rsi.contracts.refs import resolve_ref
from rsi.harness import prompts
from rsi.harness.trajectory import (
    ConfigurationRef,
    Execution,
    FinalMetrics,
    FinalOutcome,
    ModelRef,
    SavedToolRecord,
    StepMetrics,
    TaskRef,
    Trajectory,
    write_trajectory,
)
from rsi.sandbox.base import Isolation
from rsi.store import AttemptRecord, open_store
from rsi.tasks.load import load_suite
from rsi.tasks.spec import Task
from rsi.verdict import Verdict
from rsi.workspace import Workspace

SUITE = "pyfuncs"


@dataclass(frozen=True)
class Planned:
    """One attempt to store: configuration, task id, verdict, tokens, the solution code, and the sandbox
    isolation its trajectory records (None: unrecorded)."""

    config: Configuration
    task: str
    verdict: str = "passed"
    tokens: int = 200
    code: str = ""
    turns: int = 1
    sandbox: Isolation | None = None
    tools: tuple[SavedToolRecord, ...] = ()  # helpers the attempt saved with save_tool
    tool_library: str = ""  # the tool library revision the attempt was offered
    cells: tuple[str, ...] = ()  # code the agent ran before the submitting cell


class RunBuilder:
    """Writes runs into the workspace's store (runs/rsi.sqlite) and trajectories under runs/<id>/."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.tasks: dict[str, Task] = {t.id: t for t in load_suite(workspace, SUITE)}
        self.contract = resolve_ref(workspace, "default")
        self._ids = itertools.count()

    def train_ids(self) -> list[str]:
        """Train tasks that no protected task of any suite duplicates (what export, experience and tools take)."""
        twins = set(self.twin_ids())
        return sorted(t for t, task in self.tasks.items() if task.spec.split == "train" and t not in twins)

    def twin_ids(self) -> list[str]:
        """Train tasks that are twins of a heldout task of another suite (pyfuncs/factorial of pyfuncs2/factorial)."""
        from rsi.trajectories.twins import protected_tasks

        if not hasattr(self, "_twins"):
            self._twins = sorted(key.split("/", 1)[1] for key in protected_tasks(self.workspace).twins_of(
                self.tasks.values()))
        return self._twins

    def heldout_ids(self) -> list[str]:
        return sorted(t for t, task in self.tasks.items() if task.spec.split == "heldout")

    def config(self, name: str, **overrides: object) -> Configuration:
        return configuration_from_contract(self.contract, name=name, overrides=dict(overrides) or None,
                                           parents=["default"])

    def parent_config(self) -> Configuration:
        """The contract's own configuration (what the gate compares against)."""
        return configuration_from_contract(resolve_ref(self.workspace, "default"), name="repl-greedy")

    def run(self, planned: list[Planned], run_id: str | None = None) -> str:
        store = open_store(self.workspace.db_url)
        try:
            run = store.create_run(portfolio="test", suite=SUITE, budget={"attempts": len(planned)}, run_id=run_id)
            store.record_configurations({p.config.config_hash: p.config for p in planned}.values())
            store.record_tasks(self.tasks.values())
            by_config: dict[str, list[Planned]] = {}
            for p in planned:
                by_config.setdefault(p.config.config_hash, []).append(p)
            for config_hash, group in by_config.items():
                keys = list(dict.fromkeys(self.tasks[p.task].key for p in group))
                job = store.start_job(run.id, config_hash, keys, attempts_per_task=max(
                    sum(1 for q in group if q.task == p.task) for p in group))
                records = []
                index: dict[str, int] = {}
                for p in group:
                    task = self.tasks[p.task]
                    attempt_index = index.get(p.task, 0)
                    index[p.task] = attempt_index + 1
                    path = self._trajectory(run.id, p, task, attempt_index)
                    records.append(AttemptRecord(
                        task_key=task.key, attempt_index=attempt_index, verdict=Verdict(p.verdict),
                        tokens=p.tokens, trajectory_path=str(path), task_hash=task.content_hash,
                    ))
                store.record_attempts(run.id, job.job_index, records)
                store.finish_job(run.id, job.job_index)
            store.finish_run(run.id)
            return run.id
        finally:
            store.close()

    def _trajectory(self, run_id: str, p: Planned, task: Task, attempt_index: int) -> Path:
        config = p.config
        code = p.code or f"def {task.id.replace('-', '_')}(*args):\n    return {next(self._ids)}\n"
        attempt_id = f"{task.id}-{config.config_hash[:8]}-{attempt_index}"
        trajectory = Trajectory(
            attempt_id=attempt_id,
            task=TaskRef(key=task.key, suite=task.suite, id=task.id, content_hash=task.content_hash,
                         solution_file=task.spec.solution_file),
            configuration=ConfigurationRef(name=config.name, contract_ref=config.contract_ref,
                                           config_hash=config.config_hash, substrate=config.spec.harness.substrate,
                                           prompt_style=config.spec.harness.prompt_style,
                                           tool_library=p.tool_library),
            model=ModelRef(name="test-writer", base_id=config.spec.base.id),
            sandbox=p.sandbox,
        )
        trajectory.add_step("system", message=config.system_prompt.strip())
        trajectory.add_step("user", message=f"{task.instruction}\n\nWrite {task.spec.solution_file}.")
        for cell in p.cells:
            trajectory.add_step("agent", turn=1, message=f"```python\n{cell}\n```", code=cell)
        for turn in range(1, p.turns + 1):
            last = turn == p.turns
            cell = (f"with open({task.spec.solution_file!r}, 'w') as f:\n    f.write({code!r})\nsubmit()"
                    if last else "print('exploring')")
            observation = prompts.observation_text("" if last else "exploring", None, 1500,
                                                   turns_left=config.spec.harness.max_turns - turn)
            trajectory.add_step(
                "agent", turn=turn, message=f"Turn {turn}.\n```python\n{cell}\n```", code=cell,
                observation=observation, execution=Execution(error=False),
                metrics=StepMetrics(prompt_tokens=50, completion_tokens=p.tokens // p.turns),
            )
        trajectory.tools_saved = list(p.tools)
        trajectory.add_step("environment", message="submitted")
        trajectory.outcome = FinalOutcome(verdict=Verdict(p.verdict), ended_by="submit",
                                          final_code=code if p.verdict == "passed" else None)
        trajectory.final_metrics = FinalMetrics(prompt_tokens=50 * p.turns, completion_tokens=p.tokens, turns=p.turns)
        path = self.workspace.run_dir(run_id) / f"{attempt_id}" / "trajectory.json"
        return write_trajectory(trajectory, path)


# The real CLI entry point (rsi.cli.app.main: error rendering, exit codes), run with `python -c` so a
# test can prepend a prelude (crash injection).
CLI_SHIM = """
import sys
from rsi.cli import app as root
sys.argv[0] = "rsi"
root.main()
"""


def rsi_promote_cli(*args: str, cwd: Path, env: dict[str, str] | None = None, prelude: str = "",
                    timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run `rsi ARGS` in a subprocess through the real entry point; `prelude` runs first (crash injection)."""
    return subprocess.run([sys.executable, "-c", prelude + CLI_SHIM, *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=timeout)
