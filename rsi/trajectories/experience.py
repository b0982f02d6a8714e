"""Building an experience library revision from stored runs (search runs and harvests alike).

    build_experience(workspace, ["run-1", "harvest-2"], parent="r1")

Takes every PASSING attempt on a TRAIN task of the runs (read from the coverage store, like promotion and
export: `rsi.promotion.stored.load_run_attempts`), its submitted file from its trajectory and the task's
instruction from the suite on disk, and adds the distinct solutions (normalized-code key) the parent
revision lacks. Refused, and counted under their reason:

- attempts on heldout (or test) tasks, by split, by key, or by content hash (a renamed copy of a heldout task);
  the protected sets are the store's and every suite's of the workspace as they are on disk now;
- attempts on a train task that is a twin of a protected task of any suite (same function and instruction after
  normalisation, `rsi.trajectories.twins`), counted under the reason that names both sides
  ("pyfuncs/factorial duplicates pyfuncs2/factorial (heldout)");
- attempts whose task changed since they ran (the stored content hash is not the task's now: the solution
  passed another version of the task), or whose task left the suite;
- attempts without a readable trajectory or submitted file.

The whole revision (parent entries included) is checked against the heldout sets again right before it is
written (`check_train_only`), so a re-split suite cannot carry a now-heldout task forward. A parent entry that
is now a twin is left out of the new revision and counted under its reason. Nothing new: no revision is
written and the parent is the result.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rsi.crashpoint import crash_point
from rsi.errors import RsiError, UserInputError
from rsi.experience.library import (
    ExperienceEntry,
    check_train_only,
    experience_root,
    lineage_of,
    new_manifest,
    read_library,
    read_manifest,
    write_revision,
)
from rsi.promotion.evidence import ScoredAttempt
from rsi.workspace import Workspace


@dataclass(frozen=True)
class BuildOutcome:
    revision: str = ""
    parent: str = ""
    written: bool = False
    entries: int = 0
    tasks: int = 0
    added_entries: int = 0
    tasks_new: int = 0
    content_sha256: str = ""
    sources: tuple[str, ...] = ()
    refused: dict[str, int] = field(default_factory=dict)

    @property
    def sets(self) -> dict[str, str]:
        """The dotted-key sets that put this revision into a contract."""
        return {"harness.experience": self.revision, "harness.experience_sha256": self.content_sha256} if self.revision else {}

    @property
    def grew(self) -> bool:
        return self.revision != self.parent

    def as_text(self) -> str:
        if not self.grew:
            return (f"nothing new: {self.parent or 'no library'} already holds every distinct passing train solution "
                    f"of {', '.join(self.sources)}")
        again = "" if self.written else " (already written by an earlier build: reused)"
        return (f"experience library {self.revision}{again} (parent {self.parent or 'none'}): +{self.added_entries} "
                f"entries, {self.tasks_new} tasks new; {self.entries} entries over {self.tasks} train tasks")


@dataclass
class _Candidates:
    entries: list[ExperienceEntry] = field(default_factory=list)
    refused: Counter[str] = field(default_factory=Counter)


def collect_entries(attempts: Iterable[ScoredAttempt], tasks: dict[str, object], heldout_keys: set[str],
                    heldout_hashes: set[str], twins: Mapping[str, str] | None = None) -> _Candidates:
    """Library entries of the passing train attempts, and what was refused by reason (see the module docstring)."""
    from rsi.harness.trajectory import read_trajectory
    from rsi.trajectories.render import final_code_of
    from rsi.trajectories.select import normalize_code

    found = _Candidates()
    for record in attempts:
        reason = _refusal(record, tasks, heldout_keys, heldout_hashes, twins or {})
        if reason:
            found.refused[reason] += 1
            continue
        try:
            code = final_code_of(read_trajectory(Path(record.trajectory_path))) if record.trajectory_path else ""
        except RsiError:
            code = ""
        if not code.strip():
            found.refused["no submitted file recorded"] += 1
            continue
        task = tasks[record.task_key]
        found.entries.append(ExperienceEntry(
            task_key=record.task_key, task_hash=record.task_hash, instruction=task.instruction,  # type: ignore[attr-defined]
            solution_file=task.spec.solution_file, code=code,  # type: ignore[attr-defined]
            code_key=_code_key(normalize_code(code)), config_name=record.config_name, config_hash=record.config_hash,
            run_id=record.run_id, attempt_id=record.attempt_id, tokens=record.tokens))
    return found


def _code_key(normalized: str) -> str:
    from rsi.contracts.hashing import sha256_text

    return sha256_text(normalized)[:16]


def _refusal(record: ScoredAttempt, tasks: dict[str, object], heldout_keys: set[str], heldout_hashes: set[str],
             twins: Mapping[str, str]) -> str:
    if not record.passed:
        return "not passed"
    if record.split == "heldout" or record.task_key in heldout_keys:
        return "heldout task"
    if record.task_hash in heldout_hashes:
        return "heldout content hash"
    if record.split != "train":
        return f"split {record.split!r}"
    if record.task_key in twins:
        return twins[record.task_key]
    task = tasks.get(record.task_key)
    if task is None:
        return "task no longer in the suite"
    if not record.task_hash or record.task_hash != task.content_hash:  # type: ignore[attr-defined]
        return "task changed since the attempt"
    return ""


def merge(parent: tuple[ExperienceEntry, ...], found: list[ExperienceEntry]) -> list[ExperienceEntry]:
    """The parent's entries, then each new distinct solution once (the cheapest attempt that found it)."""
    merged = {e.entry_id: e for e in parent}
    for entry in sorted(found, key=lambda e: (e.task_key, e.tokens, e.attempt_id)):
        merged.setdefault(entry.entry_id, entry)
    return list(merged.values())


