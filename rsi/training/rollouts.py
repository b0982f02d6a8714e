"""GRPO rollouts: groups of real attempts on train tasks under the deployed harness, scored by the
hidden verifier, turned into token ids for the trainer.

A rollout IS an attempt: `rsi.harness.attempt.run_attempt` (the entry point executors and `rsi attempt`
use) with the candidate's configuration (the parent contract's harness, routing fixed to the policy
adapter under the name the candidate will serve it, `sft`), a seed, a fresh working directory, the
sandbox and the task's hidden verifier. The one deliberate difference from the deployed harness is the
sampling temperature (`[training.grpo] temperature`): a group of greedy rollouts would be identical and
its advantages all zero.

Every rollout of a step runs at once in its own thread against one model handle, so the embedded
backend serves a group's requests in one batched generate (its batching loop gathers concurrent
calls, up to `[serving] max_batch` rows), exactly as concurrent attempts of a run are served.

What the trainer sees of a rollout is the conversation the harness held (rsi.trajectories.render: the
system prompt, the task message, each reply and the observation shown after it); the verifier's
output is only ever turned into the scalar reward, never into a message.

Heldout tasks are never sampled: `train_tasks` keeps the train split minus any task whose content hash
is a heldout task's (as trajectory selection does), and `sample_groups` refuses a heldout task outright.

Testing hook: `RSI_GRPO_ROLLOUT_OVERRIDE=scripted:<file.json>` (`{"replies": [...]}` or
`{"tasks": {"<task id>": [...]}}`) answers every rollout with reply `seed % len(replies)` of a
ScriptedModel instead of the policy (sandbox, harness and verifier stay real), so tests get groups
with mixed rewards from a model that cannot yet solve anything.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsi.config import Configuration
from rsi.errors import TrainingError, UserInputError
from rsi.tasks.spec import Task
from rsi.verdict import Verdict

ENV_ROLLOUT_OVERRIDE = "RSI_GRPO_ROLLOUT_OVERRIDE"


@dataclass(frozen=True)
class Rollout:
    """One scored attempt of a group."""

    task_key: str
    seed: int
    verdict: Verdict
    reward: float
    messages: list[dict[str, str]]
    completion_tokens: int
    trajectory_path: str


def train_tasks(tasks: list[Task]) -> list[Task]:
    """The tasks GRPO may sample: train split, minus copies of heldout tasks (same content hash)."""
    heldout = {t.content_hash for t in tasks if t.spec.split == "heldout"}
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


def rollout_seed(seed: int, step: int, slot: int, index: int) -> int:
    """The sampling seed of rollout `index` of the `slot`-th group of `step`: fixed, so a resumed step
    samples what the killed one would have."""
    return (seed * 1_000_003 + step * 10_007 + slot * 101 + index) % 2**31


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


def scripted_override(value: str) -> Callable[[Task], Any] | None:
    """The testing hook's model factory (module docstring), or None when the hook is unset."""
    if not value:
        return None
    kind, _, path = value.partition(":")
    if kind != "scripted" or not Path(path).is_file():
        raise UserInputError(f"{ENV_ROLLOUT_OVERRIDE}={value!r}: expected scripted:<existing file.json>")
    data = json.loads(Path(path).read_text(encoding="utf-8"))

    def factory(task: Task) -> Any:
        from rsi.models.scripted import ScriptedModel

        replies = list(data.get("tasks", {}).get(task.id) or data.get("replies") or ["(no reply)"])
        return ScriptedModel(lambda request: replies[(request.seed or 0) % len(replies)], name="scripted-rollouts")

    return factory


def _one(config: Configuration, task: Task, model: Any, sandbox: Any, out_dir: Path, seed: int,
         tools_root: Path, reward_kind: str) -> Rollout:
    from rsi.harness.attempt import run_attempt
    from rsi.harness.trajectory import read_trajectory

    outcome = run_attempt(config, task, model, sandbox, out_dir, seed, tools_root=tools_root)
    messages: list[dict[str, str]] = []
    if outcome.verdict is not Verdict.ERROR and outcome.trajectory_path is not None:
        messages = rollout_messages(read_trajectory(outcome.trajectory_path))
    passed = outcome.verdict is Verdict.PASSED
    reward = (1.0 if passed else 0.0) if reward_kind == "verdict" else (1.0 if passed else float(outcome.reward))
    return Rollout(task.key, seed, outcome.verdict, reward, messages, outcome.completion_tokens,
                   str(outcome.trajectory_path or ""))


def sample_groups(config: Configuration, groups: list[tuple[Task, list[int]]], model_for: Callable[[Task], Any],
                  sandbox: Any, out_root: Path, tools_root: Path, reward_kind: str = "cases") -> list[list[Rollout]]:
    """Run every rollout of every group at once (one thread each); groups in order, rollouts by seed."""
    for task, _ in groups:
        if task.spec.split != "train":
            raise TrainingError(f"GRPO refused to sample {task.key}: it is a {task.spec.split} task")
    jobs = [(g, task, seed) for g, (task, seeds) in enumerate(groups) for seed in seeds]
    models = [model_for(task) for task, _ in groups]
    with ThreadPoolExecutor(max_workers=max(1, len(jobs)), thread_name_prefix="rsi-rollout") as pool:
        futures = [pool.submit(_one, config, task, models[g], sandbox, out_root / f"g{g}-{task.id}-s{seed}", seed,
                               tools_root, reward_kind) for g, task, seed in jobs]
        done = [f.result() for f in futures]
    out: list[list[Rollout]] = [[] for _ in groups]
    for (g, _, _), rollout in zip(jobs, done, strict=True):
        out[g].append(rollout)
    return out
