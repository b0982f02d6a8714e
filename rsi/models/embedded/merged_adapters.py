"""Merged LoRA weights for a step whose rows all use one adapter.

A LoRA layer adds `scale * B(A(x))` to its base layer's output: two small matmuls, a scaling and an add,
each a separate torch call. On a small model on the CPU those calls cost more than their arithmetic (each
one wakes the intra-op thread pool): with r=8 on q_proj and v_proj, SmolLM2-135M decoded 0.62-0.83 as many
tokens per second with one adapter as without (bench/RESULTS.md, "## paired ratios"). A step whose rows all
use one adapter can instead run on base weights with that adapter's update added once, `W + scale * B @ A`:
the forward of the bare base, with the LoRA layers switched off.

`MergedAdapters` keeps, per adapter, a merged copy of the weights of the layers it adapts (computed in float32
on first use, then cast to the model's number format; at most `capacity` adapters, least recently used
dropped first) and the base's own weight tensors, and swaps one set or the other into the base layers, a
pointer per layer. The base's own tensors are never written, so switching back restores them exactly.

The merged sum rounds differently from the separate LoRA terms, so an adapter row's tokens can depend on
whether its step ran merged (alone, or beside rows of the same adapter) or through peft's per-row path (beside
rows of other adapters). The embedded backend therefore merges only in number formats whose rounding already
depends on the batch (bfloat16); in float32 it keeps its promise that a row decodes the same tokens alone or
batched. LoRA variants (DoRA), LoRA biases and non-Linear layers are not merged: such an adapter keeps peft's
path.

The caller holds the model's lock, and calls `restore()` before peft adds or deletes LoRA layers, and before
`unload()`: a merged tensor left in a base layer would become the base.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

__all__ = ["MergedAdapters"]


class MergedAdapters:
    """The base layers' weights: the base's own, or one adapter's merged copy (swapped in, never written)."""

    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self._layers: list[Any] | None = None  # peft's LoRA layers, found on first use after a restore()
        self._own: list[Any] = []  # the base's own weight of each layer, in the same order
        self._merged: OrderedDict[str, list[Any]] = OrderedDict()  # adapter -> weight per layer, LRU order
        self._unmergeable: set[str] = set()
        self.current: str | None = None  # whose weights are in place (None: the base's own)

    def use(self, model: Any, adapter: str | None) -> bool:
        """Put `adapter`'s merged weights in place (None: the base's own); False if it cannot be merged.

        After False the base's own weights are in place, and the caller runs the adapter through peft.
        """
        if adapter == self.current:
            return True
        weights = self._own_weights(model) if adapter is None else self._weights_for(model, adapter)
        if weights is None:
            self.use(model, None)
            return False
        for layer, weight in zip(self._layers or [], weights, strict=True):
            layer.get_base_layer().weight = weight
        self.current = adapter
        if adapter is not None:
            self._merged.move_to_end(adapter)
        return True

    def restore(self, model: Any) -> None:
        """Put the base's own weights back and forget every merged copy (peft is about to change the layers)."""
        if self._layers is not None:
            self.use(model, None)
        self._layers = None
        self._own = []
        self._merged.clear()
        self._unmergeable.clear()
        self.current = None

    # -- building --------------------------------------------------------------------------------------

    def _own_weights(self, model: Any) -> list[Any]:
        if self._layers is None:  # only ever found with the base's own weights in place (see restore())
            from peft.tuners.lora import LoraLayer

            self._layers = [m for m in model.modules() if isinstance(m, LoraLayer)]
            self._own = [layer.get_base_layer().weight for layer in self._layers]
        return self._own

    def _weights_for(self, model: Any, adapter: str) -> list[Any] | None:
        if adapter in self._merged:
            return self._merged[adapter]
        if adapter in self._unmergeable:
            return None
        own = self._own_weights(model)
        layers = self._layers or []
        if not all(_mergeable(layer, adapter) for layer in layers if adapter in layer.lora_A):
            self._unmergeable.add(adapter)
            return None
        import torch

        merged: list[Any] = []
        with torch.no_grad():
            for layer, weight in zip(layers, own, strict=True):
                if adapter not in layer.lora_A:
                    merged.append(weight)  # a layer this adapter does not adapt keeps the base's tensor
                    continue
                delta = layer.get_delta_weight(adapter).to(device=weight.device, dtype=torch.float32)
                merged.append(torch.nn.Parameter((weight.float() + delta).to(weight.dtype), requires_grad=False))
        self._merged[adapter] = merged
        while len(self._merged) > self.capacity:
            oldest = next(name for name in self._merged if name != self.current)
            del self._merged[oldest]
        return merged


def _mergeable(layer: Any, adapter: str) -> bool:
    """Whether `layer`'s update for `adapter` is exactly `scale * B @ A` added to an nn.Linear's weight."""
    import torch
    from peft.tuners.lora import Linear

    base = layer.get_base_layer()
    return bool(
        isinstance(layer, Linear)
        and isinstance(base, torch.nn.Linear)
        and adapter not in getattr(layer, "lora_variant", {})
        and not getattr(layer, "lora_bias", {}).get(adapter, False)
        and base.weight.dtype.is_floating_point
    )
