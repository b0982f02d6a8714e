"""Linear layers on prepacked oneDNN weights: the embedded model's matrix products on the CPU.

`torch.nn.functional.linear` hands a plain weight to the CPU's GEMM on every call, which lays the weight
out for its kernel each time. oneDNN can do that once (`mkldnn._reorder_linear_weight`) and then run
every product on the prepacked copy (`mkldnn._linear_pointwise`, what `torch.compile` emits for frozen
CPU linears, callable without a compiler). For SmolLM2-135M's shapes at 8 rows, one product took
0.55-0.7x the time in bfloat16 (the same result, bit for bit) and 0.25-0.4x in float32. In the embedded
backend, 8 clients side by side with plain weights, that is 1.8-2.0x the tokens per second in float32
and about the same in bfloat16: the isolated gain, measured with one layer's weight hot in the cache,
does not carry over to a whole model there (bench/RESULTS.md, "## paired ratios, packed linears").

`pack_linears(model)` makes every plain `nn.Linear` of the model compute on a packed copy of its weight,
made when the layer first runs with that weight. A layer whose weight is replaced (the embedded backend
swaps an adapter's merged weights in and out, `rsi.models.embedded.merged_adapters`) packs the new one on its first
use and keeps the last `PACKS_PER_LAYER` packs, so switching back costs nothing; a weight changed in place
is packed again. Where packing cannot run (no oneDNN, another device, autograd on, a dtype mismatch),
the layer computes as before. `RSI_PACKED_LINEAR=0` turns it off.

The cost is memory: each packed weight is a copy (about the model's size again).
"""

from __future__ import annotations

import functools
import os
import types
import weakref
from collections import OrderedDict
from typing import Any

__all__ = ["ENV_PACKED", "PACKS_PER_LAYER", "WeightPacks", "linear", "pack_linears", "packed_linear", "packing_available",
           "packing_choice"]

ENV_PACKED = "RSI_PACKED_LINEAR"
PACKS_PER_LAYER = 3  # the base's weight and a couple of merged adapters' (rsi.models.embedded.merged_adapters)


@functools.cache
def _op_works() -> bool:
    """Whether oneDNN's packed linear runs here and agrees with a plain product (a tiny check, once)."""
    import torch

    try:
        if not torch.backends.mkldnn.is_available():
            return False
        weight = torch.randn(16, 8, generator=torch.Generator().manual_seed(0))
        x = torch.randn(3, 8, generator=torch.Generator().manual_seed(1))
        with torch.inference_mode():
            packed = torch.ops.mkldnn._reorder_linear_weight(weight, None)
            out = torch.ops.mkldnn._linear_pointwise(x, packed, None, "none", [], "")
        return bool(torch.allclose(out, x @ weight.T, atol=1e-5))
    except Exception:  # noqa: BLE001 - any failure means: not here
        return False


def packing_available() -> bool:
    """Packed linears are on: oneDNN works here and `RSI_PACKED_LINEAR` does not say 0."""
    return packing_choice()[0]


def packing_choice() -> tuple[bool, str]:
    """(on, why): what `rsi doctor` and the tuning probe report."""
    if os.environ.get(ENV_PACKED, "1").strip() == "0":
        return False, f"{ENV_PACKED}=0: plain torch linear"
    if not _op_works():
        return False, "oneDNN's packed linear is not available here: plain torch linear"
    return True, "oneDNN prepacked weights (bench/RESULTS.md, paired ratios, packed linears)"


def _version(tensor: Any) -> int:
    try:
        return int(tensor._version)
    except (AttributeError, RuntimeError):  # inference tensors keep no version counter
        return 0


class WeightPacks:
    """Packed copies of weights, made on first use and kept for the last `size` sets of weights.

    A set is keyed by its tensors' identity (held weakly: a weight nobody else holds is not kept alive)
    and version (a weight changed in place is packed again). One weight is packed as it is; several are
    stacked first (rows after rows), so one product computes all of them. Where packing is off, the
    stack is a plain tensor (one weight: the weight itself), and `linear` computes on it as usual.
    """

    def __init__(self, size: int = PACKS_PER_LAYER) -> None:
        self.size = size
        self._packs: OrderedDict[tuple[int, ...], tuple[list[Any], tuple[int, ...], Any]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._packs)

    def get(self, weights: list[Any]) -> Any:
        import torch

        key = tuple(id(w) for w in weights)
        versions = tuple(_version(w) for w in weights)
        entry = self._packs.get(key)
        if entry is not None and entry[1] == versions and all(r() is w for r, w in zip(entry[0], weights, strict=True)):
            self._packs.move_to_end(key)
            return entry[2]
        with torch.inference_mode():
            stacked = weights[0].detach() if len(weights) == 1 else torch.cat([w.detach() for w in weights], dim=0)
            if packing_available() and stacked.device.type == "cpu":
                stacked = torch.ops.mkldnn._reorder_linear_weight(stacked, None)
        self._packs[key] = ([weakref.ref(w) for w in weights], versions, stacked)
        while len(self._packs) > self.size:
            self._packs.popitem(last=False)
        return stacked


def linear(x: Any, packed: Any, bias: Any = None) -> Any:
    """`x @ W.T + bias` for a weight from `WeightPacks.get`: oneDNN's product on a packed one, else torch's."""
    import torch

    if packed.is_mkldnn:
        return torch.ops.mkldnn._linear_pointwise(x, packed, bias, "none", [], "")
    return torch.nn.functional.linear(x, packed, bias)


def _packed_forward(self: Any, x: Any) -> Any:
    import torch

    weight = self.weight
    if torch.is_grad_enabled() or x.dtype != weight.dtype or x.device.type != "cpu" or weight.device.type != "cpu":
        return torch.nn.functional.linear(x, weight, self.bias)
    return linear(x, self.__dict__["_rsi_packs"].get([weight]), self.bias)


def pack_linears(model: Any) -> int:
    """Make every plain `nn.Linear` of `model` compute on packed weights; returns how many (0: not here).

    Only exact `nn.Linear`s are changed (peft's LoRA wrappers call their base layer, which is one), and
    only their `forward`: the weights, the module tree and `state_dict` stay as they were.
    """
    import torch

    if not packing_available():
        return 0
    count = 0
    for module in model.modules():
        if type(module) is torch.nn.Linear and module.weight.device.type == "cpu" and "_rsi_packs" not in module.__dict__:
            module.__dict__["_rsi_packs"] = WeightPacks()
            module.forward = types.MethodType(_packed_forward, module)  # type: ignore[method-assign]
            count += 1
    return count


def packed_linear(weight: Any) -> Any:
    """`x -> x @ weight.T` as the embedded model would compute it here (the tuning probe's product)."""
    packed = WeightPacks(size=1).get([weight])
    return lambda x: linear(x, packed)
