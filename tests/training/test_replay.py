"""Response-only replay on a tiny randomly initialised Llama (built here, nothing downloaded).

The replay path (prompt prefilled once without a graph, each response alone with one) must give the
loss and the gradients of the plain batched computation against the same detached prompt state
(1e-5), and the GRPO loss must match the textbook formula computed here independently from plain
forwards. The response-only gradient also differs from the full gradient (prompt state in the graph)
by a measured, non-zero amount: what replay gives up.
"""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from rsi.training.data import IGNORE_INDEX, TokenizedExample  # noqa: E402
from rsi.training.grpo_loss import TrainGroup, backward_group, group_advantages, sequence_loss  # noqa: E402
from rsi.training.replay import full_logprobs, sft_replay_backward  # noqa: E402

VOCAB = 96


def tiny_lora_model(seed: int = 0, device: str = "cpu"):
    """2 layers, hidden 64, LoRA r=4 on q/v with random (non-zero) B so the policy differs from the base."""
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512)
    base = LlamaForCausalLM(config).to(device)
    model = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, target_modules=["q_proj", "v_proj"],
                                            task_type="CAUSAL_LM"))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0.0, 0.05)
    model.train()
    return model


def hand_group(seed: int = 1, group: int = 4, prompt_len: int = 12, lengths=(5, 9, 3, 7)) -> TrainGroup:
    g = torch.Generator().manual_seed(seed)
    prompt = torch.randint(0, VOCAB, (prompt_len,), generator=g).tolist()
    responses = [torch.randint(0, VOCAB, (n,), generator=g).tolist() for n in lengths[:group]]
    # multi-turn shape: a stretch of observation tokens in the middle is context, not trained
    masks = [[not (n > 4 and 2 <= t < 4) for t in range(n)] for n in lengths[:group]]
    rewards = [1.0, 0.0, 0.5, 0.0][:group]
    return TrainGroup(prompt, responses, masks, group_advantages(rewards))


def grads(model) -> dict[str, torch.Tensor]:
    return {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.requires_grad and p.grad is not None}


def run(model, group: TrainGroup, replay: bool, old=None, clip=0.2, kl=0.1, exact=False):
    model.zero_grad(set_to_none=True)
    fresh = TrainGroup(group.prompt_ids, group.responses, group.masks, group.advantages, old)
    stats = backward_group(model, fresh, clip=clip, kl_weight=kl, scale=1.0 / len(group.responses), replay=replay,
                           exact=exact)
    return stats, grads(model)


def full_gradients(model, group: TrainGroup, kl: float = 0.0) -> dict[str, torch.Tensor]:
    """The textbook computation: prompt and responses in one graph, nothing detached (KL left out)."""
    assert kl == 0.0
    model.zero_grad(set_to_none=True)
    logps = full_logprobs(model, group.prompt_ids, group.responses)
    losses = []
    for i, lp in enumerate(logps):
        loss, _, _ = sequence_loss(lp, lp.detach(), None, torch.tensor(group.masks[i]), group.advantages[i], 0.2, 0.0)
        losses.append(loss / len(logps))
    torch.stack(losses).sum().backward()
    return grads(model)


def relative_difference(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor], key: str = "") -> float:
    names = [n for n in b if key in n]
    diff = math.sqrt(sum(float(((a[n] - b[n]) ** 2).sum()) for n in names))
    return diff / math.sqrt(sum(float((b[n] ** 2).sum()) for n in names))


def test_advantages_are_group_normalised() -> None:
    assert group_advantages([1.0, 1.0, 1.0]) == [0.0, 0.0, 0.0]
    a = group_advantages([1.0, 0.0, 0.0, 0.0])
    mean, std = 0.25, math.sqrt((0.75**2 + 3 * 0.25**2) / 4)
    assert a == pytest.approx([0.75 / std, -0.25 / std, -0.25 / std, -0.25 / std], rel=1e-5)
    assert sum(a) == pytest.approx(0.0, abs=1e-9) and mean == 0.25


@pytest.mark.parametrize("perturb_old", [False, True])
def test_replay_equals_batched_loss_and_gradients(perturb_old: bool) -> None:
    model = tiny_lora_model()
    group = hand_group()
    old = None
    if perturb_old:  # ratios away from 1 so the clip is active on some tokens
        with torch.no_grad():
            g = torch.Generator().manual_seed(7)
            current = [lp.detach() for lp in full_logprobs(model, group.prompt_ids, group.responses)]
            old = [lp + 0.4 * torch.randn(lp.shape, generator=g) for lp in current]
    replay_stats, replay_grads = run(model, group, replay=True, old=old)
    batched_stats, batched_grads = run(model, group, replay=False, old=old)
    assert replay_stats.losses == pytest.approx(batched_stats.losses, abs=1e-5)
    assert replay_stats.kls == pytest.approx(batched_stats.kls, abs=1e-6)
    assert replay_grads.keys() == batched_grads.keys() and len(replay_grads) == 8  # A and B of q, v in 2 layers
    for name in replay_grads:
        assert torch.allclose(replay_grads[name], batched_grads[name], atol=1e-5, rtol=0), name
    assert any(float(g.abs().max()) > 1e-4 for g in replay_grads.values())  # a real gradient, not zeros
    if perturb_old:
        assert max(replay_stats.clipped) > 0  # the clip was exercised


