"""Worked examples from the experience library before the task (`harness.exemplars = N`).

The contract names the library revision (`harness.experience`) and pins its digest
(`harness.experience_sha256`); the N most similar entries (rsi.experience.retrieve: BM25 over
instructions, never the task itself, never a heldout task) go before the task message, and the choice
is recorded in the trajectory (`exemplars`: library, task, entry, source attempt, score). With N = 0 the
library is not read at all.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from rsi.contracts.schema import HarnessSpec
from rsi.experience.library import ExperienceLibrary, experience_root, read_library
from rsi.experience.retrieve import exemplar_block, retrieve
from rsi.harness.trajectory import ExemplarRef
from rsi.tasks.spec import Task


@lru_cache(maxsize=8)
def _library(root: str, revision: str, sha256: str) -> ExperienceLibrary:
    return read_library(Path(root), revision, sha256)  # revisions are immutable: one read per process


def with_exemplars(harness: HarnessSpec, task: Task, user_message: str, seed: int,
                   root: Path | None = None) -> tuple[str, list[ExemplarRef]]:
    """The task message with the retrieved worked examples before it, and what was retrieved."""
    if not harness.exemplars:
        return user_message, []
    library = _library(str(experience_root(root)), harness.experience, harness.experience_sha256)
    manifest = library.manifest
    chosen = retrieve(library.entries, task.instruction, harness.exemplars, task_key=task.key,
                      task_hash=task.content_hash, heldout_keys=manifest.heldout_keys,
                      heldout_hashes=manifest.heldout_hashes, seed=seed)
    refs = [ExemplarRef(library=library.revision, task_key=r.entry.task_key, entry=r.entry.entry_id,
                        attempt_id=r.entry.attempt_id, score=r.score) for r in chosen]
    if not chosen:
        return user_message, refs
    return exemplar_block(chosen) + "\n\n" + user_message, refs
