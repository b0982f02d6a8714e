"""Linear layers on prepacked oneDNN weights: the same products, packed once per weight, plain where they cannot be."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from rsi.models.embedded import packed_linear  # noqa: E402
from rsi.models.embedded.packed_linear import ENV_PACKED, PACKS_PER_LAYER, pack_linears  # noqa: E402

needs_onednn = pytest.mark.skipif(not packed_linear._op_works(), reason="oneDNN's packed linear is not available here")


def _layers(dtype: torch.dtype = torch.float32) -> torch.nn.Sequential:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 96), torch.nn.SiLU(), torch.nn.Linear(96, 32, bias=False)).to(dtype)


@pytest.fixture(autouse=True)
def _packing_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_PACKED, raising=False)


@needs_onednn
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_packed_layers_compute_the_plain_products(dtype: torch.dtype) -> None:
    plain, packed = _layers(dtype), _layers(dtype)
    assert pack_linears(packed) == 2
    x = torch.randn(8, 1, 64).to(dtype)  # a decoding step's shape: rows x 1 position x features
    with torch.inference_mode():
        expected, got = plain(x), packed(x)
    assert got.shape == expected.shape == (8, 1, 32)
    tolerance = 1e-5 if dtype == torch.float32 else 2e-2
    torch.testing.assert_close(got, expected, atol=tolerance, rtol=tolerance)
    assert all(len(layer.__dict__["_rsi_packs"]) == 1 for layer in packed if isinstance(layer, torch.nn.Linear))
    assert pack_linears(packed) == 0  # already packed: nothing wrapped twice


@needs_onednn
def test_a_swapped_weight_is_packed_on_first_use_and_kept() -> None:
    model = _layers()
    pack_linears(model)
    layer = model[2]
    own = layer.weight
    x = torch.randn(4, 96)
    with torch.inference_mode():
        before = layer(x)
        other = torch.nn.Parameter(own.detach() * 2, requires_grad=False)
        layer.weight = other  # what the embedded backend does with an adapter's merged weights
        torch.testing.assert_close(layer(x), before * 2)
        layer.weight = own
        torch.testing.assert_close(layer(x), before)  # back to the base's own pack, not the merged one
    assert len(layer.__dict__["_rsi_packs"]) == 2
    for k in range(PACKS_PER_LAYER + 2):  # at most PACKS_PER_LAYER packs are kept
        layer.weight = torch.nn.Parameter(own.detach() * (k + 3), requires_grad=False)
        with torch.inference_mode():
            torch.testing.assert_close(layer(x), before * (k + 3))
    assert len(layer.__dict__["_rsi_packs"]) == PACKS_PER_LAYER


@needs_onednn
def test_a_weight_changed_in_place_is_packed_again() -> None:
    model = _layers()
    pack_linears(model)
    layer = model[0]
    x = torch.randn(3, 64)
    with torch.inference_mode():
        before = layer(x)
    with torch.no_grad():
        layer.weight.mul_(0.0)  # bumps the tensor's version: the old pack is stale
    with torch.inference_mode():
        torch.testing.assert_close(layer(x), layer.bias.expand(3, -1))
        assert not torch.equal(layer(x), before)


@needs_onednn
def test_autograd_and_mismatched_inputs_take_the_plain_path() -> None:
    model = _layers()
    pack_linears(model)
    x = torch.randn(2, 64, requires_grad=True)
    model(x).sum().backward()  # grad enabled: plain linear, so training through it still works
    assert x.grad is not None and model[0].weight.grad is not None
    assert not model[0].__dict__["_rsi_packs"]  # nothing was packed for it
    # a float64 input against float32 weights: plain torch says what is wrong
    with torch.inference_mode(), pytest.raises(RuntimeError):
        model[0](torch.randn(2, 64, dtype=torch.float64))


def test_the_switch_turns_packing_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_PACKED, "0")
    model = _layers()
    assert pack_linears(model) == 0
    assert "forward" not in model[0].__dict__
    on, why = packed_linear.packing_choice()
    assert not on and ENV_PACKED in why


def test_doctor_reports_the_linear_kernels(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    from rsi.models.embedded import tuning

    monkeypatch.setenv("RSI_CACHE", str(tmp_path))
    monkeypatch.setenv(tuning.ENV_THREADS, "1")
    monkeypatch.setenv(tuning.ENV_DTYPE, "float32")
    settings = tuning.model_settings()
    expected = "packed" if packed_linear.packing_available() and tuning.pick_device(None) == "cpu" else "plain"
    assert settings["linear layers"].value == expected
    assert settings["linear layers"].why == packed_linear.packing_choice()[1]
