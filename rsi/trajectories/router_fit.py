"""Fit a learned router (`rsi router fit`) from the store's TRAIN evidence, and write it as a revision.

Evidence is per-specialist pass records: attempts of configurations whose routing sends every turn to
one specialist (`policy = "fixed"`, '' = the bare base), on tasks that both the store and the suite call
train. Heldout tasks are never looked up: their attempts are dropped before any feature is read, so a
router cannot learn from what it will be measured on. Attempts of rules- or learned-routed
configurations are left out (their turns mix specialists; crediting one of them with the attempt's
outcome would be a guess). Each attempt is joined with its task's features on the first turn (tags,
instruction words); turn-kind and observation features stay in the predictor for per-turn evidence.

Revisions live beside the contract, hcp/routers/<contract>-r<N>.json; a refit that learns exactly what
the latest revision holds reuses it (same file, same sha256), so refitting is idempotent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rsi.atomic import write_text_atomic
from rsi.contracts.hashing import sha256_text
from rsi.errors import UserInputError
from rsi.harness.router import (
    Example,
    RouterEvidence,
    RouterRecord,
    fit,
    label,
    parse_router,
    predict,
    turn_features,
)
from rsi.store.store import Store
from rsi.tasks.spec import Task
from rsi.workspace import Workspace


@dataclass(frozen=True)
class RouterAccuracy:
    """How often the router picks a specialist that passed the task: in-sample and leave-one-task-out."""

    tasks: int
    oracle: int  # tasks where some specialist passed
    in_sample: int
    leave_one_out: int


@dataclass(frozen=True)
class FitOutcome:
    record: RouterRecord
    path: Path
    sha256: str
    reused: bool
    accuracy: RouterAccuracy


def fixed_specialist(resolved: Mapping[str, Any]) -> tuple[bool, str | None]:
    """(True, specialist) when a stored configuration routes every turn to one specialist ('' = base)."""
    routing = (resolved.get("spec") or {}).get("routing") or {}
    if routing.get("policy", "fixed") != "fixed":
        return False, None
    return True, routing.get("specialist") or None


def collect_examples(
    store: Store, suite: str, tasks: Sequence[Task], specialists: Sequence[str | None], run_ids: Sequence[str] = ()
) -> tuple[list[Example], RouterEvidence]:
    """Train attempts of fixed-routed configurations whose specialist the contract has, with their task features."""
    train_keys = {f"{t.suite}/{t.task_id}" for t in store.list_tasks(suite, "train")}
    by_key = {task.key: task for task in tasks if task.spec.split == "train" and task.key in train_keys}
    runs = list(run_ids) or [run.id for run in store.list_runs(suite)]
    wanted = {label(s) for s in specialists}
    routes = {row.config_hash: fixed_specialist(row.resolved) for row in store.list_configurations()}
    examples: list[Example] = []
    used_runs: set[str] = set()
    for run_id in runs:
        for attempt in store.list_attempts(run_id):
            fixed, specialist = routes.get(attempt.configuration_hash, (False, None))
            task = by_key.get(attempt.task_key)  # heldout (or unknown) tasks stop here, before any feature
            if not attempt.counted or not fixed or task is None or label(specialist) not in wanted:
                continue
            features = tuple(turn_features(task.spec.tags, task.instruction, "first", ""))
            examples.append(Example(specialist, task.key, features, attempt.passed))
            used_runs.add(run_id)
    evidence = RouterEvidence(split="train", runs=sorted(used_runs), tasks=sorted({e.task_key for e in examples}),
                              attempts=len(examples))
    return examples, evidence


def accuracy(examples: Sequence[Example], specialists: Sequence[str | None], revision: int = 1) -> RouterAccuracy:
    """Per task: does the router's first-turn pick have a passing attempt there (refit without the task for LOO)?"""
    full = RouterRecord(contract="", revision=revision, specialists=fit(examples, specialists),
                        evidence=RouterEvidence())
    keys = sorted({e.task_key for e in examples})
    oracle = in_sample = loo = 0
    for key in keys:
        own = [e for e in examples if e.task_key == key]
        passed = {label(e.specialist) for e in own if e.passed}
        oracle += bool(passed)
        features = own[0].features
        in_sample += label(predict(full, features)[0]) in passed
        rest = [e for e in examples if e.task_key != key]
        held = full.model_copy(update={"specialists": fit(rest, specialists)})
        loo += label(predict(held, features)[0]) in passed
    return RouterAccuracy(tasks=len(keys), oracle=oracle, in_sample=in_sample, leave_one_out=loo)


