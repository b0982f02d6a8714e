"""The GRPO recipe: on-policy groups of rollouts of train tasks, rewarded by the hidden verifier, into a
LoRA adapter. One readable loop, resumable like SFT (rsi.training.train).

    setup    the base wrapped in a fresh LoRA (rsi.training.train.load_lora_model), AdamW on the LoRA,
             the contract's model backend for sampling (one handle, the policy adapter loaded into it
             each step), the suite's train tasks (rsi.training.rollouts.train_tasks)
    step     save the current LoRA and serve it; sample `group_size` rollouts on each of
             `prompts_per_step` planned train tasks under the candidate's harness, as a planned run
             through the orchestrator (rsi.training.rollouts: sandboxed, retried on infrastructure
             errors, recorded in the store as its own `grpo-rollouts` run, never coverage; all at
             once: the backend batches them); score each with the hidden verifier; group-normalise
             the rewards;
             drop groups whose rewards are all equal (no signal: every advantage is 0) and rollouts
             that ended in an infrastructure error (never a failure); then `updates_per_step` times:
             the clipped policy-gradient + KL loss over every kept response (rsi.training.grpo_loss,
             response replay by default), one AdamW step
    save     the LoRA in PEFT format, like SFT

Killed and run again with the same request, training resumes after the last finished step: the LoRA,
the optimizer, the RNG and the step records are checkpointed (atomically) after every step under a
fingerprint of the request. The task plan and the rollout seeds are pure functions of (seed, step),
so a resumed step samples what the killed one would have (exactly so with the scripted-rollout hook;
with a real model, as exactly as the backend's batched sampling is deterministic). A step killed while
sampling resumes its rollout run: the rollouts already recorded under the same policy are kept.

Trade-offs, measured in bench/RESULTS.md: the sampler (the serving backend, bf16 by default) and the
trainer (float32 on the CPU) hold separate weights, and `old` log-probabilities are the trainer's own,
so the importance ratio compares the trainer with itself, never with the sampler's numerics.
"""

from __future__ import annotations

import os
import shutil
import time
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from rsi.config import Configuration
from rsi.contracts.schema import GrpoSpec, TrainingSpec
from rsi.errors import TrainingError
from rsi.training.methods import (
    PreparedTraining,
    RecipeBase,
    TrainingProgress,
    unknown_options,
    validated_options,
)

if TYPE_CHECKING:
    from rsi.run.attempt_fn import ModelFor
    from rsi.training.methods import FieldValue, ProgressFn, RecipeContext
    from rsi.training.rollouts import RolloutBatch


class GrpoRequest(BaseModel):
    """Everything one GRPO training needs (picklable)."""

    workspace_root: str
    parent: Configuration = Field(description="The parent contract's configuration (its harness is the one trained under).")
    base_folder: str = Field(description="HF-format base model folder.")
    suite: str = Field(description="Task suite; only its train split is sampled.")
    out_dir: str
    hyper: TrainingSpec
    max_steps: int | None = Field(default=None, ge=1, description="Cap on [training.grpo] steps.")
    limit_tasks: int | None = Field(default=None, ge=1, description="Only the first N train tasks.")
    threads: int | None = Field(default=None, ge=1)
    device: str = "auto"
    sandbox: str = "auto"
    checkpoint_dir: str | None = None


class GrpoStepRecord(BaseModel):
    """What one step sampled and learned (kept in the checkpoint and the lineage)."""

    step: int
    tasks: list[str]
    rewards: list[list[float]] = Field(description="Per group, per rollout (infrastructure errors left out).")
    mean_reward: float
    passed: int
    rollouts: int
    errors: int = Field(description="Rollouts that ended in an infrastructure error (not trained on).")
    groups_trained: int
    sequences: int
    trained_tokens: int
    loss: float
    kl: float
    clipped: float
    sample_s: float
    train_s: float
    rollout_run: str = Field(default="", description="The run in the store that recorded the step's rollouts.")


class GrpoProgress(TrainingProgress):
    """A snapshot after one GRPO step."""

    mean_reward: float
    rollouts: int

    def figures(self) -> dict[str, FieldValue]:
        return {"reward": round(self.mean_reward, 3), "rollouts": self.rollouts, "loss": round(self.loss, 4)}


