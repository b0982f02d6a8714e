"""What a run is asked to do (`RunSpec`) and what it returns (`RunOutcome`; its progress on the way,
`RunProgress` and `RunEvent`, lives beside the display in rsi/display.py).

`RunSpec` is the one model behind `rsi run`: a TOML file (`rsi run --spec FILE`) produces it, and
every flag overrides the field of the same name. `None` means "take it from the portfolio's
contract" (`[evaluation]`: suite, split, attempts per task, seed). Budgets are the exception: the
budgets given (attempts, tokens, minutes) are the run's whole budget, and the contract's
`attempts_budget` applies only when none is given (`resolve_budgets`); `describe_budgets` is the
start line that names each active budget and where it came from. Pure data.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from rsi.errors import Problem, ValidationError
from rsi.executors.registry import ExecutorName
from rsi.executors.slurm import SlurmOptions
from rsi.sandbox.select import SandboxName
from rsi.scheduler.registry import scheduler_name


class RunSpec(BaseModel):
    """One `rsi run`: which configurations on which tasks, under which budget, on which executor."""

    model_config = ConfigDict(extra="forbid")
    portfolio: str = Field(default="default", description="Portfolio name under portfolios/.")
    suite: str | None = Field(default=None, description="Task suite; default: the contract's evaluation.suite.")
    split: Literal["train", "heldout", "all"] | None = Field(default=None, description="Default: evaluation.split.")
    budget_attempts: int | None = Field(
        default=None, ge=1,
        description="Counted attempts; default: evaluation.attempts_budget, only when no other budget is given.")
    budget_tokens: int | None = Field(default=None, ge=1, description="Stop once this many tokens were spent (default: no limit).")
    budget_minutes: float | None = Field(default=None, gt=0, description="The run's wall time: planning stops before it, and at it queued attempts are dropped and "
                                         "started ones get `stop_grace_s` (default: no limit).")
    budget_sources: dict[str, str] = Field(
        default_factory=dict,
        description="Where each budget given came from, by kind (attempts, tokens, minutes): a flag or the "
                    "spec file. `rsi run` fills it; the start line shows it (default: 'given').",
    )
    retire: bool = Field(
        default=False,
        description="Retire a configuration that passed none of its first attempts and whose passes per unit of cost "
                    "are surely below another's (rsi.scheduler.retire). Off by default: on held-out seeds it cost 1.40x "
                    "more to full coverage where configurations are complementary (bench/RESULTS.md "
                    "'scheduler_efficiency, by cost'); weighing by cost alone was better in every regime measured.",
    )
    target_coverage: float | None = Field(
        default=None, gt=0, le=1,
        description="Stop planning jobs once this share of the run's target tasks is covered (0.95: the last "
                    "few percent of a real suite are often unreachable and cost the most).",
    )
    attempts_per_task: int | None = Field(default=None, ge=1, description="Attempts per task in a job; default: evaluation.attempts_per_task.")
    job_size: int = Field(default=8, ge=1, description="Most tasks one job targets.")
    scheduler: Annotated[str, AfterValidator(scheduler_name)] = Field(
        default="thompson", description="Job policy (rsi.scheduler registry): thompson, or a baseline to compare with."
    )
    executor: ExecutorName = Field(default="local", description="Where attempts run (rsi.executors.registry).")
    workers: int | None = Field(default=None, ge=1, description="Attempts at once (local threads, or SLURM array parallelism).")
    overlap_jobs: bool = Field(
        default=True,
        description="Plan the next job while the last one's attempts finish, so no worker idles between jobs. "
                    "False: one job at a time (the plan is then a pure function of the seed).",
    )
    stop_grace_s: float = Field(
        default=5.0, ge=0, le=600,
        description="On SIGINT/SIGTERM, or when the time budget runs out, how long started attempts may finish (and be "
        "recorded) before they are cancelled (their keys stay planned: `--resume` runs them).",
    )
    sandbox: SandboxName = Field(default="auto", description="Sandbox backend for attempts (rsi.sandbox.select).")
    seed: int | None = Field(default=None, description="Scheduling and sampling seed; default: evaluation.seed.")
    db: str | None = Field(default=None, description="Store URL; default: RSI_DB or runs/rsi.sqlite.")
    limit_tasks: int | None = Field(default=None, ge=1, description="Only the first N tasks (a small slice for demos/tests).")
    difficulty: list[Literal["trivial", "easy", "medium", "hard"]] | None = Field(
        default=None, description="Only tasks of these difficulties (applied before limit_tasks)."
    )
    report: bool = Field(default=True, description="`rsi run` writes runs/<run>/report.html when the run returns.")
    resume: str | None = Field(default=None, description="Resume this run id (its stored plan wins over other fields).")
    max_error_retries: int = Field(default=2, ge=0, le=10, description="Retries of an attempt ending in an infrastructure error.")
    retry_backoff_s: float = Field(default=1.0, ge=0, description="First retry delay; doubles on each retry.")
    slurm: SlurmOptions = Field(default_factory=SlurmOptions)


def load_run_spec(path: Path) -> RunSpec:
    """A RunSpec from a TOML file; every problem named with file, line and key (exit code 2)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ValidationError([Problem(path, None, "", f"cannot read: {error.strerror}")]) from error
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        line = getattr(error, "lineno", None)
        raise ValidationError([Problem(path, line, "", f"invalid TOML: {error}")]) from error
    return validate_run_spec(data, path, text)


