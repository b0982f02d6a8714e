"""The fine-tune stage behind `rsi train`: contract + dataset -> trained, registered adapter -> candidate revision.

    train_stage(workspace, TrainStageSpec(dataset=..., contract="default"), progress=...)

1. resolve the contract (any ref) and its `[training]` hyperparameters, with the spec's overrides;
2. verify the dataset against its manifest (rsi.training.data) before any model is loaded;
3. locate the base as an HF folder (`rsi.models.weights.hf_folder`) and identify it by digest;
4. train into `runs/adapters/.train-KEY/` (KEY: a hash of base, dataset, hyperparameters, step cap and
   device), locally (CPU/GPU in this process) or as a SLURM job (`rsi.training.slurm`), checkpointing
   every step there;
5. register it (rsi.training.registry: content hash, lineage) and write the candidate contract
   revision that routes to it (rsi.training.candidate), marking the adapter `candidate`.

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
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rsi.contracts.schema import TrainingSpec
from rsi.workspace import Workspace

STALE_PREFIX = ".train-"
STALE_AFTER_S = 7 * 24 * 3600  # a training folder nobody wrote to for a week is abandoned


class TrainStageSpec(BaseModel):
    """One `rsi train`: the flags map onto these fields; `None` means "from the contract's [training]"."""

    model_config = ConfigDict(extra="forbid")
    dataset: Path
    contract: str = "default"
    executor: Literal["local", "slurm"] = "local"
    max_steps: int | None = Field(default=None, ge=1)
    epochs: int | None = Field(default=None, ge=1)
    learning_rate: float | None = Field(default=None, gt=0)
    rank: int | None = Field(default=None, ge=1)
    batch_size: int | None = Field(default=None, ge=1)
    max_length: int | None = Field(default=None, ge=16)
    seed: int | None = None
    threads: int | None = Field(default=None, ge=1)
    device: str = "auto"
    candidate: bool = Field(default=True, description="Write the candidate contract revision.")
    slurm: dict[str, Any] = Field(default_factory=dict, description="SlurmTrainOptions fields.")


class TrainStageOutcome(BaseModel):
    adapter_id: str
    adapter_dir: str
    registered: bool = Field(description="False when these weights were already registered.")
    candidate: dict[str, Any] = Field(default_factory=dict)
    metrics: dict[str, Any]
    lineage: dict[str, Any]


def resolve_hyper(training: TrainingSpec, spec: TrainStageSpec) -> tuple[TrainingSpec, int | None]:
    """The contract's `[training]` with the spec's overrides applied; and the step cap."""
    updates = {k: v for k, v in {
        "epochs": spec.epochs, "learning_rate": spec.learning_rate, "rank": spec.rank,
        "batch_size": spec.batch_size, "max_length": spec.max_length, "seed": spec.seed,
    }.items() if v is not None}
    hyper = TrainingSpec.model_validate({**training.model_dump(), **updates})
    max_steps = spec.max_steps if spec.max_steps is not None else (getattr(hyper, "max_steps", 0) or None)
    return hyper, max_steps


def base_identity(base: Any, folder: Path, workspace_root: Path) -> dict[str, Any]:
    """Base id, version, format, source and digest (the GGUF's sha256, or a hash of the HF folder's weights)."""
    from rsi.models.weights import gguf_digest, locate_base

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
                 device: str) -> str:
    """The training folder's name: the same training (resumable) gets the same folder."""
    identity = {"base": base.get("sha256"), "dataset": dataset_sha256, "hyper": hyper.model_dump(mode="json"),
                "max_steps": max_steps, "device": device}
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
    from rsi.contracts.refs import NAME as NAME_ONLY
    from rsi.contracts.refs import resolve_ref
    from rsi.models.weights import hf_folder
    from rsi.training.candidate import ensure_revision_tagged, write_candidate
    from rsi.training.data import load_sft_dataset
    from rsi.training.registry import code_version, list_adapters, register_adapter, update_status
    from rsi.training.train import TrainRequest, describe_outcome, train_adapter

    note = on_note or (lambda _m: None)
    if NAME_ONLY.match(spec.contract):
        ensure_revision_tagged(workspace, spec.contract)
    parent = resolve_ref(workspace, spec.contract)
    hyper, max_steps = resolve_hyper(parent.spec.training, spec)
    dataset_dir = spec.dataset if spec.dataset.is_absolute() else (Path.cwd() / spec.dataset)
    dataset = load_sft_dataset(dataset_dir)
    folder = hf_folder(parent.spec.base, workspace.root)
    base = base_identity(parent.spec.base, folder, workspace.root)
    out_dir = workspace.adapters_dir / f"{STALE_PREFIX}{training_key(base, dataset.sha256, hyper, max_steps, spec.device)}"
    _remove_stale(workspace, keep=out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    request = TrainRequest(base_folder=str(folder), dataset_dir=str(dataset.folder), out_dir=str(out_dir / "adapter"),
                           hyper=hyper, max_steps=max_steps, threads=spec.threads, device=spec.device,
                           checkpoint_dir=str(out_dir / "checkpoint"))
    note(f"training {parent.name}@r{parent.revision} base {parent.spec.base.id} on {len(dataset.conversations)} "
         f"examples ({dataset.sha256[:12]}), rank {hyper.rank}, lr {hyper.learning_rate}, "
         f"{hyper.epochs} epochs{f', max {max_steps} steps' if max_steps else ''}, executor {spec.executor}")
    if (out_dir / "checkpoint").is_dir():
        note(f"resuming from the checkpoint in {out_dir.name}")
    # On failure the folder stays: its checkpoint is what a rerun resumes from.
    if spec.executor == "slurm":
        from rsi.training.slurm import SlurmTrainOptions, submit_training

        options = SlurmTrainOptions.model_validate(spec.slurm)
        outcome = submit_training(request, options, workspace.runs_dir / "slurm-train",
                                  on_state=lambda job, state: note(f"slurm job {job}: {state}"))
    else:
        outcome = train_adapter(request, progress)
    lineage = {
        "name": "sft",
        "base": base,
        "dataset": {"sha256": dataset.sha256, "folder": str(dataset.folder),
                    "examples": len(dataset.conversations), "manifest": dataset.manifest},
        "source_runs": dataset.source_runs,
        "parent_contract": {"name": parent.name, "revision": parent.revision, "ref": parent.ref,
                            "content_hash": parent.content_hash, "commit": _head_commit(workspace)},
        "hyperparameters": {**hyper.model_dump(mode="json"), "max_steps": max_steps},
        "metrics": describe_outcome(outcome),
        "code": code_version(),
        "executor": spec.executor,
    }
    known = {r.id for r in list_adapters(workspace)}
    record = register_adapter(workspace, Path(outcome.adapter_dir), lineage)
    registered = record.id not in known
    shutil.rmtree(out_dir, ignore_errors=True)
    candidate: dict[str, Any] = {}
    if spec.candidate:
        written = write_candidate(workspace, parent.name, record.id, record.relative_adapter_dir(workspace),
                                  hyper.rank, list(hyper.target_modules), parent_ref=parent.ref)
        candidate = written.summary()
        if record.status.state == "registered":
            record = update_status(record, state="candidate", candidate=candidate)
    return TrainStageOutcome(
        adapter_id=record.id, adapter_dir=str(record.adapter_dir), registered=registered, candidate=candidate,
        metrics=record.lineage.metrics, lineage=record.summary()["lineage"],
    )


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
