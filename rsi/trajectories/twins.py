"""Workspace-wide decontamination: a train item whose task is a twin of a protected task of ANY suite.

A task is **protected** when its split is anything but "train" (heldout, and a sealed `test` split):
training on it, or on a copy of it, would make the figures measured on it lie. The per-suite checks
(split, key, content hash) miss a task that another suite asks for again under its own words, e.g.
pyfuncs/factorial (train) and pyfuncs2/factorial (heldout). Two tasks are **twins** when either

1. **same function and instruction**: both ask for a function of the same name, and their normalised
   instructions share at least `MIN_OVERLAP` of their words (Jaccard of the word sets); or
2. **same instruction**: their normalised instructions are identical (a copy whose tests or files differ,
   so the content hash misses it; this also covers tasks that ask for no function, e.g. files in, files out).

Precisely:

- The **function** a task asks for is the first `def NAME(` in its instruction (what the agent reads);
  when the instruction names none, the first top-level `def` of its reference solution file; else none.
  Names compare case-insensitively.
- The **normalised instruction** keeps the prose only: markdown headings, fenced and indented code blocks
  (the signature and the examples) and the lines from an "Examples" heading on are dropped; the rest is
  lowercased and split into words (`[a-z0-9]+`), leaving out a short list of stop words. Its words joined
  by one space are the text compared in rule 2; its word set is what rule 1 measures.
- `MIN_OVERLAP` is 0.3: the name alone would call two unrelated `solve` functions twins; every same-named
  pair across the shipped suites overlaps by 0.36 or more, while the overlap alone cannot tell
  `to_upper` from `to_lower` (0.81), so the name is what decides and the overlap only guards it.

The train item's own key is never its twin (a train key that is protected is refused by the per-suite
checks, as "heldout task"). Every refusal names both sides: "pyfuncs/factorial duplicates
pyfuncs2/factorial (heldout)". Exports, experience builds and tool growth skip such an item and count it
under that reason; nothing crashes. Suites that do not load are listed as unchecked, never ignored silently.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rsi.tasks.spec import Task
    from rsi.workspace import Workspace

MIN_OVERLAP = 0.3
TRAIN = "train"
_DEF = re.compile(r"\bdef\s+([A-Za-z_]\w*)\s*\(")
_WORD = re.compile(r"[a-z0-9]+")
_EXAMPLES = re.compile(r"^\s*(#+\s*)?examples?\b", re.IGNORECASE)
_STOP = frozenset(["a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "its", "of", "on",
                   "or", "that", "the", "this", "to", "with"])


def is_protected(split: str) -> bool:
    """Every split but train is protected (heldout, test, and any a suite adds later)."""
    return split != TRAIN


def function_of(instruction: str, solution_code: str = "") -> str:
    """The function a task asks for, lowercased ('' when neither the instruction nor the solution names one)."""
    found = _DEF.search(instruction)
    if found:
        return found.group(1).lower()
    try:
        tree = ast.parse(solution_code) if solution_code else None
    except (SyntaxError, ValueError, RecursionError):
        tree = None
    for node in tree.body if tree else ():
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return node.name.lower()
    return ""


def instruction_words(instruction: str) -> tuple[str, ...]:
    """The normalised instruction (see the module docstring): the prose's words in order, stop words left out."""
    prose: list[str] = []
    fenced = False
    for line in instruction.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith(("    ", "\t")) or line.lstrip().startswith("#") and not _EXAMPLES.match(line):
            continue
        if _EXAMPLES.match(line):
            break
        prose.append(line)
    return tuple(w for w in _WORD.findall(" ".join(prose).lower()) if w not in _STOP)


@dataclass(frozen=True)
class TaskFace:
    """What twin matching reads of one task."""

    key: str
    split: str
    function: str
    words: frozenset[str]
    text: str  # the normalised instruction: its words joined by one space

    @classmethod
    def of(cls, key: str, split: str, instruction: str, solution_code: str = "") -> TaskFace:
        words = instruction_words(instruction)
        return cls(key, split, function_of(instruction, solution_code), frozenset(words), " ".join(words))


