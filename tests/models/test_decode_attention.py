"""The embedded backend's decoding attention: SDPA's result for one query, with and without padding."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("masked", [False, True])
def test_one_query_matches_sdpa(dtype, masked: bool) -> None:
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    from rsi.models.decode_attention import decode_attention

    generator = torch.Generator().manual_seed(0)
    batch, heads, kv_heads, columns, dim = 5, 9, 3, 37, 64  # SmolLM2's grouping: 3 query heads per key head
    query = torch.randn(batch, heads, 1, dim, generator=generator).to(dtype)
    key, value = (torch.randn(batch, kv_heads, columns, dim, generator=generator).to(dtype) for _ in range(2))
    mask = None
    if masked:  # left padding of a different width per row, as in the running batch
        mask = torch.ones(batch, 1, 1, columns, dtype=torch.bool)
        for row in range(batch):
            mask[row, ..., : 4 * row] = False
    module = SimpleNamespace(num_key_value_groups=heads // kv_heads, is_causal=True)
    want, _ = sdpa_attention_forward(module, query, key, value, mask, scaling=dim**-0.5)
    got, _ = decode_attention(module, query, key, value, mask, scaling=dim**-0.5)
    assert got.shape == want.shape == (batch, 1, heads, dim)
    tolerance = 1e-5 if dtype == torch.float32 else 2e-2
    assert torch.allclose(got.float(), want.float(), atol=tolerance, rtol=tolerance)


def test_many_queries_go_to_sdpa_unchanged() -> None:
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    from rsi.models.decode_attention import decode_attention

    generator = torch.Generator().manual_seed(1)
    query = torch.randn(2, 4, 6, 16, generator=generator)
    key, value = (torch.randn(2, 2, 6, 16, generator=generator) for _ in range(2))
    module = SimpleNamespace(num_key_value_groups=2, is_causal=True)
    want, _ = sdpa_attention_forward(module, query, key, value, None)
    got, _ = decode_attention(module, query, key, value, None)
    assert torch.equal(got, want)
