"""The spare-columns KV cache: the same keys and values as Hugging Face's concatenating layer, and the same
greedy tokens through the running batch's prefill, joins, steps and departures (a tiny random Llama, float32)."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")


def test_appending_matches_concatenation_across_growth_and_reassignment(monkeypatch) -> None:
    from transformers.cache_utils import DynamicLayer

    import rsi.models.embedded.spare_cache as spare_cache

    monkeypatch.setattr(spare_cache, "MIN_SPARE", 2)  # grow every few steps
    torch.manual_seed(0)
    spare, plain = spare_cache.SpareColumnsLayer(), DynamicLayer()
    for new in [5, 1, 1, 1, 3, 1, 1, 1, 1, 1, 7, 1]:
        keys, values = torch.randn(2, 3, new, 4), torch.randn(2, 3, new, 4)
        got = spare.update(keys, values)
        want = plain.update(keys, values)
        assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
        assert spare.get_seq_length() == plain.get_seq_length()
    assert spare._windows["keys"].buffer.shape[-2] > spare.get_seq_length()  # spare columns are really there
    # What the running batch does when a row leaves: keep row 1 and drop the first 4 columns, keys first.
    for layer in (spare, plain):
        layer.keys = layer.keys[[1], :, 4:, :]
        layer.values = layer.values[[1], :, 4:, :]
    keys, values = torch.randn(1, 3, 1, 4), torch.randn(1, 3, 1, 4)
    got, want = spare.update(keys, values), plain.update(keys, values)
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    assert spare.get_seq_length() == plain.get_seq_length() == 21


def _poison_spare_room(layer) -> None:
    """NaN everywhere in the buffers outside the windows: what uninitialised memory may hold."""
    for window in layer._windows.values():
        inside = window.buffer[: window.rows, :, window.start : window.end].clone()
        window.buffer.fill_(float("nan"))
        window.buffer[: window.rows, :, window.start : window.end] = inside


def test_row_and_column_moves_match_plain_tensor_operations(monkeypatch) -> None:
    """Joins (right-aligned, zero-padded), widening to the left, departures (last rows into the freed slots)
    and trimming give the tensors that concatenation and indexing give, and never expose the buffers'
    uninitialised room."""
    import rsi.models.embedded.spare_cache as spare_cache

    monkeypatch.setattr(spare_cache, "MIN_SPARE", 2)
    torch.manual_seed(0)
    layer = spare_cache.SpareColumnsLayer()
    keys, values = torch.randn(3, 2, 5, 4), torch.randn(3, 2, 5, 4)
    layer.update(keys, values)
    want_k, want_v = keys.clone(), values.clone()

    def pad(tensor, columns):
        return torch.cat([tensor.new_zeros(*tensor.shape[:2], columns, tensor.shape[3]), tensor], dim=2)

    for step in range(12):
        _poison_spare_room(layer)
        if step % 4 == 0:  # two narrower rows join
            new_k, new_v = torch.randn(2, 2, 3, 4), torch.randn(2, 2, 3, 4)
            layer.add_rows(new_k, new_v)
            width = want_k.shape[2]
            want_k = torch.cat([want_k, pad(new_k, width - 3)])
            want_v = torch.cat([want_v, pad(new_v, width - 3)])
        elif step % 4 == 1:  # a wider row joins: the window widens on the left first
            width = want_k.shape[2]
            layer.extend_left(2)
            new_k, new_v = torch.randn(1, 2, width + 2, 4), torch.randn(1, 2, width + 2, 4)
            layer.add_rows(new_k, new_v)
            want_k, want_v = torch.cat([pad(want_k, 2), new_k]), torch.cat([pad(want_v, 2), new_v])
        elif step % 4 == 2:  # rows 0 and 2 leave: the last row moves into slot 0, then a column is trimmed
            keep = [i for i in range(want_k.shape[0]) if i not in (0, 2)]
            moves, order = spare_cache.slot_moves(keep)
            assert sorted(order) == keep and all(order[t] == s for s, t in moves)
            layer.keep_rows(moves, len(keep))
            layer.trim_left(1)
            want_k, want_v = want_k[order][:, :, 1:], want_v[order][:, :, 1:]
        else:  # a decoding step
            new_k, new_v = torch.randn(want_k.shape[0], 2, 1, 4), torch.randn(want_k.shape[0], 2, 1, 4)
            layer.update(new_k, new_v)
            want_k, want_v = torch.cat([want_k, new_k], dim=2), torch.cat([want_v, new_v], dim=2)
        assert torch.equal(layer.keys, want_k) and torch.equal(layer.values, want_v), step
        assert layer.get_seq_length() == want_k.shape[2]
    with pytest.raises(ValueError, match="do not fit"):
        layer.add_rows(torch.randn(1, 2, want_k.shape[2] + 1, 4), torch.randn(1, 2, want_k.shape[2] + 1, 4))


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
    import rsi.models.embedded.spare_cache as spare_cache
    from rsi.models.embedded.batcher import RunningBatch, prefill

    monkeypatch.setattr(spare_cache, "MIN_SPARE", 3)
    model = _tiny_llama()
    rng = random.Random(1)
    # (prompt, tokens to generate, the step at which it arrives): staggered joins, pads on both sides, departures
    requests = [
        ([rng.randrange(1, 100) for _ in range(rng.randrange(3, 30))], rng.randrange(5, 40), rng.randrange(0, 30))
        for _ in range(8)
    ]
    with torch.inference_mode():  # as the backend decodes: the batch's buffers are inference tensors
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
