"""Continuing a parent's adapter (`rsi train --from-adapter`): the training starts from that adapter's weights,
not from a fresh LoRA, and its checkpoint identity depends on them.

Real peft LoRA training on the real embedded base, on the CPU.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rsi.contracts.schema import TrainingSpec


def _request(base_folder: Path, dataset: Path, out: Path, init: Path | None = None):
    from rsi.training.train import TrainRequest

    hyper = TrainingSpec(batch_size=2, learning_rate=2e-3, max_length=256, dropout=0.0)
    return TrainRequest(base_folder=str(base_folder), dataset_dir=str(dataset), out_dir=str(out / "adapter"),
                        hyper=hyper, max_steps=3, threads=1, device="cpu", checkpoint_dir=str(out / "ckpt"),
                        init_adapter=str(init) if init else None)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_continued_training_starts_from_the_parent_adapter(base_folder, tmp_path) -> None:
    from safetensors.torch import load_file

    from rsi.training.train import TrainingError, request_fingerprint, train_adapter
    from tests.training.test_data import CONVERSATION, write_dataset

    dataset = write_dataset(tmp_path / "data", [CONVERSATION, CONVERSATION[:3]] * 2)
    parent = train_adapter(_request(base_folder, dataset, tmp_path / "parent"))
    continued = train_adapter(_request(base_folder, dataset, tmp_path / "child", init=Path(parent.adapter_dir)))

    # A fresh LoRA starts at the base's loss (its B matrices are zero); the continued one starts where the
    # parent's three steps left it, so its first loss is the lower one.
    assert continued.losses[0] < parent.losses[0] - 1e-3
    a = load_file(str(Path(parent.adapter_dir) / "adapter_model.safetensors"))
    b = load_file(str(Path(continued.adapter_dir) / "adapter_model.safetensors"))
    assert a.keys() == b.keys()  # the parent's rank and targets, trained further
    assert max(float((a[k] - b[k]).abs().max()) for k in a) > 0

    # The parent's weights are part of what a checkpoint must match: a fresh training never resumes it.
    fresh, child = _request(base_folder, dataset, tmp_path / "x"), _request(base_folder, dataset, tmp_path / "x",
                                                                            init=Path(parent.adapter_dir))
    assert request_fingerprint(fresh, "d", "cpu") != request_fingerprint(child, "d", "cpu")

    with pytest.raises(TrainingError, match="no PEFT adapter to continue from"):
        train_adapter(_request(base_folder, dataset, tmp_path / "bad", init=tmp_path / "data"))
