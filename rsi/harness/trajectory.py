"""The trajectory schema: one JSON document per attempt, versioned, written atomically.

Modelled on Harbor's ATIF (Agent Trajectory Interchange Format): a header saying who acted on what
(task, configuration, model, sandbox), an ordered list of steps each with a `source`
(system / user / agent / environment), and final metrics. See docs/trajectories.md for the field
guide. Pydantic models, so a trajectory read back equals the one written.

What is deliberately NOT stored: the hidden verifier's output (tests, expected values). Trajectories
become training data, and a model trained on verifier output would learn the test, not the task.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rsi.atomic import write_text_atomic
from rsi.errors import UserInputError
from rsi.sandbox.base import Isolation

# The public checks' records live beside the verdict (a task kind's public-checks runner, below the harness,
# makes them); re-exported here, where the trajectory holds them.
from rsi.verdict import CheckRecord as CheckRecord
from rsi.verdict import ExampleCheck as ExampleCheck
from rsi.verdict import Verdict
from rsi.verdict import clean_text as clean_text

SCHEMA_VERSION: Literal["rsi-trajectory/1"] = "rsi-trajectory/1"

StepSource = Literal["system", "user", "agent", "environment"]
TurnKind = Literal["first", "after_error", "after_output"]


def utc_now() -> datetime:
    return datetime.now(UTC)


def _clean(value: object) -> object:
    return clean_text(value) if isinstance(value, str) else value


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TaskRef(_Model):
    """Which task was attempted, pinned by content."""

    key: str = Field(description="suite/task-id.")
    suite: str
    id: str
    content_hash: str = Field(description="Hash of the task's instruction, environment, tests and spec.")
    solution_file: str = Field(description="The file the agent had to write.")


class ConfigurationRef(_Model):
    """Which configuration the attempt ran under, pinned by content."""

    name: str
    contract_ref: str
    config_hash: str
    substrate: Literal["repl", "text"]
    prompt_style: str
    tool_library: str = Field(default="", description="Tool library revision imported by the agent ('' for none).")


class ModelRef(_Model):
    name: str = Field(description="The ChatModel's name (backend and model).")
    base_id: str = Field(default="", description="`[base].id` of the contract.")
    dtype: str = Field(default="", description="Number format the weights were served in, as loaded "
                       "('' where the backend cannot say: a remote endpoint, a scripted model).")


class RoutingDecision(_Model):
    """Which specialist acted on a turn and why (an observable action, Mixture-of-LoRA)."""

    specialist: str | None = Field(description="Specialist name; None is the bare base model.")
    turn_kind: TurnKind
    reason: str = Field(description="'fixed', 'rule N', 'no rule matched', or 'learned rN: <scores> (<features>)'.")


class StepMetrics(_Model):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    finish_reason: str = ""
    cache: Literal["", "hit", "miss"] = Field(default="", description="The response cache's part in this reply: "
                                              "'hit' (served from it), 'miss' (made now and kept), '' (not cached).")
    cached_from: str | None = Field(default=None, description="On a hit: the run (or evaluation) that first made it.")


class Execution(_Model):
    """How the step's code ran in the REPL."""

    error: bool = Field(description="The cell raised, timed out, or the session died.")
    timed_out: bool = False
    session_died: bool = False
    output_bytes: int = Field(default=0, description="Bytes the cell wrote, before truncation.")
    wall_s: float = 0.0


class Step(_Model):
    """One step: a prompt, an agent reply (with its code and what running it showed), or an event."""

    step_id: int = Field(ge=1)
    source: StepSource
    timestamp: datetime = Field(default_factory=utc_now)
    turn: int | None = Field(default=None, description="Agent turn number (1-based), for agent steps.")
    message: str = Field(default="", description="Text of the step: prompt, raw model reply, or event.")
    code: str | None = Field(default=None, description="Code extracted from the reply (None: no code block).")
    observation: str | None = Field(default=None, description="What the agent was shown back (truncated).")
    routing: RoutingDecision | None = None
    execution: Execution | None = None
    metrics: StepMetrics | None = None
    check: CheckRecord | None = Field(default=None, description="Public checks run on this step's candidate.")

    _texts = field_validator("message", "code", "observation", mode="before")(_clean)


class SavedToolRecord(_Model):
    """A helper kept with `save_tool` during this attempt (candidate for the tool library)."""

    name: str
    function: str
    source: str = Field(description="Source from inspect.getsource; '' when it could not be recovered.")
    cell: str = Field(description="The full cell that defined and saved it (fallback source).")
    turn: int

    _texts = field_validator("name", "function", "source", "cell", mode="before")(_clean)


