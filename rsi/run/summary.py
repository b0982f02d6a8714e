"""A run's numbers for `rsi status`, `rsi coverage` and `rsi report`: one pure fold over its rows.

`build_summary` takes the rows (run, jobs, attempts, configurations) and returns a `RunSummary`
(pure, tested directly); `summarize_run(store, run_id)` reads them. The same model is what
`--json` prints, so the tables, the JSON and the HTML report never disagree.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from rsi.store.rows import AttemptRow, JobRow, RunRow, planned_keys


class TaskLine(BaseModel):
    task_key: str
    attempts: int = Field(description="Counted attempts (errors excluded).")
    passes: int
    errors: int = Field(description="Infrastructure errors, retried ones included.")
    first_pass_job: int | None = None
    solved_by: list[str] = Field(default_factory=list, description="Configuration names with a pass.")
    tried_by: list[str] = Field(default_factory=list, description="Configuration names with a counted attempt.")


class ConfigLine(BaseModel):
    config_hash: str
    name: str
    jobs: int
    attempts: int
    passes: int
    errors: int
    tasks_solved: int
    unique_solves: int = Field(description="Tasks this configuration alone solved in the run.")
    tokens: int
    retired: dict[str, Any] | None = Field(default=None, description=(
        "Why the retirement rule (rsi.scheduler.retire) stopped planning it in this run: its passes, attempts, "
        "cost per attempt and 95% bounds of passes per cost, and the configuration it lost to (None: not retired)."))

    @property
    def pass_rate(self) -> float:
        return self.passes / self.attempts if self.attempts else 0.0


class JobLine(BaseModel):
    job_index: int
    config_name: str
    status: str
    planned: int
    attempts: int
    passes: int
    errors: int
    new_covered: int = Field(description="Tasks this job covered for the first time in the run.")
    reason: str = Field(default="", description="Why the scheduler planned this job.")


class RunSummary(BaseModel):
    """Everything the read-only commands show about one run."""

    run_id: str
    status: str
    portfolio: str
    suite: str
    split: str
    created: datetime
    finished: datetime | None
    seed: int
    budget: dict[str, Any]
    jobs: int
    jobs_open: int
    attempts: int
    passes: int
    errors: int
    tokens: int = Field(description="Prompt + completion tokens of the counted attempts.")
    wall_s: float = Field(description="Wall time of the run: the time its sessions ran (`rsi run` and each "
                                      "`--resume`), as its time budget counts it and `rsi run` shows it.")
    wall_from: str = Field(default="sessions", description="Where wall_s comes from: 'sessions' (the run folder's "
                                                           "state), else 'created to finished' (pauses included).")
    attempt_s: float = Field(default=0.0, description="Sum of the counted attempts' own wall times (attempts run "
                                                      "side by side, so this exceeds wall_s).")
    tasks: int = Field(description="Target tasks of the run: the coverage denominator of its split.")
    covered: int
    covered_keys: list[str]
    curve: list[int] = Field(description="Covered target tasks after each counted attempt, in order.")
    task_lines: list[TaskLine]
    config_lines: list[ConfigLine]
    job_lines: list[JobLine]

    @property
    def coverage(self) -> float:
        return self.covered / self.tasks if self.tasks else 0.0

    @property
    def pass_rate(self) -> float:
        return self.passes / self.attempts if self.attempts else 0.0

    @property
    def coverage_text(self) -> str:
        """The coverage every command prints: covered / the run's target tasks, the split named."""
        return coverage_text(self.covered, self.tasks, self.split)

    @property
    def budget_used(self) -> float:
        total = self.budget.get("attempts") or 0
        return self.attempts / total if total else 0.0


def _config_lines(per_config: dict[str, dict[str, Any]], jobs: Sequence[JobRow], config_names: dict[str, str]) -> list[ConfigLine]:
    """Per configuration, most passes first; configurations with jobs but no counted attempt included."""
    solvers: dict[str, set[str]] = defaultdict(set)
    for config_hash, stats in per_config.items():
        for key in stats["solved"]:
            solvers[key].add(config_hash)
    jobs_by_config: dict[str, int] = defaultdict(int)
    for job_row in jobs:
        jobs_by_config[job_row.configuration_hash] += 1
    config_lines = [
        ConfigLine(
            config_hash=h, name=config_names.get(h, h), jobs=jobs_by_config.get(h, 0), attempts=s["a"],
            passes=s["p"], errors=s["e"], tasks_solved=len(s["solved"]),
            unique_solves=sum(1 for k in s["solved"] if solvers[k] == {h}), tokens=s["tok"],
        )
        for h, s in per_config.items()
    ]
    for h in jobs_by_config:
        if h not in per_config:
            config_lines.append(ConfigLine(config_hash=h, name=config_names.get(h, h), jobs=jobs_by_config[h],
                                           attempts=0, passes=0, errors=0, tasks_solved=0, unique_solves=0, tokens=0))
    from rsi.scheduler.retire import recorded

    retired = recorded(j.details or {} for j in sorted(jobs, key=lambda j: j.job_index))
    config_lines = [c.model_copy(update={"retired": retired[c.config_hash].to_json() if c.config_hash in retired else None})
                    for c in config_lines]
    config_lines.sort(key=lambda c: (-c.passes, c.name))
    return config_lines


