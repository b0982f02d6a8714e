"""The generation record: one JSON state file per generation, written atomically after every change.

    runs/generations/
      g0001/
        state.json        GenerationState: inputs, per-step status and outputs, summary
        dataset/          the exported SFT dataset of this generation (train.jsonl + manifest.json)
      g0002/ ...
      lineage.png         `rsi lineage --plot` (coverage, lift and retention across generations)
      nightly.lock        held by `rsi nightly` while it runs

A step is `pending`, `running`, `done`, `skipped` (it had nothing to do, with the reason) or `failed`
(with the error). `tries` counts how often a step was started, so a resumed generation proves it did
not redo finished work. The file is replaced by rename (temp file, fsync, `os.replace`): a SIGKILL
leaves the previous complete state, never half of one.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from rsi.atomic import write_json_atomic
from rsi.contracts.records import EMPTY_IS_NONE, none_as_empty
from rsi.errors import UserInputError
from rsi.generation.outputs import GenerationSummary, Output
from rsi.workspace import Workspace

STATE_FILE = "state.json"
STATE_SCHEMA = "rsi-generation/1"
STEPS = ("run", "promote", "propose", "harvest", "export", "train", "evaluate", "promote_adapter")
ID_PATTERN = re.compile(r"^g(\d{4,})$")

StepStatus = Literal["pending", "running", "done", "skipped", "failed"]


def now_utc() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


class StepRecord(BaseModel):
    status: StepStatus = "pending"
    tries: int = Field(default=0, description="Times this step was started (a resume does not restart done steps).")
    started: datetime | None = None
    finished: datetime | None = None
    outputs: dict[str, Any] = Field(default_factory=dict)
    reason: str = Field(default="", description="Why it was skipped, or the error it failed with.")

    @property
    def finished_ok(self) -> bool:
        return self.status in ("done", "skipped")


class GenerationState(BaseModel):
    """One generation's record (state.json)."""

    schema_id: str = Field(default=STATE_SCHEMA, alias="schema")
    id: str
    number: int
    created: datetime
    updated: datetime
    status: Literal["running", "done", "failed"] = "running"
    spec: dict[str, Any]
    inputs: dict[str, Any] = Field(default_factory=dict)
    steps: dict[str, StepRecord] = Field(default_factory=lambda: {name: StepRecord() for name in STEPS})
    summary: Annotated[GenerationSummary | None, EMPTY_IS_NONE, none_as_empty()] = Field(
        default=None, description="Written when the generation is done (None; {} in the JSON, before).")

    model_config = {"populate_by_name": True}

    def step(self, name: str) -> StepRecord:
        return self.steps.setdefault(name, StepRecord())

    def output(self, step: str, key: str, default: Any = None) -> Any:
        return self.step(step).outputs.get(key, default)

    def outputs(self, kind: type[Output]) -> Output:
        """A step's outputs as its typed record, e.g. `state.outputs(TrainOutput).candidate_ref`."""
        return kind.model_validate(self.step(kind.STEP).outputs)


def generations_dir(workspace: Workspace) -> Path:
    return workspace.runs_dir / "generations"


def state_path(workspace: Workspace, generation_id: str) -> Path:
    return generations_dir(workspace) / generation_id / STATE_FILE


def write_state(workspace: Workspace, state: GenerationState) -> GenerationState:
    """Replace state.json atomically (and durably) with `state`, stamped `updated`."""
    state = state.model_copy(update={"updated": now_utc()})
    path = state_path(workspace, state.id)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, state.model_dump(mode="json", by_alias=True))
    return state


def read_state(workspace: Workspace, generation_id: str) -> GenerationState:
    path = state_path(workspace, generation_id)
    if not path.is_file():
        raise UserInputError(f"no generation {generation_id} ({path} is missing)", hint="`rsi lineage` lists generations")
    try:
        return GenerationState.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except ValueError as error:
        raise UserInputError(f"{path}: not a generation record: {error}") from error


def list_generations(workspace: Workspace) -> list[GenerationState]:
    """Every recorded generation, by number."""
    root = generations_dir(workspace)
    if not root.is_dir():
        return []
    found = []
    for folder in root.iterdir():
        if ID_PATTERN.match(folder.name) and (folder / STATE_FILE).is_file():
            found.append(read_state(workspace, folder.name))
    return sorted(found, key=lambda s: s.number)


def new_generation_id(existing: list[GenerationState]) -> tuple[str, int]:
    number = max((s.number for s in existing), default=0) + 1
    return f"g{number:04d}", number