@dataclass(frozen=True)
class Twin:
    """A train item and the protected task it duplicates."""

    item: str
    twin: str
    split: str
    rule: str  # "same function NAME" or "same instruction"

    @property
    def reason(self) -> str:
        return f"{self.item} duplicates {self.twin} ({self.split})"


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard overlap of two word sets (0 when both are empty)."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def find_twin(item: TaskFace, protected: Iterable[TaskFace]) -> Twin | None:
    """The first protected task (by key) that `item` duplicates, or None; see the module docstring."""
    for face in sorted(protected, key=lambda f: f.key):
        if face.key == item.key:
            continue
        if item.text and face.text == item.text:
            return Twin(item.key, face.key, face.split, "same instruction")
        if item.function and face.function == item.function and overlap(item.words, face.words) >= MIN_OVERLAP:
            return Twin(item.key, face.key, face.split, f"same function {item.function}")
    return None


@dataclass(frozen=True)
class ProtectedTasks:
    """The protected tasks of every suite in the workspace, and the suites that could not be read."""

    faces: tuple[TaskFace, ...] = ()
    hashes: frozenset[str] = frozenset()
    suites: tuple[str, ...] = ()
    unreadable: dict[str, str] = field(default_factory=dict)

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(f.key for f in self.faces)

    def twin_of(self, item: TaskFace) -> Twin | None:
        by_function = [f for f in self.faces if f.function and f.function == item.function]
        by_text = [f for f in self.faces if item.text and f.text == item.text]
        return find_twin(item, [*by_function, *by_text])

    def twins_of(self, tasks: Iterable[Task]) -> dict[str, Twin]:
        """Train task key -> its twin, for the train tasks among `tasks` that have one."""
        found = {}
        for task in tasks:
            if is_protected(task.spec.split):
                continue
            twin = self.twin_of(face_of(task))
            if twin is not None:
                found[task.key] = twin
        return found

    def summary(self, twins: dict[str, Twin]) -> dict[str, Any]:
        """The decontamination record an export or a library manifest carries."""
        return {"suites": list(self.suites), "protected_tasks": len(self.faces), "unreadable_suites": dict(self.unreadable),
                "rule": f"same function and >= {MIN_OVERLAP} instruction word overlap, or same normalised instruction",
                "twins": {key: twin.reason for key, twin in sorted(twins.items())}}


def face_of(task: Task) -> TaskFace:
    """A loaded task's face (its reference solution read only when the instruction names no function)."""
    solution = ""
    if not _DEF.search(task.instruction):
        try:
            solution = (task.solution_dir / task.spec.solution_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            solution = ""
    return TaskFace.of(task.key, task.spec.split, task.instruction, solution)


def protected_tasks(workspace: Workspace) -> ProtectedTasks:
    """Every protected task of every suite under the workspace's tasks/ folder, as the suites are on disk now."""
    from rsi.errors import RsiError
    from rsi.tasks.load import load_suite

    faces, hashes, suites, unreadable = [], set(), [], {}
    root = Path(workspace.tasks_dir)
    for suite_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")) if root.is_dir() else ():
        try:
            tasks = load_suite(workspace, suite_dir.name)
        except RsiError as error:
            unreadable[suite_dir.name] = error.message.splitlines()[0] if error.message else type(error).__name__
            continue
        suites.append(suite_dir.name)
        for task in tasks:
            if is_protected(task.spec.split):
                faces.append(face_of(task))
                hashes.add(task.content_hash)
    return ProtectedTasks(tuple(faces), frozenset(hashes), tuple(suites), unreadable)


@dataclass(frozen=True)
class Decontamination:
    """What an export, an experience build or a tool growth refuses: protected keys and content hashes of every
    suite (and the store's, for the run's own suite), and the run's train tasks that are twins of protected ones."""

    keys: frozenset[str]
    hashes: frozenset[str]
    twins: dict[str, Twin]
    record: dict[str, Any]

    @property
    def reasons(self) -> dict[str, str]:
        """Train task key -> the refusal that names its twin."""
        return {key: twin.reason for key, twin in self.twins.items()}


def decontamination_for(workspace: Workspace, suite_tasks: Iterable[Task], stored_keys: Iterable[str] = (),
                        stored_hashes: Iterable[str] = ()) -> Decontamination:
    """The workspace-wide check for the train tasks of a run's suite (`suite_tasks`, as loaded from disk now)."""
    protected = protected_tasks(workspace)
    twins = protected.twins_of(suite_tasks)
    keys = protected.keys | frozenset(stored_keys)
    hashes = protected.hashes | frozenset(stored_hashes)
    record = {"heldout_tasks": len(keys), "heldout_hashes": len(hashes), **protected.summary(twins)}
    return Decontamination(keys, hashes, twins, record)
