"""`rsi train --executor slurm`: the same recipe as a submitit job on the real single-node SLURM of
.ci/services/20-slurm.sh (CPU node here: --gpus 0), registered like a local training."""

from __future__ import annotations

import hashlib
import json

import pytest


@pytest.mark.parametrize(("state", "written", "reported"), [
    ("PENDING", True, "FINISHED"), ("RUNNING", True, "FINISHED"), ("UNKNOWN", True, "FINISHED"),
    ("COMPLETED", True, "COMPLETED"), ("PENDING", False, "PENDING"), ("FAILED", False, "FAILED"),
    ("CANCELLED by 0", True, "CANCELLED by 0"),
])
def test_a_finished_job_is_never_reported_as_still_pending(state, written, reported) -> None:
    # CI saw "slurm job 21: PENDING" as the last word on a job whose result was already read:
    # submitit's cached sacct answer lags a short job
    from rsi.training.slurm import settled_state

    assert settled_state(state, written) == reported


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_training_runs_as_a_slurm_job(slurm, workspace, tmp_path, monkeypatch) -> None:
    from rsi.training.stage import TrainStageSpec, train_stage

    monkeypatch.setenv("RSI_WORKSPACE", str(workspace.root))
    lines = [json.dumps({"messages": [{"role": "user", "content": f"Return {i} + 1."},
                                      {"role": "assistant", "content": f"```python\nprint({i} + 1)\n```"}]})
             for i in range(3)]
    data = ("\n".join(lines) + "\n").encode()
    dataset = tmp_path / "data"
    dataset.mkdir()
    (dataset / "train.jsonl").write_bytes(data)
    (dataset / "manifest.json").write_text(json.dumps({"dataset": {"file": "train.jsonl", "sha256": hashlib.sha256(data).hexdigest()},
                                                       "source": {"runs": ["r1"]}}))
    notes: list[str] = []
    outcome = train_stage(workspace, TrainStageSpec(
        dataset=dataset, executor="slurm", max_steps=2, batch_size=2, max_length=128, learning_rate=1e-3,
        slurm={"gpus": 0, "cpus": 1, "mem_gb": 3, "time_min": 15, "poll_s": 0.5},
    ), on_note=notes.append)
    # the last word on the job is a settled state, whatever the accounting had caught up with
    job_notes = [n for n in notes if n.startswith("slurm job ")]
    assert job_notes and job_notes[-1].endswith(("COMPLETED", "FINISHED")), notes
    assert outcome.lineage.executor == "slurm" and outcome.metrics.steps == 2
    assert outcome.metrics.device == "cpu" and outcome.metrics.losses[-1] < outcome.metrics.losses[0]
    assert (workspace.adapters_dir / outcome.adapter_id / "adapter" / "adapter_model.safetensors").is_file()
    assert list((workspace.runs_dir / "slurm-train").glob("train-*/*_submission.sh"))
    assert outcome.candidate is not None and outcome.candidate.ref == "default-candidate@r2"
