"""The openai backend: retry policy against a tiny local HTTP server (fast), and the whole HTTP path
against a real `rsi serve` subprocess with real adapters (slow)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from rsi.models.base import ChatMessage, GenerationRequest
from rsi.models.openai_backend import HttpStatusError, OpenAIModel, RetryPolicy, TransientHttpError

FAST = RetryPolicy(attempts=4, initial_wait_s=0.01, max_wait_s=0.05)
COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ScriptedServer:
    """A real HTTP server answering POSTs with a scripted list of statuses (the last one repeats)."""

    def __init__(self, statuses: list[int]) -> None:
        self.statuses = statuses
        self.hits = 0
        self.bodies: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length", 0))
                outer.bodies.append(json.loads(self.rfile.read(length) or b"{}"))
                status = outer.statuses[min(outer.hits, len(outer.statuses) - 1)]
                outer.hits += 1
                body = json.dumps(COMPLETION if status == 200 else {"error": {"message": f"status {status}"}})
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body.encode())

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming): /v1/models
                body = json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def scripted_server():
    servers: list[ScriptedServer] = []

    def start(statuses: list[int]) -> ScriptedServer:
        servers.append(ScriptedServer(statuses))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def hello(**kwargs) -> GenerationRequest:
    return GenerationRequest(messages=[ChatMessage(role="user", content="hi")], **kwargs)


def test_transient_5xx_is_retried_until_success(scripted_server) -> None:
    server = scripted_server([503, 503, 200])
    model = OpenAIModel(server.url, base_model="m", retry=FAST, api_key="k")
    result = model.generate(hello(stop=["```"], seed=3, max_tokens=7))
    assert server.hits == 3
    assert result.completions[0].text == "hello"
    assert (result.prompt_tokens, result.completion_tokens) == (5, 2)
    sent = server.bodies[-1]
    assert sent["model"] == "m" and sent["stop"] == ["```"] and sent["seed"] == 3 and sent["max_tokens"] == 7


def test_4xx_is_not_retried(scripted_server) -> None:
    server = scripted_server([400, 200])
    model = OpenAIModel(server.url, base_model="m", retry=FAST)
    with pytest.raises(HttpStatusError) as raised:
        model.generate(hello())
    assert raised.value.status == 400
    assert server.hits == 1


def test_429_retries_are_bounded(scripted_server) -> None:
    server = scripted_server([429])
    model = OpenAIModel(server.url, base_model="m", retry=FAST)
    with pytest.raises(TransientHttpError, match="429"):
        model.generate(hello())
    assert server.hits == FAST.attempts


def test_connection_refused_is_transient_and_bounded() -> None:
    model = OpenAIModel(f"http://127.0.0.1:{free_port()}", base_model="m", retry=FAST)
    started = time.monotonic()
    with pytest.raises(TransientHttpError, match="ConnectError"):
        model.generate(hello())
    assert time.monotonic() - started < 5


def test_specialist_goes_to_the_model_field(scripted_server) -> None:
    server = scripted_server([200])
    model = OpenAIModel(server.url, base_model="base", retry=FAST)
    model.served_names["coder"] = "coder@abc123"
    result = model.generate(hello(specialist="coder"))
    assert server.bodies[-1]["model"] == "coder@abc123"
    assert result.specialist == "coder"


# -- against a real `rsi serve` ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(adapter_dirs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory):
    """`rsi serve` in a subprocess (float32, so batched and lone rows agree exactly), adapter alpha preloaded."""
    port = free_port()
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    exe = Path(sys.executable).parent / "rsi"
    with log.open("w") as sink:
        process = subprocess.Popen(
            [
                str(exe),
                "serve",
                "--port",
                str(port),
                "--dtype",
                "float32",
                "--adapter",
                f"alpha={adapter_dirs['alpha']}",
            ],
            cwd=log.parent,  # no workspace here: rsi serve falls back to the shipped default contract
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=os.environ.copy(),
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"rsi serve did not become healthy:\n{log.read_text()[-3000:]}")
        time.sleep(0.3)
    yield url, process
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        raise


@pytest.mark.slow
def test_chat_completion_against_rsi_serve(served, ask_fn) -> None:
    url, _ = served
    model = OpenAIModel(url, timeout_s=120)
    assert (
        model.base_model() == "SmolLM2-135M-Instruct"
    )  # discovered from /v1/models (the entry without parent)
    result = model.generate(ask_fn("What is the capital of France?", max_tokens=10))
    assert "Paris" in result.completions[0].text
    assert result.prompt_tokens > 10 and 0 < result.completion_tokens <= 10
    listed = {m["id"]: m for m in model.list_models()}
    assert listed["alpha"]["parent"] == "SmolLM2-135M-Instruct"
    three = model.generate(ask_fn("Tell me a joke.", n=3, temperature=1.0, seed=1, max_tokens=6))
    assert len(three.completions) == 3


@pytest.mark.slow
def test_adapters_over_http_in_one_burst(served, adapter_dirs, ask_fn) -> None:
    url, _ = served
    model = OpenAIModel(url, timeout_s=120)
    model.load_adapter("beta", str(adapter_dirs["beta"]))  # hot load: no restart
    requests = [
        ask_fn("What is 2+2?", max_tokens=8, specialist="alpha"),
        ask_fn("What is 2+2?", max_tokens=8, specialist="beta"),
        ask_fn("What is 2+2?", max_tokens=8),
        ask_fn("Name a fruit.", max_tokens=8, specialist="beta"),
    ]
    alone = [model.generate(r).completions[0].text for r in requests]
    before = httpx.get(f"{url}/stats").json()
    with ThreadPoolExecutor(len(requests)) as pool:
        burst = [r.completions[0].text for r in pool.map(model.generate, requests)]
    after = httpx.get(f"{url}/stats").json()
    # they shared decoding steps: more rows were decoded than steps were taken
    assert after["row_steps"] - before["row_steps"] > after["steps"] - before["steps"]
    assert burst == alone
    assert len(set(burst[:3])) == 3  # alpha, beta and the base each answered with their own weights

    with pytest.raises(HttpStatusError) as reused:
        model.load_adapter("beta", str(adapter_dirs["alpha"]))  # a loaded name is never reused
    assert reused.value.status == 400
    model.unload_adapter("beta")
    with pytest.raises(HttpStatusError) as gone:
        model.generate(requests[1])
    assert gone.value.status == 404
    with pytest.raises(HttpStatusError) as missing:
        model.unload_adapter("beta")
    assert missing.value.status == 404
    assert "beta" not in {m["id"] for m in model.list_models()}


@pytest.mark.slow
def test_bad_requests_get_openai_errors(served) -> None:
    url, _ = served
    bad_model = httpx.post(
        f"{url}/v1/chat/completions", json={"model": "nope", "messages": [{"role": "user", "content": "x"}]}
    )
    assert bad_model.status_code == 404 and "nope" in bad_model.json()["error"]["message"]
    no_messages = httpx.post(f"{url}/v1/chat/completions", json={"messages": []})
    assert no_messages.status_code == 400 and "messages" in no_messages.json()["error"]["message"]
    bad_path = httpx.post(f"{url}/v1/load_lora_adapter", json={"lora_name": "x", "lora_path": "/nonexistent"})
    assert bad_path.status_code == 400 and "adapter_config.json" in bad_path.json()["error"]["message"]


def test_a_specialist_the_endpoint_cannot_load_is_an_error_not_a_fallback(scripted_server, tmp_path) -> None:
    """An endpoint that refuses the load (here: no such route, 404) never gets asked for the bare name."""
    from rsi.errors import ModelError

    folder = tmp_path / "sft"
    folder.mkdir()
    (folder / "adapter_config.json").write_text("{}")
    server = scripted_server([404])
    model = OpenAIModel(server.url, retry=FAST)
    with pytest.raises(ModelError) as caught:
        model.attach_specialists({"sft": folder})
    assert "cannot serve specialist 'sft'" in str(caught.value) and "HTTP 404" in str(caught.value)
    assert "VLLM_ALLOW_RUNTIME_LORA_UPDATING" in (caught.value.hint or "")
    assert server.bodies[0]["lora_name"].startswith("sft@") and server.bodies[0]["lora_path"] == str(folder.resolve())
    assert model.served_names == {}
    model.close()


@pytest.mark.slow
def test_contract_specialists_are_served_at_their_exact_revision(served, adapter_dirs, ask_fn) -> None:
    """make_model on an openai contract loads its specialist at the endpoint under name@digest: the
    answers are those of the same weights the server preloaded as 'alpha', not the base's."""
    from rsi.models.embedded.weights import adapter_digest
    from rsi.models.factory import make_model
    from tests.models.test_factory import contract

    url, _ = served
    spec = contract(serving={"backend": "openai", "base_url": url},
                    specialists=[{"name": "sft", "path": str(adapter_dirs["alpha"])}])
    served_name = f"sft@{adapter_digest(adapter_dirs['alpha'])[:12]}"
    model = make_model(spec)
    try:
        assert model.served_names == {"sft": served_name}
        listed = {m["id"]: m for m in model.list_models()}
        assert listed[served_name]["parent"] == "SmolLM2-135M-Instruct"
        question = "What is 2+2?"
        via_contract = model.generate(ask_fn(question, max_tokens=8, specialist="sft")).completions[0].text
        alpha = model.generate(ask_fn(question, max_tokens=8, specialist="alpha")).completions[0].text
        base = model.generate(ask_fn(question, max_tokens=8)).completions[0].text
        assert via_contract == alpha != base
    finally:
        model.close()
    again = make_model(spec)  # the revision is already listed: used as is
    try:
        assert again.served_names == {"sft": served_name}
    finally:
        again.close()
