"""Typed records the run report is made of: what extraction produces and rendering reads.

Pure data. `RunReport` holds everything the HTML page shows except the transcripts, which travel
separately as `Transcript` records (one per attempt that left a trajectory file) because they are
the bulk of the bytes and the page loads them lazily.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from rsi.run.summary import RunSummary

VERDICTS = ("passed", "failed", "timeout", "error")


class ConfigColumn(BaseModel):
    """One configuration: a column of the matrix and a line of the portfolio chart."""

    index: int
    config_hash: str
    name: str
    contract_ref: str = ""
    attempts: int = Field(default=0, description="Counted attempts (errors excluded).")
    passes: int = 0
    errors: int = 0
    tasks_solved: int = Field(default=0, description="Target tasks this configuration solved in the run.")
    unique_solves: int = Field(default=0, description="Target tasks only this configuration solved.")
    tokens: int = 0
    wall_s: float = 0.0


class TaskLineRecord(BaseModel):
    """One task: a row of the matrix."""

    index: int
    key: str
    split: str = ""
    tags: list[str] = Field(default_factory=list)
    target: bool = Field(default=True, description="A target task of the run (its coverage counts).")


class AttemptLine(BaseModel):
    """One attempt as the matrix and the search list it; its transcript is looked up by `n`."""

    n: int = Field(description="Chronological position in the run, from 0.")
    job: int
    config: int = Field(description="Index into RunReport.configs.")
    task: int = Field(description="Index into RunReport.tasks.")
    attempt_index: int = 0
    verdict: str
    reason: str = ""
    error_class: str = ""
    tokens: int = 0
    wall_s: float = 0.0
    started: str = ""
    error_retries: int = 0
    trajectory_path: str = ""


class CellRecord(BaseModel):
    """One configuration x task cell: verdict counts and the attempts behind them."""

    config: int
    task: int
    counts: dict[str, int] = Field(description="verdict -> attempts with that verdict.")
    attempts: list[int] = Field(description="AttemptLine.n of the cell's attempts, chronological.")


class JobFact(BaseModel):
    """What the scheduler knew when it planned a job, what it chose and what came of it."""

    job_index: int
    config_name: str
    status: str
    tasks_planned: int
    attempts_per_task: int
    open_before: int = Field(description="Target tasks still uncovered when the job was planned.")
    planned_open: int = Field(description="Planned tasks that were still uncovered.")
    attempts: int
    passes: int
    errors: int
    new_covered: int
    covered_after: int
    tokens: int
    wall_s: float
    reason: str = Field(default="", description="The stored reason, '' when the page shows it once for all jobs.")
    details: dict[str, Any] = Field(default_factory=dict, description="Other stored job details, as recorded.")


class PortfolioSeries(BaseModel):
    """The portfolio chart: union coverage and each configuration's own coverage after each job."""

    jobs: list[int] = Field(description="Job index after which each point is taken, chronological.")
    union: list[int]
    per_config: dict[str, list[int]] = Field(description="Configuration name -> its own cumulative coverage.")
    best: str = Field(default="", description="The best single configuration (most target tasks solved).")
    best_covered: int = 0
    total: int = Field(description="Target tasks of the run.")


class SplitLine(BaseModel):
    """Coverage and pass rate of one split (train / heldout) among the tasks the run touched."""

    split: str
    tasks: int
    covered: int
    attempts: int
    passes: int
    solved_by_config: dict[str, int] = Field(default_factory=dict)


class RunReport(BaseModel):
    """Everything the run report shows, transcripts aside."""

    summary: RunSummary
    scheduler: str = ""
    configs: list[ConfigColumn]
    tasks: list[TaskLineRecord]
    attempts: list[AttemptLine]
    cells: list[CellRecord]
    jobs: list[JobFact]
    common_reason: str = Field(default="", description="The reason every job shares (numbers as N), if any.")
    common_details: dict[str, Any] = Field(default_factory=dict, description="Job details equal for every job.")
    portfolio: PortfolioSeries
    splits: list[SplitLine]
    tags: list[str]


class StepView(BaseModel):
    """One step of a transcript as the viewer shows it."""

    source: str
    turn: int | None = None
    message: str = ""
    code: str | None = None
    observation: str | None = None
    specialist: str | None = None
    route_reason: str = ""
    error: bool = False
    timed_out: bool = False
    check: str = Field(default="", description="The public checks run on this step's candidate, in words ('' none).")
    tokens: int = 0
    latency_s: float = 0.0


class Transcript(BaseModel):
    """One attempt's conversation and outcome, read tolerantly from its trajectory file."""

    n: int
    attempt_id: str = ""
    model: str = ""
    seed: int = 0
    sandbox: dict[str, Any] = Field(default_factory=dict, description="The sandbox's isolation record.")
    steps: list[StepView] = Field(default_factory=list)
    final_code: str | None = None
    solution_file: str = ""
    verdict: str = ""
    reason: str = ""
    ended_by: str = ""
    verifier_wall_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    turns: int = 0
    wall_s: float = 0.0
    tools_saved: list[str] = Field(default_factory=list)
    layer_scores: dict[str, float] = Field(default_factory=dict, description="The verifier's layer scores (ui kind).")
    screenshot: str = Field(default="", description="The verifier's screenshot as a data:image/png URI ('' for none).")
    screenshot_note: str = Field(default="", description="Why a named screenshot is not shown ('' when it is or none).")
    problem: str = Field(default="", description="Why the file could not be read ('' when it was).")
