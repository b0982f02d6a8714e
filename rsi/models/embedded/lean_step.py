"""One decoding step of a Llama model without transformers' generic forward: the embedded backend's hot loop.

A decoding step of the embedded backend feeds one token per row through the whole model. transformers'
forward is written for every shape and every option (masks built from a cache's state, kwargs plumbed
through decorators, one product per projection); on a 135M model at 8-16 rows its Python around the
products is a sizeable share of the step. `LeanDecoder.step` does only what one decoding step of a
Llama model needs:

- q, k and v come from one product on their weights stacked, and gate and up from one more (three
  products a layer fewer), on a copy packed for oneDNN where that runs (`rsi.models.embedded.packed_linear`);
- rotary positions come from the model's own rotary module, so any rope scaling of its config holds;
- each layer's new key and value go into the backend's spare-columns cache (`rsi.models.embedded.spare_cache`),
  and attention is two batched products (`attend`) with the query heads that share a key head packed
  together (as transformers does for one query position), masked only where some row has left padding;
- norms, o_proj, down_proj, the final norm and the head are the model's own modules.

It serves a step only where the base's arithmetic is all there is: no LoRA layer active (the base's
own weights, or an adapter's merged ones swapped in: `rsi.models.embedded.merged_adapters`). Stacked weights are
made when a layer first runs with a set of weights, keyed by their identity and version, so a swapped-in
weight gets its own stack and a changed one is stacked again. Prefill, and steps that need LoRA layers,
keep transformers' forward. `RSI_LEAN_STEP=0` turns it off. Measured side by side in bench/RESULTS.md
("## paired ratios (2026-12-03, 57f8151)", the `lean / transformers step` rows).
"""

from __future__ import annotations

import os
from typing import Any

from rsi.models.embedded.packed_linear import WeightPacks, linear

__all__ = ["ENV_LEAN", "LeanDecoder", "STACKS_PER_LAYER", "lean_decoder"]

ENV_LEAN = "RSI_LEAN_STEP"  # 0: every step through transformers' forward (for comparisons)
STACKS_PER_LAYER = 3  # the base's weights and a couple of merged adapters' (as rsi.models.embedded.packed_linear)
SUPPORTED = ("LlamaForCausalLM",)


def _weight(module: Any) -> Any:
    """A projection's weight as it computes now: a LoRA wrapper's base layer (its adapters are off here)."""
    base = module.get_base_layer() if hasattr(module, "get_base_layer") else module
    return base.weight


class LeanDecoder:
    """`step()`: next-token logits for every row of a running batch, one token each (see the module docstring)."""

    def __init__(self, model: Any) -> None:
        self.model = model  # the transformers model (peft injects its LoRA wrappers into it in place)
        config = model.config
        self.heads = int(config.num_attention_heads)
        self.kv_heads = int(config.num_key_value_heads)
        self.head_dim = int(getattr(config, "head_dim", None) or config.hidden_size // self.heads)
        layers = model.model.layers
        self._qkv = [WeightPacks(STACKS_PER_LAYER) for _ in layers]
        self._gate_up = [WeightPacks(STACKS_PER_LAYER) for _ in layers]

    def step(self, ids: Any, positions: Any, mask: Any, cache: Any) -> Any:
        """Logits (rows x vocabulary, float32) after feeding `ids` (rows x 1) at `positions` (rows x 1).

        `mask` (rows x cached columns + 1, 1 = attend) marks each row's left padding; `cache` is the
        batch's spare-columns cache, which gets each layer's new key and value column.
        """
        import torch
        from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

        inner = self.model.model
        rows = ids.shape[0]
        heads, kv_heads, dim = self.heads, self.kv_heads, self.head_dim
        x = inner.embed_tokens(ids)  # rows x 1 x hidden
        cos, sin = inner.rotary_emb(x, positions)
        padding = None  # 0 where a row attends, -inf on its left padding; None when no row has any
        if not bool(mask.all()):
            padding = torch.zeros(mask.shape, device=mask.device).masked_fill_(mask == 0, float("-inf"))[:, None, None, :]
        for index, layer in enumerate(inner.layers):
            attention, mlp = layer.self_attn, layer.mlp
            h = layer.input_layernorm(x)
            qkv = linear(h, self._qkv[index].get([_weight(attention.q_proj), _weight(attention.k_proj),
                                                     _weight(attention.v_proj)]))
            q, k, v = qkv.split([heads * dim, kv_heads * dim, kv_heads * dim], dim=-1)
            q = q.view(rows, 1, heads, dim).transpose(1, 2)
            k = k.view(rows, 1, kv_heads, dim).transpose(1, 2)
            v = v.view(rows, 1, kv_heads, dim).transpose(1, 2)
            q, k = apply_rotary_pos_emb(q, k, cos, sin)
            keys, values = cache.layers[index].update(k, v)
            # one query position: the heads that share a key head attend as one group of positions
            grouped = q.reshape(rows, kv_heads, heads // kv_heads, dim)
            out = attend(grouped, keys, values, padding, attention.scaling)
            x = x + attention.o_proj(out.reshape(rows, 1, heads * dim))
            h = layer.post_attention_layernorm(x)
            gate, up = linear(h, self._gate_up[index].get([_weight(mlp.gate_proj), _weight(mlp.up_proj)])).chunk(2, dim=-1)
            x = x + mlp.down_proj(mlp.act_fn(gate) * up)
        return self.model.lm_head(inner.norm(x))[:, -1, :].float()


def attend(queries: Any, keys: Any, values: Any, padding: Any, scale: float) -> Any:
    """Attention of a few query positions per (row, key head) over the cached columns, as two batched products.

    torch's CPU SDPA (its flash kernel) is written for long queries; with the 1-3 query positions of a
    decoding step it took 1.3-2x the time of this in isolation (16 rows, 100-800 columns, both formats),
    and in a closed loop shaped like a run (16 clients, task prompts, 64-512 tokens) the backend made
    1.02-1.19x the tokens per second with this (2026-12-03 at fada39a, four pairs). A bfloat16 product on a window of the
    spare-columns buffer (strided rows) takes a slow path (7x), so there the keys and values are copied
    first; in float32 the products read the window as it is. Softmax runs in float32, as transformers'
    eager attention does.
    """
    import torch

    if keys.dtype != torch.float32:
        keys, values = keys.contiguous(), values.contiguous()
    scores = torch.matmul(queries.contiguous(), keys.transpose(-1, -2)).float().mul_(scale)
    if padding is not None:
        scores.add_(padding)
    weights = torch.softmax(scores, dim=-1).to(values.dtype)
    return torch.matmul(weights, values)


def lean_decoder(model: Any) -> LeanDecoder | None:
    """A `LeanDecoder` for `model` where its architecture is one this step reproduces (and `RSI_LEAN_STEP`
    does not say 0), else None."""
    if os.environ.get(ENV_LEAN, "1").strip() == "0" or type(model).__name__ not in SUPPORTED:
        return None
    config = model.config
    if getattr(config, "attention_bias", False) or getattr(config, "mlp_bias", False):
        return None  # the stacked products carry no biases
    if getattr(config, "hidden_act", "silu") != "silu" or getattr(config, "pretraining_tp", 1) != 1:
        return None
    inner = getattr(model, "model", None)
    layers = getattr(inner, "layers", None)
    if inner is None or not hasattr(inner, "rotary_emb") or not layers:
        return None  # another transformers layout than the one this step was written against
    if not all(hasattr(layer.self_attn, "scaling") and hasattr(layer.mlp, "act_fn") for layer in layers):
        return None
    return LeanDecoder(model)
