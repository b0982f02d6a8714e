"""A KV cache layer that keeps spare rows and columns, so the running batch rarely copies it.

Hugging Face's `DynamicLayer.update` does `torch.cat([keys, new], dim=-2)` for every layer at every
decoding step: each step copies the whole cache once per layer. The running batch also changes its
rows all the time: requests join, finished ones leave, and left padding no row needs any more is
trimmed. Done by concatenation and indexing, each of those copies every layer's whole cache too; a
profile of a run (16 rows, prompts of about 220 tokens, completions of about 290) found 15% of the
backend's time in such copies (2026-12-03 at a65af5a).

`SpareColumnsLayer` keeps each layer's keys and values in a buffer larger than what is used, and the
used part is a window of it: rows `[0, rows)`, columns `[start, end)`.

- A step's new column is written at `end` (`update`); the buffer is copied only when the spare
  columns run out, and then grows by a quarter (at least `MIN_SPARE` columns).
- Rows leaving (`keep_rows`) move the last rows into the freed slots: one copy per moved row, not of
  the whole cache.
- Columns no row needs any more (`trim_left`) leave the window by moving `start`: no copy.
- Rows joining (`add_rows`) are written into the spare rows, right-aligned, with their left padding
  zeroed; a window widened to the left (`extend_left`) zeroes the columns it exposes. Every value
  inside the window is therefore one the model wrote or a zero, never uninitialised memory (masked
  attention still multiplies padded values by zero weights, and NaN times zero is NaN).

`keys` and `values` stay plain attributes for everything else that reads or replaces them (Hugging
Face's cache methods): reading gives the window, a view into the buffer; assigning makes the assigned
tensor the new buffer, whole.
"""

from __future__ import annotations

from typing import Any

from transformers.cache_utils import Cache, DynamicLayer

MIN_SPARE = 64
NAMES = ("keys", "values")


def slot_moves(keep: list[int]) -> tuple[list[tuple[int, int]], list[int]]:
    """For keeping the rows at `keep` (ascending): the (source, target) row moves that fill the dropped
    slots below `len(keep)` with the kept rows above it, and the old row each new slot holds."""
    count, kept = len(keep), set(keep)
    holes = [i for i in range(count) if i not in kept]
    moves = list(zip([i for i in keep if i >= count], holes, strict=True))
    order = list(range(count))
    for source, target in moves:
        order[target] = source
    return moves, order


class _Window:
    """One tensor's buffer and the window of it in use: rows `[0, rows)`, columns `[start, end)`."""

    __slots__ = ("buffer", "rows", "start", "end")

    def __init__(self, tensor: Any = None) -> None:
        self.buffer = tensor
        usable = tensor is not None and tensor.dim() == 4
        self.rows = tensor.shape[0] if usable else 0
        self.start, self.end = 0, (tensor.shape[-2] if usable else 0)

    def view(self) -> Any:
        return None if self.buffer is None else self.buffer[: self.rows, :, self.start : self.end]

    def reserve(self, like: Any, rows: int, left: int, right: int) -> None:
        """At least `rows` rows, `left` free columns before the window and `right` after it: copies the
        window into a new buffer only when the current one lacks room."""
        buffer = self.buffer
        if (
            buffer is not None
            and buffer.dim() == 4
            and buffer.shape[0] >= rows
            and self.start >= left
            and buffer.shape[-2] - self.end >= right
        ):
            return
        width = self.end - self.start
        spare = max(MIN_SPARE, (width + right) // 4)
        had = buffer.shape[0] if buffer is not None and buffer.dim() == 4 else 0
        row_room = max(rows, had if had >= rows else 2 * had)  # rows grow by doubling, as joins come one by one
        grown = like.new_empty(row_room, like.shape[1], left + width + right + spare, like.shape[3])
        if width and self.rows:
            grown[: self.rows, :, left : left + width] = buffer[: self.rows, :, self.start : self.end]
        self.buffer, self.start, self.end = grown, left, left + width


class SpareColumnsLayer(DynamicLayer):
    """A `DynamicLayer` whose keys and values are windows of buffers with spare rows and columns."""

    def __init__(self, **kwargs: Any) -> None:
        self._windows = {name: _Window() for name in NAMES}
        super().__init__(**kwargs)

    def _view(self, name: str) -> Any:
        return self._windows[name].view()

    def _assign(self, name: str, tensor: Any) -> None:
        self._windows[name] = _Window(tensor)

    keys = property(lambda self: self._view("keys"), lambda self, tensor: self._assign("keys", tensor))  # type: ignore[assignment]
    values = property(lambda self: self._view("values"), lambda self, tensor: self._assign("values", tensor))  # type: ignore[assignment]

    def lazy_initialization(self, key_states: Any, value_states: Any) -> None:
        self.device = key_states.device
        self.is_initialized = True

    def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        for name, states in zip(NAMES, (key_states, value_states), strict=True):
            window = self._windows[name]
            if window.buffer is None:
                window.rows = states.shape[0]
            new = states.shape[-2]
            window.reserve(states, window.rows, 0, new)
            window.buffer[: window.rows, :, window.end : window.end + new] = states
            window.end += new
        return self.keys, self.values

    def keep_rows(self, moves: list[tuple[int, int]], rows: int) -> None:
        """Copy row `source` to row `target` for each move (sources past `rows`, targets before), then
        keep the first `rows` rows."""
        for window in self._windows.values():
            columns = window.buffer[:, :, window.start : window.end]
            for source, target in moves:
                columns[target].copy_(columns[source])
            window.rows = rows

    def trim_left(self, columns: int) -> None:
        """Drop the window's first `columns` columns (no copy)."""
        for window in self._windows.values():
            window.start += columns

    def extend_left(self, columns: int) -> None:
        """Widen the window by `columns` zeroed columns on the left."""
        for window in self._windows.values():
            window.reserve(window.buffer, window.rows, columns, 0)
            window.start -= columns
            window.buffer[: window.rows, :, window.start : window.start + columns] = 0

    def add_rows(self, keys: Any, values: Any) -> None:
        """Append rows whose keys and values are at most the window's width: right-aligned, padding zeroed."""
        for window, states in zip(self._windows.values(), (keys, values), strict=True):
            added, width = states.shape[0], states.shape[-2]
            span = window.end - window.start
            if width > span:
                raise ValueError(f"rows of {width} columns do not fit a window of {span}")
            window.reserve(states, window.rows + added, 0, 0)
            new_rows = window.buffer[window.rows : window.rows + added]
            new_rows[:, :, window.start : window.end - width] = 0
            new_rows[:, :, window.end - width : window.end] = states
            window.rows += added

    def get_seq_length(self) -> int:
        window = self._windows["keys"]
        return window.end - window.start

    def reset(self) -> None:
        for name in NAMES:
            self._assign(name, None)
        self.is_initialized = False


def spare_columns_cache(layers: int) -> Cache:
    """An empty cache of `layers` `SpareColumnsLayer`s (one per decoder layer of the model)."""
    return Cache(layers=[SpareColumnsLayer() for _ in range(layers)])
