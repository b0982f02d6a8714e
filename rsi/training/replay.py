"""Response-only replay (the report's LongStraw): the shared prompt once without a graph, then each
response alone with one, so live autograd memory follows the longest response, not the group.

    state = prefill(model, prompt_ids)                 # no grad; its KV cache is kept outside autograd
    for response in group:                             # one at a time
        logps = response_logprobs(model, state, response.ids)   # autograd on, against a fresh cache view
        loss_of(logps).backward()                      # the graph is freed here, before the next response

Two modes. Response-only (`exact=False`, LongStraw as described): the prompt's KV cache is a
constant, so gradients that would flow from the responses back into the prompt positions' keys and
values (through the LoRA weights applied there, e.g. v_proj) are not computed. The first response
token's logit is still trained, because the prefill stops one token short: the last prompt token is
fed again with the response, so every log-probability in the loss carries its gradient; only the
prompt *state* is detached. docs/training.md gives the measured size of what is dropped (large on a
tiny model with a LoRA on v_proj). Exact (`exact=True`): the prompt's graph is kept (one per group,
its size set by the prompt, not by the group), each response's backward leaves its gradient on the
cache leaves, and one backward through the prompt at the end of the group adds the prompt-state
gradients: the full gradient, with memory still flat in group size.

Why a fresh cache per response costs no copy: `DynamicCache.update` concatenates new keys and values
into new tensors and never writes into the ones it was built from, so every response gets a cache
object that points at the same prefilled tensors; they are freed with the state.

`batched_logprobs` is the plain alternative (every response of the group in one padded forward
against the same detached prompt state) and `full_logprobs` the textbook one (prompt and response in
one graph); both exist as references for the tests and the memory benchmark.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from rsi.models.compat import cache_kwargs, dynamic_cache, output_cache


@dataclass
class PromptState:
    """A prompt's KV cache (every token but the last) and its last token, outside autograd."""

    layers: list[tuple[torch.Tensor, torch.Tensor]]
    config: Any
    past_len: int
    last_token: int
    graph: list[torch.Tensor] | None = None  # exact mode: the prefill's own outputs, still in its graph

    def backward_prompt(self) -> None:
        """Exact mode: push the gradients the responses left on the cache through the prompt's graph."""
        if self.graph is None:
            return
        leaves = [t for pair in self.layers for t in pair]
        pairs = [(out, leaf.grad) for out, leaf in zip(self.graph, leaves, strict=True)
                 if out.requires_grad and leaf.grad is not None]
        if pairs:
            torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        self.graph = None

    def fresh_cache(self, batch: int = 1) -> Any:
        """A new cache over the stored tensors (expanded, not copied, for a batch)."""
        if not self.layers:
            return None
        data = [(k.expand(batch, -1, -1, -1), v.expand(batch, -1, -1, -1)) for k, v in self.layers]
        return dynamic_cache(data, self.config)


def _config(model: Any) -> Any:
    return model.get_base_model().config if hasattr(model, "get_base_model") else model.config


def prefill(model: Any, prompt_ids: list[int], exact: bool = False) -> PromptState:
    """Run the prompt (all but its last token) once and keep its cache outside the responses' graphs.

    `exact=False` (response-only): no graph at all; the prompt state is a constant. `exact=True`: the
    prompt's graph is kept (its size follows the prompt, not the group) and the cache handed to the
    responses is made of detached leaves that collect their gradients; `backward_prompt()` then runs
    one backward through the prompt, so the gradients equal those of the full computation.
    """
    if not prompt_ids:
        raise ValueError("a prompt needs at least one token")
    device = next(model.parameters()).device
    layers: list[tuple[torch.Tensor, torch.Tensor]] = []
    graph: list[torch.Tensor] | None = None
    if len(prompt_ids) > 1:
        track = exact and torch.is_grad_enabled()
        with torch.set_grad_enabled(track):
            output = model(input_ids=torch.tensor([prompt_ids[:-1]], device=device), use_cache=True, logits_to_keep=1)
        cache = output_cache(output)
        if track:
            graph = [t for layer in cache.layers for t in (layer.keys, layer.values)]
            layers = [(layer.keys.detach().requires_grad_(layer.keys.requires_grad),
                       layer.values.detach().requires_grad_(layer.values.requires_grad)) for layer in cache.layers]
        else:
            layers = [(layer.keys.detach(), layer.values.detach()) for layer in cache.layers]
        del output
    return PromptState(layers, _config(model), len(prompt_ids) - 1, int(prompt_ids[-1]), graph)