def test_loss_matches_an_independent_grpo_formula() -> None:
    """Textbook GRPO on a hand-built batch, from plain full-sequence forwards and Python floats."""
    model = tiny_lora_model(seed=3)
    group = hand_group(seed=5)
    rewards = [1.0, 0.0, 0.5, 0.0]
    mean = sum(rewards) / 4
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / 4)
    advantages = [(r - mean) / (std + 1e-6) for r in rewards]
    eps, beta = 0.2, 0.1

    def plain_logps(disable: bool) -> list[list[float]]:
        out = []
        for response in group.responses:
            ids = torch.tensor([group.prompt_ids + response])
            with torch.no_grad():
                if disable:
                    with model.disable_adapter():
                        logits = model(input_ids=ids).logits[0]
                else:
                    logits = model(input_ids=ids).logits[0]
            logp = torch.log_softmax(logits.double(), dim=-1)
            p = len(group.prompt_ids)
            out.append([float(logp[p - 1 + t, tok]) for t, tok in enumerate(response)])
        return out

    policy, reference = plain_logps(False), plain_logps(True)
    old = [[lp + (0.5 if t % 3 == 0 else -0.3 if t % 3 == 1 else 0.0) for t, lp in enumerate(row)] for row in policy]
    expected = []
    for i, row in enumerate(policy):
        terms = []
        for t, lp in enumerate(row):
            if not group.masks[i][t]:
                continue
            ratio = math.exp(lp - old[i][t])
            pg = -min(ratio * advantages[i], min(max(ratio, 1 - eps), 1 + eps) * advantages[i])
            d = reference[i][t] - lp
            terms.append(pg + beta * (math.exp(d) - d - 1))
        expected.append(sum(terms) / len(terms))
    olds = [torch.tensor(row, dtype=torch.float32) for row in old]
    stats, _ = run(model, group, replay=True, old=olds, clip=eps, kl=beta)
    assert group.advantages == pytest.approx(advantages, rel=1e-6)
    assert stats.losses == pytest.approx(expected, abs=1e-5)
    assert max(stats.clipped) > 0 and min(stats.kls) > 0


def test_sequence_loss_without_kl_is_the_clipped_surrogate() -> None:
    logps = torch.tensor([-1.0, -2.0, -0.5])
    old = torch.tensor([-1.5, -2.0, -0.1])
    loss, kl, share = sequence_loss(logps, old, None, torch.tensor([True, True, True]), 2.0, 0.2, 0.0)
    ratios = [math.exp(0.5), 1.0, math.exp(-0.4)]
    expected = sum(-min(r * 2.0, min(max(r, 0.8), 1.2) * 2.0) for r in ratios) / 3
    assert float(loss) == pytest.approx(expected, rel=1e-6) and kl == 0.0 and share == pytest.approx(2 / 3)  # ratios 1.65 and 0.67 lie outside [0.8, 1.2]


def test_response_only_gradient_differs_from_the_full_gradient_by_a_measured_amount() -> None:
    """What response-only replay gives up: gradients through the prompt's keys and values. Measured.

    In the last layer, q_proj's LoRA at prompt positions shapes only the prompt's own outputs, which no
    loss term reads (the last prompt token is replayed with the response), so its gradient is
    untouched; everything else at prompt positions (v_proj everywhere, q_proj of earlier layers through
    the next layer's keys and values) shapes what the responses attend to: that part is dropped.
    """
    model = tiny_lora_model()
    group = hand_group()
    _, replay_grads = run(model, group, replay=True, kl=0.0)
    full = full_gradients(model, group)
    keys = ("", "layers.0.self_attn.q_proj", "layers.1.self_attn.q_proj", "v_proj")
    overall, q0, q_last, v = (relative_difference(replay_grads, full, key) for key in keys)
    print(f"relative gradient difference, response-only vs full: all {overall:.4f}, q_proj layer 0 {q0:.4f}, "
          f"q_proj last layer {q_last:.2e}, v_proj {v:.4f}")
    assert q_last < 1e-5 and q0 > 0.01 and v > 0.01 and 0.0 < overall < 1.0


@pytest.mark.parametrize("replay", [True, False])
def test_exact_mode_gives_the_full_gradient(replay: bool) -> None:
    model = tiny_lora_model()
    group = hand_group()
    _, exact_grads = run(model, group, replay=replay, kl=0.0, exact=True)
    full = full_gradients(model, group)
    assert exact_grads.keys() == full.keys()
    for name in full:
        assert torch.allclose(exact_grads[name], full[name], atol=1e-5, rtol=0), name


def test_sft_replay_gives_the_batch_loss_of_a_plain_forward() -> None:
    model = tiny_lora_model(seed=2)
    g = torch.Generator().manual_seed(4)
    examples = []
    for n in (20, 14):
        ids = torch.randint(0, VOCAB, (n,), generator=g).tolist()
        labels = [IGNORE_INDEX] * 6 + ids[6:10] + [IGNORE_INDEX] * 3 + ids[13:]  # two assistant turns
        examples.append(TokenizedExample(ids, labels))
    from rsi.training.data import collate

    model.zero_grad(set_to_none=True)
    value = sft_replay_backward(model, examples, IGNORE_INDEX)
    replay_grads = grads(model)
    with torch.no_grad():
        plain = float(model(**collate(examples, 0)).loss)
    assert value == pytest.approx(plain, abs=1e-5)
    assert all(torch.isfinite(t).all() for t in replay_grads.values()) and len(replay_grads) == 8
    # exact mode: the gradients of the plain batched SFT loss (what train.py computes without replay)
    model.zero_grad(set_to_none=True)
    model(**collate(examples, 0)).loss.backward()
    plain_grads = grads(model)
    model.zero_grad(set_to_none=True)
    assert sft_replay_backward(model, examples, IGNORE_INDEX, exact=True) == pytest.approx(plain, abs=1e-5)
    exact_grads = grads(model)
    for name in plain_grads:
        assert torch.allclose(exact_grads[name], plain_grads[name], atol=1e-5, rtol=0), name
    assert relative_difference(replay_grads, plain_grads) > 1e-3  # response-only really drops something
