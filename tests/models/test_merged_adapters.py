"""Merged LoRA weights (rsi/models/embedded/merged_adapters.py) on a tiny random Llama with real peft adapters, float32:
the merged forward equals peft's LoRA forward up to rounding, the base's own tensors come back untouched, and
what cannot be merged falls back to peft."""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")


def _tiny_peft(**lora):
    """A tiny random Llama wrapped by peft with adapters 'a', 'b' and 'c' (random, non-zero LoRA weights)."""
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=100, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    base = LlamaForCausalLM(config).eval()
    own = {k: v.clone() for k, v in base.state_dict().items()}
    options = {"r": 4, "lora_alpha": 8, "target_modules": ["q_proj", "v_proj"], "init_lora_weights": False, **lora}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = get_peft_model(base, LoraConfig(**options), adapter_name="a")
        model.add_adapter("b", LoraConfig(**{**options, "target_modules": ["v_proj", "o_proj"]}))
        model.add_adapter("c", LoraConfig(**options))
    return model.eval(), own


def _logits(model, ids):
    with torch.no_grad():
        return model(input_ids=ids).logits


IDS = torch.tensor([[1, 5, 9, 13, 17, 21], [2, 4, 6, 8, 10, 12]])


def _lora_logits(model, adapter):
    """The adapter through peft's own LoRA layers (its merged weights not in place)."""
    model.base_model.enable_adapter_layers()
    model.set_adapter(adapter)
    return _logits(model, IDS)


def _base_logits(model):
    model.base_model.disable_adapter_layers()
    return _logits(model, IDS)


def test_merged_weights_compute_what_the_lora_layers_compute() -> None:
    from rsi.models.embedded.merged_adapters import MergedAdapters

    model, _ = _tiny_peft()
    merged = MergedAdapters()
    base = _base_logits(model)
    for adapter in ("a", "b"):  # 'b' adapts other modules: the layers it leaves keep the base's tensors
        want = _lora_logits(model, adapter)
        assert merged.use(model, adapter) and merged.current == adapter
        got = _base_logits(model)  # LoRA layers off: only the merged weights carry the adapter
        assert torch.allclose(got, want, atol=1e-5, rtol=1e-5)
        assert not torch.allclose(got, base, atol=1e-3)  # the adapter really changes the output
        assert merged.use(model, None)
    assert torch.equal(_base_logits(model), base)  # the base's own tensors are back, bit for bit


def test_restore_leaves_the_base_untouched_for_peft_to_unload() -> None:
    from rsi.models.embedded.merged_adapters import MergedAdapters

    model, own = _tiny_peft()
    merged = MergedAdapters()
    assert merged.use(model, "a")
    merged.restore(model)
    assert merged.current is None
    model.delete_adapter("c")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bare = model.unload()
    for key, value in bare.state_dict().items():
        assert torch.equal(value, own[key]), key
    assert merged.use(model, None)  # after restore() the layers are found again, from scratch


def test_at_most_capacity_merged_copies_and_the_one_in_place_stays() -> None:
    from rsi.models.embedded.merged_adapters import MergedAdapters

    model, _ = _tiny_peft()
    merged = MergedAdapters(capacity=2)
    want_a = _lora_logits(model, "a")
    for adapter in ("a", "b", "c", "a"):
        assert merged.use(model, adapter)
    assert list(merged._merged) == ["c", "a"]  # 'b' was least recently used; 'a' merged again when asked
    assert torch.allclose(_base_logits(model), want_a, atol=1e-5, rtol=1e-5)


def test_an_adapter_that_cannot_be_merged_runs_through_peft() -> None:
    from rsi.models.embedded.merged_adapters import MergedAdapters

    model, own = _tiny_peft(use_dora=True)  # DoRA rescales the weight: not a plain B @ A added to it
    merged = MergedAdapters()
    assert merged.use(model, "a") is False
    assert merged.current is None
    base = model.get_base_model()
    layer = base.model.layers[0].self_attn.q_proj.get_base_layer()
    assert torch.equal(layer.weight, own["model.layers.0.self_attn.q_proj.weight"])