class GrpoOutcome(BaseModel):
    adapter_dir: str
    method: str = "grpo"
    steps: int
    rollouts: int
    rewards_per_step: list[float]
    records: list[GrpoStepRecord]
    losses: list[float]
    first_loss: float
    final_loss: float
    trained_tokens: int
    tokens_per_s: float
    wall_s: float
    seconds_per_step: float
    device: str
    dtype: str
    resumed_from_step: int = 0
    trainable_params: int
    torch_version: str
    peft_version: str
    transformers_version: str


def grpo_fingerprint(request: GrpoRequest, task_hashes: list[str], device: str) -> str:
    import hashlib
    import json

    identity = {"base": str(Path(request.base_folder).resolve()), "config": request.parent.config_hash,
                "tasks": task_hashes, "hyper": request.hyper.model_dump(mode="json"), "max_steps": request.max_steps,
                "device": device, "method": "grpo"}
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def tokenize_rollout(tokenizer: Any, messages: list[dict[str, str]], max_response_tokens: int
                     ) -> tuple[list[int], list[int], list[bool]]:
    """(prompt ids, response ids, trained mask) of one rollout's conversation (assistant tokens trained)."""
    from rsi.training.data import IGNORE_INDEX, tokenize_conversation
    from rsi.training.replay import split_at_first_label

    example = tokenize_conversation(tokenizer, messages, max_length=1 << 30)
    prompt, response, mask = split_at_first_label(example.input_ids, example.labels, IGNORE_INDEX)
    return prompt, response[:max_response_tokens], mask[:max_response_tokens]


def build_groups(tokenizer: Any, groups: list[list[Any]], max_response_tokens: int) -> list[Any]:
    """TrainGroups of the rollouts that carry a signal (see the module docstring)."""
    from rsi.training.grpo_loss import TrainGroup, group_advantages
    from rsi.verdict import Verdict

    out: list[TrainGroup] = []
    for rollouts in groups:
        kept = [r for r in rollouts if r.verdict is not Verdict.ERROR and r.messages]
        if len(kept) < 2:
            continue
        advantages = group_advantages([r.reward for r in kept])
        if not any(advantages):
            continue
        by_prompt: dict[tuple[int, ...], TrainGroup] = {}  # one prompt per task, unless the harness varied it
        for rollout, advantage in zip(kept, advantages, strict=True):
            prompt, response, mask = tokenize_rollout(tokenizer, rollout.messages, max_response_tokens)
            group = by_prompt.setdefault(tuple(prompt), TrainGroup(prompt, [], [], []))
            group.responses.append(response)
            group.masks.append(mask)
            group.advantages.append(advantage)
        out.extend(by_prompt.values())
    return out


class GrpoDataOptions(BaseModel):
    """GRPO's options that choose its data rather than a hyperparameter (read by `setup`)."""

    model_config = ConfigDict(extra="forbid")
    limit_tasks: int | None = Field(default=None, ge=1, description="Only the first N train tasks (--limit-tasks).")