def coverage_text(covered: int, tasks: int, split: str) -> str:
    """Coverage as every command words it: covered / target tasks of the split, then the share. The
    denominator is the run's target tasks of that split (tried or not), never the tasks attempted."""
    which = "tasks" if split == "all" else f"{split} tasks"
    return f"{covered}/{tasks} {which} ({covered / tasks if tasks else 0.0:.1%})"


def run_wall(run: RunRow, elapsed_s: float | None) -> tuple[float, str]:
    """The run's wall time and where it comes from: the sessions' time kept in its run folder
    (`elapsed_s`, as the time budget counts it), else the span of its store timestamps."""
    if elapsed_s is not None:
        return float(elapsed_s), "sessions"
    created = run.created
    end = run.finished or (datetime.now(UTC) if created.tzinfo else datetime.now(UTC).replace(tzinfo=None))
    return max(0.0, (end - created).total_seconds()), "created to finished"


def build_summary(run: RunRow, jobs: Sequence[JobRow], attempts: Sequence[AttemptRow], config_names: dict[str, str],
                  elapsed_s: float | None = None) -> RunSummary:
    """Fold a run's store rows into a RunSummary.

    `attempts` must be chronological (the store's `list_attempts` order). `elapsed_s` is the run's
    wall time from its run folder (`run_wall`); without it, its store timestamps' span.
    """
    target_keys: list[str] = planned_keys(run)[1] or sorted({a.task_key for a in attempts})
    targets = set(target_keys)
    per_task: dict[str, dict[str, Any]] = {k: {"a": 0, "p": 0, "e": 0, "first": None, "by": set(), "tried": set()} for k in target_keys}
    per_config: dict[str, dict[str, Any]] = defaultdict(lambda: {"a": 0, "p": 0, "e": 0, "tok": 0, "solved": set()})
    per_job: dict[int, dict[str, Any]] = defaultdict(lambda: {"a": 0, "p": 0, "e": 0, "new": 0})
    covered: set[str] = set()
    curve: list[int] = []
    tokens = 0
    wall_s = 0.0
    errors = 0
    for row in attempts:
        task = per_task.setdefault(row.task_key, {"a": 0, "p": 0, "e": 0, "first": None, "by": set(), "tried": set()})
        config = per_config[row.configuration_hash]
        job = per_job[row.job_index]
        retried = row.error_retries
        task["e"] += retried
        config["e"] += retried
        job["e"] += retried
        errors += retried
        if not row.counted:
            task["e"] += 1
            config["e"] += 1
            job["e"] += 1
            errors += 1
            continue
        task["a"] += 1
        task["tried"].add(config_names.get(row.configuration_hash, row.configuration_hash))
        config["a"] += 1
        job["a"] += 1
        config["tok"] += row.tokens
        tokens += row.tokens
        wall_s += row.wall_s
        if row.passed:
            task["p"] += 1
            config["p"] += 1
            job["p"] += 1
            task["by"].add(config_names.get(row.configuration_hash, row.configuration_hash))
            config["solved"].add(row.task_key)
            if task["first"] is None or row.job_index < task["first"]:
                task["first"] = row.job_index
            if row.task_key in targets and row.task_key not in covered:
                covered.add(row.task_key)
                job["new"] += 1
        curve.append(len(covered))
    config_lines = _config_lines(per_config, jobs, config_names)
    task_lines = [
        TaskLine(task_key=k, attempts=s["a"], passes=s["p"], errors=s["e"], first_pass_job=s["first"],
                 solved_by=sorted(s["by"]), tried_by=sorted(s["tried"]))
        for k, s in sorted(per_task.items())
    ]
    job_lines = [
        JobLine(
            job_index=j.job_index, config_name=config_names.get(j.configuration_hash, j.configuration_hash),
            status=j.status, planned=len(j.planned_tasks) * j.attempts_per_task, attempts=per_job[j.job_index]["a"],
            passes=per_job[j.job_index]["p"], errors=per_job[j.job_index]["e"], new_covered=per_job[j.job_index]["new"],
            reason=j.job_details.reason,
        )
        for j in sorted(jobs, key=lambda j: j.job_index)
    ]
    return RunSummary(
        run_id=run.id, status=run.status, portfolio=run.portfolio, suite=run.suite, split=run.split,
        created=run.created, finished=run.finished, seed=run.seed, budget=dict(run.budget or {}),
        jobs=len(jobs), jobs_open=sum(1 for j in jobs if j.status == "running"),
        attempts=sum(s["a"] for s in per_config.values()), passes=sum(s["p"] for s in per_config.values()),
        errors=errors, tokens=tokens, wall_s=run_wall(run, elapsed_s)[0], wall_from=run_wall(run, elapsed_s)[1],
        attempt_s=wall_s, tasks=len(targets), covered=len(covered),
        covered_keys=sorted(covered), curve=curve, task_lines=task_lines, config_lines=config_lines,
        job_lines=job_lines,
    )