@dataclass(frozen=True)
class TrainAttempts:
    """The runs' stored attempts, with what judging them as train evidence needs: the suite's tasks on disk and
    the heldout sets (the store's and the suite's as it is now)."""

    attempts: tuple[ScoredAttempt, ...]
    tasks: dict[str, object]
    heldout_keys: set[str]
    heldout_hashes: set[str]
    twins: dict[str, str] = field(default_factory=dict)  # train task key -> the refusal naming its protected twin

    def refusal(self, record: ScoredAttempt) -> str:
        """Why this attempt is no train evidence ('' when it is a passing attempt on an unchanged train task)."""
        return _refusal(record, self.tasks, self.heldout_keys, self.heldout_hashes, self.twins)


def load_train_attempts(workspace: Workspace, run_ids: list[str]) -> TrainAttempts:
    """The runs' attempts from the coverage store (`rsi.promotion.stored.load_run_attempts`) and their suite."""
    from rsi.promotion.stored import load_run_attempts
    from rsi.store import open_store
    from rsi.tasks.load import load_suite
    from rsi.trajectories.twins import decontamination_for

    store = open_store(workspace.db_url)
    try:
        stored = load_run_attempts(store, run_ids, workspace.runs_dir)
    finally:
        store.close()
    try:
        suite = load_suite(workspace, stored.suite)
    except RsiError as error:
        raise UserInputError(f"suite {stored.suite}: cannot read the instructions: {error.message}") from None
    checked = decontamination_for(workspace, suite, stored.heldout_keys, stored.heldout_hashes)
    tasks: dict[str, object] = {t.key: t for t in suite}
    return TrainAttempts(tuple(stored.attempts), tasks, set(checked.keys), set(checked.hashes), checked.reasons)


def build_experience(workspace: Workspace, run_ids: list[str], parent: str = "", root: Path | None = None) -> BuildOutcome:
    """Add the runs' distinct passing train solutions to `parent` ('' for a first revision); see the module docstring."""
    root = experience_root(root if root is not None else workspace.runs_dir / "experience")
    loaded = load_train_attempts(workspace, run_ids)
    tasks, heldout_keys, heldout_hashes = loaded.tasks, loaded.heldout_keys, loaded.heldout_hashes
    found = collect_entries(loaded.attempts, tasks, heldout_keys, heldout_hashes, loaded.twins)
    base = read_library(root, parent) if parent else None
    parent_entries = base.entries if base else ()
    for entry in parent_entries:  # an entry taken before its twin was protected (or before this check existed)
        if entry.task_key in loaded.twins:
            found.refused[f"parent entry: {loaded.twins[entry.task_key]}"] += 1
    kept = tuple(e for e in parent_entries if e.task_key not in loaded.twins)
    entries = merge(kept, found.entries)
    check_train_only(entries, heldout_keys, heldout_hashes)
    refused = dict(found.refused)
    if len(entries) == len(parent_entries) and len(kept) == len(parent_entries):
        return BuildOutcome(revision=parent, parent=parent, entries=len(entries), tasks=len({e.task_key for e in entries}),
                            content_sha256=base.manifest.content_sha256 if base else "", sources=tuple(run_ids),
                            refused=refused)
    manifest, text = new_manifest(parent, lineage_of(root, parent), entries, len(kept),
                                  {e.task_key for e in kept}, list(run_ids), refused, heldout_keys, heldout_hashes)
    revision, written = write_revision(root, manifest, text)
    crash_point("experience:written")  # crash tests: a rerun must find this revision, not write a second
    return BuildOutcome(revision=revision, parent=parent, written=written, entries=manifest.entries, tasks=manifest.tasks,
                        added_entries=manifest.added_entries, tasks_new=manifest.tasks_new,
                        content_sha256=manifest.content_sha256, sources=tuple(run_ids), refused=refused)


def parent_for(workspace: Workspace, contract: str, previous: str = "", root: Path | None = None) -> str:
    """The revision a build for `contract` extends (`carried_parent` over the contract's `harness.experience`)."""
    from rsi.promotion.promote import load_head_contract

    current = load_head_contract(workspace, contract).spec.harness.experience
    root = experience_root(root if root is not None else workspace.runs_dir / "experience")
    return carried_parent(current, previous, lambda revision: read_manifest(root, revision).lineage)


def carried_parent(current: str, previous: str, ancestors_of: Callable[[str], Collection[str]]) -> str:
    """The revision a library's growth extends: the contract's own (`current`, as committed), or `previous` (what an
    earlier generation grew) when that one descends from it, so growth carries on even where the contract has not
    taken it yet (an adapter the gate rejected). The experience library and the tool library both grow this way."""
    if not previous or previous == current:
        return current
    return previous if not current or current in ancestors_of(previous) else current
