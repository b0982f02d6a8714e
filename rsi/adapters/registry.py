"""The adapter registry: immutable adapter revisions with their lineage, under runs/adapters/.

    runs/adapters/
      <sha256>/                  one revision; the name is the content hash of its PEFT files
        adapter/                 adapter_config.json + adapter_model.safetensors (what peft/vLLM load)
        lineage.json             immutable: base, dataset (+ manifest), source runs, parent contract,
                                 hyperparameters, training metrics, code version
        status.json              mutable policy record: candidate -> promoted | rejected, with the
                                 candidate contract revision and the evaluation numbers
      .tmp-<...>/                a registration in progress (renamed into place when complete)

The id is `rsi.models.embedded.weights.adapter_digest` of the adapter folder, the same digest the model
backends use for the served name (`<name>@<id[:12]>`), so the registry, the contract's
`[[specialists]] sha256` and the running server agree on what an adapter revision is.

Registration is atomic (the whole revision folder appears by one rename) and idempotent (the same
weights register once; a second registration returns the first record). Lineage is never rewritten;
what happens to an adapter afterwards (evaluated, promoted, rejected) goes to status.json, written
atomically, so adapters are immutable and policies are mutable records, as in MinT.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from rsi.adapters.lineage import (
    BaseIdentity,
    DatasetRecord,
    Hyperparameters,
    ImportOrigin,
    ParentContract,
    PartitionRecord,
)
from rsi.atomic import write_json_atomic
from rsi.contracts.records import EMPTY_IS_NONE, none_as_empty
from rsi.errors import UserInputError
from rsi.workspace import Workspace

LINEAGE_FILE = "lineage.json"
STATUS_FILE = "status.json"
ADAPTER_SUBDIR = "adapter"
LINEAGE_SCHEMA = "rsi-adapter-lineage/1"
KEPT_FILES = ("adapter_config.json", "adapter_model.safetensors", "adapter_model.bin")


class CodeVersion(BaseModel):
    rsi_version: str
    git_sha: str = Field(default="", description="Commit of the rsi source tree, if it is a git checkout.")
    git_dirty: bool = False


class AdapterLineage(BaseModel):
    """Where an adapter revision came from (immutable, lineage.json)."""

    schema_id: str = Field(default=LINEAGE_SCHEMA, alias="schema")
    id: str = Field(description="sha256 of the adapter's PEFT files (rsi.models.embedded.weights.adapter_digest).")
    name: str = Field(description="Specialist name it is served and routed under.")
    method: str = Field(default="sft", description="How it was trained: a name in rsi.training.methods.TRAINING_METHODS "
                        "('sft', 'grpo'); kept as stored, so a lineage reads whatever is registered now.")
    created: datetime
    base: BaseIdentity = Field(description="Base model: id, version, format, source, sha256.")
    dataset: DatasetRecord = Field(description="Dataset sha256, folder, examples and its full manifest ({}: none).")
    source_runs: list[str]
    parent_contract: ParentContract = Field(description="Contract trained for: name, revision, content hash, commit.")
    hyperparameters: Hyperparameters
    metrics: dict[str, Any] = Field(description="What the training measured: rsi.training.stage.TrainMetrics's fields "
                                    "({} for an import); the stage reads it typed.")
    code: CodeVersion
    executor: str = "local"
    init_adapter: str | None = Field(default=None, description="The registered adapter this one continued "
                                     "(`rsi train --from-adapter`, `--continue-adapter`); None: a fresh LoRA.")
    origin: Annotated[ImportOrigin | None, EMPTY_IS_NONE, none_as_empty()] = Field(
        default=None, description="Where an adapter trained outside rsi came from (`rsi specialists import`: its "
        "folder, the base it names, its tensors); None ({} in the JSON) for one rsi trained.")
    partition: Annotated[PartitionRecord | None, EMPTY_IS_NONE, none_as_empty()] = Field(
        default=None, description="The part of the train evidence a specialist learned (rsi.training.specialists); "
        "None ({} in the JSON) for an adapter trained on all of it (and in lineage written before).")

    model_config = {"populate_by_name": True}


class AdapterStatus(BaseModel):
    """The mutable policy record of an adapter revision (status.json)."""

    state: Literal["registered", "candidate", "promoted", "rejected"] = "registered"
    updated: datetime
    candidate: dict[str, Any] = Field(default_factory=dict, description="Candidate contract revision written for it.")
    evaluation: dict[str, Any] = Field(default_factory=dict, description="Lift, retention and the gate's verdict.")
    promotion: dict[str, Any] = Field(default_factory=dict, description="Parent revision it was promoted into.")


class AdapterRecord(BaseModel):
    """One registered adapter revision as the registry returns it."""

    id: str
    folder: Path
    adapter_dir: Path
    lineage: AdapterLineage
    status: AdapterStatus

    @property
    def short_id(self) -> str:
        return self.id[:12]

    def relative_adapter_dir(self, workspace: Workspace) -> str:
        return self.adapter_dir.relative_to(workspace.root).as_posix()

    def summary(self) -> dict[str, Any]:
        lineage = self.lineage.model_dump(mode="json", by_alias=True)
        lineage["dataset"] = {k: v for k, v in lineage["dataset"].items() if k != "manifest"}
        return {
            "id": self.id,
            "short_id": self.short_id,
            "folder": str(self.folder),
            "adapter_dir": str(self.adapter_dir),
            "state": self.status.state,
            "status": self.status.model_dump(mode="json"),
            "lineage": lineage,
        }


def code_version() -> CodeVersion:
    """rsi's version and, when it runs from a git checkout, the commit (and whether the tree is dirty)."""
    from rsi import __version__

    source = Path(__file__).resolve().parent.parent.parent
    sha, dirty = "", False
    if (source / ".git").exists():
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            sha = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True,
                                 text=True, timeout=10).stdout.strip()
            status = subprocess.run(["git", "-C", str(source), "status", "--porcelain", "--untracked-files=no"],
                                    capture_output=True, text=True, timeout=10).stdout
            dirty = bool(status.strip())
    return CodeVersion(rsi_version=__version__, git_sha=sha, git_dirty=dirty)


