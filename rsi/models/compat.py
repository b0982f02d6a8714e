"""What differs across the transformers range pyproject.toml promises, in one place.

The range (`ml` extra) runs from transformers 5.17 (the GPU machine's, ../shared/GPU.md, and the floor
tier's: `make test-floor`) to 5.25 (`make test`). Between them transformers renamed the KV cache of a
forward, both the argument and the output's attribute:

    5.17 ...           model(..., past_key_values=cache)   output.past_key_values
    5.25               model(..., cache=cache)             output.cache

The rest of the cache API the project uses is the same across the range: `DynamicCache(ddp_cache_data=...,
config=...)`, `Cache(layers=[...])`, a layer's `keys`/`values`/`update`/`get_seq_length`, and the 2-D
attention mask (rows x cached columns + new columns) from which the model builds its 4-D causal mask.

A model of the older releases takes an unknown `cache=` into its `**kwargs` and drops it without a word,
so a forward meant to continue a cache runs as if there were none: the embedded backend then fails on
the output's missing `cache` attribute, and replay's forward builds its causal mask for the response
alone against a mask that also covers the prompt's columns ("The expanded size of the tensor (9) must
match the existing size (20)"), or, without a mask, silently scores the response without its prompt.
Every forward that passes or reads a cache therefore goes through `cache_kwargs` and `output_cache`.

The name is read from the installed release (the fields of `CausalLMOutputWithPast`), not from its
version number, so a release that renames it back or forward is caught by `test_compat.py`, which checks
the name against the forward signature of a real model class.
"""

from __future__ import annotations

import functools
from typing import Any

NAMES = ("cache", "past_key_values")


@functools.cache
def cache_name() -> str:
    """The installed transformers' name for a forward's KV cache: `cache` (5.2x) or `past_key_values`."""
    from transformers.modeling_outputs import CausalLMOutputWithPast

    fields = getattr(CausalLMOutputWithPast, "__dataclass_fields__", {})
    for name in NAMES:
        if name in fields:
            return name
    raise RuntimeError(
        f"transformers' CausalLMOutputWithPast has none of {NAMES} (fields: {sorted(fields)}): this release is "
        "outside the range pyproject.toml states"
    )


def cache_kwargs(cache: Any) -> dict[str, Any]:
    """The keyword argument that hands `cache` to a model's forward (none for `None`)."""
    return {} if cache is None else {cache_name(): cache}


def output_cache(output: Any) -> Any:
    """The KV cache a forward returned (`None` when it kept none)."""
    return getattr(output, cache_name(), None)


def dynamic_cache(layers: list[tuple[Any, Any]], config: Any) -> Any:
    """A `DynamicCache` holding existing (keys, values) tensors, one pair per layer (both releases copy them
    once, into the layer's first `update`)."""
    from transformers import DynamicCache

    return DynamicCache(ddp_cache_data=layers, config=config)


def versions() -> dict[str, str]:
    """The versions of the model stack in this environment (for reports and benchmark records)."""
    import importlib.metadata as metadata

    found = {}
    for package in ("torch", "transformers", "peft", "accelerate"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = "absent"
    return found