class GrpoRecipe(RecipeBase):
    """GRPO as a training method (rsi.training.methods): no dataset, the 'data' is the contract suite's
    train tasks; trains in this process only (its rollouts need the sandbox and the model here). Its
    options: every `[training.grpo]` key (`--group-size`, `--prompts-per-step`, or `--option KEY=VALUE`),
    over the contract's, and `limit_tasks`."""

    name = "grpo"
    needs_dataset = False
    in_process_only = True

    def apply_options(self, training: TrainingSpec, options: Mapping[str, Any]) -> TrainingSpec:
        unknown_options(self.name, options, [*GrpoSpec.model_fields, *GrpoDataOptions.model_fields])
        self.data_options(options)
        own = {k: v for k, v in options.items() if k in GrpoSpec.model_fields}
        if not own:
            return training
        grpo = validated_options(self.name, GrpoSpec, own, base=training.grpo.model_dump())
        return TrainingSpec.model_validate({**training.model_dump(), "grpo": grpo.model_dump()})

    def data_options(self, options: Mapping[str, Any]) -> GrpoDataOptions:
        own = {k: v for k, v in options.items() if k in GrpoDataOptions.model_fields}
        return validated_options(self.name, GrpoDataOptions, own)

    def setup(self, ctx: RecipeContext) -> PreparedTraining:
        import hashlib

        from rsi.config import configuration_from_contract
        from rsi.errors import UserInputError
        from rsi.tasks.load import load_suite
        from rsi.training.rollouts import train_tasks

        spec, hyper, max_steps, parent = ctx.spec, ctx.hyper, ctx.max_steps, ctx.parent
        if spec.init_adapter:
            raise UserInputError("--from-adapter continues an SFT training; GRPO starts from a fresh LoRA")
        limit_tasks = self.data_options(spec.method_options).limit_tasks
        suite = parent.spec.evaluation.suite
        tasks = train_tasks(load_suite(ctx.workspace, suite))
        tasks = tasks[:limit_tasks] if limit_tasks else tasks
        digest = hashlib.sha256("\n".join(sorted(t.content_hash for t in tasks)).encode()).hexdigest()
        out_dir = ctx.training_dir(f"grpo:{digest}", None)
        request = GrpoRequest(workspace_root=str(ctx.workspace.root), parent=configuration_from_contract(parent),
                              base_folder=str(ctx.base_folder), suite=suite, out_dir=str(out_dir / "adapter"),
                              hyper=hyper, max_steps=max_steps, limit_tasks=limit_tasks, threads=spec.threads,
                              device=spec.device, sandbox=spec.sandbox, checkpoint_dir=str(out_dir / "checkpoint"))
        g = hyper.grpo
        ctx.note(f"GRPO {parent.name}@r{parent.revision} base {parent.spec.base.id} on {len(tasks)} train tasks of "
                 f"{suite}: {min(g.steps, max_steps or g.steps)} steps x {g.prompts_per_step} tasks x {g.group_size} "
                 f"rollouts, clip {g.clip_range}, KL {g.kl_weight}, temperature {g.temperature}, replay {hyper.replay}")
        record = {"sha256": digest, "folder": "", "examples": len(tasks), "kind": "grpo-rollouts", "suite": suite,
                  "tasks": [t.key for t in tasks], "manifest": {}}
        return PreparedTraining(request=request, out_dir=out_dir, dataset=record)

    def train(self, request: GrpoRequest, progress: ProgressFn | None) -> GrpoOutcome:
        return train_grpo(request, progress)

    def summary(self, metrics: dict[str, Any]) -> str:
        rewards = " ".join(f"{r:.2f}" for r in metrics.get("rewards_per_step", []))
        return f"GRPO: {metrics.get('rollouts', 0)} rollouts; mean reward per step {rewards}"


def train_grpo(request: GrpoRequest, progress: Callable[[GrpoProgress], None] | None = None) -> GrpoOutcome:
    """Train a LoRA adapter with GRPO and save it; see the module docstring."""
    run = _GrpoRun(request)
    try:
        return run.train(progress)
    finally:
        run.close()


