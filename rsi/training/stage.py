"""The fine-tune stage behind `rsi train`: contract + dataset -> trained, registered adapter -> candidate revision.

    train_stage(workspace, TrainStageSpec(dataset=..., contract="default"), progress=...)

1. resolve the contract (any ref) and its `[training]` hyperparameters, with the spec's overrides;
2. verify the dataset against its manifest (rsi.training.data) before any model is loaded;
3. locate the base as an HF folder (`rsi.models.embedded.weights.hf_folder`) and identify it by digest;
4. train into `runs/adapters/.train-KEY/` (KEY: a hash of base, dataset, hyperparameters, step cap and
   device) with the method's recipe (rsi.training.methods.TRAINING_METHODS), run by the executor's
   training capability (rsi.executors.registry.TRAINING_RUNNERS: `local`, in this process on the
   CPU/GPU, or `slurm`, a SLURM job, rsi.training.slurm), checkpointing every step there;
5. register it (rsi.adapters.registry: content hash, lineage) and write the candidate contract
   revision that routes to it (rsi.training.candidate), marking the adapter `candidate`.

The stage knows no method by name. What steps 2 and 4 do is the recipe's (`[training] method` or
`rsi train --method`): SFT (rsi.training.train) verifies and trains on the dataset; a method that
samples its own data (GRPO, rsi.training.grpo) needs none and keys its folder by what it samples. The
method's own options (`TrainStageSpec.method_options`, `rsi train --option KEY=VALUE`) reach the recipe
as given: its `apply_options` checks them and returns the hyperparameters they change.

A crash or kill during training leaves the `.train-KEY` folder with its checkpoint: the same `rsi train`
run again resumes at the step after the last checkpoint (rsi.training.train) instead of starting over.
The folder is removed once the adapter is registered; folders of other trainings untouched for
`STALE_AFTER_S` are removed by the next stage run. A crash after registration is recovered by a rerun,
which finds the registered weights or the candidate commit.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from rsi.adapters.lineage import ParentContract, PartitionRecord
from rsi.adapters.registry import AdapterLineage
from rsi.contracts.records import EMPTY_IS_NONE, RevisionWritten, none_as_empty
from rsi.contracts.schema import TrainingSpec
from rsi.executors.registry import TrainingExecutorName
from rsi.sandbox.select import SandboxName
from rsi.training.methods import RecipeContext, TrainingMethodName, TrainingRecipe, training_recipe
from rsi.workspace import Workspace

if TYPE_CHECKING:
    from rsi.executors.registry import TrainingRunner

STALE_PREFIX = ".train-"
STALE_AFTER_S = 7 * 24 * 3600  # a training folder nobody wrote to for a week is abandoned


class TrainStageSpec(BaseModel):
    """One `rsi train`: the flags map onto these fields; `None` means "from the contract's [training]"."""

    model_config = ConfigDict(extra="forbid")
    dataset: Path | None = Field(default=None, description="Exported dataset, for a method that needs one (SFT).")
    contract: str = "default"
    method: TrainingMethodName | None = Field(
        default=None, description="A name in rsi.training.methods.TRAINING_METHODS (None: the contract's [training] method).")
    executor: TrainingExecutorName = Field(
        default="local", description="An executor that trains (rsi.executors.registry.TRAINING_RUNNERS).")
    max_steps: int | None = Field(default=None, ge=1)
    epochs: int | None = Field(default=None, ge=1)
    learning_rate: float | None = Field(default=None, gt=0)
    rank: int | None = Field(default=None, ge=1)
    batch_size: int | None = Field(default=None, ge=1)
    max_length: int | None = Field(default=None, ge=16)
    seed: int | None = None
    threads: int | None = Field(default=None, ge=1)
    device: str = "auto"
    method_options: dict[str, Any] = Field(
        default_factory=dict, description="The method's own options, checked and applied by its recipe "
        "(`TrainingRecipe.apply_options`); {}: the contract's.")
    sandbox: SandboxName = Field(default="auto", description="Where a method's attempts run (GRPO's rollouts).")
    candidate: bool = Field(default=True, description="Write the candidate contract revision.")
    init_adapter: str | None = Field(
        default=None, description="SFT: a registered adapter id to continue training (None: a fresh LoRA)."
    )
    slurm: dict[str, Any] = Field(default_factory=dict, description="SlurmTrainOptions fields.")
    harness_sets: dict[str, Any] = Field(
        default_factory=dict, description="Runtime sets the candidate contract carries beside the adapter (a "
        "generation's harness chosen on train evidence, gated with the adapter by one heldout evaluation).")
    specialist: str = Field(default="sft", description="The specialist name the adapter is served under (lineage name).")
    partition: dict[str, Any] = Field(default_factory=dict, description="The train-evidence part this adapter learns "
                                      "(rsi.training.specialists: name, rule, tasks, dataset hashes); {}: all of it.")


class TrainMetrics(BaseModel):
    """What a training measured (the lineage's `metrics`). The numbers every method reports are typed
    fields; a method's own numbers stay as extra fields of the same names (SFT: `epochs_run`,
    `examples`, `dropped`, `truncated`, `tokens`; GRPO: `method`, `rollouts`, `rewards_per_step`,
    `records`), so the JSON is the lineage's, key for key."""

    model_config = ConfigDict(extra="allow")
    steps: int = Field(description="Optimizer steps, those restored from a checkpoint included.")
    first_loss: float
    final_loss: float
    losses: list[float] = Field(default_factory=list, description="Loss per step.")
    trained_tokens: int = Field(default=0, description="Tokens the loss was computed on.")
    tokens_per_s: float = Field(description="Trained tokens per second of training.")
    wall_s: float
    seconds_per_step: float = 0.0
    device: str
    dtype: str = ""
    resumed_from_step: int = Field(default=0, description="Steps taken from a checkpoint instead of trained here.")
    trainable_params: int = 0
    torch_version: str = ""
    peft_version: str = ""
    transformers_version: str = ""


