"""The lean decoding step computes what transformers' forward does, for rows of different lengths and padding."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from rsi.models.compat import cache_kwargs, output_cache  # noqa: E402
from rsi.models.embedded.batcher import prefill  # noqa: E402
from rsi.models.embedded.lean_step import STACKS_PER_LAYER, lean_decoder  # noqa: E402


def _tiny_llama(dtype: torch.dtype = torch.float32):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=97, hidden_size=64, intermediate_size=128, num_hidden_layers=3,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                         rope_theta=10000.0, tie_word_embeddings=True)
    return LlamaForCausalLM(config).to(dtype).eval()


def _decode(model, prompts: list[list[int]], steps: int, lean) -> tuple[list[list[int]], list]:
    """Greedy tokens and per-step logits after a shared prefill: transformers' steps, or the lean ones."""
    with torch.inference_mode():
        cache, mask, logits = prefill(model, prompts, None, "cpu")
        lengths = torch.tensor([[len(p)] for p in prompts])
        tokens = [[int(t)] for t in logits.argmax(-1)]
        seen = []
        for _ in range(steps):
            ids = torch.tensor([[row[-1]] for row in tokens])
            mask = torch.cat([mask, mask.new_ones(len(prompts), 1)], dim=1)
            if lean is None:
                out = model(input_ids=ids, attention_mask=mask, position_ids=lengths, use_cache=True,
                            logits_to_keep=1, **cache_kwargs(cache))
                cache, step_logits = output_cache(out), out.logits[:, -1, :].float()
            else:
                step_logits = lean.step(ids, lengths, mask, cache)
            seen.append(step_logits)
            lengths = lengths + 1
            for row, token in zip(tokens, step_logits.argmax(-1), strict=True):
                row.append(int(token))
    return tokens, seen


@pytest.mark.parametrize("prompts", [[[5, 6, 7, 8, 9]], [[5, 6, 7, 8, 9], [11, 12], [3, 4, 5, 6, 7, 8, 9, 10]]],
                         ids=["one row", "rows padded on the left"])
def test_lean_steps_match_transformers_forward(prompts) -> None:
    model = _tiny_llama()
    lean = lean_decoder(model)
    assert lean is not None
    expected_tokens, expected = _decode(model, prompts, 6, None)
    got_tokens, got = _decode(model, prompts, 6, lean)
    for a, b in zip(got, expected, strict=True):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)
    assert got_tokens == expected_tokens


def test_swapped_weights_get_their_own_stack_and_a_changed_one_is_restacked() -> None:
    model = _tiny_llama()
    lean = lean_decoder(model)
    prompts = [[5, 6, 7, 8, 9], [11, 12]]
    _, before = _decode(model, prompts, 2, lean)
    q_proj = model.model.layers[0].self_attn.q_proj
    own = q_proj.weight
    q_proj.weight = torch.nn.Parameter(own.detach() * 1.5, requires_grad=False)  # as merged adapter weights are
    _, expected = _decode(model, prompts, 2, None)
    _, swapped = _decode(model, prompts, 2, lean)
    torch.testing.assert_close(swapped[1], expected[1], atol=1e-4, rtol=1e-4)
    assert not torch.allclose(swapped[1], before[1])
    q_proj.weight = own
    _, back = _decode(model, prompts, 2, lean)
    torch.testing.assert_close(back[1], before[1], atol=0, rtol=0)  # the base's own stack, kept
    with torch.no_grad():
        model.model.layers[0].mlp.up_proj.weight.mul_(0.5)  # changed in place: its stack is stale
    _, expected = _decode(model, prompts, 2, None)
    _, changed = _decode(model, prompts, 2, lean)
    torch.testing.assert_close(changed[1], expected[1], atol=1e-4, rtol=1e-4)
    assert len(lean._qkv[0]) <= STACKS_PER_LAYER


def test_other_architectures_keep_transformers_forward() -> None:
    from transformers import LlamaConfig, LlamaForCausalLM

    biased = LlamaForCausalLM(LlamaConfig(vocab_size=97, hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                                          num_attention_heads=4, num_key_value_heads=2, attention_bias=True))
    assert lean_decoder(biased) is None
    assert lean_decoder(torch.nn.Linear(2, 2)) is None  # not a causal LM this step knows


@pytest.mark.parametrize("dtype, tolerance", [(torch.float32, 1e-5), (torch.bfloat16, 2e-2)])
def test_attend_matches_sdpa_on_windows_of_a_buffer_with_left_padding(dtype, tolerance) -> None:
    """`attend` over non-contiguous windows (as the spare-columns cache hands them out), grouped queries and
    left padding gives SDPA's result in float64; a fully padded column changes nothing."""
    from rsi.models.embedded.lean_step import attend

    torch.manual_seed(0)
    rows, kv_heads, group, dim, columns = 5, 2, 3, 16, 40
    keys = torch.randn(rows, kv_heads, columns + 9, dim, dtype=dtype)[:, :, 4 : 4 + columns]
    values = torch.randn(rows, kv_heads, columns + 9, dim, dtype=dtype)[:, :, 4 : 4 + columns]
    queries = torch.randn(rows, kv_heads, group, dim, dtype=dtype)
    mask = torch.ones(rows, columns, dtype=torch.long)
    for row, pad in enumerate([0, 3, 17, 39, 1]):
        mask[row, :pad] = 0
    padding = torch.zeros(mask.shape).masked_fill_(mask == 0, float("-inf"))[:, None, None, :]
    want = torch.nn.functional.scaled_dot_product_attention(
        queries.double(), keys.double(), values.double(), attn_mask=mask.bool()[:, None, None, :], scale=0.25
    )
    got = attend(queries, keys, values, padding, 0.25)
    assert got.dtype == dtype and got.shape == want.shape
    assert (got.double() - want).abs().max().item() < tolerance
    unpadded = attend(queries[:1], keys[:1], values[:1], None, 0.25)
    assert torch.allclose(unpadded.double(), want[:1], atol=tolerance)