def token_logprobs(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """log p(target) per position, without materialising a second vocabulary-sized tensor."""
    logits = logits.float()
    picked = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return picked - torch.logsumexp(logits, dim=-1)


def response_logprobs(model: Any, state: PromptState, response_ids: list[int]) -> torch.Tensor:
    """log p(response token t | prompt, response[:t]) for every t, in one forward against the state.

    Autograd follows whatever mode the caller is in (grad for the policy, `torch.no_grad()` for the
    reference and old policy).
    """
    device = next(model.parameters()).device
    inputs = torch.tensor([[state.last_token, *response_ids[:-1]]], device=device)
    positions = torch.arange(state.past_len, state.past_len + len(response_ids), device=device).unsqueeze(0)
    output = model(input_ids=inputs, position_ids=positions, use_cache=False, **cache_kwargs(state.fresh_cache()))
    targets = torch.tensor([response_ids], device=device)
    return token_logprobs(output.logits, targets)[0]


def batched_logprobs(model: Any, state: PromptState, responses: list[list[int]]) -> list[torch.Tensor]:
    """Every response in one right-padded forward against the same (detached) prompt state."""
    device = next(model.parameters()).device
    width = max(len(r) for r in responses)
    rows = [[state.last_token, *r[:-1]] + [0] * (width - len(r)) for r in responses]
    mask = torch.zeros(len(responses), state.past_len + width, dtype=torch.long, device=device)
    mask[:, : state.past_len] = 1
    for i, r in enumerate(responses):
        mask[i, state.past_len : state.past_len + len(r)] = 1
    positions = torch.arange(state.past_len, state.past_len + width, device=device).expand(len(responses), -1)
    output = model(input_ids=torch.tensor(rows, device=device), attention_mask=mask, position_ids=positions,
                   use_cache=False, **cache_kwargs(state.fresh_cache(len(responses))))
    targets = torch.tensor([r + [0] * (width - len(r)) for r in responses], device=device)
    logps = token_logprobs(output.logits, targets)
    return [logps[i, : len(r)] for i, r in enumerate(responses)]


def full_logprobs(model: Any, prompt_ids: list[int], responses: list[list[int]]) -> list[torch.Tensor]:
    """Prompt and responses in one padded forward with autograd through everything (no detached state)."""
    device = next(model.parameters()).device
    width = max(len(r) for r in responses)
    rows = [prompt_ids + r + [0] * (width - len(r)) for r in responses]
    mask = torch.tensor([[1] * (len(prompt_ids) + len(r)) + [0] * (width - len(r)) for r in responses], device=device)
    output = model(input_ids=torch.tensor(rows, device=device), attention_mask=mask, use_cache=False)
    start = len(prompt_ids) - 1  # the logit at position p predicts token p + 1
    logits = output.logits[:, start : start + width]
    targets = torch.tensor([r + [0] * (width - len(r)) for r in responses], device=device)
    logps = token_logprobs(logits, targets)
    return [logps[i, : len(r)] for i, r in enumerate(responses)]


def split_at_first_label(input_ids: list[int], labels: list[int], ignore_index: int) -> tuple[list[int], list[int], list[bool]]:
    """(prompt, response, trained mask): the prompt ends where the first trained token begins."""
    first = next(i for i, label in enumerate(labels) if label != ignore_index)
    first = max(first, 1)  # a prompt needs one token to predict the first response token from
    return input_ids[:first], input_ids[first:], [label != ignore_index for label in labels[first:]]


def sft_replay_backward(model: Any, examples: list[Any], ignore_index: int, exact: bool = False) -> float:
    """SFT with replay: each conversation's prompt (up to its first assistant token) prefilled once, its
    turns (assistant tokens trained, observations as context) replayed with a graph, one conversation at
    a time, so live graph memory follows one conversation instead of the batch. The loss is the batch's
    token mean, as `model(**batch).loss` computes it; returns its value. `exact`: see `prefill`."""
    total = sum(sum(1 for label in e.labels[1:] if label != ignore_index) for e in examples)
    value = 0.0
    for example in examples:
        prompt, response, trained = split_at_first_label(example.input_ids, example.labels, ignore_index)
        state = prefill(model, prompt, exact=exact)
        logps = response_logprobs(model, state, response)
        mask = torch.tensor(trained, dtype=torch.bool, device=logps.device)
        loss = -(logps * mask).sum() / max(total, 1)
        value += float(loss.detach())
        if math.isfinite(value):
            loss.backward()
            state.backward_prompt()
    return value
