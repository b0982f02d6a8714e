"""The spare-columns KV cache: the same keys and values as Hugging Face's concatenating layer, and the same
greedy tokens through the running batch's prefill, joins, steps and departures (a tiny random Llama, float32)."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")


def test_appending_matches_concatenation_across_growth_and_reassignment(monkeypatch) -> None:
    from transformers.cache_utils import DynamicLayer

    import rsi.models.spare_cache as spare_cache

    monkeypatch.setattr(spare_cache, "MIN_SPARE", 2)  # grow every few steps
    torch.manual_seed(0)
    spare, plain = spare_cache.SpareColumnsLayer(), DynamicLayer()
    for new in [5, 1, 1, 1, 3, 1, 1, 1, 1, 1, 7, 1]:
        keys, values = torch.randn(2, 3, new, 4), torch.randn(2, 3, new, 4)
        got = spare.update(keys, values)
        want = plain.update(keys, values)
        assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
        assert spare.get_seq_length() == plain.get_seq_length()
    assert spare._buffers["keys"].shape[-2] > spare.get_seq_length()  # spare columns are really there
    # What the running batch does when a row leaves: keep row 1 and drop the first 4 columns, keys first.
    for layer in (spare, plain):
        layer.keys = layer.keys[[1], :, 4:, :]
        layer.values = layer.values[[1], :, 4:, :]
    keys, values = torch.randn(1, 3, 1, 4), torch.randn(1, 3, 1, 4)
    got, want = spare.update(keys, values), plain.update(keys, values)
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    assert spare.get_seq_length() == plain.get_seq_length() == 21


def _tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=100,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,  # grouped-query attention, as in SmolLM2
        max_position_embeddings=512,
    )
    return LlamaForCausalLM(config).eval()


def test_the_running_batch_on_spare_columns_decodes_as_generate_does_alone(monkeypatch) -> None:
    import rsi.models.spare_cache as spare_cache
    from rsi.models.batcher import RunningBatch, prefill

    monkeypatch.setattr(spare_cache, "MIN_SPARE", 3)
    model = _tiny_llama()
    rng = random.Random(1)
    # (prompt, tokens to generate, the step at which it arrives): staggered joins, pads on both sides, departures
    requests = [
        ([rng.randrange(1, 100) for _ in range(rng.randrange(3, 30))], rng.randrange(5, 40), rng.randrange(0, 30))
        for _ in range(8)
    ]
    with torch.no_grad():
        alone = [
            model.generate(torch.tensor([p]), max_new_tokens=n, do_sample=False, pad_token_id=0)[0, len(p) :].tolist()
            for p, n, _ in requests
        ]
        together: dict[int, list[int]] = {}
        batch = RunningBatch()
        layer_kinds = set()
        for step in range(200):
            arriving = [i for i, (_, _, at) in enumerate(requests) if at == step]
            if arriving:
                cache, mask, logits = prefill(model, [requests[i][0] for i in arriving], None, "cpu")
                rows = [
                    SimpleNamespace(i=i, tokens=[int(logits[k].argmax())], length=len(requests[i][0]))
                    for k, i in enumerate(arriving)
                ]
                batch.join(rows, cache, mask)
            for row in batch.rows:
                if len(row.tokens) >= requests[row.i][1]:
                    together[row.i] = row.tokens
            batch.keep([k for k, row in enumerate(batch.rows) if row.i not in together])
            if len(batch):
                logits = batch.step(model, None)
                layer_kinds.add(type(batch.cache.layers[0]).__name__)
                for k, row in enumerate(batch.rows):
                    row.tokens.append(int(logits[k].argmax()))
    assert layer_kinds == {"SpareColumnsLayer"}
    assert [together[i] for i in range(len(requests))] == alone
