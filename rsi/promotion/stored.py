"""Read what promotion, proposal and export need from the coverage store (the only store I/O here).

Turns a run's stored attempts into `ScoredAttempt`s (task split, tags and content hash joined from
the task table), and gives back the stored configurations as `rsi.config.Configuration`s.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rsi.config import Configuration
from rsi.errors import StoreError, UserInputError
from rsi.promotion.evidence import ScoredAttempt
from rsi.promotion.price import AttemptCost, trajectory_cost
from rsi.store.rows import planned_keys
from rsi.verdict import Verdict


@dataclass(frozen=True)
class RunAttempts:
    """The attempts of one or more runs of one suite, with their configurations and tasks."""

    run_ids: tuple[str, ...]
    suite: str
    attempts: tuple[ScoredAttempt, ...]
    configurations: dict[str, Configuration]
    heldout_hashes: frozenset[str]
    heldout_keys: frozenset[str]


def load_run_attempts(store: object, run_ids: Sequence[str], runs_dir: Path | None = None) -> RunAttempts:
    """Attempts of `run_ids` (one suite) from `store` (an `rsi.store.Store`)."""
    from rsi.store import Store

    assert isinstance(store, Store)
    if not run_ids:
        raise UserInputError("give at least one run id")
    runs = []
    for run_id in run_ids:
        try:
            runs.append(store.get_run(run_id))
        except StoreError as error:
            raise UserInputError(error.message, hint=error.hint) from None
    suites = sorted({run.suite for run in runs})
    if len(suites) != 1:
        raise UserInputError(f"runs {', '.join(run_ids)} target different suites ({', '.join(suites)})",
                             hint="evidence combines runs of one suite only")
    suite = suites[0]
    tasks = {info.key: info for info in store.list_tasks(suite)}
    rows = [row for run_id in run_ids for row in store.list_attempts(run_id)]
    # The runs' whole portfolios, not only the configurations that made an attempt: `rsi propose` keeps
    # an untried configuration instead of losing it without a word.
    planned = {h for run in runs for h in planned_keys(run)[0]}
    stored_configs = store.list_configurations({row.configuration_hash for row in rows} | planned)
    names = {c.config_hash: c.name for c in stored_configs}
    configurations = {}
    for config_row in stored_configs:
        try:
            configurations[config_row.config_hash] = Configuration.model_validate(config_row.resolved)
        except ValueError:
            continue  # stored by a simulator or an older rsi without the resolved configuration
    attempts = []
    for row in rows:
        info = tasks.get(row.task_key)
        trajectory = row.trajectory_path
        if trajectory and runs_dir is not None and not Path(trajectory).is_absolute():
            trajectory = str(runs_dir / trajectory)
        attempts.append(
            ScoredAttempt(
                attempt_id=row.idem_key,
                run_id=row.run_id,
                config_hash=row.configuration_hash,
                config_name=names.get(row.configuration_hash) or row.configuration_hash,
                task_key=row.task_key,
                task_hash=row.task_hash or (info.content_hash if info else ""),
                split=info.split if info else "train",
                verdict=Verdict(row.verdict),
                tags=tuple(info.tags) if info else (),
                tokens=row.tokens,
                wall_s=row.wall_s,
                trajectory_path=trajectory,
            )
        )
    heldout = [info for info in tasks.values() if info.split != "train"]  # heldout, test: every protected split
    return RunAttempts(
        run_ids=tuple(run_ids),
        suite=suite,
        attempts=tuple(attempts),
        configurations=configurations,
        heldout_hashes=frozenset(info.content_hash for info in heldout if info.content_hash),
        heldout_keys=frozenset(info.key for info in heldout),
    )


def read_attempt_costs(attempts: Iterable[ScoredAttempt]) -> dict[str, AttemptCost]:
    """What each attempt spent (prompt and completion tokens, check seconds), from its trajectory file; an
    attempt without a readable trajectory is left out (its price is unmeasured, not free)."""
    from rsi.harness.trajectory import read_trajectory

    costs = {}
    for attempt in attempts:
        if not attempt.trajectory_path:
            continue
        try:
            costs[attempt.attempt_id] = trajectory_cost(read_trajectory(Path(attempt.trajectory_path)))
        except UserInputError:
            continue
    return costs