class StageLineage(AdapterLineage):
    """The adapter's lineage as `rsi train` reports it: lineage.json without the dataset's manifest."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)


class TrainStageOutcome(BaseModel):
    """What `rsi train` produced (its `--json` output)."""

    adapter_id: str
    adapter_dir: str
    registered: bool = Field(description="False when these weights were already registered.")
    candidate: Annotated[RevisionWritten | None, EMPTY_IS_NONE, none_as_empty()] = Field(
        default=None, description="The candidate revision (JSON: {} when none).")
    metrics: TrainMetrics
    lineage: StageLineage


def resolve_hyper(training: TrainingSpec, spec: TrainStageSpec) -> tuple[TrainingSpec, int | None]:
    """The contract's `[training]` with the spec's overrides and the chosen method's options applied; and
    the step cap."""
    updates: dict[str, Any] = {k: v for k, v in {
        "epochs": spec.epochs, "learning_rate": spec.learning_rate, "rank": spec.rank,
        "batch_size": spec.batch_size, "max_length": spec.max_length, "seed": spec.seed,
    }.items() if v is not None}
    if spec.method is not None:
        updates["method"] = spec.method
    hyper = TrainingSpec.model_validate({**training.model_dump(), **updates})
    hyper = training_recipe(hyper.method).apply_options(hyper, spec.method_options)
    return hyper, spec.max_steps  # the contract has no step cap: only the stage (--max-steps) sets one


def base_identity(base: Any, folder: Path, workspace_root: Path) -> dict[str, Any]:
    """Base id, version, format, source and digest (the GGUF's sha256, or a hash of the HF folder's weights)."""
    from rsi.models.embedded.weights import gguf_digest, locate_base

    digest = base.sha256
    if not digest:
        weights = locate_base(base, workspace_root)
        if weights.format == "gguf":
            digest = gguf_digest(weights.path)
        else:
            h = hashlib.sha256()
            for path in sorted(p for p in folder.iterdir() if p.suffix in (".safetensors", ".json") and p.is_file()):
                h.update(path.name.encode() + b"\0")
                with path.open("rb") as handle:
                    for block in iter(lambda: handle.read(1 << 20), b""):
                        h.update(block)
            digest = h.hexdigest()
    return {"id": base.id, "version": base.version, "format": base.format, "source": base.source,
            "file": base.file, "sha256": digest}


def training_key(base: dict[str, Any], dataset_sha256: str, hyper: TrainingSpec, max_steps: int | None,
                 device: str, init_adapter: str | None = None) -> str:
    """The training folder's name: the same training (resumable) gets the same folder."""
    from rsi.contracts.schema import training_identity

    # the partition keys at their defaults are left out, so a training folder from before they existed resumes
    identity = {"base": base.get("sha256"), "dataset": dataset_sha256, "hyper": training_identity(hyper.model_dump(mode="json")),
                "max_steps": max_steps, "device": device, **({"init_adapter": init_adapter} if init_adapter else {})}
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


def _remove_stale(workspace: Workspace, keep: Path) -> None:
    """Remove abandoned training folders (not `keep`, not one written to within STALE_AFTER_S: another
    training may be running) and registry leftovers."""
    root = workspace.adapters_dir
    if root.is_dir():
        now = time.time()
        for stale in root.glob(f"{STALE_PREFIX}*"):
            newest = max((p.stat().st_mtime for p in stale.rglob("*")), default=stale.stat().st_mtime)
            if stale != keep and now - newest > STALE_AFTER_S:
                shutil.rmtree(stale, ignore_errors=True)
        for stale in root.glob(".tmp-*"):
            shutil.rmtree(stale, ignore_errors=True)


