"""Fixtures for the model tests: the real embedded base (converted once into the shared cache) and real,
tiny PEFT adapters made from it with randomly initialised (non-zero) LoRA weights, so that each
adapter's output really differs from the base's and from the other's."""

from __future__ import annotations

from pathlib import Path

import pytest

DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def make_adapter(base_folder: Path, dest: Path, seed: int, rank: int = 4) -> Path:
    """Save a real LoRA adapter (r=`rank` on q_proj/v_proj, random A and B) for the base in `dest`."""
    import warnings

    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    base = AutoModelForCausalLM.from_pretrained(base_folder)
    config = LoraConfig(
        r=rank, lora_alpha=2 * rank, target_modules=["q_proj", "v_proj"], init_lora_weights=False
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # peft calls a deprecated transformers helper
        get_peft_model(base, config).save_pretrained(dest)
    return dest


@pytest.fixture(scope="session")
def base_folder() -> Path:
    """The default contract's base as a cached HF folder (converts once per cache, ~15 s)."""
    from rsi.contracts.schema import BaseModelSpec
    from rsi.models.embedded.weights import hf_folder

    return hf_folder(BaseModelSpec(id="SmolLM2-135M-Instruct", file=DEFAULT_GGUF))


@pytest.fixture(scope="session")
def adapter_dirs(base_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two real tiny adapters, 'alpha' and 'beta', with different random weights."""
    root = tmp_path_factory.mktemp("adapters")
    return {
        "alpha": make_adapter(base_folder, root / "alpha", seed=1),
        "beta": make_adapter(base_folder, root / "beta", seed=2),
    }


def ask(prompt: str, **kwargs):
    """A one-message request (greedy, short, unless told otherwise)."""
    from rsi.models.base import ChatMessage, GenerationRequest

    kwargs.setdefault("max_tokens", 12)
    return GenerationRequest(messages=[ChatMessage(role="user", content=prompt)], **kwargs)


@pytest.fixture(scope="session")
def ask_fn():
    return ask