class ExemplarRef(_Model):
    """A worked example put before the task (`harness.exemplars`): which library entry, and how similar."""

    library: str = Field(description="Experience library revision.")
    task_key: str
    entry: str = Field(description="Entry id: <task key>#<normalized-code key>.")
    attempt_id: str = Field(description="The attempt that found the solution.")
    score: float = Field(description="BM25 score of its instruction against this task's.")


class AttemptEnding(BaseModel):
    """How an attempt ended: the trajectory's FinalOutcome and the executors' AttemptOutcome
    (rsi.harness.attempt) both carry it, the second copied from the first."""

    verdict: Verdict
    reason: str = ""
    error_class: str = Field(default="", description="Exception class of an infrastructure error ('' otherwise).")
    ended_by: str = Field(default="", description="submit, end_marker, max_turns, agent_timeout, session_died, text, error.")
    reward: float = 0.0


class FinalOutcome(_Model, AttemptEnding):
    verifier_wall_s: float = 0.0
    layer_scores: dict[str, float] = Field(
        default_factory=dict, description="The verifier's per-layer share of passed checks (ui kind: viability, task, "
        "interaction, constraints, visual); empty for kinds without layers.")
    artifacts: dict[str, str] = Field(
        default_factory=dict, description="Files the verifier kept (ui kind: screenshot, checks), name -> path relative "
        "to the attempt folder (the trajectory's own folder).")
    final_code: str | None = Field(default=None, description="The solution file as verified (None: not written).")

    _texts = field_validator("reason", "final_code", mode="before")(_clean)


class FinalMetrics(_Model):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = Field(default=0, description="Replies served from the response cache (rsi.models.cache).")
    cache_misses: int = Field(default=0, description="Cacheable replies the model made now (and the cache kept).")
    tokens_not_spent: int = Field(default=0, description="Prompt + completion tokens of the cache's replies: counted "
                                  "in the tokens above (the configuration's price), not spent by the model this time.")
    turns: int = 0
    wall_s: float = 0.0
    model_wait_s: float = Field(default=0.0, description="Of wall_s, the time spent queued for or waiting on the "
                                "model: ours, not the agent's (its agent_s budget excludes it).")


class Trajectory(_Model):
    """One attempt, start to verdict."""

    schema_version: Literal["rsi-trajectory/1"] = SCHEMA_VERSION
    attempt_id: str
    task: TaskRef
    configuration: ConfigurationRef
    model: ModelRef
    sandbox: Isolation | None = None
    seed: int = 0
    started_at: datetime = Field(default_factory=utc_now)
    finished_at: datetime | None = None
    steps: list[Step] = Field(default_factory=list)
    tools_saved: list[SavedToolRecord] = Field(default_factory=list)
    exemplars: list[ExemplarRef] = Field(default_factory=list, description="Worked examples retrieved before the task.")
    outcome: FinalOutcome | None = None
    final_metrics: FinalMetrics = Field(default_factory=FinalMetrics)

    def add_step(self, source: StepSource, **fields: object) -> Step:
        step = Step(step_id=len(self.steps) + 1, source=source, **fields)  # type: ignore[arg-type]
        self.steps.append(step)
        return step


def write_trajectory(trajectory: Trajectory, path: Path) -> Path:
    """Write atomically (temp file in the same folder, fsync, rename): a reader never sees half a file."""
    return write_text_atomic(path, trajectory.model_dump_json(indent=2))


def stored_trajectory_path(stored: str, base: Path | None) -> Path | None:
    """The file an attempt row's `trajectory_path` names: absolute as stored, or relative to `base` (the runs
    folder); None when the row has no trajectory."""
    if not stored:
        return None
    path = Path(stored)
    return path if path.is_absolute() or base is None else base / path


def read_trajectory(path: Path) -> Trajectory:
    """Read one trajectory file; a clear UserInputError if it is missing or not a trajectory."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise UserInputError(f"{path}: no such trajectory file") from error
    except (OSError, ValueError) as error:
        raise UserInputError(f"{path}: not a JSON trajectory ({error})") from error
    if not isinstance(raw, dict) or raw.get("schema_version") != SCHEMA_VERSION:
        found = raw.get("schema_version") if isinstance(raw, dict) else None
        raise UserInputError(
            f"{path}: schema_version: expected {SCHEMA_VERSION!r}, found {found!r}",
            hint="this file was not written by this version of `rsi attempt`",
        )
    try:
        return Trajectory.model_validate(raw)
    except ValueError as error:
        first = str(error).splitlines()
        raise UserInputError(f"{path}: invalid trajectory: {' '.join(first[:3])}") from error