def train_stage(
    workspace: Workspace,
    spec: TrainStageSpec,
    progress: Callable[[Any], None] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> TrainStageOutcome:
    """See the module docstring."""
    from rsi.adapters.registry import (
        code_version,
        find_adapter,
        list_adapters,
        register_adapter,
        update_status,
    )
    from rsi.contracts.refs import NAME as NAME_ONLY
    from rsi.contracts.refs import resolve_ref
    from rsi.models.embedded.weights import hf_folder
    from rsi.training.candidate import ensure_revision_tagged, write_candidate

    note = on_note or (lambda _m: None)
    if NAME_ONLY.match(spec.contract):
        ensure_revision_tagged(workspace, spec.contract)
    parent = resolve_ref(workspace, spec.contract)
    hyper, max_steps = resolve_hyper(parent.spec.training, spec)
    recipe, runner = _recipe_and_runner(hyper.method, spec.executor)
    folder = hf_folder(parent.spec.base, workspace.root)
    base = base_identity(parent.spec.base, folder, workspace.root)

    def training_dir(data_digest: str, init_adapter: str | None) -> Path:
        key = training_key(base, data_digest, hyper, max_steps, spec.device, init_adapter)
        return _training_dir(workspace, key)

    prepared = recipe.setup(RecipeContext(workspace, spec, parent, hyper, max_steps, folder, base, note, training_dir))
    if recipe.resume(prepared) is not None:
        note(f"resuming from the checkpoint in {prepared.out_dir.name}")
    # On failure the folder stays: its checkpoint is what a rerun resumes from.
    outcome = runner.run(recipe.train, prepared.request, progress, workspace.runs_dir / "slurm-train", spec.slurm, note)
    trained = recipe.save(prepared, outcome)
    lineage = {
        "name": spec.specialist,  # the specialist name the candidate serves it under (rsi.training.candidate)
        "method": hyper.method,
        "base": base,
        "dataset": trained.dataset,
        "source_runs": trained.source_runs,
        "parent_contract": ParentContract(name=parent.name, revision=parent.revision, ref=parent.ref,
                                          content_hash=parent.content_hash, commit=_head_commit(workspace)),
        "hyperparameters": {**hyper.model_dump(mode="json"), "max_steps": max_steps},
        "metrics": trained.metrics,
        "code": code_version(),
        "executor": spec.executor,
        **({"init_adapter": find_adapter(workspace, spec.init_adapter).id} if spec.init_adapter else {}),
        **({"partition": PartitionRecord.model_validate(spec.partition)} if spec.partition else {}),
    }
    known = {r.id for r in list_adapters(workspace)}
    record = register_adapter(workspace, Path(trained.adapter_dir), lineage)
    registered = record.id not in known
    shutil.rmtree(prepared.out_dir, ignore_errors=True)
    candidate = None
    if spec.candidate:
        written = write_candidate(workspace, parent.name, record.id, record.relative_adapter_dir(workspace),
                                  hyper.rank, list(hyper.target_modules), parent_ref=parent.ref,
                                  harness_sets=spec.harness_sets)
        candidate = RevisionWritten.model_validate(written.summary())
        if record.status.state == "registered":
            record = update_status(record, state="candidate", candidate=written.summary())
    return TrainStageOutcome(
        adapter_id=record.id, adapter_dir=str(record.adapter_dir), registered=registered, candidate=candidate,
        metrics=TrainMetrics.model_validate(record.lineage.metrics),
        lineage=StageLineage.model_validate(record.summary()["lineage"]),
    )


def _training_dir(workspace: Workspace, key: str) -> Path:
    out_dir = workspace.adapters_dir / f"{STALE_PREFIX}{key}"
    _remove_stale(workspace, keep=out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return out_dir


def _recipe_and_runner(method: str, executor: str) -> tuple[TrainingRecipe, TrainingRunner]:
    """The method's recipe and the executor's training capability, checked against each other."""
    from rsi.errors import UserInputError
    from rsi.executors.registry import TRAINING_RUNNERS

    recipe = training_recipe(method)
    runner = TRAINING_RUNNERS[executor]
    if recipe.in_process_only and not runner.in_process:
        here = ", ".join(name for name, r in TRAINING_RUNNERS.items() if r.in_process)
        raise UserInputError(f"{method} trains in this process only (it needs what only this process has, such as "
                             f"its sandbox and model): use --executor {here}")
    return recipe, runner


def _head_commit(workspace: Workspace) -> str:
    try:
        import git

        repo = git.Repo(workspace.root, search_parent_directories=True)
        try:
            return repo.head.commit.hexsha
        finally:
            repo.close()
    except Exception:
        return ""
