"""The experience library: verified passing solutions of TRAIN tasks, as versioned, content-addressed revisions.

Layout (under the workspace, beside the tool library, `rsi.harness.tools`):

    runs/experience/
      r1/
        manifest.json   revision, parent, lineage, sources, counts, what was refused and why, content_sha256
        entries.jsonl   one ExperienceEntry per line, canonical JSON, sorted by (task, entry id)
      r2/ ...

A contract carries a revision with `harness.experience = "r2"` and its digest with
`harness.experience_sha256` (the sha256 of entries.jsonl): a revision whose entries no longer match
the digest the contract pins is refused where it is read. A revision holds its parent's entries and
the new ones (an entry is one distinct solution of one task: the normalized-code key of
rsi.trajectories.select), so growth is `entries(new) - entries(parent)`. Revisions are immutable:
written into a temp folder and renamed, and a build whose content equals an existing revision of the
same parent returns that revision instead of writing a second one (a rerun after a crash writes none).

Heldout tasks never enter: `check_train_only` runs on every revision before it is written
(rsi.trajectories.experience), and retrieval (rsi.experience.retrieve) applies it again to what it returns.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rsi.contracts.hashing import canonical_json, sha256_text
from rsi.errors import RsiError, UserInputError

MANIFEST = "manifest.json"
ENTRIES = "entries.jsonl"
SCHEMA: Literal["rsi-experience/1"] = "rsi-experience/1"
ROOT_ENV = "RSI_EXPERIENCE_DIR"
_REVISION = re.compile(r"^r([1-9][0-9]*)$")


class ContaminationError(RsiError):
    """A library entry (or a retrieved one) is a heldout task, by split, key or content hash."""


class ExperienceEntry(BaseModel):
    """One verified passing solution of one train task, with where it came from."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    task_key: str = Field(min_length=1)
    task_hash: str = Field(min_length=1, description="The task's content hash when the attempt ran (and now).")
    split: Literal["train"] = "train"
    instruction: str
    solution_file: str
    code: str = Field(description="The submitted file, as the hidden verifier passed it.")
    code_key: str = Field(description="Hash of the normalized code: one entry per distinct solution of a task.")
    config_name: str
    config_hash: str
    run_id: str
    attempt_id: str
    tokens: int = 0

    @property
    def entry_id(self) -> str:
        return f"{self.task_key}#{self.code_key}"


class ExperienceManifest(BaseModel):
    schema_id: Literal["rsi-experience/1"] = Field(default=SCHEMA, alias="schema")
    revision: str
    parent: str = ""
    lineage: list[str] = Field(default_factory=list, description="Every ancestor, oldest first (the parent last).")
    created: datetime
    entries: int
    tasks: int
    added_entries: int = Field(description="Entries this revision added to its parent's.")
    tasks_new: int = Field(description="Tasks with no entry in the parent.")
    sources: list[str] = Field(default_factory=list, description="Runs (search and harvest) the new entries came from.")
    refused: dict[str, int] = Field(default_factory=dict, description="Attempts not taken, by reason.")
    heldout_keys: list[str] = Field(default_factory=list, description="Heldout task keys the check used.")
    heldout_hashes: list[str] = Field(default_factory=list, description="Heldout content hashes the check used.")
    content_sha256: str = Field(description="sha256 of entries.jsonl.")

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


@dataclass(frozen=True)
class ExperienceLibrary:
    """One revision, read and checked."""

    manifest: ExperienceManifest
    entries: tuple[ExperienceEntry, ...]

    @property
    def revision(self) -> str:
        return self.manifest.revision

    def task_keys(self) -> set[str]:
        return {entry.task_key for entry in self.entries}


# -- layout and reading --------------------------------------------------------------------------------
def experience_root(root: Path | None = None) -> Path:
    """Where revisions live: `root`, else $RSI_EXPERIENCE_DIR, else the workspace's runs/experience."""
    if root is not None:
        return root
    if os.environ.get(ROOT_ENV):
        return Path(os.environ[ROOT_ENV])
    from rsi.workspace import find_workspace

    return find_workspace().runs_dir / "experience"


def revision_dir(root: Path, revision: str) -> Path:
    if not _REVISION.match(revision):
        raise UserInputError(f"experience library revision {revision!r}: expected r<N>, e.g. r1")
    return root / revision


def list_revisions(root: Path) -> list[str]:
    if not root.is_dir():
        return []
    found = [p.name for p in root.iterdir() if _REVISION.match(p.name) and (p / MANIFEST).is_file()]
    return sorted(found, key=lambda name: int(name[1:]))


def entries_text(entries: Iterable[ExperienceEntry]) -> str:
    """The canonical entries.jsonl: sorted by (task, entry id), one canonical JSON object a line."""
    ordered = sorted(entries, key=lambda e: (e.task_key, e.entry_id))
    return "".join(canonical_json(e.model_dump(mode="json")) + "\n" for e in ordered)


def read_manifest(root: Path, revision: str) -> ExperienceManifest:
    path = revision_dir(root, revision) / MANIFEST
    if not path.is_file():
        raise UserInputError(f"{path}: experience library revision {revision!r} does not exist",
                             hint="set harness.experience to a revision under runs/experience/ (`rsi experience show`)")
    try:
        return ExperienceManifest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as error:
        raise UserInputError(f"{path}: not an experience manifest: {_first_problem(error)}") from None


