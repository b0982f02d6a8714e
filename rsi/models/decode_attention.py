"""The embedded backend's attention: a decoding step's one query by two small matmuls, the rest by SDPA.

At a decoding step each row has one query against its cached keys. PyTorch's CPU SDPA runs that
through its flash kernel, built for long query blocks; with grouped-query attention the step's query
heads become a block of `groups` queries per key head (transformers' `pack_gqa`), still far too small
for the kernel's tiling. Scores, softmax and the weighted sum as plain batched matmuls over the same
packed layout do the same arithmetic (the softmax in float32, as the kernel accumulates) without it.
Prefill (many queries) and anything unusual (dropout, a position bias) keep SDPA unchanged.

Measured side by side (bench/attention_kernel.py: batch 8, 9 query heads on 3 key heads, one thread):
in bfloat16 this takes 0.72 of SDPA's time at 250 cached columns and 0.61 at 600; in float32 the same
as SDPA (1.03 and 1.01), so the backend uses it for bfloat16 on the CPU only.

Registered with transformers under `NAME`, with SDPA's mask builder, so the model is loaded with
`attn_implementation=NAME`; see "## decoding step" in bench/RESULTS.md for what it saves.
"""

from __future__ import annotations

from typing import Any

NAME = "rsi_decode"


def decode_attention(
    module: Any, query: Any, key: Any, value: Any, attention_mask: Any, dropout: float = 0.0,
    scaling: float | None = None, **kwargs: Any,
) -> tuple[Any, None]:
    """transformers' attention signature: query (batch, heads, q, dim), key/value (batch, kv heads, k, dim)
    -> (output (batch, q, heads, dim), no weights)."""
    import torch
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    if query.shape[2] != 1 or dropout or kwargs.get("position_bias") is not None or kwargs.get("softcap"):
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                      **kwargs)
    batch, heads, _, dim = query.shape
    kv_heads = key.shape[1]
    scale = dim**-0.5 if scaling is None else scaling
    # Query head h reads key head h // groups (transformers' repeat_kv order): group them by key head.
    grouped = query.reshape(batch, kv_heads, heads // kv_heads, dim)
    scores = torch.matmul(grouped, key.transpose(-1, -2)).float() * scale  # (batch, kv heads, groups, k)
    if attention_mask is not None:  # (batch, 1, 1, k): True where a row may look, or an additive float mask
        if attention_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attention_mask, float("-inf"))
        else:
            scores = scores + attention_mask.float()
    weights = torch.softmax(scores, dim=-1).to(value.dtype)
    output = torch.matmul(weights, value)  # (batch, kv heads, groups, dim)
    return output.reshape(batch, 1, heads, dim), None


def register() -> str:
    """Make `NAME` an attention implementation transformers can load models with; returns it."""
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

    AttentionInterface.register(NAME, decode_attention)
    ALL_MASK_ATTENTION_FUNCTIONS.register(NAME, sdpa_mask)
    return NAME
