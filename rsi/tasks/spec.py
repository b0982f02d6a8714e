"""The task format (data only). See docs/tasks.md for the on-disk layout:

    tasks/<suite>/suite.toml                 optional defaults for every task of the suite
    tasks/<suite>/<task-id>/task.toml         this model
    tasks/<suite>/<task-id>/instruction.md    what the agent is told
    tasks/<suite>/<task-id>/environment/      copied into the attempt's working directory
    tasks/<suite>/<task-id>/tests/            the hidden verifier (test.sh, or test_*.py run by pytest)
    tasks/<suite>/<task-id>/solution/         optional reference solution (used by `rsi tasks check`)
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rsi.sandbox.base import Limits


class TaskSpec(BaseModel):
    """`task.toml` (after suite defaults are applied)."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    title: str = Field(min_length=1)
    split: Literal["train", "heldout"] = "train"
    tags: list[str] = Field(default_factory=list)
    difficulty: Literal["trivial", "easy", "medium", "hard"] = "easy"
    solution_file: str = Field(default="solution.py", description="File the agent must write (what the verifier reads).")
    agent_timeout_s: float = Field(default=300.0, gt=0)
    verifier_timeout_s: float = Field(default=60.0, gt=0)
    limits: Limits = Field(default_factory=Limits)


class Task(BaseModel):
    """A loaded task: its spec, where it lives, its instruction and its content hash."""

    model_config = ConfigDict(frozen=True)
    suite: str
    spec: TaskSpec
    root: Path
    instruction: str
    content_hash: str = Field(description="Hash of instruction, environment, tests and spec (decontamination key).")

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def key(self) -> str:
        return f"{self.suite}/{self.spec.id}"

    @property
    def environment_dir(self) -> Path:
        return self.root / "environment"

    @property
    def tests_dir(self) -> Path:
        return self.root / "tests"

    @property
    def solution_dir(self) -> Path:
        return self.root / "solution"
