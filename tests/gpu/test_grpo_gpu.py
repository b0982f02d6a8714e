"""The GPU path of GRPO's replay and its memory bound: the CPU tests' claims, checked on CUDA.

Marked `gpu`: skipped where torch sees no CUDA device (tests/conftest.py). On a GPU machine:
`pytest -m gpu tests/gpu/test_grpo_gpu.py`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.gpu, pytest.mark.slow]


def test_replay_equals_batched_and_exact_equals_full_on_cuda() -> None:
    import torch

    from tests.training.test_replay import full_gradients, hand_group, run, tiny_lora_model

    torch.backends.cuda.matmul.allow_tf32 = False  # TF32 matmuls would round differently per path
    model = tiny_lora_model(device="cuda")
    assert next(model.parameters()).device.type == "cuda"
    group = hand_group()
    replay_stats, replay = run(model, group, replay=True)
    batched_stats, batched = run(model, group, replay=False)
    assert replay_stats.losses == pytest.approx(batched_stats.losses, abs=1e-5)
    for name in replay:
        assert torch.allclose(replay[name], batched[name], atol=1e-5, rtol=0), name
    _, exact = run(model, group, replay=True, kl=0.0, exact=True)
    full = full_gradients(model, group)
    for name in full:
        assert torch.allclose(exact[name], full[name], atol=1e-5, rtol=0), name


def test_replay_memory_stays_flat_in_group_size_on_cuda() -> None:
    """bench/grpo_memory.py's cells on CUDA (torch.cuda.max_memory_allocated, each in a fresh process)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import grpo_memory

    base = grpo_memory.base_folder()
    peaks = {(mode, g): grpo_memory.measure(g, 256, 128, mode, "cuda", base)["peak_mb"]
             for mode in ("batched", "replay") for g in (2, 16)}
    print(peaks)
    assert peaks[("replay", 16)] < 1.5 * peaks[("replay", 2)]  # flat: one response's graph at a time
    assert peaks[("batched", 16)] > 3 * peaks[("batched", 2)]  # the batched group grows with G