def _revisions(folder: Path, contract: str) -> list[tuple[int, Path]]:
    pattern = re.compile(rf"^{re.escape(contract)}-r([1-9][0-9]*)\.json$")
    found = [(int(m.group(1)), path) for path in folder.glob(f"{contract}-r*.json") if (m := pattern.match(path.name))]
    return sorted(found)


def write_router(hcp_dir: Path, contract: str, specialists: Sequence[str | None], examples: Sequence[Example],
                 evidence: RouterEvidence, code_commit: str = "") -> FitOutcome:
    """Fit and write routers/<contract>-r<N>.json (N + 1), or reuse the latest revision if it learned the same."""
    folder = hcp_dir / "routers"
    existing = _revisions(folder, contract)
    record = RouterRecord(contract=contract, revision=(existing[-1][0] + 1) if existing else 1,
                          specialists=fit(examples, specialists), evidence=evidence,
                          fitted_at=datetime.now(UTC).isoformat(timespec="seconds"), code_commit=code_commit)
    scores = accuracy(examples, specialists, record.revision)
    if existing:
        text = existing[-1][1].read_text(encoding="utf-8")
        try:
            latest = parse_router(text)
        except ValueError as error:
            raise UserInputError(f"{existing[-1][1]}: not a router record ({error})") from None
        if latest.learned_part() == record.learned_part():
            return FitOutcome(latest, existing[-1][1], sha256_text(text), True, scores)
    path = folder / f"{contract}-r{record.revision}.json"
    folder.mkdir(parents=True, exist_ok=True)
    text = record.to_json()
    write_text_atomic(path, text)
    return FitOutcome(record, path, sha256_text(text), False, scores)


def fit_contract(workspace: Workspace, contract: str, run_ids: Sequence[str] = (), code_commit: str = "") -> FitOutcome:
    """Fit the contract's router on the train evidence of `run_ids` (all runs of its suite when empty)."""
    from rsi.contracts.load import load_contract
    from rsi.store import open_store
    from rsi.tasks.load import load_suite

    loaded = load_contract(workspace.contract_path(contract))
    specialists: list[str | None] = [None, *(s.name for s in loaded.spec.specialists)]
    suite = loaded.spec.evaluation.suite
    tasks = load_suite(workspace, suite)
    with open_store(workspace.db_url) as store:
        known = {run.id for run in store.list_runs(suite)}
        unknown = [run for run in run_ids if run not in known]
        if unknown:
            raise UserInputError(f"--runs: no run {unknown[0]} of suite {suite!r} in the store",
                                 hint="`rsi status` lists runs")
        examples, evidence = collect_examples(store, suite, tasks, specialists, run_ids)
    if not examples:
        raise UserInputError(f"{workspace.contract_path(contract)}: no train attempts of a configuration routed to one "
                             "of its specialists (or the base) to fit on", hint="run fixed-routed variants first")
    return write_router(workspace.hcp_dir, contract, specialists, examples, evidence, code_commit)


def apply_router(contract_file: Path, outcome: FitOutcome) -> None:
    """Write `[routing] policy = "learned"`, the router and its sha256 into the contract file (tomlkit)."""
    import tomlkit

    document = tomlkit.parse(contract_file.read_text(encoding="utf-8"))
    routing = document.get("routing")
    if routing is None:
        routing = tomlkit.table()
        document["routing"] = routing
    routing["policy"] = "learned"
    routing["router"] = outcome.path.relative_to(contract_file.parent).as_posix()
    routing["router_sha256"] = outcome.sha256
    write_text_atomic(contract_file, tomlkit.dumps(document))