def read_library(root: Path, revision: str, expected_sha256: str = "") -> ExperienceLibrary:
    """Read and check one revision: its digest (against the manifest, and `expected_sha256` when given: the
    contract's pin) and every line; a malformed file is an error naming the file and the line."""
    manifest = read_manifest(root, revision)
    path = revision_dir(root, revision) / ENTRIES
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UserInputError(f"{path}: cannot read the library's entries ({error})") from None
    digest = sha256_text(text)
    for wanted, who in ((manifest.content_sha256, f"{revision}/{MANIFEST}"), (expected_sha256, "the contract")):
        if wanted and digest != wanted:
            raise UserInputError(f"{path}: content sha256 {digest[:12]} is not the {wanted[:12]} {who} names",
                                 hint="library revisions are immutable; rebuild with `rsi experience build`")
    entries = tuple(_parse_line(path, number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip())
    if len(entries) != manifest.entries:
        raise UserInputError(f"{path}: {len(entries)} entries, the manifest says {manifest.entries}")
    return ExperienceLibrary(manifest, entries)


def _parse_line(path: Path, number: int, line: str) -> ExperienceEntry:
    try:
        return ExperienceEntry.model_validate(json.loads(line))
    except ValueError as error:  # JSONDecodeError and ValidationError both
        detail = _first_problem(error) if isinstance(error, ValidationError) else str(error)
        raise UserInputError(f"{path}:{number}: not an experience entry: {detail}") from None


def _first_problem(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]


# -- the split-overlap check -----------------------------------------------------------------------------
def heldout_leaks(entries: Iterable[ExperienceEntry], heldout_keys: Iterable[str],
                  heldout_hashes: Iterable[str]) -> list[str]:
    """Task keys of entries that are heldout tasks (by split, key or content hash), sorted."""
    keys, hashes = set(heldout_keys), set(heldout_hashes)
    return sorted({e.task_key for e in entries if e.split != "train" or e.task_key in keys or e.task_hash in hashes})


def check_train_only(entries: Iterable[ExperienceEntry], heldout_keys: Iterable[str],
                     heldout_hashes: Iterable[str]) -> None:
    leaks = heldout_leaks(entries, heldout_keys, heldout_hashes)
    if leaks:
        raise ContaminationError(f"refusing the experience library: {len(leaks)} heldout task(s) in it: "
                                 f"{', '.join(leaks[:5])}", hint="heldout tasks gate promotion; they never enter the library")


# -- writing -------------------------------------------------------------------------------------------------
def lineage_of(root: Path, parent: str) -> list[str]:
    """The new revision's lineage: the parent's ancestors, then the parent ([] with no parent)."""
    return [*read_manifest(root, parent).lineage, parent] if parent else []


def write_revision(root: Path, manifest: ExperienceManifest, text: str) -> tuple[str, bool]:
    """Write a revision (name filled in) unless one of the same parent holds the same entries; (name, written)."""
    for existing in list_revisions(root):
        found = read_manifest(root, existing)
        if found.content_sha256 == manifest.content_sha256 and found.parent == manifest.parent:
            return existing, False
    root.mkdir(parents=True, exist_ok=True)
    names = list_revisions(root)
    revision = f"r{int(names[-1][1:]) + 1 if names else 1}"
    manifest = manifest.model_copy(update={"revision": revision})
    staging = Path(tempfile.mkdtemp(prefix=f".{revision}.", dir=root))
    (staging / ENTRIES).write_text(text, encoding="utf-8")
    payload = json.loads(canonical_json(manifest.model_dump(mode="json", by_alias=True)))
    (staging / MANIFEST).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    for name in (ENTRIES, MANIFEST):
        with open(staging / name, "rb") as handle:
            os.fsync(handle.fileno())
    staging.rename(root / revision)  # fails if the revision appeared meanwhile: never overwrite
    return revision, True


def new_manifest(parent: str, lineage: list[str], entries: list[ExperienceEntry], parent_entries: int,
                 parent_tasks: set[str], sources: list[str], refused: dict[str, int],
                 heldout_keys: Iterable[str], heldout_hashes: Iterable[str]) -> tuple[ExperienceManifest, str]:
    """The manifest (revision name still empty) and entries.jsonl text of a revision holding `entries`."""
    text = entries_text(entries)
    tasks = {e.task_key for e in entries}
    return ExperienceManifest(
        revision="", parent=parent, lineage=lineage, created=datetime.now(UTC).replace(microsecond=0),
        entries=len(entries), tasks=len(tasks), added_entries=len(entries) - parent_entries,
        tasks_new=len(tasks - parent_tasks), sources=sources, refused=dict(sorted(refused.items())),
        heldout_keys=sorted(heldout_keys), heldout_hashes=sorted(heldout_hashes), content_sha256=sha256_text(text),
    ), text


# -- growth (what `rsi diff` names) ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Growth:
    old: str
    new: str
    added: int
    removed: int
    tasks_new: int
    entries: int

    def as_text(self) -> str:
        removed = f", -{self.removed} entries" if self.removed else ""
        return f"+{self.added} entries, {self.tasks_new} tasks new{removed} ({self.entries} entries in {self.new})"

    def to_json(self) -> dict[str, object]:
        return {"old": self.old, "new": self.new, "added": self.added, "removed": self.removed,
                "tasks_new": self.tasks_new, "entries": self.entries, "text": self.as_text()}


def growth(root: Path, old: str, new: str) -> Growth:
    """How revision `new` differs from `old` ('' for no library), entry by entry."""
    before = read_library(root, old).entries if old else ()
    after = read_library(root, new).entries if new else ()
    old_ids, new_ids = {e.entry_id for e in before}, {e.entry_id for e in after}
    old_tasks = {e.task_key for e in before}
    return Growth(old or "(none)", new or "(none)", len(new_ids - old_ids), len(old_ids - new_ids),
                  len({e.task_key for e in after} - old_tasks), len(after))
