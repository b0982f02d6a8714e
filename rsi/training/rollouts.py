"""GRPO rollouts: groups of real attempts on train tasks under the deployed harness, scored by the
hidden verifier, turned into messages for the trainer.

A rollout IS an attempt, planned and run like any other: a step's groups are the jobs of a planned
run (rsi/run/planned.py; job i is group i: one task, `group_size` attempts) that goes through the
orchestrator (rsi/run/orchestrator.py), so attempt specs, time limits, the sandbox, the attempt
folders, retries of infrastructure errors, recording and crash safety are the ones `rsi run` has.
The run is stored under the scheduler `grpo-rollouts` (the `rollouts` kind, rsi/run/kinds.py):
one run per step, never counted as coverage, statistics or scheduler history. The configuration is
the candidate's (the parent contract's harness, routing fixed to the policy adapter under the name
the candidate will serve it, `sft`); the one deliberate difference from the deployed harness is the
sampling temperature (`[training.grpo] temperature`): a group of greedy rollouts would be identical
and its advantages all zero.

The model is the live policy: the caller hands the orchestrator a `ModelFor` (rsi/run/attempt_fn.py)
that returns the sampler it loaded this step's LoRA into, so the attempts talk to the weights being
trained, never to a model built from the contract. Every rollout of a step runs at once (as many
workers as rollouts) against that one handle, so the embedded backend serves a group's requests in
one batched generate, exactly as concurrent attempts of a run are served.

A step's run carries a reuse key (GRPO's: the training's fingerprint and output folder, the step and
a hash of the policy weights). A step sampled again with the same key (GRPO killed mid-step, then
resumed from its checkpoint: the same policy) resumes that run instead of starting a new one: the
rollouts already recorded are kept and only the missing ones run.

What the trainer sees of a rollout is the conversation the harness held (rsi.trajectories.render: the
system prompt, the task message, each reply and the observation shown after it); the verifier's
output is only ever turned into the scalar reward, never into a message.

Heldout tasks are never sampled: `train_tasks` keeps the train split minus any task whose content hash
is a heldout task's (as trajectory selection does), and `sample_groups` refuses a heldout task outright.

Testing hook: `RSI_GRPO_ROLLOUT_OVERRIDE=scripted:<file.json>` (`{"replies": [...]}` or
`{"tasks": {"<task id>": [...]}}`) answers rollout k of every group with reply `k % len(replies)` of
a ScriptedModel instead of the policy (sandbox, harness, verifier and orchestrator stay real), so
tests get groups with mixed rewards from a model that cannot yet solve anything.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rsi.config import Configuration
from rsi.errors import TrainingError, UserInputError
from rsi.tasks.spec import Task
from rsi.verdict import Verdict

if TYPE_CHECKING:
    from rsi.executors import AttemptSpec
    from rsi.models.base import ChatModel
    from rsi.run.attempt_fn import ModelFor
    from rsi.run.planned import PlannedRun
    from rsi.store import AttemptRow, RunRow, Store
    from rsi.workspace import Workspace

ENV_ROLLOUT_OVERRIDE = "RSI_GRPO_ROLLOUT_OVERRIDE"


@dataclass(frozen=True)
class Rollout:
    """One scored attempt of a group (a recorded attempt of the step's rollout run)."""

    task_key: str
    seed: int
    verdict: Verdict
    reward: float
    messages: list[dict[str, str]]
    completion_tokens: int
    trajectory_path: str


@dataclass(frozen=True)
class RolloutStep:
    """What one GRPO step samples: group i is `group_size` attempts of `tasks[i]` (a task may recur)."""

    step: int
    config: Configuration
    tasks: tuple[Task, ...]
    group_size: int
    seed: int
    reuse_key: str = ""  # equal keys sample the same thing: the run is resumed, not repeated ("": never)


@dataclass(frozen=True)
class RolloutBatch:
    """A step's groups, in plan order (rollouts by attempt index), and the run that recorded them."""

    run_id: str
    groups: list[list[Rollout]]


def train_tasks(tasks: list[Task]) -> list[Task]:
    """The tasks GRPO may sample: train split, minus copies of heldout or sealed test tasks (same content hash)."""
    heldout = {t.content_hash for t in tasks if t.spec.split in ("heldout", "test")}
    return [t for t in tasks if t.spec.split == "train" and t.content_hash not in heldout]


def plan_step_tasks(n_tasks: int, prompts_per_step: int, seed: int, step: int) -> list[int]:
    """Task indices for `step` (1-based): an endless sequence of seeded shuffles of all tasks, read
    `prompts_per_step` at a time, so every task is visited once per epoch. Pure."""
    if n_tasks < 1:
        raise TrainingError("GRPO has no train task to sample")
    picks = []
    for position in range((step - 1) * prompts_per_step, step * prompts_per_step):
        epoch, offset = divmod(position, n_tasks)
        order = list(range(n_tasks))
        random.Random(seed * 1_000_003 + epoch).shuffle(order)
        picks.append(order[offset])
    return picks


def step_seed(seed: int, step: int) -> int:
    """The seed of `step`'s rollout run (each attempt's seed derives from it, its group and its index,
    rsi/run/jobs.py): fixed, so a resumed step samples what the killed one would have."""
    return (seed * 1_000_003 + step * 10_007) % 2**31


def rollout_configuration(parent: Configuration, adapter_dir: Path, temperature: float, rank: int,
                          target_modules: list[str]) -> Configuration:
    """The candidate's runtime serving the policy adapter, with the rollout temperature."""
    from rsi.training.candidate import runtime_with_adapter, specialist_for

    specialist = specialist_for(parent.spec, "", str(adapter_dir), rank, target_modules)
    spec = runtime_with_adapter(parent.spec, specialist)
    sampling = spec.harness.sampling.model_copy(update={"temperature": temperature})
    spec = spec.model_copy(update={"harness": spec.harness.model_copy(update={"sampling": sampling})})
    return Configuration(name=f"{parent.name}-grpo", contract_ref=parent.contract_ref, spec=spec,
                         system_prompt=parent.system_prompt, overrides=dict(parent.overrides), parents=[parent.name])


def rollout_messages(trajectory: Any) -> list[dict[str, str]]:
    """The conversation the policy is trained on: what the harness showed and what the model said.

    Rendered as SFT renders it; a text-substrate reply without a code block (which the SFT renderer
    leaves out) is kept here, since GRPO must also learn from what failed.
    """
    from rsi.trajectories.render import render_messages

    messages = render_messages(trajectory)
    if any(m["role"] == "assistant" for m in messages):
        return messages
    agent = next((s for s in trajectory.steps if s.source == "agent"), None)
    if agent is None:
        return []
    shown = [{"role": s.source, "content": s.message} for s in trajectory.steps
             if s.source in ("system", "user") and s.message.strip()]
    return [*shown, {"role": "assistant", "content": agent.message}]


def scripted_override(value: str) -> ModelFor | None:
    """The testing hook's models (module docstring), or None when the hook is unset."""
    if not value:
        return None
    kind, _, path = value.partition(":")
    if kind != "scripted" or not Path(path).is_file():
        raise UserInputError(f"{ENV_ROLLOUT_OVERRIDE}={value!r}: expected scripted:<existing file.json>")
    data = json.loads(Path(path).read_text(encoding="utf-8"))

    def model_for(spec: AttemptSpec, task: Task) -> ChatModel:
        from rsi.models.scripted import ScriptedModel

        replies = list(data.get("tasks", {}).get(task.id) or data.get("replies") or ["(no reply)"])
        reply = replies[spec.attempt_index % len(replies)]
        return ScriptedModel(lambda _request: reply, name="scripted-rollouts")

    return model_for


def rollout_run(workspace: Workspace, plan: RolloutStep, run_id: str, resume: bool, max_error_retries: int,
                retry_backoff_s: float) -> PlannedRun:
    """The step as a planned run of the orchestrator (rsi/run/planned.py), under ROLLOUT_SCHEDULER."""
    from rsi.run.kinds import ROLLOUT_SCHEDULER, RolloutPlan, RolloutSection
    from rsi.run.planned import PlannedJob, PlannedRun
    from rsi.run.spec import ResolvedRun

    for task in plan.tasks:
        if task.spec.split != "train":
            raise TrainingError(f"GRPO refused to sample {task.key}: it is a {task.spec.split} task")
    suite = plan.tasks[0].key.rpartition("/")[0] if plan.tasks else ""
    jobs = [PlannedJob(f"step {plan.step} group {g}", plan.config, (task.key,), plan.group_size)
            for g, task in enumerate(plan.tasks)]
    resolved = ResolvedRun(
        portfolio=f"grpo-rollouts:{plan.config.name} step {plan.step}", suite=suite, split="train",
        budget_attempts=max(1, sum(job.attempts for job in jobs)), budget_tokens=None, budget_minutes=None,
        attempts_per_task=plan.group_size, job_size=1, scheduler=ROLLOUT_SCHEDULER, seed=plan.seed,
        limit_tasks=None, max_error_retries=max_error_retries, retry_backoff_s=retry_backoff_s,
    )
    tasks = list({t.key: t for t in plan.tasks}.values())
    stored = RolloutPlan(resolved=resolved, configs=[plan.config.config_hash], tasks=[t.key for t in tasks],
                         rollouts=RolloutSection(step=plan.step, group_size=plan.group_size, reuse_key=plan.reuse_key,
                                                 groups=[t.key for t in plan.tasks]))
    return PlannedRun(workspace, run_id, stored, jobs, tasks, resume)


def reusable_run(store: Store, suite: str, reuse_key: str) -> str | None:
    """The rollout run recorded under `reuse_key` (the newest), if any."""
    from rsi.errors import StoreError
    from rsi.run.kinds import ROLLOUT_SCHEDULER, RolloutPlan, read_plan

    def key_of(run: RunRow) -> str:
        try:
            plan = read_plan(run)
        except StoreError:  # not a rollout run this code can read: never reused
            return ""
        return plan.rollouts.reuse_key if isinstance(plan, RolloutPlan) else ""

    if not reuse_key:
        return None
    found = [r for r in store.list_runs(suite) if r.scheduler == ROLLOUT_SCHEDULER and key_of(r) == reuse_key]
    return max(found, key=lambda r: (r.created, r.id)).id if found else None


def sample_groups(
    workspace: Workspace, plan: RolloutStep, model_for: ModelFor, *, sandbox: str = "auto",
    reward_kind: str = "cases", max_error_retries: int = 2, retry_backoff_s: float = 1.0,
) -> RolloutBatch:
    """Run every rollout of the step through the orchestrator (all at once) and read them back scored."""
    from rsi.run.orchestrator import Orchestrator
    from rsi.run.spec import RunSpec
    from rsi.store import new_run_id, open_store

    if not plan.tasks or plan.group_size < 1:
        raise TrainingError("a GRPO step needs at least one group of at least one rollout")
    store = open_store(workspace.db_url)
    try:
        found = reusable_run(store, plan.tasks[0].key.rpartition("/")[0], plan.reuse_key)
    finally:
        store.close()
    run = rollout_run(workspace, plan, found or new_run_id(), found is not None, max_error_retries, retry_backoff_s)
    attempts = run.resolved.budget_attempts
    spec = RunSpec(executor="local", workers=attempts, sandbox=sandbox, seed=plan.seed, report=False,
                   resume=run.run_id if found else None, max_error_retries=max_error_retries,
                   retry_backoff_s=retry_backoff_s)
    outcome = Orchestrator(spec, workspace, opener=run.open, scheduler_for=run.scheduler, model_for=model_for).run()
    if outcome.status != "done":
        raise TrainingError(f"GRPO step {plan.step}: rollout run {run.run_id} ended {outcome.status}: "
                            f"{outcome.stop_reason}")
    store = open_store(workspace.db_url)
    try:
        rows = store.list_attempts(run.run_id)
    finally:
        store.close()
    return RolloutBatch(run.run_id, read_groups(rows, plan, workspace.runs_dir, reward_kind))


def read_groups(rows: list[AttemptRow], plan: RolloutStep, runs_dir: Path, reward_kind: str) -> list[list[Rollout]]:
    """The recorded attempts as groups (job i -> group i, by attempt index); a planned attempt with no
    row is a fault of ours, never a zero reward."""
    by_place = {(r.job_index, r.attempt_index): r for r in rows}
    groups: list[list[Rollout]] = []
    for g, task in enumerate(plan.tasks):
        group = []
        for k in range(plan.group_size):
            row = by_place.get((g, k))
            if row is None or row.task_key != task.key:
                raise TrainingError(f"GRPO step {plan.step}: rollout {k} of group {g} ({task.key}) was not recorded")
            group.append(rollout_of(row, runs_dir, reward_kind))
        groups.append(group)
    return groups


def rollout_of(row: AttemptRow, runs_dir: Path, reward_kind: str) -> Rollout:
    """One recorded attempt as a rollout: its conversation and reward come from its trajectory."""
    from rsi.harness.trajectory import read_trajectory, stored_trajectory_path

    verdict = Verdict(row.verdict)
    path = stored_trajectory_path(row.trajectory_path, runs_dir)
    if verdict is Verdict.ERROR or path is None:  # infrastructure: never trained on, never a reward
        return Rollout(row.task_key, row.seed, verdict, 0.0, [], 0, str(path or ""))
    trajectory = read_trajectory(path)
    passed = verdict is Verdict.PASSED
    cases = float(trajectory.outcome.reward) if trajectory.outcome is not None else 0.0
    reward = (1.0 if passed else 0.0) if reward_kind == "verdict" else (1.0 if passed else cases)
    return Rollout(row.task_key, row.seed, verdict, reward, rollout_messages(trajectory),
                   trajectory.final_metrics.completion_tokens, str(path))
