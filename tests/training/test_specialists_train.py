"""Several specialists from one export (rsi/training/specialists.py), trained for real and killed for real.

A real `rsi run` (scripted model replaying reference solutions) of six pyfuncs train tasks (math, strings,
math, strings, parsing, lists), exported without pyfuncs/anagram-check (a twin of a pyfuncs2 heldout task);
the contract says `specialists_by = "tag"` with parts of at least two examples, so the parts are math and
other (the one strings example, parsing, lists). Training is real peft on the
embedded base (2 steps a part), in a subprocess SIGKILLed during the second part's training by its crash
point; the rerun resumes, and every part is registered exactly once with its partition in its lineage.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

TRAIN = """
import json, sys
from pathlib import Path
from rsi.contracts.refs import resolve_ref
from rsi.training.specialists import train_specialists
from rsi.training.stage import TrainStageSpec
from rsi.workspace import Workspace
workspace, export, out = Workspace(Path(sys.argv[1])), Path(sys.argv[2]), Path(sys.argv[3])
parent = resolve_ref(workspace, "default")
stage = TrainStageSpec(dataset=export, contract=parent.ref, max_steps=2, batch_size=1, max_length=256, threads=1,
                       device="cpu")
trained, candidate = train_specialists(workspace, stage, export, out, parent.spec.training, parent, note=print)
print("RESULT " + json.dumps({"parts": [[t.name, t.adapter_id, t.trained] for t in trained], "candidate": candidate}))
"""


def _train(workspace, export: Path, out: Path, crash_at: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "RSI_TORCH_THREADS": "1", "RSI_WORKSPACE": str(workspace.root), "RSI_TEST_CRASH_AT": crash_at}
    return subprocess.run([sys.executable, "-c", TRAIN, str(workspace.root), str(export), str(out)],
                          capture_output=True, text=True, timeout=900, env=env)


def _result(done: subprocess.CompletedProcess) -> dict:
    return json.loads(next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))[7:])


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_a_specialists_adapter_survives_sigkill_of_its_training_with_its_lineage(workspace, cli, scripted_env,
                                                                                  tmp_path) -> None:
    from rsi.adapters.registry import list_adapters
    from rsi.contracts.refs import resolve_ref
    from tests.training import conftest as helpers

    env = scripted_env
    helpers.make_small_contract(cli, workspace, env)
    revised = cli("hcp", "revise", "default", "--set", 'training.specialists_by="tag"', "--set",
                  "training.min_partition_examples=2", "-m", "a specialist per task tag", cwd=workspace.root, env=env)
    assert revised.returncode == 0, revised.stderr
    _, export = helpers.run_and_export(cli, workspace, env, tmp_path / "export", tasks=6)
    parent = resolve_ref(workspace, "default")
    out = tmp_path / "parts"

    # pyfuncs/anagram-check is a twin of a pyfuncs2 heldout task and is not exported, so the one strings example left
    # (acronym) joins `other`: two parts, math and other, and the kill lands in the second
    killed = _train(workspace, export, out, crash_at="train:part:other:step1")
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    assert [r.lineage.partition.name for r in list_adapters(workspace) if r.lineage.partition] == ["math"]  # the first part registered

    resumed = _train(workspace, export, out)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    result = _result(resumed)
    assert [(name, trained) for name, _, trained in result["parts"]] == [("math", False), ("other", True)]
    records = list_adapters(workspace)
    assert sorted(r.lineage.partition.name for r in records if r.lineage.partition) == ["math", "other"]  # each exactly once
    manifest = json.loads((export / "manifest.json").read_text())
    exported_tasks = {a["task"] for a in manifest["source"]["attempts"]}
    for record in records:
        part = record.lineage.partition
        assert part is not None
        assert record.lineage.name == part.name and part.rule == "tag" and part.parent_contract == parent.ref
        assert record.lineage.dataset.sha256 == part.dataset_sha256 == (
            json.loads((out / part.name / "manifest.json").read_text())["dataset"]["sha256"])
        assert set(part.tasks) <= exported_tasks and record.lineage.metrics["steps"] == 2
        assert record.status.state == "candidate"
    tasks = {r.lineage.partition.name: set(r.lineage.partition.tasks) for r in records if r.lineage.partition}
    assert tasks["math"] == {"pyfuncs/absolute-value", "pyfuncs/add-two"}
    assert tasks["other"] == {"pyfuncs/acronym", "pyfuncs/balanced-brackets", "pyfuncs/binary-search"}

    candidate = resolve_ref(workspace, result["candidate"])
    by_name = {s.name: s for s in candidate.spec.specialists}
    assert set(by_name) == {"math", "other"} and all(s.revision == 1 for s in by_name.values())
    assert {name: s.sha256 for name, s in by_name.items()} == {r.lineage.name: r.id for r in records}
    assert candidate.spec.routing == parent.spec.routing  # routing stays the parent's

    # Nothing retrains, and the same candidate revision is found, not written twice.
    again = _train(workspace, export, out)
    assert again.returncode == 0 and _result(again)["candidate"] == result["candidate"]
    assert all(not trained for _, _, trained in _result(again)["parts"]) and len(list_adapters(workspace)) == 2
