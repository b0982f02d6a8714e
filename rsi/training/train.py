"""The LoRA SFT recipe: one readable training loop from an exported dataset to a PEFT adapter folder.

    setup    load the base (an HF folder), wrap it with peft's LoRA (rank, alpha, dropout, modules
             from `[training]`), tokenize the dataset with assistant-only labels (rsi.training.data)
    train    AdamW on the LoRA parameters only, `epochs` passes over seeded shuffles in batches of
             `batch_size`, stopped early at `max_steps`; a `TrainProgress` after every step
    save     `save_pretrained` -> adapter_config.json + adapter_model.safetensors (PEFT format, what
             peft, `rsi serve` and vLLM load)

Killed and run again with the same request, training resumes where it stopped: with `checkpoint_dir`
set, the LoRA weights, the optimizer state, the RNG state and the step are written (atomically) after
every step (or every `checkpoint_interval_s`), and a checkpoint whose fingerprint matches the request
(base, dataset digest, hyperparameters, step cap, device) is loaded before the first step. The batch plan
is a pure function of the seed, so the resumed run takes the batches the killed one would have: the
adapter is the one an uninterrupted run makes. A checkpoint of another request is ignored.

A plain loop rather than TRL's SFTTrainer: the masking is ours (so it is tested, not assumed), the
loop has no hidden logging, threads or files, and it runs the same on the CPU (embedded base) and on
a GPU (a SLURM job, `rsi.training.slurm`). Trade-off: no gradient checkpointing or packing; batches
are right-padded, which costs compute on short examples but keeps each example's loss exact.

The base is trained in float32 on the CPU (bf16 matmuls are slower than f32 on most CPUs and its
optimizer steps lose small LoRA updates) and bfloat16 on a GPU. Nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from rsi.contracts.schema import TrainingSpec
from rsi.errors import TrainingError
from rsi.training.methods import PreparedTraining, RecipeBase, TrainingProgress

if TYPE_CHECKING:
    from rsi.training.methods import FieldValue, ProgressFn, RecipeContext


class TrainProgress(TrainingProgress):
    """A snapshot after one SFT step (displays render it; the loop never prints)."""

    epoch: int
    tokens: int = Field(description="Tokens (not padding) processed so far.")
    tokens_per_s: float

    def figures(self) -> dict[str, FieldValue]:
        return {"epoch": self.epoch, "loss": round(self.loss, 4), "tok/s": round(self.tokens_per_s)}


class TrainRequest(BaseModel):
    """Everything one training job needs; picklable, so it crosses SLURM unchanged."""

    base_folder: str = Field(description="HF-format base model folder.")
    dataset_dir: str = Field(description="Exported dataset folder (train.jsonl + manifest.json).")
    out_dir: str = Field(description="Where the PEFT adapter folder is written.")
    hyper: TrainingSpec
    max_steps: int | None = Field(default=None, ge=1, description="Stop after this many optimizer steps.")
    threads: int | None = Field(default=None, ge=1, description="torch threads on the CPU (None: torch's default).")
    device: str = Field(default="auto", description="'cpu', 'cuda' or 'auto' (cuda when available).")
    checkpoint_dir: str | None = Field(default=None, description="Where to keep the resumable state (None: none).")
    checkpoint_interval_s: float = Field(default=0.0, ge=0, description="Seconds between checkpoints (0: every step).")
    init_adapter: str | None = Field(
        default=None, description="A PEFT adapter folder to continue training from (None: a fresh LoRA from `hyper`)."
    )


class TrainOutcome(BaseModel):
    """What a finished training produced: the adapter folder and its metrics."""

    adapter_dir: str
    steps: int
    epochs_run: float
    examples: int
    dropped: dict[str, int]
    truncated: int
    tokens: int
    trained_tokens: int
    losses: list[float]
    first_loss: float
    final_loss: float
    wall_s: float
    tokens_per_s: float
    seconds_per_step: float
    device: str
    dtype: str
    resumed_from_step: int = Field(default=0, description="Steps taken from a checkpoint instead of trained here.")
    trainable_params: int
    torch_version: str
    peft_version: str
    transformers_version: str


def plan_batches(n_examples: int, batch_size: int, epochs: int, seed: int, max_steps: int | None) -> list[list[int]]:
    """Example indices per step: each epoch a seeded shuffle cut into batches, capped at `max_steps`. Pure."""
    rng = random.Random(seed)
    batches: list[list[int]] = []
    for _ in range(epochs):
        order = list(range(n_examples))
        rng.shuffle(order)
        batches.extend(order[i : i + batch_size] for i in range(0, n_examples, batch_size))
    return batches[:max_steps] if max_steps else batches


def _device(name: str) -> str:
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise TrainingError("device 'cuda' asked for, but torch sees no CUDA GPU")
    return name


CHECKPOINT_FILE = "state.pt"


def request_fingerprint(request: TrainRequest, dataset_sha256: str, device: str) -> str:
    """What a checkpoint must match to be resumed: everything that changes the trained weights."""
    identity = {
        "base_folder": str(Path(request.base_folder).resolve()),
        "dataset": dataset_sha256,
        "hyper": request.hyper.model_dump(mode="json"),
        "max_steps": request.max_steps,
        "device": device,
        **({"init_adapter": _adapter_sha256(request.init_adapter)} if request.init_adapter else {}),
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def _adapter_sha256(folder: str) -> str:
    """The weights an adapter folder holds (a continued training depends on them, not on the path)."""
    digest = hashlib.sha256()
    for path in sorted(Path(folder).glob("adapter_*")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _save_checkpoint(folder: Path, state: dict[str, Any]) -> None:
    """Write `state` to folder/state.pt atomically (a kill mid-write leaves the previous checkpoint)."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".{CHECKPOINT_FILE}.partial"
    torch.save(state, partial)
    with partial.open("rb") as handle:
        os.fsync(handle.fileno())
    os.replace(partial, folder / CHECKPOINT_FILE)


