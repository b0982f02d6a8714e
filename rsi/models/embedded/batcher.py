"""The running batch of the embedded backend: rows join at the next decoding step and leave when done.

Continuous batching over a Hugging Face KV cache whose layers keep spare columns (rsi/models/embedded/spare_cache.py),
with left padding:

- the requests admitted at one step are **prefilled together** (one forward over their left-padded
  prompts, each row with its own adapter and its own position ids), and each prompt's cache is
  repeated for its `n` completion rows;
- its rows then **join** the running batch: they are written into the cache's spare rows,
  right-aligned, after the batch is widened on the left if they are longer; the attention mask marks
  the padding, and each row keeps its own position ids (so rotary positions are those the row would
  have alone);
- every **step** feeds each row's last token through one forward for the whole batch, with peft's
  per-row `adapter_names` so rows of different specialists (and the bare base) share it;
- finished rows **leave** (the last rows move into their slots) and padding columns no row needs any
  more are trimmed from the left.

Joins and departures copy only the rows that arrive or move, never the whole cache (a profile of a run
found 15% of the backend's time in such whole-cache copies before).

In float32 a row decoded in this batch produces the same greedy tokens as the same request decoded
alone (tested); in bfloat16 padding and batch shape change the kernels' rounding enough to flip
a near-tie now and then.
"""

from __future__ import annotations

from typing import Any

from rsi.models.compat import cache_kwargs, output_cache
from rsi.models.embedded.rows import Row


class RunningBatch:
    """Rows in flight, their shared KV cache and attention mask (rows x cached columns)."""

    def __init__(self) -> None:
        self.rows: list[Row] = []
        self.cache: Any = None
        self.mask: Any = None

    def __len__(self) -> int:
        return len(self.rows)

    def join(self, rows: list[Row], cache: Any, own_mask: Any) -> None:
        """Add `rows` whose prefilled cache is `cache` (one batch entry per row) with attention mask `own_mask`.

        The batch's cache takes the rows into its spare rows (rsi/models/embedded/spare_cache.py), so only the new
        rows are copied; when they are wider than the batch, its window widens to the left first."""
        import torch

        width = own_mask.shape[1]
        if self.cache is None:
            self.rows, self.cache, self.mask = list(rows), cache, own_mask
            return
        current = self.mask.shape[1]
        with torch.inference_mode():  # the buffers are the model's inference tensors; this writes into them
            if width > current:
                for layer in self.cache.layers:
                    layer.extend_left(width - current)
                self.mask = torch.cat([self.mask.new_zeros(len(self.rows), width - current), self.mask], dim=1)
            elif width < current:
                own_mask = torch.cat([own_mask.new_zeros(len(rows), current - width), own_mask], dim=1)
            for mine, theirs in zip(self.cache.layers, cache.layers, strict=True):
                mine.add_rows(theirs.keys, theirs.values)
        self.mask = torch.cat([self.mask, own_mask], dim=0)
        self.rows.extend(rows)

    def step(self, model: Any, adapters: list[str] | None, lean: Any = None) -> Any:
        """One decoding step for every row: feed its last token, return next-token logits (rows x vocab).

        `lean` (a `rsi.models.embedded.lean_step.LeanDecoder`) computes the step instead of the model's forward; the
        caller passes one only where no LoRA layer is active."""
        import torch

        device = self.mask.device
        ids = torch.tensor([[row.tokens[-1]] for row in self.rows], dtype=torch.long, device=device)
        positions = torch.tensor([[row.length] for row in self.rows], dtype=torch.long, device=device)
        mask = torch.cat([self.mask, self.mask.new_ones(len(self.rows), 1)], dim=1)
        if lean is not None and adapters is None:
            logits = lean.step(ids, positions, mask, self.cache)
        else:
            kwargs: dict[str, Any] = {} if adapters is None else {"adapter_names": adapters}
            output = model(
                input_ids=ids,
                attention_mask=mask,
                position_ids=positions,
                use_cache=True,
                logits_to_keep=1,
                **cache_kwargs(self.cache),
                **kwargs,
            )
            self.cache, logits = output_cache(output), output.logits[:, -1, :].float()
        self.mask = mask
        for row in self.rows:
            row.length += 1
        return logits

    def keep(self, keep: list[int]) -> None:
        """Keep only the rows at `keep`; trim left padding that no remaining row needs.

        A kept row past the new end moves into the slot of a dropped one (the rows' order changes), so a
        departure copies the rows that move, not the whole cache."""
        import torch

        if len(keep) == len(self.rows):
            return
        if not keep:
            self.rows, self.cache, self.mask = [], None, None
            return
        from rsi.models.embedded.spare_cache import slot_moves

        moves, order = slot_moves(keep)
        self.rows = [self.rows[i] for i in order]
        self.mask = self.mask[torch.tensor(order, dtype=torch.long, device=self.mask.device)]
        used = self.mask.sum(dim=0).nonzero()
        first = int(used[0]) if used.numel() else 0
        self.mask = self.mask[:, first:]
        with torch.inference_mode():
            for layer in self.cache.layers:
                layer.keep_rows(moves, len(keep))
                layer.trim_left(first)


def prefill(model: Any, prompts: list[list[int]], adapters: list[str] | None, device: str) -> tuple[Any, Any, Any]:
    """One forward over several prompts, left-padded together: (their cache, its mask, last-position logits).

    Each row gets the position ids it would have alone; padding is masked out. Prefilling the
    requests admitted at one step together costs one forward instead of one per request (a short
    prompt's forward on a CPU is mostly fixed overhead).
    """
    import torch

    from rsi.models.embedded.spare_cache import spare_columns_cache

    width = max(len(p) for p in prompts)
    ids = torch.zeros((len(prompts), width), dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for row, prompt in enumerate(prompts):
        ids[row, width - len(prompt) :] = torch.tensor(prompt, dtype=torch.long)
        mask[row, width - len(prompt) :] = 1
    ids, mask = ids.to(device), mask.to(device)
    positions = (mask.cumsum(dim=1) - 1).clamp(min=0)
    kwargs: dict[str, Any] = {} if adapters is None else {"adapter_names": adapters}
    output = model(
        input_ids=ids,
        attention_mask=mask,
        position_ids=positions,
        use_cache=True,
        logits_to_keep=1,
        **cache_kwargs(spare_columns_cache(model.config.num_hidden_layers)),
        **kwargs,
    )
    return output_cache(output), mask, output.logits[:, -1, :].float()


def select_rows(cache: Any, mask: Any, index: list[int]) -> tuple[Any, Any]:
    """The cache and mask rows at `index` (repeats allowed: one prompt's cache for its n completions)."""
    import torch

    chosen = torch.tensor(index, dtype=torch.long, device=mask.device)
    for layer in cache.layers:
        layer.keys, layer.values = layer.keys[chosen], layer.values[chosen]
    return cache, mask[chosen]