def validate_run_spec(data: dict[str, Any], source: Path | str = "<flags>", text: str = "") -> RunSpec:
    try:
        return RunSpec.model_validate(data)
    except PydanticValidationError as error:
        problems = []
        for item in error.errors():
            key = ".".join(str(part) for part in item["loc"])
            message = str(item["msg"]).removeprefix("Value error, ")  # a registry's own words
            problems.append(Problem(source, _line_of(text, str(item["loc"][-1])) if text else None, key, message))
        raise ValidationError(problems) from error


def _line_of(text: str, key: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip().startswith((f"{key} ", f"{key}=")):
            return number
    return None


class ResolvedRun(BaseModel):
    """A RunSpec with every default filled from the contract: what the run row stores, what resume reads."""

    model_config = ConfigDict(frozen=True)
    portfolio: str
    suite: str
    split: Literal["train", "heldout", "all"]
    budget_attempts: int | None = Field(description="None: no attempts limit (another budget was given).")
    budget_tokens: int | None
    budget_minutes: float | None
    budget_sources: dict[str, str] = Field(default_factory=dict, description="Kind -> where it came from.")
    attempts_per_task: int
    job_size: int
    scheduler: str = "thompson"
    seed: int
    limit_tasks: int | None
    difficulty: list[str] | None = None
    max_error_retries: int
    retry_backoff_s: float
    target_coverage: float | None = None
    retire: bool = False
    seeding: Literal["per-job", "paired"] = Field(
        default="per-job",
        description="per-job: each job draws its own seeds; paired: every job draws the same seed for a (task, "
                    "attempt), so jobs that compare configurations differ in the configuration only (rsi eval).",
    )


BUDGET_KINDS = (("attempts", "budget_attempts", "attempts"), ("tokens", "budget_tokens", "tokens"),
                ("minutes", "budget_minutes", "min"))


def resolve_budgets(spec: RunSpec, contract_attempts: int, contract: str) -> dict[str, Any]:
    """The run's budgets: those the spec gives, and nothing else; the contract's attempts budget only
    when the spec gives none (a user who says `--budget-minutes 25` means 25 minutes, not "25 minutes
    or the contract's 120 attempts, whichever ends first"). Returns ResolvedRun's budget fields."""
    given = {kind: getattr(spec, field) for kind, field, _ in BUDGET_KINDS if getattr(spec, field) is not None}
    sources = {kind: spec.budget_sources.get(kind, "given") for kind in given}
    attempts = spec.budget_attempts
    label = f"contract {contract} [evaluation] attempts_budget"
    if not given:
        attempts = contract_attempts
        sources["attempts"] = f"{label}; a --budget-* flag replaces it"
    elif attempts is None:
        sources["attempts"] = f"{label} ({contract_attempts}) dropped: another budget was given"
    return {"budget_attempts": attempts, "budget_tokens": spec.budget_tokens, "budget_minutes": spec.budget_minutes,
            "budget_sources": sources}


def describe_budgets(r: ResolvedRun) -> str:
    """Every active budget of a run and where it came from, and the limits it does not have: the line
    `rsi run` prints at start (and on resume)."""
    active, unlimited = [], []
    for kind, field, unit in BUDGET_KINDS:
        value = getattr(r, field)
        if value is None:
            unlimited.append(kind)
            continue
        source = r.budget_sources.get(kind, "")
        shown = f"{value:g}" if isinstance(value, float) else str(value)
        active.append(f"{shown} {unit}" + (f" ({source})" if source else ""))
    text = "budget " + (", ".join(active) or "none")
    if unlimited:
        text += f"; no {' or '.join(unlimited)} limit"
        dropped = r.budget_sources.get("attempts") if r.budget_attempts is None else None
        text += f" ({dropped})" if dropped else ""
    if r.target_coverage is not None:
        text += f"; stops at {r.target_coverage:.0%} coverage"
    return text


class RunOutcome(BaseModel):
    """What `run_portfolio` returns."""

    run_id: str
    status: Literal["done", "stopped", "failed"]
    stop_reason: str
    jobs: int
    attempts: int
    passes: int
    errors: int
    covered: int
    tasks: int
    tokens: int
    elapsed_s: float = Field(description="Wall time of the run: its sessions, as the time budget counts.")
    split: str = Field(default="", description="The split of the run's target tasks (the coverage denominator).")
    budget: str = Field(default="", description="Every active budget and where it came from (the start line's words).")
    report_path: str = Field(default="", description="The report `rsi run` wrote after the run returned ('': none).")
    model_use: list[str] = Field(default_factory=list, description="Per in-process model: how busy the run kept it.")
    cache_hits: int = Field(default=0, description="Replies served from the response cache (rsi.models.cache).")
    cache_misses: int = Field(default=0, description="Cacheable replies the model made and the cache kept.")
    tokens_not_spent: int = Field(default=0, description="Of `tokens`, those of the replies the cache served.")

    @property
    def coverage_text(self) -> str:
        from rsi.run.summary import coverage_text

        return coverage_text(self.covered, self.tasks, self.split or "all")
