"""A KV cache layer that appends into spare columns instead of concatenating.

Hugging Face's `DynamicLayer.update` does `torch.cat([keys, new], dim=-2)` for every layer at every
decoding step: each step copies the whole cache once per layer. With the run's rows (prompts of about
220 tokens, completions of about 290) that is a copy of every cached key and value per token, memory
traffic of the same order as reading the model's weights. `SpareColumnsLayer` keeps each layer's keys
and values in a buffer with spare columns at the right and writes a step's new column into them; the
cache is copied only when the spare columns run out (then it grows by a quarter, at least
`MIN_SPARE` columns), so the copies per token fall from one per step to one per many steps.

`keys` and `values` stay plain attributes for everything that reads or replaces them (the running
batch pads, joins and drops rows by assigning new tensors): reading gives the used columns, a view
into the buffer; assigning makes the assigned tensor the new buffer, with no spare columns until the
next update grows it.
"""

from __future__ import annotations

from typing import Any

from transformers.cache_utils import Cache, DynamicLayer

MIN_SPARE = 64


class SpareColumnsLayer(DynamicLayer):
    """A `DynamicLayer` whose keys and values are the used columns of buffers with spare columns."""

    def __init__(self, **kwargs: Any) -> None:
        self._buffers: dict[str, Any] = {"keys": None, "values": None}
        self._used = {"keys": 0, "values": 0}  # each its own: callers assign keys and values one at a time
        super().__init__(**kwargs)

    def _view(self, name: str) -> Any:
        buffer = self._buffers[name]
        return None if buffer is None else buffer[:, :, : self._used[name]]

    def _assign(self, name: str, tensor: Any) -> None:
        self._buffers[name] = tensor
        self._used[name] = 0 if tensor is None or tensor.dim() < 4 else tensor.shape[-2]

    keys = property(lambda self: self._view("keys"), lambda self, tensor: self._assign("keys", tensor))  # type: ignore[assignment]
    values = property(lambda self: self._view("values"), lambda self, tensor: self._assign("values", tensor))  # type: ignore[assignment]

    def lazy_initialization(self, key_states: Any, value_states: Any) -> None:
        self.device = key_states.device
        self.is_initialized = True

    def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        self._append("keys", key_states)
        self._append("values", value_states)
        return self.keys, self.values

    def _append(self, name: str, states: Any) -> None:
        """Write `states`' columns after the used ones, growing the buffer first if they do not fit."""
        buffer, used, new = self._buffers[name], self._used[name], states.shape[-2]
        if buffer is None or buffer.shape[-2] < used + new:
            spare = max(MIN_SPARE, (used + new) // 4)
            grown = states.new_empty(*states.shape[:2], used + new + spare, states.shape[3])
            if used:
                grown[:, :, :used] = buffer[:, :, :used]
            buffer = grown
        buffer[:, :, used : used + new] = states
        self._buffers[name], self._used[name] = buffer, used + new

    def get_seq_length(self) -> int:
        return self._used["keys"]

    def reset(self) -> None:
        self._assign("keys", None)
        self._assign("values", None)
        self.is_initialized = False


def spare_columns_cache(layers: int) -> Cache:
    """An empty cache of `layers` `SpareColumnsLayer`s (one per decoder layer of the model)."""
    return Cache(layers=[SpareColumnsLayer() for _ in range(layers)])
