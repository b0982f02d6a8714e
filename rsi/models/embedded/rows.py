"""One completion row of the embedded batch: its own sampling, stop strings, length limit and adapter.

Everything that could tie a row to the others it happens to share a decoding step with is decided
here, per row, so a request gets the same completion whatever else is in the batch:

- **sampling**: greedy rows take the argmax; sampled rows draw from their own seeded
  `torch.Generator` with their own temperature and top_p (completion k of a seeded request always
  draws from the same stream), one uniform number a token, placed on the nucleus's cumulative mass;
- **stops**: a row ends on an end-of-sequence token, on one of its own stop strings, once its first
  Python block has closed where the request asks for that (`stop_after_code`), or at its own
  `max_tokens`; a stop string can only newly appear within its length (in tokens, each at least one
  character) of the end, so decoding a short tail after each token is enough, and a block can only
  close on a token whose tail holds a backtick, so only those decode the whole text.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Literal

from rsi.fences import first_block_end
from rsi.models.base import Completion, GenerationRequest


def row_generator(seed: int | None, completion_index: int) -> Any:
    import torch

    generator = torch.Generator()
    if seed is None:
        generator.manual_seed(random.SystemRandom().randrange(2**63))
    else:  # completion k of a seeded request always draws from the same stream
        generator.manual_seed((seed * 1_000_003 + completion_index) % 2**63)
    return generator


# Sampled rows look for their nucleus among this many most likely tokens first: a full sort of the
# 49k-token vocabulary cost about 8 ms a row per step on this project's CPUs (as much as a batch's
# forward pass), the top 64 about 0.3 ms. When the 64 do not hold top_p of the mass, the full sort runs.
NUCLEUS_CANDIDATES = 64

# A closing fence arrives on a token whose decoded tail holds a backtick: decoding the last few tokens
# after each one tells whether the whole text needs parsing (a token may split a multi-byte character,
# so one token alone can decode to nothing).
CODE_TAIL = 3


def nucleus(probs: Any, top_p: float) -> tuple[Any, Any]:
    """The smallest set of most likely tokens whose mass reaches top_p: (their probabilities, their ids).

    Exactly the tokens a full descending sort keeps (a token is kept while the mass before it is below
    top_p, so the top token always is); the top-k shortcut only decides how much has to be sorted.
    """
    import torch

    k = min(NUCLEUS_CANDIDATES, probs.numel())
    ordered, order = torch.topk(probs, k)
    mass = torch.cumsum(ordered, dim=-1)
    if mass[-1] < top_p and k < probs.numel():  # the nucleus reaches past the candidates
        ordered, order = torch.sort(probs, descending=True)
        mass = torch.cumsum(ordered, dim=-1)
    keep = mass - ordered < top_p
    return ordered[keep], order[keep]


def pick_token(logits: Any, temperature: float, top_p: float, generator: Any) -> int:
    """The next token from one row's float logits: argmax when greedy, else a seeded top-p draw."""
    import torch

    if generator is None:
        return int(torch.argmax(logits))
    # On the CPU, where the row's generator lives, whatever device the model runs on.
    probs = torch.softmax(logits.float().cpu() / temperature, dim=-1)
    weights, ids = nucleus(probs, top_p) if top_p < 1.0 else (probs, None)
    # One uniform draw placed on the cumulative weights: torch.multinomial over the whole vocabulary
    # cost about 3 ms a row per step, this a few microseconds for a nucleus.
    cumulative = torch.cumsum(weights, dim=-1)
    point = torch.rand((), generator=generator, dtype=cumulative.dtype) * cumulative[-1]
    position = min(int(torch.searchsorted(cumulative, point, right=True)), weights.numel() - 1)
    return position if ids is None else int(ids[position])


@dataclass
class Row:
    """One completion being generated: what it has produced and when it must stop."""

    owner: Any  # the embedded backend's job this row belongs to
    index: int  # which of the request's n completions
    adapter: str  # peft adapter name, or the base marker
    request: GenerationRequest
    max_new: int
    length: int  # tokens of this row in the KV cache (its prompt, then what was fed back)
    generator: Any = None
    tokens: list[int] = field(default_factory=list)
    reason: Literal["stop", "length"] | None = None
    window: int = 0

    @classmethod
    def start(cls, owner: Any, index: int, adapter: str, request: GenerationRequest, prompt: int, budget: int) -> Row:
        generator = row_generator(request.seed, index) if request.temperature > 0 else None
        window = max((len(s) for s in request.stop), default=0) + 2
        return cls(owner, index, adapter, request, min(request.max_tokens, budget), prompt, generator, window=window)

    @property
    def done(self) -> bool:
        return self.reason is not None

    def accept(self, logits: Any, tokenizer: Any, eos_ids: set[int], argmax: int | None = None) -> None:
        """Pick this row's next token from its logits and decide whether the row is finished.

        `argmax`: the logits' argmax where the caller took it for the whole batch in one call (a greedy
        row's token; one call per row cost about 3% of a decoding step of 16 rows)."""
        if argmax is not None and self.generator is None:
            token = argmax
        else:
            token = pick_token(logits, self.request.temperature, self.request.top_p, self.generator)
        self.tokens.append(token)
        if token in eos_ids or (self.request.stop and self._hit_stop(tokenizer)) or self._closed_code(tokenizer):
            self.reason = "stop"
        elif len(self.tokens) >= self.max_new:
            self.reason = "length"

    def _hit_stop(self, tokenizer: Any) -> bool:
        tail = tokenizer.decode(self.tokens[-self.window :], skip_special_tokens=True)
        return any(s in tail for s in self.request.stop)

    def _closed_code(self, tokenizer: Any) -> bool:
        if not self.request.stop_after_code or "`" not in tokenizer.decode(self.tokens[-CODE_TAIL:], skip_special_tokens=True):
            return False
        return first_block_end(tokenizer.decode(self.tokens, skip_special_tokens=True)) is not None

    def completion(self, tokenizer: Any) -> Completion:
        """The finished text; a stop string and what follows it are cut (as in the OpenAI API and vLLM),
        and so is what follows the first Python block's closing fence where the request stops there."""
        text = str(tokenizer.decode(self.tokens, skip_special_tokens=True))
        reason: Literal["stop", "length"] = "stop" if self.reason == "stop" else "length"
        cut = min((p for p in (text.find(s) for s in self.request.stop) if p >= 0), default=-1)
        if cut >= 0:
            text, reason = text[:cut], "stop"
        block_end = first_block_end(text) if self.request.stop_after_code else None
        if block_end is not None:
            text, reason = text[:block_end], "stop"
        return Completion(text=text, finish_reason=reason, completion_tokens=len(self.tokens))
