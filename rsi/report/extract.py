"""From a run's stored rows to a `RunReport`: pure functions, no I/O (the store is read in write.py).

Every number here is a fold over the same rows `rsi status` reads (`build_summary` is reused for the
headline facts), so the report never disagrees with the terminal. Only counted attempts (verdict
not `error`) move coverage; errors are shown, never counted.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from rsi.report.records import (
    AttemptLine,
    CellRecord,
    ConfigColumn,
    JobFact,
    PortfolioSeries,
    RunReport,
    SplitLine,
    TaskLineRecord,
)
from rsi.run.summary import build_summary
from rsi.store.rows import planned_keys

_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _task_lines(run: Any, attempts: Sequence[Any], task_infos: Iterable[Any]) -> list[TaskLineRecord]:
    """Target tasks first (the run's order), then tasks attempted outside the targets."""
    infos = {info.key: info for info in task_infos}
    targets = planned_keys(run)[1]
    keys = list(dict.fromkeys([*targets, *sorted({a.task_key for a in attempts})]))
    target_set = set(targets) if targets else set(keys)
    lines = []
    for index, key in enumerate(keys):
        info = infos.get(key)
        lines.append(TaskLineRecord(index=index, key=key, split=info.split if info else "",
                                    tags=list(info.tags) if info else [], target=key in target_set))
    return lines


def _config_columns(run: Any, jobs: Sequence[Any], attempts: Sequence[Any], config_rows: Iterable[Any],
                    targets: set[str]) -> list[ConfigColumn]:
    rows = {row.config_hash: row for row in config_rows}
    hashes = list(dict.fromkeys([*planned_keys(run)[0], *(j.configuration_hash for j in jobs),
                                 *(a.configuration_hash for a in attempts)]))
    stats: dict[str, dict[str, Any]] = {h: {"a": 0, "p": 0, "e": 0, "tok": 0, "wall": 0.0, "solved": set()}
                                        for h in hashes}
    for a in attempts:
        s = stats[a.configuration_hash]
        s["e"] += a.error_retries + (0 if a.counted else 1)
        if not a.counted:
            continue
        s["a"] += 1
        s["tok"] += a.tokens
        s["wall"] += a.wall_s
        if a.passed:
            s["p"] += 1
            if a.task_key in targets:
                s["solved"].add(a.task_key)
    solvers: dict[str, int] = defaultdict(int)
    for s in stats.values():
        for key in s["solved"]:
            solvers[key] += 1
    columns = []
    seen: set[str] = set()
    for index, h in enumerate(hashes):
        s, row = stats[h], rows.get(h)
        name = row.name if row else h[:12]
        name = f"{name}@{h[:8]}" if name in seen else name  # names key the chart's lines: keep them apart
        seen.add(name)
        columns.append(ConfigColumn(
            index=index, config_hash=h, name=name, contract_ref=row.contract_ref if row else "",
            attempts=s["a"], passes=s["p"], errors=s["e"], tasks_solved=len(s["solved"]),
            unique_solves=sum(1 for k in s["solved"] if solvers[k] == 1), tokens=s["tok"], wall_s=round(s["wall"], 3),
        ))
    return columns


def _attempt_lines(attempts: Sequence[Any], config_index: dict[str, int], task_index: dict[str, int]) -> list[AttemptLine]:
    lines = []
    for n, a in enumerate(attempts):
        started = a.started
        lines.append(AttemptLine(
            n=n, job=a.job_index, config=config_index[a.configuration_hash], task=task_index[a.task_key],
            attempt_index=a.attempt_index, verdict=a.verdict, reason=a.reason or "", error_class=a.error_class or "",
            tokens=a.tokens, wall_s=round(a.wall_s, 3), started=started.isoformat(timespec="seconds") if started else "",
            error_retries=a.error_retries, trajectory_path=a.trajectory_path or "",
        ))
    return lines


def _cells(lines: Sequence[AttemptLine]) -> list[CellRecord]:
    grouped: dict[tuple[int, int], CellRecord] = {}
    for line in lines:
        cell = grouped.get((line.config, line.task))
        if cell is None:
            cell = grouped[(line.config, line.task)] = CellRecord(config=line.config, task=line.task, counts={},
                                                                  attempts=[])
        cell.counts[line.verdict] = cell.counts.get(line.verdict, 0) + 1
        cell.attempts.append(line.n)
    return sorted(grouped.values(), key=lambda c: (c.task, c.config))


def _portfolio(jobs: Sequence[Any], attempts: Sequence[Any], names: dict[str, str], targets: set[str],
               config_order: Sequence[str]) -> PortfolioSeries:
    """Union coverage and each configuration's own coverage, sampled after each job (chronological)."""
    by_job: dict[int, list[Any]] = defaultdict(list)
    for a in attempts:
        by_job[a.job_index].append(a)
    indexes = sorted({j.job_index for j in jobs} | set(by_job))
    union: set[str] = set()
    own: dict[str, set[str]] = {h: set() for h in config_order}
    series = PortfolioSeries(jobs=[], union=[], per_config={names[h]: [] for h in config_order}, total=len(targets))
    for index in indexes:
        for a in by_job.get(index, []):
            if a.counted and a.passed and a.task_key in targets:
                union.add(a.task_key)
                own.setdefault(a.configuration_hash, set()).add(a.task_key)
        series.jobs.append(index)
        series.union.append(len(union))
        for h in config_order:
            series.per_config[names[h]].append(len(own[h]))
    if config_order:
        best = max(config_order, key=lambda h: (len(own[h]), -config_order.index(h)))
        series.best, series.best_covered = names[best], len(own[best])
    return series


def _job_facts(jobs: Sequence[Any], attempts: Sequence[Any], names: dict[str, str],
               targets: set[str]) -> tuple[list[JobFact], str, dict[str, Any]]:
    """Per-job facts; a reason or detail every job shares is returned once instead of on every row."""
    by_job: dict[int, list[Any]] = defaultdict(list)
    for a in attempts:
        by_job[a.job_index].append(a)
    covered: set[str] = set()
    facts = []
    for job in sorted(jobs, key=lambda j: j.job_index):
        rows = by_job.get(job.job_index, [])
        open_before = targets - covered
        counted = [a for a in rows if a.counted]
        fresh = {a.task_key for a in counted if a.passed and a.task_key in open_before}
        covered |= fresh
        details = job.job_details.model_dump(exclude={"reason"}, exclude_unset=True)
        facts.append(JobFact(
            job_index=job.job_index, config_name=names.get(job.configuration_hash, job.configuration_hash[:12]),
            status=job.status, tasks_planned=len(job.planned_tasks), attempts_per_task=job.attempts_per_task,
            open_before=len(open_before), planned_open=sum(1 for k in job.planned_tasks if k in open_before),
            attempts=len(counted), passes=sum(1 for a in counted if a.passed),
            errors=sum(a.error_retries + (0 if a.counted else 1) for a in rows),
            new_covered=len(fresh), covered_after=len(covered), tokens=sum(a.tokens for a in counted),
            wall_s=round(sum(a.wall_s for a in counted), 3), reason=job.job_details.reason,
            details=details,
        ))
    return facts, *_shared(facts)


def _shared(facts: list[JobFact]) -> tuple[str, dict[str, Any]]:
    """Lift out what every job repeats: the reason sentence (same words, other numbers) and equal details."""
    if len(facts) < 2:
        return "", {}
    templates = {_NUMBER.sub("N", f.reason) for f in facts}
    common_reason = ""
    if len(templates) == 1 and facts[0].reason:
        common_reason = templates.pop()
        for fact in facts:
            fact.reason = ""
    common: dict[str, Any] = {}
    for key, value in facts[0].details.items():
        if all(f.details.get(key, object()) == value for f in facts[1:]):
            common[key] = value
    for fact in facts:
        fact.details = {k: v for k, v in fact.details.items() if k not in common}
    return common_reason, common


def _splits(tasks: Sequence[TaskLineRecord], lines: Sequence[AttemptLine], configs: Sequence[ConfigColumn]) -> list[SplitLine]:
    per: dict[str, dict[str, Any]] = {}
    for task in tasks:
        per.setdefault(task.split or "unknown", {"t": 0, "cov": set(), "a": 0, "p": 0, "by": defaultdict(set)})["t"] += 1
    for line in lines:
        task = tasks[line.task]
        s = per[task.split or "unknown"]
        if line.verdict == "error":
            continue
        s["a"] += 1
        if line.verdict == "passed":
            s["p"] += 1
            s["cov"].add(task.key)
            s["by"][configs[line.config].name].add(task.key)
    order = sorted(per, key=lambda name: ({"train": 0, "heldout": 1}.get(name, 2), name))
    return [SplitLine(split=name, tasks=per[name]["t"], covered=len(per[name]["cov"]), attempts=per[name]["a"],
                      passes=per[name]["p"], solved_by_config={c.name: len(per[name]["by"].get(c.name, ()))
                                                               for c in configs})
            for name in order]


def build_run_report(run: Any, jobs: Sequence[Any], attempts: Sequence[Any], config_rows: Iterable[Any],
                     task_infos: Iterable[Any], elapsed_s: float | None = None) -> RunReport:
    """Fold a run's rows (store rows, or anything with their attributes) into a RunReport.

    `attempts` must be chronological (the store's `list_attempts` order).
    """
    config_rows = list(config_rows)
    tasks = _task_lines(run, attempts, task_infos)
    targets = {t.key for t in tasks if t.target}
    configs = _config_columns(run, jobs, attempts, config_rows, targets)
    names = {c.config_hash: c.name for c in configs}
    summary = build_summary(run, jobs, attempts, names, elapsed_s)
    lines = _attempt_lines(attempts, {c.config_hash: c.index for c in configs}, {t.key: t.index for t in tasks})
    facts, common_reason, common_details = _job_facts(jobs, attempts, names, targets)
    return RunReport(
        summary=summary, scheduler=run.scheduler or "", configs=configs, tasks=tasks,
        attempts=lines, cells=_cells(lines), jobs=facts, common_reason=common_reason, common_details=common_details,
        portfolio=_portfolio(jobs, attempts, names, targets, [c.config_hash for c in configs]),
        splits=_splits(tasks, lines, configs), tags=sorted({tag for t in tasks for tag in t.tags}),
    )