def _load_checkpoint(folder: Path | None, fingerprint: str) -> dict[str, Any] | None:
    """The checkpoint in `folder` if it was written for this fingerprint; None otherwise."""
    import torch

    path = folder / CHECKPOINT_FILE if folder is not None else None
    if path is None or not path.is_file():
        return None
    try:
        state: dict[str, Any] = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:  # a checkpoint torch cannot read is as good as none: train from the start
        return None
    return state if state.get("fingerprint") == fingerprint else None


def _restore_checkpoint(state: dict[str, Any], named: dict[str, Any], optimizer: Any, device: str) -> None:
    """Put a checkpoint's LoRA weights, optimizer state and random state back (SFT's and GRPO's share it)."""
    import torch

    with torch.no_grad():
        for name, value in state["lora"].items():
            named[name].copy_(value.to(device))
    optimizer.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["rng"])
    if device == "cuda" and state.get("cuda_rng") is not None:
        torch.cuda.set_rng_state(state["cuda_rng"])


def load_lora_model(
    base_folder: str, hyper: TrainingSpec, device: str, dtype: Any, init_adapter: str | None = None
) -> tuple[Any, Any]:
    """(tokenizer, the base wrapped in a fresh LoRA from `hyper`, in train mode on `device`); the LoRA's
    initialisation is seeded by `hyper.seed`. With `init_adapter` the LoRA is that adapter's, trainable
    (continuing a parent's adapter: its own rank and targets hold, not `hyper`'s). Shared by SFT and GRPO
    (rsi.training.grpo)."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rsi.models.embedded.weights import offline_hub, quiet_transformers

    quiet_transformers()
    torch.manual_seed(hyper.seed)
    try:
        with offline_hub():
            tokenizer = AutoTokenizer.from_pretrained(base_folder)
            model: Any = AutoModelForCausalLM.from_pretrained(base_folder, dtype=dtype)
    except Exception as error:
        raise TrainingError(f"loading the base model from {base_folder} failed: {error}") from error
    config = LoraConfig(
        r=hyper.rank, lora_alpha=hyper.alpha, lora_dropout=hyper.dropout,
        target_modules=list(hyper.target_modules), task_type="CAUSAL_LM", bias="none",
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # transformers deprecations raised inside peft
            model = _continued(model, init_adapter) if init_adapter else get_peft_model(model, config)
    except ValueError as error:  # e.g. a target module the base does not have
        raise TrainingError(f"peft refused the LoRA config: {error}", hint="check [training] target_modules") from error
    model.to(device)
    model.train()
    return tokenizer, model


def _continued(model: Any, adapter_dir: str) -> Any:
    """The base wrapped in the adapter of `adapter_dir`, its LoRA weights trainable."""
    from peft import PeftModel

    if not (Path(adapter_dir) / "adapter_config.json").is_file():
        raise TrainingError(f"no PEFT adapter to continue from in {adapter_dir} (adapter_config.json missing)")
    return PeftModel.from_pretrained(model, adapter_dir, is_trainable=True)


def train_adapter(request: TrainRequest, progress: Callable[[TrainProgress], None] | None = None) -> TrainOutcome:
    """Fine-tune LoRA adapters on the dataset and save them; see the module docstring."""
    import torch

    from rsi.training.data import load_sft_dataset, tokenize_dataset

    hyper = request.hyper
    threads = request.threads or int(os.environ.get("RSI_TORCH_THREADS", "0") or 0)
    if threads:
        # On a shared, oversubscribed CPU one thread is several times faster than spinning OpenMP
        # threads (measured here at load 11 on 2 cores: 7.2 s/step with 1 thread, 34 s with 2).
        torch.set_num_threads(threads)
    device = _device(request.device)
    dtype = torch.float32 if device == "cpu" else torch.bfloat16
    dataset = load_sft_dataset(Path(request.dataset_dir))
    tokenizer, model = load_lora_model(request.base_folder, hyper, device, dtype, request.init_adapter)
    tokenized = tokenize_dataset(tokenizer, dataset, hyper.max_length)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    loop = _SftLoop(request, model, tokenized.examples, int(pad), device, request_fingerprint(request, dataset.sha256, device))
    batches = plan_batches(len(tokenized.examples), hyper.batch_size, hyper.epochs, hyper.seed, request.max_steps)
    first_step = loop.resume() + 1
    steps_per_epoch = math.ceil(len(tokenized.examples) / hyper.batch_size)
    started = last_checkpoint = time.monotonic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # transformers deprecations raised inside peft
        for step, indices in enumerate(batches[first_step - 1 :], start=first_step):
            loop.step(step, indices)
            now = time.monotonic()
            if loop.checkpoint_dir is not None and (
                step == len(batches) or now - last_checkpoint >= request.checkpoint_interval_s
            ):
                loop.save(started)
                last_checkpoint = now
            elapsed = loop.prior_s + now - started
            if progress is not None:
                progress(TrainProgress(
                    step=step, total_steps=len(batches), epoch=(step - 1) // steps_per_epoch + 1, loss=loop.losses[-1],
                    tokens=loop.tokens, tokens_per_s=loop.tokens / elapsed if elapsed > 0 else 0.0, elapsed_s=elapsed,
                    eta_s=(len(batches) - step) * elapsed / step,
                ))
    wall = loop.prior_s + time.monotonic() - started
    out_dir = Path(request.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out_dir))
    if not (out_dir / "adapter_config.json").is_file():
        raise TrainingError(f"peft wrote no adapter_config.json into {out_dir}")
    return _outcome(loop, tokenized, out_dir, len(batches), steps_per_epoch, wall, str(dtype), first_step - 1)


class _SftLoop:
    """The state one SFT run carries from step to step: the optimizer, the losses and tokens so far,
    and the checkpoint that lets a killed run resume at the step it had reached."""

    def __init__(self, request: TrainRequest, model: Any, examples: list[Any], pad: int, device: str,
                 fingerprint: str) -> None:
        import torch

        self.request, self.model, self.examples, self.pad, self.device = request, model, examples, pad, device
        self.trainable = [p for p in model.parameters() if p.requires_grad]
        self.named = {name: p for name, p in model.named_parameters() if p.requires_grad}
        self.optimizer = torch.optim.AdamW(self.trainable, lr=request.hyper.learning_rate, weight_decay=0.0)
        self.checkpoint_dir = Path(request.checkpoint_dir) if request.checkpoint_dir else None
        self.fingerprint = fingerprint
        self.losses: list[float] = []
        self.tokens = 0
        self.prior_s = 0.0  # training seconds spent before a resume

    def resume(self) -> int:
        """Restore the matching checkpoint, if any; the steps it had done (0 without one)."""
        resumed = _load_checkpoint(self.checkpoint_dir, self.fingerprint)
        if resumed is None:
            return 0
        _restore_checkpoint(resumed, self.named, self.optimizer, self.device)
        self.losses, self.tokens = list(resumed["losses"]), int(resumed["tokens"])
        self.prior_s = float(resumed["elapsed_s"])
        return len(self.losses)

    def save(self, started: float) -> None:
        import torch

        assert self.checkpoint_dir is not None
        _save_checkpoint(self.checkpoint_dir, {
            "fingerprint": self.fingerprint, "losses": self.losses, "tokens": self.tokens,
            "elapsed_s": self.prior_s + time.monotonic() - started,
            "lora": {name: p.detach().cpu() for name, p in self.named.items()},
            "optimizer": self.optimizer.state_dict(), "rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state() if self.device == "cuda" else None,
        })

    def step(self, step: int, indices: list[int]) -> None:
        """One optimizer step on the examples at `indices`; a non-finite loss stops the run."""
        from rsi.training.data import IGNORE_INDEX, collate
        from rsi.training.replay import sft_replay_backward

        replay = self.request.hyper.replay
        batch = collate([self.examples[i] for i in indices], self.pad)
        batch = {k: v.to(self.device) for k, v in batch.items()}
        if replay in ("response", "exact"):  # long multi-turn conversations: rsi.training.replay
            value = sft_replay_backward(self.model, [self.examples[i] for i in indices], IGNORE_INDEX,
                                        exact=replay == "exact")
        else:
            loss = self.model(**batch).loss
            value = float(loss.item())
            if math.isfinite(value):
                loss.backward()
        if not math.isfinite(value):
            raise TrainingError(f"loss became {value} at step {step}", hint="lower [training] learning_rate")
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.losses.append(value)
        self.tokens += int(batch["attention_mask"].sum().item())


def _outcome(loop: _SftLoop, tokenized: Any, out_dir: Path, steps: int, steps_per_epoch: int, wall: float,
             dtype: str, resumed_from_step: int) -> TrainOutcome:
    import peft
    import torch
    import transformers

    losses = loop.losses
    return TrainOutcome(
        adapter_dir=str(out_dir),
        steps=steps,
        epochs_run=round(steps / steps_per_epoch, 3),
        examples=len(tokenized.examples),
        dropped=tokenized.dropped,
        truncated=sum(1 for e in tokenized.examples if e.truncated),
        tokens=loop.tokens,
        trained_tokens=sum(e.trained_tokens for e in tokenized.examples),
        losses=[round(x, 5) for x in losses],
        first_loss=losses[0],
        final_loss=losses[-1],
        wall_s=wall,
        tokens_per_s=loop.tokens / wall if wall > 0 else 0.0,
        seconds_per_step=wall / steps,
        device=loop.device,
        dtype=dtype.removeprefix("torch."),
        resumed_from_step=resumed_from_step,
        trainable_params=sum(p.numel() for p in loop.trainable),
        torch_version=torch.__version__,
        peft_version=peft.__version__,
        transformers_version=transformers.__version__,
    )


class SftRecipe(RecipeBase):
    """SFT as a training method (rsi.training.methods): an exported dataset, a fresh LoRA or a registered
    adapter continued; runs on any executor that trains (in this process, or as a SLURM job)."""

    name = "sft"
    needs_dataset = True
    in_process_only = False

    def setup(self, ctx: RecipeContext) -> PreparedTraining:
        from rsi.adapters.registry import find_adapter
        from rsi.errors import UserInputError
        from rsi.training.data import load_sft_dataset

        spec, hyper, max_steps, parent = ctx.spec, ctx.hyper, ctx.max_steps, ctx.parent
        if spec.dataset is None:
            raise UserInputError("SFT needs a DATASET (an exported folder)", hint="or train with --method grpo")
        dataset_dir = spec.dataset if spec.dataset.is_absolute() else (Path.cwd() / spec.dataset)
        dataset = load_sft_dataset(dataset_dir)
        init = find_adapter(ctx.workspace, spec.init_adapter) if spec.init_adapter else None
        out_dir = ctx.training_dir(dataset.sha256, init.id if init else None)
        request = TrainRequest(base_folder=str(ctx.base_folder), dataset_dir=str(dataset.folder),
                               out_dir=str(out_dir / "adapter"), hyper=hyper, max_steps=max_steps,
                               threads=spec.threads, device=spec.device, checkpoint_dir=str(out_dir / "checkpoint"),
                               init_adapter=str(init.adapter_dir) if init else None)
        ctx.note(f"training {parent.name}@r{parent.revision} base {parent.spec.base.id} on "
                 f"{len(dataset.conversations)} examples ({dataset.sha256[:12]}), rank {hyper.rank}, "
                 f"lr {hyper.learning_rate}, {hyper.epochs} epochs{f', max {max_steps} steps' if max_steps else ''}, "
                 f"executor {spec.executor}{f', continuing adapter {init.id[:12]}' if init else ''}")
        record = {"sha256": dataset.sha256, "folder": str(dataset.folder), "examples": len(dataset.conversations),
                  "manifest": dataset.manifest}
        return PreparedTraining(request=request, out_dir=out_dir, dataset=record, source_runs=dataset.source_runs)

    def train(self, request: TrainRequest, progress: ProgressFn | None) -> TrainOutcome:
        return train_adapter(request, progress)
