"""A partition of an exported train dataset into named parts, one specialist trained per part (pure).

    partition_examples("tag", example_tasks, facts, clusters=3, seed=0, min_examples=4)
    -> [Partition("math", lines=(0, 3, ...), tasks=(...)), Partition("strings", ...), Partition("other", ...)]

`example_tasks` is the task key of each line of the export's train.jsonl, in line order (the manifest's
`source.attempts`, rsi/trajectories/export.py); `facts` holds each task's first tag, instruction and split.
Only train-split examples are partitioned: a line whose task is not a known train task is left out (the
export never writes heldout tasks; this keeps the guarantee if a task's split changed since).

Rules:
- `tag`: by the first tag of the task's `tags` (untagged tasks go to `other`);
- `cluster`: k-means over bag-of-words of the task instructions, with `clusters` centres seeded by `seed`
  (k-means++ with a seeded random.Random, Lloyd's iterations to a fixed point): the same tasks and seed
  give the same parts. Tasks are clustered, not examples, so every example of a task lands in one part.
  Clusters are named `cluster1`..`clusterK` in the order of their smallest task key.

Parts with fewer than `min_examples` examples are merged into `other` (kept whatever its size, so no
example is dropped). Parts come back sorted by name, `other` last.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from typing import Any, Literal

PartitionRule = Literal["tag", "cluster"]
OTHER = "other"
_WORD = re.compile(r"[a-z]+")
_NAME_BAD = re.compile(r"[^a-z0-9_.-]+")
_MAX_ITERATIONS = 100


@dataclass(frozen=True)
class TaskFacts:
    """What partitioning reads of a task."""

    tag: str
    instruction: str
    split: str


@dataclass(frozen=True)
class Partition:
    """One part: its name (a specialist name), the dataset lines (0-based) and the task keys in it."""

    name: str
    lines: tuple[int, ...]
    tasks: tuple[str, ...]


def example_tasks_of(manifest: dict[str, Any]) -> list[str]:
    """The task key of each dataset line, in line order, from an export's manifest."""
    attempts = sorted(manifest.get("source", {}).get("attempts", []), key=lambda a: int(a["line"]))
    return [str(a["task"]) for a in attempts]


def specialist_name(tag: str) -> str:
    """A tag as a specialist name (`[[specialists]] name` allows [a-z0-9_.-], starting alphanumeric)."""
    name = _NAME_BAD.sub("-", tag.strip().lower()).strip("-_.")
    return name or OTHER


def partition_examples(rule: PartitionRule, example_tasks: list[str], facts: dict[str, TaskFacts],
                       clusters: int = 3, seed: int = 0, min_examples: int = 1) -> list[Partition]:
    """See the module docstring."""
    train = [(line, task) for line, task in enumerate(example_tasks) if task in facts and facts[task].split == "train"]
    if rule == "tag":
        label = {task: specialist_name(facts[task].tag) if facts[task].tag else OTHER for _, task in train}
    else:
        label = cluster_tasks({task: facts[task].instruction for _, task in train}, clusters, seed)
    grouped: dict[str, list[tuple[int, str]]] = {}
    for line, task in train:
        grouped.setdefault(label[task], []).append((line, task))
    merged: dict[str, list[tuple[int, str]]] = {}
    for name, members in grouped.items():
        merged.setdefault(name if len(members) >= min_examples and name != OTHER else OTHER, []).extend(members)
    return [Partition(name, tuple(sorted(line for line, _ in members)), tuple(sorted({task for _, task in members})))
            for name, members in sorted(merged.items(), key=lambda item: (item[0] == OTHER, item[0]))]


def _vector(text: str) -> dict[str, float]:
    counts: dict[str, float] = {}
    for word in _WORD.findall(text.lower()):
        counts[word] = counts.get(word, 0.0) + 1.0
    norm = math.sqrt(sum(v * v for v in counts.values())) or 1.0
    return {w: v / norm for w, v in counts.items()}


def _distance(a: dict[str, float], b: dict[str, float]) -> float:
    keys = a.keys() | b.keys()
    return sum((a.get(k, 0.0) - b.get(k, 0.0)) ** 2 for k in keys)


def _mean(vectors: list[dict[str, float]]) -> dict[str, float]:
    total: dict[str, float] = {}
    for vector in vectors:
        for word, value in vector.items():
            total[word] = total.get(word, 0.0) + value
    return {w: v / len(vectors) for w, v in total.items()}


def _nearest(vector: dict[str, float], centres: list[dict[str, float]]) -> int:
    """The closest centre's index (the lower index on a tie, so the result never depends on float noise order)."""
    distances = [(_distance(vector, centre), index) for index, centre in enumerate(centres)]
    return min(distances)[1]


def cluster_tasks(instructions: dict[str, str], k: int, seed: int) -> dict[str, str]:
    """Each task's cluster name (`cluster1`..): seeded k-means++ then Lloyd's iterations over bag-of-words."""
    keys = sorted(instructions)
    if not keys:
        return {}
    vectors = [_vector(instructions[key]) for key in keys]
    rng = random.Random(seed)
    centres = [vectors[rng.randrange(len(keys))]]
    while len(centres) < min(k, len(keys)):
        weights = [min(_distance(v, c) for c in centres) for v in vectors]
        if sum(weights) <= 0:
            break  # every remaining task duplicates a centre: fewer clusters than asked
        centres.append(vectors[rng.choices(range(len(keys)), weights=weights)[0]])
    assignment: list[int] = []
    for _ in range(_MAX_ITERATIONS):
        nearest = [_nearest(v, centres) for v in vectors]
        if nearest == assignment:
            break
        assignment = nearest
        centres = [_mean([v for v, a in zip(vectors, assignment, strict=True) if a == c]) or centres[c]
                   for c in range(len(centres))]
    first_key: dict[int, str] = {}
    for key, a in zip(keys, assignment, strict=True):
        first_key.setdefault(a, key)  # keys are sorted: the first seen is the smallest
    order = {a: index + 1 for index, a in enumerate(sorted(first_key, key=lambda a: first_key[a]))}
    return {key: f"cluster{order[a]}" for key, a in zip(keys, assignment, strict=True)}