def clean_adapter_folder(folder: Path) -> None:
    """Keep only the PEFT weight and config files (peft also writes a README model card, not content)."""
    for path in Path(folder).iterdir():
        if path.name not in KEPT_FILES:
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()


def register_adapter(workspace: Workspace, trained_dir: Path, lineage: dict[str, Any]) -> AdapterRecord:
    """Move a freshly trained PEFT folder into the registry under its content hash, with its lineage.

    `lineage` holds every AdapterLineage field but `id` and `created`. Idempotent: weights already
    registered return the existing record (and `trained_dir` is removed).
    """
    from rsi.models.embedded.weights import adapter_digest

    trained_dir = Path(trained_dir)
    clean_adapter_folder(trained_dir)
    digest = adapter_digest(trained_dir)
    root = workspace.adapters_dir
    final = root / digest
    if (final / LINEAGE_FILE).is_file():
        shutil.rmtree(trained_dir, ignore_errors=True)
        return load_adapter_record(final)
    record = AdapterLineage.model_validate({**lineage, "id": digest, "created": datetime.now(UTC)})
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".tmp-{digest[:12]}-", dir=root))
    try:
        shutil.move(str(trained_dir), str(staging / ADAPTER_SUBDIR))
        write_json_atomic(staging / LINEAGE_FILE, record.model_dump(mode="json", by_alias=True))
        write_json_atomic(staging / STATUS_FILE, AdapterStatus(updated=datetime.now(UTC)).model_dump(mode="json"))
        if final.exists():  # a marker-less leftover of an interrupted registration
            shutil.rmtree(final)
        os.replace(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return load_adapter_record(final)


def load_adapter_record(folder: Path) -> AdapterRecord:
    lineage = AdapterLineage.model_validate(json.loads((folder / LINEAGE_FILE).read_text(encoding="utf-8")))
    status_path = folder / STATUS_FILE
    if status_path.is_file():
        status = AdapterStatus.model_validate(json.loads(status_path.read_text(encoding="utf-8")))
    else:
        status = AdapterStatus(updated=lineage.created)
    return AdapterRecord(id=lineage.id, folder=folder, adapter_dir=folder / ADAPTER_SUBDIR, lineage=lineage,
                         status=status)


def list_adapters(workspace: Workspace) -> list[AdapterRecord]:
    """Every registered adapter revision, oldest first (temporary folders are not revisions)."""
    root = workspace.adapters_dir
    if not root.is_dir():
        return []
    records = [load_adapter_record(p) for p in root.iterdir() if not p.name.startswith(".") and (p / LINEAGE_FILE).is_file()]
    return sorted(records, key=lambda r: (r.lineage.created, r.id))


def find_adapter(workspace: Workspace, ref: str) -> AdapterRecord:
    """The adapter whose id starts with `ref` (at least 6 hex digits) or whose `<name>@<prefix>` matches."""
    name, _, prefix = ref.rpartition("@") if "@" in ref else ("", "", ref)
    prefix = prefix.lower()
    if len(prefix) < 6:
        raise UserInputError(f"adapter id {ref!r}: give at least 6 hex digits", hint="`rsi adapters list` shows ids")
    matches = [r for r in list_adapters(workspace) if r.id.startswith(prefix) and (not name or r.lineage.name == name)]
    if not matches:
        raise UserInputError(f"no adapter {ref!r} in {workspace.adapters_dir}", hint="`rsi adapters list` shows ids")
    if len(matches) > 1:
        raise UserInputError(f"adapter id {ref!r} is ambiguous ({len(matches)} match)", hint="give more digits")
    return matches[0]


def update_status(record: AdapterRecord, **changes: Any) -> AdapterRecord:
    """Write a new status.json for `record` (atomic), merging `changes` into the current status."""
    data = record.status.model_dump(mode="json")
    data.update(changes)
    data["updated"] = datetime.now(UTC)
    status = AdapterStatus.model_validate(data)
    write_json_atomic(record.folder / STATUS_FILE, status.model_dump(mode="json"))
    return record.model_copy(update={"status": status})
