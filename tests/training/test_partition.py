"""Partitions of the train evidence (rsi/training/partition.py) and their dataset folders (rsi/training/specialists.py):
deterministic, train-split only, small parts merged into `other`, each part a dataset rsi.training.data verifies."""

from __future__ import annotations

import hashlib
import json

from rsi.training.data import load_sft_dataset
from rsi.training.partition import OTHER, TaskFacts, cluster_tasks, example_tasks_of, partition_examples
from rsi.training.specialists import partition_lineage, write_partition_dataset

FACTS = {
    "s/add": TaskFacts("math", "Return the sum of two integers a and b.", "train"),
    "s/mul": TaskFacts("math", "Return the product of two integers a and b.", "train"),
    "s/pow": TaskFacts("math", "Return integer a raised to the power b.", "train"),
    "s/rev": TaskFacts("strings", "Reverse the characters of a string s.", "train"),
    "s/upper": TaskFacts("strings", "Return the string s with every character upper case.", "train"),
    "s/flat": TaskFacts("lists", "Flatten a list of lists into one list.", "train"),
    "s/held": TaskFacts("math", "Return the difference of two integers a and b.", "heldout"),
    "s/untagged": TaskFacts("", "Do something.", "train"),
}
# two examples per task, in an order that interleaves tags (as an export's lines do)
LINES = ["s/add", "s/rev", "s/add", "s/mul", "s/flat", "s/upper", "s/pow", "s/held", "s/rev", "s/untagged"]


def test_by_tag_names_parts_merges_small_ones_and_keeps_only_train_examples() -> None:
    parts = partition_examples("tag", LINES, FACTS, min_examples=3)
    assert [p.name for p in parts] == ["math", "strings", OTHER]
    by_name = {p.name: p for p in parts}
    assert by_name["math"].lines == (0, 2, 3, 6) and by_name["math"].tasks == ("s/add", "s/mul", "s/pow")
    assert by_name["strings"].lines == (1, 5, 8)
    assert by_name[OTHER].lines == (4, 9)  # lists (1 example) and the untagged task, below the minimum
    every = [line for p in parts for line in p.lines]
    assert 7 not in every and sorted(every) == [i for i in range(len(LINES)) if i != 7]  # the heldout line: nowhere
    assert partition_examples("tag", LINES, FACTS, min_examples=1)[1].name == "math"  # lists kept at minimum 1
    unknown = partition_examples("tag", [*LINES, "s/gone"], FACTS, min_examples=3)
    assert unknown == parts  # a task no longer in the suite is not a known train task


def test_clusters_are_deterministic_per_seed_and_keep_a_task_in_one_part() -> None:
    instructions = {key: f.instruction for key, f in FACTS.items() if f.split == "train"}
    first = cluster_tasks(instructions, 3, seed=7)
    assert first == cluster_tasks(dict(reversed(list(instructions.items()))), 3, seed=7)  # input order is irrelevant
    assert set(first.values()) == {"cluster1", "cluster2", "cluster3"}
    assert first["s/add"] == "cluster1"  # named in the order of each cluster's smallest task key
    assert first["s/add"] == first["s/mul"]  # the two "two integers a and b" tasks share their words
    parts = partition_examples("cluster", LINES, FACTS, clusters=3, seed=7)
    assert parts == partition_examples("cluster", LINES, FACTS, clusters=3, seed=7)
    for part in parts:
        assert all(sum(1 for p in parts if task in p.tasks) == 1 for task in part.tasks)
    assert set(cluster_tasks({"a": "same words", "b": "same words"}, 3, seed=0).values()) == {"cluster1"}


def test_a_part_is_a_verified_dataset_with_its_own_manifest(tmp_path) -> None:
    lines = [json.dumps({"messages": [{"role": "user", "content": t}, {"role": "assistant", "content": "ok"}]})
             for t in LINES]
    data = ("\n".join(lines) + "\n").encode()
    export = tmp_path / "export"
    export.mkdir()
    (export / "train.jsonl").write_bytes(data)
    manifest = {"source": {"suite": "s", "runs": ["r1"], "attempts": [{"line": i, "task": t, "attempt": f"a{i}"}
                                                                       for i, t in enumerate(LINES)]},
                "dataset": {"file": "train.jsonl", "sha256": hashlib.sha256(data).hexdigest(), "examples": len(LINES)}}
    (export / "manifest.json").write_text(json.dumps(manifest))
    assert example_tasks_of(manifest) == LINES
    math = partition_examples("tag", LINES, FACTS, min_examples=3)[0]
    written = write_partition_dataset(export, math, "tag", tmp_path / "parts" / "math")
    again = write_partition_dataset(export, math, "tag", tmp_path / "parts" / "math")
    assert again == written  # a rerun writes the same bytes: the same training key, so a checkpoint resumes
    loaded = load_sft_dataset(written.folder)
    assert loaded.sha256 == written.sha256 and [c[0]["content"] for c in loaded.conversations] == ["s/add"] * 2 + [
        "s/mul", "s/pow"]
    assert [a["line"] for a in loaded.manifest["source"]["attempts"]] == [0, 1, 2, 3]
    assert loaded.manifest["partition"] == {"name": "math", "rule": "tag", "tasks": ["s/add", "s/mul", "s/pow"],
                                            "export_sha256": manifest["dataset"]["sha256"]}
    assert partition_lineage(written, "tag", "default@r2").model_dump(mode="json") == {
        "name": "math", "rule": "tag", "tasks": ["s/add", "s/mul", "s/pow"], "examples": 4,
        "dataset_sha256": written.sha256, "parent_contract": "default@r2"}
