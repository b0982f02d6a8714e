"""Several specialists from one export: a dataset per part of the train evidence, an adapter trained per part.

    parts = plan_partitions(workspace, export_dir, training)           # rsi.training.partition, on the tasks
    for part in parts:
        folder = write_partition_dataset(export_dir, part, rule, out)  # train.jsonl subset + its own manifest
        found = registered_partition(workspace, ...) or train_stage(...)

Each part's dataset is a real export folder (rsi.training.data verifies it like any other): the export's
lines of that part's tasks, and the export's manifest with `source.attempts` narrowed and renumbered, its own
`dataset.sha256`, and a `partition` record (name, rule, task keys, the whole export's sha256). It is written
deterministically, so a rerun writes the same bytes and the training key (and so its checkpoint folder) is the
same: a kill during a part's training resumes that part from its checkpoint.

A part whose adapter is registered (lineage `partition` with the same name, dataset sha256 and parent
contract) is not trained again: a generation killed after two of three parts trained resumes with the third.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsi.adapters.lineage import PartitionRecord
from rsi.adapters.registry import AdapterRecord, list_adapters
from rsi.atomic import write_bytes_atomic
from rsi.contracts.schema import TrainingSpec
from rsi.training.partition import Partition, PartitionRule, TaskFacts, example_tasks_of, partition_examples
from rsi.workspace import Workspace

DATASET_FILE = "train.jsonl"
MANIFEST_FILE = "manifest.json"


@dataclass(frozen=True)
class PartitionDataset:
    """A part written as its own dataset folder."""

    partition: Partition
    folder: Path
    sha256: str


def task_facts(workspace: Workspace, suite: str) -> dict[str, TaskFacts]:
    """Each task of the suite: its first tag, instruction and split."""
    from rsi.tasks.load import load_suite

    return {t.key: TaskFacts(tag=t.spec.tags[0] if t.spec.tags else "", instruction=t.instruction, split=t.spec.split)
            for t in load_suite(workspace, suite)}


def plan_partitions(workspace: Workspace, export_dir: Path, training: TrainingSpec) -> list[Partition]:
    """The parts of an export under the contract's `[training]` rule (`specialists_by` must not be 'none')."""
    manifest = json.loads((Path(export_dir) / MANIFEST_FILE).read_text(encoding="utf-8"))
    rule: PartitionRule = "tag" if training.specialists_by == "tag" else "cluster"
    facts = task_facts(workspace, manifest["source"]["suite"])
    return partition_examples(rule, example_tasks_of(manifest), facts, clusters=training.clusters,
                              seed=training.seed, min_examples=training.min_partition_examples)


def write_partition_dataset(export_dir: Path, partition: Partition, rule: str, out_dir: Path) -> PartitionDataset:
    """The part's lines of the export and a manifest describing exactly them (deterministic; manifest last)."""
    import hashlib

    export_dir, out_dir = Path(export_dir), Path(out_dir)
    manifest = json.loads((export_dir / MANIFEST_FILE).read_text(encoding="utf-8"))
    lines = (export_dir / DATASET_FILE).read_text(encoding="utf-8").splitlines()
    data = ("\n".join(lines[i] for i in partition.lines) + "\n").encode("utf-8")
    digest = hashlib.sha256(data).hexdigest()
    by_line = {int(a["line"]): a for a in manifest["source"]["attempts"]}
    attempts = [{**by_line[old], "line": new} for new, old in enumerate(partition.lines)]
    narrowed = {**manifest, "source": {**manifest["source"], "attempts": attempts},
                "dataset": {**manifest["dataset"], "sha256": digest, "examples": len(partition.lines)},
                "partition": {"name": partition.name, "rule": rule, "tasks": list(partition.tasks),
                              "export_sha256": manifest["dataset"]["sha256"]}}
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / MANIFEST_FILE).unlink(missing_ok=True)  # the manifest marks a complete dataset: remove it first
    write_bytes_atomic(out_dir / DATASET_FILE, data)
    write_bytes_atomic(out_dir / MANIFEST_FILE, (json.dumps(narrowed, indent=2, sort_keys=True) + "\n").encode("utf-8"))
    return PartitionDataset(partition, out_dir, digest)


def partition_lineage(part: PartitionDataset, rule: str, parent_ref: str) -> PartitionRecord:
    """What the adapter's lineage records of its part."""
    return PartitionRecord(name=part.partition.name, rule=rule, tasks=list(part.partition.tasks),
                           examples=len(part.partition.lines), dataset_sha256=part.sha256, parent_contract=parent_ref)


