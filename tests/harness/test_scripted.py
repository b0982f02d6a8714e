"""The scripted ChatModel that ships for tests: replays, reacts, fails on purpose."""

from __future__ import annotations

import pytest

from rsi.errors import ModelError
from rsi.models.base import ChatMessage, ChatModel, GenerationRequest
from rsi.models.scripted import ScriptedModel


def request(text: str = "hi", n: int = 1, max_tokens: int = 256) -> GenerationRequest:
    return GenerationRequest(messages=[ChatMessage(role="user", content=text)], n=n, max_tokens=max_tokens)


def test_replays_in_order_counts_tokens_and_runs_out_loudly():
    model = ScriptedModel(["one", "two", "three"])
    assert isinstance(model, ChatModel)
    first = model.generate(request("abcdefgh"))
    assert [c.text for c in first.completions] == ["one"] and first.prompt_tokens == 2
    assert [c.text for c in model.generate(request(n=2)).completions] == ["two", "three"]
    with pytest.raises(ModelError, match="ran out of replies after 3"):
        model.generate(request())
    assert len(model.requests) == 3  # the failed request is recorded too


def test_a_function_of_the_request_and_scripted_failures():
    echo = ScriptedModel(lambda req: f"you said {req.messages[-1].content}")
    assert echo.generate(request("x")).completions[0].text == "you said x"
    failing = ScriptedModel(["ok", ModelError("down")])
    failing.generate(request())
    with pytest.raises(ModelError, match="down"):
        failing.generate(request())


def test_max_tokens_cuts_the_reply_like_a_real_model():
    result = ScriptedModel(["x" * 100]).generate(request(max_tokens=5))
    assert result.completions[0].text == "x" * 20 and result.completions[0].finish_reason == "length"
