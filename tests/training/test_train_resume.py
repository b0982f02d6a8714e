"""Training killed with SIGKILL resumes from its checkpoint and makes the adapter an uninterrupted run makes.

Real peft LoRA training on the real embedded base, on the CPU, in subprocesses (the kill is real).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rsi.contracts.schema import TrainingSpec

# One training in a fresh process; `kill_at` SIGKILLs it from the progress callback of that step
# (after the step's checkpoint was written, as a kill between two steps would find it).
TRAIN = """
import json, os, signal, sys
from rsi.training.train import TrainRequest, train_adapter
request = TrainRequest.model_validate_json(sys.argv[1])
kill_at = int(sys.argv[2])
def progress(p):
    if p.step == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
print(train_adapter(request, progress).model_dump_json())
"""


def _train(request, kill_at: int = 0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", TRAIN, request.model_dump_json(), str(kill_at)],
                          capture_output=True, text=True, timeout=600, env={**os.environ, "RSI_TORCH_THREADS": "1"})


def _weights(adapter_dir: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(adapter_dir / "adapter_model.safetensors"))


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_killed_training_resumes_and_matches_an_uninterrupted_run(base_folder, tmp_path) -> None:
    from rsi.training.train import TrainRequest
    from tests.training.test_data import CONVERSATION, write_dataset

    dataset = write_dataset(tmp_path / "data", [CONVERSATION, CONVERSATION[:3]] * 3)
    hyper = TrainingSpec(batch_size=2, learning_rate=1e-3, max_length=256, dropout=0.1)

    def request(name: str) -> TrainRequest:
        return TrainRequest(base_folder=str(base_folder), dataset_dir=str(dataset), out_dir=str(tmp_path / name / "adapter"),
                            hyper=hyper, max_steps=4, threads=1, device="cpu", checkpoint_dir=str(tmp_path / name / "ckpt"))

    straight = _train(request("straight"))
    assert straight.returncode == 0, straight.stderr
    whole = json.loads(straight.stdout)
    assert whole["resumed_from_step"] == 0 and len(whole["losses"]) == 4

    killed = _train(request("killed"), kill_at=2)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not (tmp_path / "killed" / "adapter").exists() and (tmp_path / "killed" / "ckpt" / "state.pt").is_file()

    resumed = _train(request("killed"))
    assert resumed.returncode == 0, resumed.stderr
    again = json.loads(resumed.stdout)
    assert again["resumed_from_step"] == 2  # steps 1-2 came from the checkpoint, 3-4 were trained
    assert again["losses"] == pytest.approx(whole["losses"], abs=1e-5)  # dropout RNG and optimizer restored too
    a, b = _weights(tmp_path / "straight" / "adapter"), _weights(tmp_path / "killed" / "adapter")
    assert a.keys() == b.keys()
    assert max(float((a[k] - b[k]).abs().max()) for k in a) < 1e-5

    # A checkpoint written for another request (here: another learning rate) is not resumed.
    other = request("killed").model_copy(update={"hyper": hyper.model_copy(update={"learning_rate": 5e-4})})
    fresh = _train(other)
    assert fresh.returncode == 0, fresh.stderr
    assert json.loads(fresh.stdout)["resumed_from_step"] == 0
