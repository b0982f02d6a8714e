"""rsi.models.compat: the one place where the transformers range's API differences are bridged.

These run in both tiers (`make test` on the newest transformers of the range, `make test-floor` on the
oldest): the cache's name must be the one the installed release's forward takes, and a cache handed over
through `cache_kwargs` must really be used (an unknown keyword is dropped silently by the older releases).
"""

from __future__ import annotations

import inspect

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from rsi.models.compat import cache_kwargs, cache_name, dynamic_cache, output_cache, versions  # noqa: E402


def _tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=97, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    return LlamaForCausalLM(config).eval()


def test_the_cache_name_is_the_one_the_installed_forward_takes() -> None:
    from transformers import LlamaForCausalLM
    from transformers.models.llama.modeling_llama import LlamaModel

    name = cache_name()
    assert name in ("cache", "past_key_values")
    for cls in (LlamaForCausalLM, LlamaModel):
        assert name in inspect.signature(cls.forward).parameters, (cls.__name__, name)
    assert cache_kwargs(None) == {}
    assert set(cache_kwargs(object())) == {name}


def test_a_cache_handed_over_is_used_and_returned() -> None:
    """Prompt, then one step against its cache: the step's logits are those of the whole sequence in one
    forward. A cache dropped as an unknown keyword would give the logits of the last token alone."""
    from transformers import DynamicCache

    model = _tiny_llama()
    ids = torch.tensor([[5, 6, 7, 8, 9, 10]])
    with torch.no_grad():
        whole = model(input_ids=ids).logits[:, -1]
        first = model(input_ids=ids[:, :-1], use_cache=True, **cache_kwargs(DynamicCache()))
        cache = output_cache(first)
        assert cache is not None and cache.get_seq_length() == 5
        step = model(input_ids=ids[:, -1:], attention_mask=torch.ones(1, 6, dtype=torch.long), use_cache=True,
                     **cache_kwargs(cache))
        alone = model(input_ids=ids[:, -1:]).logits[:, -1]
    torch.testing.assert_close(step.logits[:, -1], whole, atol=1e-5, rtol=1e-5)
    assert not torch.allclose(alone, whole, atol=1e-3)
    assert output_cache(step).get_seq_length() == 6


def test_a_dynamic_cache_over_existing_tensors_continues_them() -> None:
    """What replay's prompt state does: a cache built over stored keys and values, expanded for a batch of
    rows, continues the prompt exactly, with the 2-D mask covering prompt and new columns (on transformers
    5.17 this forward failed on the mask's shape before compat: the cache had been dropped)."""
    model = _tiny_llama()
    prompt, response = [3, 4, 5, 6], [7, 8, 9]
    with torch.no_grad():
        out = model(input_ids=torch.tensor([prompt]), use_cache=True)
        layers = [(layer.keys, layer.values) for layer in output_cache(out).layers]
        data = [(k.expand(2, -1, -1, -1), v.expand(2, -1, -1, -1)) for k, v in layers]
        cache = dynamic_cache(data, model.config)
        mask = torch.ones(2, len(prompt) + len(response), dtype=torch.long)
        positions = torch.arange(len(prompt), len(prompt) + len(response)).expand(2, -1)
        step = model(input_ids=torch.tensor([response, response]), attention_mask=mask, position_ids=positions,
                     use_cache=False, **cache_kwargs(cache))
        whole = model(input_ids=torch.tensor([prompt + response])).logits[:, len(prompt):]
    torch.testing.assert_close(step.logits[:1], whole, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(step.logits[1:], whole, atol=1e-5, rtol=1e-5)


def test_the_running_batch_continues_its_cache() -> None:
    """The embedded backend's prefill and step (rsi/models/embedded/batcher.py) on a tiny model: the step's logits
    are those of one forward over prompt and token (on transformers 5.17 the step failed on the output's
    missing `cache` attribute before compat)."""
    from rsi.models.embedded.batcher import RunningBatch, prefill
    from rsi.models.embedded.rows import Row

    model = _tiny_llama()
    prompt = [5, 6, 7, 8]
    with torch.inference_mode():
        cache, mask, logits = prefill(model, [prompt], None, "cpu")
        batch = RunningBatch()
        row = Row(owner=None, index=0, adapter="", request=None, max_new=4, length=len(prompt),
                  tokens=[int(logits.argmax(-1))])
        batch.join([row], cache, mask)
        step = batch.step(model, None)
        whole = model(input_ids=torch.tensor([prompt + row.tokens])).logits[:, -1].float()
    torch.testing.assert_close(step, whole, atol=1e-5, rtol=1e-5)
    assert batch.cache is not None and batch.cache.get_seq_length() == len(prompt) + 1


def test_versions_name_the_model_stack() -> None:
    found = versions()
    assert set(found) == {"torch", "transformers", "peft", "accelerate"}
    import transformers

    assert found["transformers"] == transformers.__version__
