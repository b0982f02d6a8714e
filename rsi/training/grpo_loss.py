"""The GRPO objective: group-normalised advantages, a clipped policy-gradient term and a KL penalty
against the base, and its backward pass over one group (response-only replay, or one batch).

For response i of a group with rewards r_1..r_G, its advantage is A_i = (r_i - mean r) / (std r + eps)
(population std; a group whose rewards are all equal has A = 0 everywhere and teaches nothing). Per
trained token t (assistant tokens only; observations in a multi-turn response are context):

    ratio_t = exp(logp_t - old_t)
    pg_t    = -min(ratio_t * A_i, clip(ratio_t, 1 - eps, 1 + eps) * A_i)
    kl_t    = exp(ref_t - logp_t) - (ref_t - logp_t) - 1          (the k3 estimator, >= 0)
    loss_i  = mean over trained t of (pg_t + beta * kl_t)

and the step's loss is the mean of loss_i over every response trained in the step (the original GRPO
sequence-mean). `ref` is the base: the same model with the LoRA disabled (peft's `disable_adapter()`),
so no second copy of the weights exists. With one update per rollout batch `old` is the current
policy detached (ratio 1, clipping inactive, the gradient is A * grad logp); with more, it is the
log-probability before the first update and the clip bounds how far later updates move.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from typing import Any

import torch

from rsi.training.replay import batched_logprobs, prefill, response_logprobs

ADVANTAGE_EPS = 1e-6


def group_advantages(rewards: list[float]) -> list[float]:
    """(r - mean) / (population std + eps) within one group; zeros when every reward is equal."""
    mean = sum(rewards) / len(rewards)
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / len(rewards))
    if std == 0.0:
        return [0.0] * len(rewards)
    return [(r - mean) / (std + ADVANTAGE_EPS) for r in rewards]


@dataclass
class TrainGroup:
    """One group as token ids: a shared prompt, its responses, which response tokens are trained."""

    prompt_ids: list[int]
    responses: list[list[int]]
    masks: list[list[bool]]
    advantages: list[float]
    old_logps: list[torch.Tensor] | None = None  # set after the first update of a step


@dataclass
class GroupStats:
    losses: list[float] = field(default_factory=list)
    kls: list[float] = field(default_factory=list)
    clipped: list[float] = field(default_factory=list)
    tokens: int = 0


def sequence_loss(logps: torch.Tensor, old: torch.Tensor, ref: torch.Tensor | None, mask: torch.Tensor,
                  advantage: float, clip: float, kl_weight: float) -> tuple[torch.Tensor, float, float]:
    """loss_i of one response (see the module docstring), its mean KL and its clipped-token share."""
    ratio = torch.exp(logps - old)
    unclipped = ratio * advantage
    clipped = torch.clamp(ratio, 1.0 - clip, 1.0 + clip) * advantage
    per_token = -torch.minimum(unclipped, clipped)
    kl = torch.zeros_like(logps)
    if ref is not None and kl_weight > 0:
        delta = ref - logps
        kl = torch.exp(delta) - delta - 1.0
        per_token = per_token + kl_weight * kl
    weights = mask.to(logps.dtype)
    count = weights.sum().clamp(min=1.0)
    loss = (per_token * weights).sum() / count
    kl_mean = float(((kl * weights).sum() / count).detach())
    share = float(((unclipped != clipped).to(logps.dtype) * weights).sum().detach() / count)
    return loss, kl_mean, share


def _reference_logps(model: Any, group: TrainGroup, kl_weight: float, replay: bool) -> list[torch.Tensor | None]:
    """The base's log-probabilities (LoRA disabled), without autograd."""
    if kl_weight <= 0:
        return [None] * len(group.responses)
    disabled = model.disable_adapter() if hasattr(model, "disable_adapter") else contextlib.nullcontext()
    with torch.no_grad(), disabled:
        state = prefill(model, group.prompt_ids)
        if replay:
            return [response_logprobs(model, state, ids) for ids in group.responses]
        return list(batched_logprobs(model, state, group.responses))


def backward_group(model: Any, group: TrainGroup, *, clip: float, kl_weight: float, scale: float,
                   replay: bool, exact: bool = False) -> GroupStats:
    """Accumulate d(scale * sum_i loss_i)/d(params) for one group into `.grad`; return its statistics.

    `replay=True`: one response at a time against the prefilled prompt (backward after each, so
    one response's graph is alive at a time). `replay=False`: the whole group in one padded forward.
    Both use the same prompt state and give the same loss and gradients (tested). `exact=True` also
    backpropagates into the prompt (rsi.training.replay.prefill): the full GRPO gradient.
    """
    refs = _reference_logps(model, group, kl_weight, replay)
    state = prefill(model, group.prompt_ids, exact=exact)
    device = next(model.parameters()).device
    masks = [torch.tensor(m, dtype=torch.bool, device=device) for m in group.masks]
    stats = GroupStats(tokens=sum(int(m.sum()) for m in masks))
    olds: list[torch.Tensor] = []

    def one(i: int, logps: torch.Tensor) -> torch.Tensor:
        old = group.old_logps[i] if group.old_logps is not None else logps.detach()
        olds.append(old)
        loss, kl, share = sequence_loss(logps, old, refs[i], masks[i], group.advantages[i], clip, kl_weight)
        stats.losses.append(float(loss.detach()))
        stats.kls.append(kl)
        stats.clipped.append(share)
        return loss * scale

    if replay:
        for i, ids in enumerate(group.responses):
            one(i, response_logprobs(model, state, ids)).backward()  # frees this response's graph
    else:
        all_logps = batched_logprobs(model, state, group.responses)
        total = torch.stack([one(i, logps) for i, logps in enumerate(all_logps)]).sum()
        total.backward()
    state.backward_prompt()
    if group.old_logps is None:
        group.old_logps = olds
    return stats