class _GrpoRun:
    """The state of one GRPO training: model, optimizer, sampler, records (one method per phase)."""

    def __init__(self, request: GrpoRequest) -> None:
        import torch

        from rsi.tasks.load import load_suite
        from rsi.training.rollouts import ENV_ROLLOUT_OVERRIDE, scripted_override, train_tasks
        from rsi.training.train import _device, load_lora_model
        from rsi.workspace import Workspace

        self.request = request
        self.hyper = request.hyper
        self.grpo = request.hyper.grpo
        threads = request.threads or int(os.environ.get("RSI_TORCH_THREADS", "0") or 0)
        if threads:
            torch.set_num_threads(threads)
        self.device = _device(request.device)
        self.dtype = torch.float32 if self.device == "cpu" else torch.bfloat16
        self.workspace = Workspace(Path(request.workspace_root))
        tasks = train_tasks(load_suite(self.workspace, request.suite))
        self.tasks = tasks[: request.limit_tasks] if request.limit_tasks else tasks
        if not self.tasks:
            raise TrainingError(f"suite {request.suite!r} has no train task for GRPO")
        self.total_steps = min(self.grpo.steps, request.max_steps or self.grpo.steps)
        self.tokenizer, self.model = load_lora_model(request.base_folder, self.hyper, self.device, self.dtype)
        self.named = {n: p for n, p in self.model.named_parameters() if p.requires_grad}
        lr = self.grpo.learning_rate or self.hyper.learning_rate
        self.optimizer = torch.optim.AdamW(list(self.named.values()), lr=lr, weight_decay=0.0)
        self.work = Path(request.out_dir).parent / "grpo-work"
        self.records: list[GrpoStepRecord] = []
        self.prior_s = 0.0
        self.fingerprint = grpo_fingerprint(request, [t.content_hash for t in self.tasks], self.device)
        self.scripted = scripted_override(os.environ.get(ENV_ROLLOUT_OVERRIDE, ""))
        self.sampler: Any = None

    def close(self) -> None:
        if self.sampler is not None:
            self.sampler.close()
            self.sampler = None

    # -- checkpoints (the SFT format: rsi.training.train) -----------------------------------------

    def resume(self) -> int:
        from rsi.training.train import _load_checkpoint, _restore_checkpoint

        folder = Path(self.request.checkpoint_dir) if self.request.checkpoint_dir else None
        state = _load_checkpoint(folder, self.fingerprint)
        if state is None:
            return 0
        _restore_checkpoint(state, self.named, self.optimizer, self.device)  # GRPO's holds no CUDA random state
        self.records = [GrpoStepRecord.model_validate(r) for r in state["records"]]
        self.prior_s = float(state["elapsed_s"])
        return len(self.records)

    def checkpoint(self, elapsed_s: float) -> None:
        import torch

        from rsi.training.train import _save_checkpoint

        if self.request.checkpoint_dir is None:
            return
        _save_checkpoint(Path(self.request.checkpoint_dir), {
            "fingerprint": self.fingerprint, "records": [r.model_dump(mode="json") for r in self.records],
            "elapsed_s": elapsed_s, "lora": {n: p.detach().cpu() for n, p in self.named.items()},
            "optimizer": self.optimizer.state_dict(), "rng": torch.get_rng_state(),
        })

    # -- sampling ---------------------------------------------------------------------------------

    def _policy_dir(self, step: int) -> Path:
        folder = self.work / f"policy-s{step}"
        shutil.rmtree(folder, ignore_errors=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.model.save_pretrained(str(folder))
        return folder

    def _model_for(self, policy: Path) -> ModelFor:
        """The live policy every rollout of the step talks to (the orchestrator's `model_for` hook)."""
        from rsi.training.candidate import SPECIALIST_NAME

        if self.scripted is not None:
            return self.scripted
        if self.sampler is None:
            from rsi.models.factory import make_model

            spec = self.request.parent.spec
            serving = spec.serving.model_copy(update={"max_batch": max(spec.serving.max_batch, self.grpo.group_size)})
            self.sampler = make_model(spec.model_copy(update={"specialists": [], "serving": serving}), self.workspace)
        self.sampler.load_adapter(SPECIALIST_NAME, str(policy))  # replaces the previous step's policy
        sampler = self.sampler
        return lambda _spec, _task: sampler

    def _reuse_key(self, step: int, policy: Path) -> str:
        """What the step samples: this training, the step and the exact policy weights (module docstring
        of rsi.training.rollouts: a step resumed from the checkpoint reuses its recorded rollouts)."""
        import hashlib
        import json

        weights = hashlib.sha256((policy / "adapter_model.safetensors").read_bytes()).hexdigest()
        identity = {"fingerprint": self.fingerprint, "out_dir": str(Path(self.request.out_dir).resolve()),
                    "step": step, "policy": weights}
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()

    def sample(self, step: int) -> RolloutBatch:
        """The step's rollouts, planned as a run and executed through the orchestrator."""
        from rsi.training.rollouts import (
            RolloutStep,
            plan_step_tasks,
            rollout_configuration,
            sample_groups,
            step_seed,
        )

        policy = self._policy_dir(step)
        config = rollout_configuration(self.request.parent, policy, self.grpo.temperature, self.hyper.rank,
                                       list(self.hyper.target_modules))
        picks = plan_step_tasks(len(self.tasks), self.grpo.prompts_per_step, self.hyper.seed, step)
        plan = RolloutStep(step, config, tuple(self.tasks[i] for i in picks), self.grpo.group_size,
                           step_seed(self.hyper.seed, step), self._reuse_key(step, policy))
        try:
            return sample_groups(self.workspace, plan, self._model_for(policy), sandbox=self.request.sandbox,
                                 reward_kind=self.grpo.reward)
        finally:
            shutil.rmtree(policy, ignore_errors=True)

    # -- learning ---------------------------------------------------------------------------------

    def learn(self, groups: list[Any]) -> tuple[float, float, float, int]:
        """`updates_per_step` AdamW steps on the kept groups; (loss, kl, clipped share, tokens) of the first."""
        import torch

        from rsi.training.grpo_loss import backward_group

        sequences = sum(len(g.responses) for g in groups)
        mode = "exact" if self.hyper.replay == "auto" else self.hyper.replay
        first: tuple[float, float, float, int] = (0.0, 0.0, 0.0, 0)
        for update in range(self.grpo.updates_per_step if groups else 0):
            losses: list[float] = []
            kls: list[float] = []
            clipped: list[float] = []
            tokens = 0
            for group in groups:
                stats = backward_group(self.model, group, clip=self.grpo.clip_range, kl_weight=self.grpo.kl_weight,
                                       scale=1.0 / sequences, replay=mode != "off", exact=mode != "response")
                losses += stats.losses
                kls += stats.kls
                clipped += stats.clipped
                tokens += stats.tokens
            loss = sum(losses) / len(losses)
            if not torch.isfinite(torch.tensor(loss)):
                raise TrainingError(f"GRPO loss became {loss}", hint="lower [training.grpo] learning_rate")
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)
            if update == 0:
                first = (loss, sum(kls) / len(kls), sum(clipped) / len(clipped), tokens)
        return first

    def step(self, step: int) -> GrpoStepRecord:
        started = time.monotonic()
        batch = self.sample(step)
        sampled = batch.groups
        sampled_at = time.monotonic()
        groups = build_groups(self.tokenizer, sampled, self.grpo.max_response_tokens)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            loss, kl, clipped, tokens = self.learn(groups)
        from rsi.verdict import Verdict

        rollouts = [r for group in sampled for r in group]
        valid = [r for r in rollouts if r.verdict is not Verdict.ERROR]
        rewards = [[r.reward for r in group if r.verdict is not Verdict.ERROR] for group in sampled]
        return GrpoStepRecord(
            step=step, tasks=[group[0].task_key for group in sampled if group], rewards=rewards,
            mean_reward=sum(r.reward for r in valid) / len(valid) if valid else 0.0,
            passed=sum(1 for r in valid if r.verdict is Verdict.PASSED), rollouts=len(rollouts),
            errors=len(rollouts) - len(valid), groups_trained=len(groups),
            sequences=sum(len(g.responses) for g in groups), trained_tokens=tokens, loss=loss, kl=kl, clipped=clipped,
            sample_s=round(sampled_at - started, 3), train_s=round(time.monotonic() - sampled_at, 3),
            rollout_run=batch.run_id,
        )

    def train(self, progress: Callable[[GrpoProgress], None] | None) -> GrpoOutcome:
        resumed = self.resume()
        started = time.monotonic()
        for step in range(resumed + 1, self.total_steps + 1):
            self.records.append(self.step(step))
            elapsed = self.prior_s + time.monotonic() - started
            self.checkpoint(elapsed)
            if progress is not None:
                last = self.records[-1]
                progress(GrpoProgress(step=step, total_steps=self.total_steps, mean_reward=last.mean_reward,
                                      rollouts=last.rollouts, loss=last.loss, elapsed_s=elapsed,
                                      eta_s=(self.total_steps - step) * elapsed / step))
        return self.save(resumed, self.prior_s + time.monotonic() - started)

    def save(self, resumed: int, wall: float) -> GrpoOutcome:
        import peft
        import torch
        import transformers

        out_dir = Path(self.request.out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.model.save_pretrained(str(out_dir))
        if not (out_dir / "adapter_config.json").is_file():
            raise TrainingError(f"peft wrote no adapter_config.json into {out_dir}")
        shutil.rmtree(self.work, ignore_errors=True)
        records = self.records
        losses = [round(r.loss, 6) for r in records]
        tokens = sum(r.trained_tokens for r in records)
        return GrpoOutcome(
            adapter_dir=str(out_dir), steps=len(records), rollouts=sum(r.rollouts for r in records),
            rewards_per_step=[round(r.mean_reward, 4) for r in records], records=records, losses=losses,
            first_loss=losses[0] if losses else 0.0, final_loss=losses[-1] if losses else 0.0, trained_tokens=tokens,
            tokens_per_s=tokens / wall if wall > 0 else 0.0, wall_s=wall,
            seconds_per_step=wall / len(records) if records else 0.0, device=self.device,
            dtype=str(self.dtype).removeprefix("torch."), resumed_from_step=resumed,
            trainable_params=sum(p.numel() for p in self.named.values()), torch_version=torch.__version__,
            peft_version=peft.__version__, transformers_version=transformers.__version__,
        )
