"""make_model: the backend a contract names, and one embedded model shared by every handle in a process."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsi.contracts.load import load_contract
from rsi.contracts.schema import ContractSpec
from rsi.errors import UserInputError
from rsi.models.base import ChatModel
from rsi.models.factory import make_model
from rsi.workspace import Workspace, shipped_root


def contract(**sections) -> ContractSpec:
    data = load_contract(shipped_root() / "hcp" / "default.toml").spec.model_dump()
    data.update(sections)
    return ContractSpec.model_validate(data)


def test_openai_backend_needs_a_url() -> None:
    with pytest.raises(UserInputError, match="base_url"):
        make_model(contract(serving={"backend": "openai"}))


def test_openai_backend_reads_the_key_from_the_named_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RSI_TEST_KEY", "sekrit")
    model = make_model(
        contract(
            serving={"backend": "openai", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "RSI_TEST_KEY"}
        )
    )
    try:
        assert isinstance(model, ChatModel)
        assert model._client.headers["Authorization"] == "Bearer sekrit"
        assert model.base_url == "http://127.0.0.1:9"
    finally:
        model.close()


@pytest.mark.slow
def test_handles_share_one_model_but_keep_their_own_specialists(
    adapter_dirs: dict[str, Path], tmp_path: Path, ask_fn
) -> None:
    from rsi.models import factory

    workspace = Workspace(tmp_path)
    first = make_model(
        contract(specialists=[{"name": "coder", "path": str(adapter_dirs["alpha"])}]), workspace
    )
    second = make_model(
        contract(specialists=[{"name": "coder", "path": str(adapter_dirs["beta"])}]), workspace
    )
    try:
        assert first.model is second.model  # one set of weights, one batching queue
        shared = first.model
        assert len(shared.adapters()) == 2  # coder@<alpha digest> and coder@<beta digest>
        question = ask_fn("What is 2+2?", max_tokens=8, specialist="coder")
        as_first = first.generate(question)
        as_second = second.generate(question)
        assert as_first.specialist == as_second.specialist == "coder"
        assert as_first.completions[0].text != as_second.completions[0].text
        base = ask_fn("What is 2+2?", max_tokens=8)
        assert first.generate(base).completions[0].text == second.generate(base).completions[0].text
        first.close()
        assert len(shared.adapters()) == 1  # the first handle's adapter was released
        assert second.generate(question).completions[0].text == as_second.completions[0].text
    finally:
        first.close()
        second.close()
    assert not factory._registry  # the last handle closed the shared model
    assert shared._closed
