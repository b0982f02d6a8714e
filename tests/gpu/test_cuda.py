"""The GPU path of the same code: the embedded backend and the LoRA recipe on CUDA.

Marked `gpu`: skipped where torch sees no CUDA device (tests/conftest.py), run on a GPU machine
with the project installed (`make test`, or `pytest -m gpu`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

pytestmark = [pytest.mark.gpu, pytest.mark.slow]


@pytest.fixture(scope="module")
def base_folder() -> Path:
    from rsi.contracts.schema import BaseModelSpec
    from rsi.models.embedded.weights import hf_folder

    return hf_folder(BaseModelSpec(id="SmolLM2-135M-Instruct", file="SmolLM2-135M-Instruct.Q4_1.gguf"))


def test_embedded_backend_generates_on_cuda(base_folder: Path) -> None:
    from rsi.models.base import ChatMessage, GenerationRequest
    from rsi.models.embedded.backend import EmbeddedModel

    model = EmbeddedModel(base_folder, device="cuda")
    try:
        assert next(model._base.parameters()).device.type == "cuda"
        request = GenerationRequest(messages=[ChatMessage(role="user", content="What is the capital of France?")],
                                    max_tokens=12)
        first, again = model.generate(request), model.generate(request)
        assert first.completion_tokens > 0 and first.completions[0].text.strip()
        assert first.completions[0].text == again.completions[0].text  # greedy is repeatable
    finally:
        model.close()


def _dataset(folder: Path) -> Path:
    """A tiny SFT dataset in the export format (train.jsonl + manifest with its sha256)."""
    folder.mkdir(parents=True)
    lines = [
        {"messages": [{"role": "user", "content": f"Write add{i}(a, b) in solution.py."},
                      {"role": "assistant", "content": f"```python\ndef add{i}(a, b):\n    return a + b\n```"}]}
        for i in range(8)
    ]
    raw = "".join(json.dumps(line) + "\n" for line in lines).encode()
    (folder / "train.jsonl").write_bytes(raw)
    manifest = {"dataset": {"file": "train.jsonl", "sha256": hashlib.sha256(raw).hexdigest()}, "source": {"runs": []}}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def test_lora_training_runs_on_cuda(base_folder: Path, tmp_path: Path) -> None:
    from rsi.contracts.schema import TrainingSpec
    from rsi.training.train import TrainRequest, train_adapter

    outcome = train_adapter(TrainRequest(
        base_folder=str(base_folder), dataset_dir=str(_dataset(tmp_path / "data")), out_dir=str(tmp_path / "adapter"),
        hyper=TrainingSpec(epochs=4, batch_size=4, max_length=128, learning_rate=1e-3), max_steps=8, device="cuda",
    ))
    assert outcome.device == "cuda"
    assert outcome.final_loss < outcome.first_loss
    assert (Path(outcome.adapter_dir) / "adapter_config.json").is_file()