def registered_partition(workspace: Workspace, lineage: PartitionRecord) -> AdapterRecord | None:
    """The adapter already registered for this part (same name, data and parent), or None."""
    def same(stored: PartitionRecord | None) -> bool:
        return stored is not None and (stored.name, stored.rule, stored.dataset_sha256, stored.parent_contract) == (
            lineage.name, lineage.rule, lineage.dataset_sha256, lineage.parent_contract)

    return next((record for record in list_adapters(workspace) if same(record.lineage.partition)), None)


@dataclass(frozen=True)
class TrainedPart:
    """One part's adapter: trained here (`trained` True) or found registered by an earlier run."""

    name: str
    adapter_id: str
    adapter_path: str
    trained: bool
    metrics: dict[str, Any]


def train_partitions(workspace: Workspace, stage: Any, export_dir: Path, out_root: Path, training: TrainingSpec,
                     parent_ref: str, note: Callable[[str], None],
                     progress: Callable[[Any], None] | None = None) -> list[TrainedPart]:
    """Train (or find) one adapter per part; `stage` is the TrainStageSpec every part shares, `training` the
    `[training]` whose `specialists_by`, `clusters`, `seed` and `min_partition_examples` partition the export."""
    from rsi.training.stage import train_stage

    rule = training.specialists_by
    parts = plan_partitions(workspace, export_dir, training)
    note(f"{len(parts)} specialists by {rule}: " + ", ".join(f"{p.name} ({len(p.lines)})" for p in parts))
    done: list[TrainedPart] = []
    for part in parts:
        written = write_partition_dataset(export_dir, part, rule, out_root / part.name)
        lineage = partition_lineage(written, rule, parent_ref)
        record = registered_partition(workspace, lineage)
        if record is not None:
            note(f"{part.name}: registered before as {record.short_id}")
            done.append(TrainedPart(part.name, record.id, record.relative_adapter_dir(workspace), False,
                                    dict(record.lineage.metrics)))
            continue
        spec = stage.model_copy(update={"dataset": written.folder, "candidate": False, "specialist": part.name,
                                        "partition": lineage.model_dump(mode="json")})
        outcome = train_stage(workspace, spec, progress=_crash_points(part.name, progress),
                              on_note=_prefixed(note, f"{part.name}: "))
        relative = Path(outcome.adapter_dir).relative_to(workspace.root).as_posix()
        done.append(TrainedPart(part.name, outcome.adapter_id, relative, True, outcome.metrics.model_dump(mode="json")))
    return done


def train_specialists(workspace: Workspace, stage: Any, export_dir: Path, out_root: Path, training: TrainingSpec,
                      parent: Any, note: Callable[[str], None], progress: Callable[[Any], None] | None = None,
                      ) -> tuple[list[TrainedPart], str] | None:
    """`train_partitions`, then the candidate revision listing every part's specialist (routing: the parent's);
    None when the export has no train-split example to partition. `parent` is the resolved contract."""
    from rsi.training.candidate import write_candidate_specialists

    trained = train_partitions(workspace, stage, export_dir, out_root, training, parent.ref, note, progress)
    if not trained:
        return None
    written = write_candidate_specialists(
        workspace, parent.name, [(t.name, t.adapter_id, t.adapter_path) for t in trained], training.rank,
        list(training.target_modules), parent_ref=parent.ref, harness_sets=stage.harness_sets)
    _mark_candidates(workspace, [t.adapter_id for t in trained], written.summary())
    return trained, written.ref


def _mark_candidates(workspace: Workspace, adapter_ids: list[str], candidate: dict[str, Any]) -> None:
    """Each part's adapter becomes a `candidate` of the revision that lists it (as `rsi train` marks its one)."""
    from rsi.adapters.registry import find_adapter, update_status

    for adapter_id in adapter_ids:
        record = find_adapter(workspace, adapter_id)
        if record.status.state == "registered":
            update_status(record, state="candidate", candidate=candidate)


def _prefixed(note: Callable[[str], None], prefix: str) -> Callable[[str], None]:
    return lambda message: note(prefix + message)


def _crash_points(name: str, progress: Callable[[Any], None] | None) -> Callable[[Any], None]:
    """The caller's progress, then the crash point `train:part:<name>:step<k>` (after step k's checkpoint)."""
    from rsi.crashpoint import crash_point

    def report(p: Any) -> None:
        if progress is not None:
            progress(p)
        crash_point(f"train:part:{name}:step{p.step}")

    return report