def summarize_run(store: Any, run_id: str | None = None, run_dir: Callable[[str], Path] | None = None) -> RunSummary:
    """The summary of `run_id`, or of the latest run in the store; `run_dir` names a run's folder
    (its wall time is kept there: `run_elapsed`)."""
    from rsi.errors import UserInputError

    if run_id is None:
        runs = store.list_runs()
        if not runs:
            raise UserInputError("no runs in the store yet", hint="start one with `rsi run`")
        run = runs[-1]
    else:
        try:
            run = store.get_run(run_id)
        except Exception as error:
            known = [r.id for r in store.list_runs()][-5:]
            raise UserInputError(f"no run {run_id!r} in {store.url}",
                                 hint=f"latest runs: {', '.join(known) or 'none'}") from error
    jobs = store.list_jobs(run.id)
    attempts = store.list_attempts(run.id)
    hashes = {j.configuration_hash for j in jobs} | set(planned_keys(run)[0])
    names = {row.config_hash: row.name for row in store.list_configurations(hashes)}
    return build_summary(run, jobs, attempts, names, run_elapsed(run_dir(run.id)) if run_dir else None)


def run_elapsed(run_dir: Path) -> float | None:
    """The wall time of a run's sessions, from its folder's state file (None: no folder here)."""
    from rsi.run.setup import read_state

    value = read_state(run_dir).get("elapsed_s")
    return float(value) if isinstance(value, int | float) else None


def split_targets(store: Any, run_ids: Sequence[str], split: str) -> list[str]:
    """The target tasks of `split` of runs `run_ids` (one suite): the coverage denominator `rsi promote`
    and `rsi propose` share with `rsi coverage` (a run's target tasks, tried or not)."""
    keys: set[str] = set()
    suites: set[str] = set()
    for run_id in run_ids:
        run = store.get_run(run_id)
        suites.add(run.suite)
        keys.update(planned_keys(run)[1])
    if split == "all":
        return sorted(keys)
    splits = {info.key: info.split for suite in suites for info in store.list_tasks(suite)}
    return sorted(k for k in keys if splits.get(k) == split)


def run_state(status: str, live: bool, known: bool = True) -> str:
    """What a run is doing now: the stored status, except that a run stored as `running` is
    `running` only while a process runs it, and `interrupted` (resumable) once none does."""
    if status != "running":
        return status
    if live:
        return "running"
    return "interrupted" if known else "running elsewhere, or interrupted"


class RunLine(BaseModel):
    """One row of `rsi runs`."""

    run_id: str
    created: datetime
    state: str = Field(description="running | interrupted | done | stopped | failed (see run_state).")
    portfolio: str
    suite: str
    split: str
    covered: int
    tasks: int
    attempts: int
    budget_attempts: int | None
    end_reason: str = Field(default="", description="Why the run ended, from its run folder (if known here).")

    @property
    def coverage(self) -> float:
        return self.covered / self.tasks if self.tasks else 0.0


def run_line(summary: RunSummary, state: str, end_reason: str = "") -> RunLine:
    return RunLine(
        run_id=summary.run_id, created=summary.created, state=state, portfolio=summary.portfolio,
        suite=summary.suite, split=summary.split, covered=summary.covered, tasks=summary.tasks,
        attempts=summary.attempts, budget_attempts=summary.budget.get("attempts"), end_reason=end_reason,
    )
