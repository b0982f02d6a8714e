"""A `ui` task through a whole attempt with the real browser: the text substrate, the shipped ui system
prompt, a model that replies with a ```html block (scripted in process, then through the
OpenAI-compatible backend against a scripted HTTP server), the hidden judge in the sandbox, and the
trajectory keeping the layer scores and the screenshot, which the report's viewer embeds.

Chromium missing: skipped (failed in CI, RSI_REQUIRE_SERVICES=1).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rsi.harness.attempt import run_attempt
from rsi.harness.trajectory import read_trajectory
from rsi.models.scripted import ScriptedModel
from rsi.report.records import AttemptLine
from rsi.report.transcripts import read_transcripts
from rsi.tasks.load import load_task
from rsi.verdict import Verdict
from rsi.verifier.ui import find_chromium
from tests.conftest import need
from tests.verifier.ui_task import DEAD_BUTTON, ONE_FILE, make_ui_task, register_ui_kind

REPO = Path(__file__).resolve().parents[2]
UI_PROMPT = (REPO / "hcp" / "prompts" / "ui.md").read_text()
LAYERS = {"viability": 1.0, "task": 1.0, "interaction": 1.0, "constraints": 1.0, "visual": 1.0}


@pytest.fixture
def ui_task(monkeypatch, open_tmp: Path):
    need(find_chromium() is not None, "Debian's chromium is not installed (apt-get install chromium)")
    register_ui_kind(monkeypatch)
    return load_task(make_ui_task(open_tmp / "tasks"))


def ui_config(config_factory, **harness):
    """The shipped portfolio's ui-text-greedy configuration, as a test contract (portfolios/ui.toml)."""
    return config_factory(harness={"substrate": "text", "max_turns": 1, "sampling": {"max_tokens": 1024}, **harness},
                          system_prompt=UI_PROMPT, name="ui-text-greedy")


def reply(page: str) -> str:
    return f"Here is the page.\n```html\n{page}```\n"


def assert_evidence(outcome, open_tmp: Path) -> None:
    """The trajectory keeps the layer scores and the screenshot; the viewer embeds the screenshot."""
    trajectory = read_trajectory(outcome.trajectory_path)
    final = trajectory.outcome
    assert final is not None and final.layer_scores == LAYERS
    assert final.artifacts == {"screenshot": "verifier/screenshot.png", "checks": "verifier/ui-checks.json"}
    folder = outcome.trajectory_path.parent
    assert (folder / final.artifacts["screenshot"]).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    checks = json.loads((folder / final.artifacts["checks"]).read_text())
    assert {c["id"] for c in checks["checks"] if c["passed"]} >= {"click-twice", "the-button"}
    [transcript] = read_transcripts([AttemptLine(n=0, job=0, config=0, task=0, verdict="passed",
                                                 trajectory_path=str(outcome.trajectory_path))])
    assert transcript.layer_scores == LAYERS
    assert transcript.screenshot.startswith("data:image/png;base64,iVBORw0KGgo") and not transcript.screenshot_note


def test_a_scripted_html_reply_passes_and_the_trajectory_keeps_layers_and_screenshot(ui_task, config_factory,
                                                                                     sandbox, open_tmp: Path) -> None:
    model = ScriptedModel([reply(ONE_FILE)])
    outcome = run_attempt(ui_config(config_factory), ui_task, model, sandbox, open_tmp / "a", seed=0)
    assert outcome.verdict is Verdict.PASSED, outcome.reason
    [request] = model.requests
    assert request.messages[0].content == UI_PROMPT.strip()
    assert "Reply with one ```html block: the complete contents of index.html." in request.messages[-1].content
    assert_evidence(outcome, open_tmp)


def test_a_dead_button_passes_the_public_check_and_fails_hidden_interaction_only(ui_task, config_factory, sandbox,
                                                                               open_tmp: Path) -> None:
    # The public check (the count shows 0) passes the dead button: the hidden interaction check fails it.
    model = ScriptedModel([reply(DEAD_BUTTON)])
    outcome = run_attempt(ui_config(config_factory, check="first-pass"), ui_task, model, sandbox, open_tmp / "b", seed=0)
    assert outcome.verdict is Verdict.FAILED and "click-twice" in outcome.reason
    final = read_trajectory(outcome.trajectory_path).outcome
    assert final.layer_scores == {**LAYERS, "interaction": 0.0}
    agent = [s for s in read_trajectory(outcome.trajectory_path).steps if s.source == "agent"]
    assert agent[0].check is not None and (agent[0].check.passed, agent[0].check.total) == (1, 1)


class ChatServer:
    """An OpenAI-compatible server whose every chat completion is one scripted reply."""

    def __init__(self, content: str) -> None:
        self.bodies: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                outer.bodies.append(json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}"))
                body = json.dumps({
                    "id": "chatcmpl-1", "object": "chat.completion", "model": "m",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 300, "completion_tokens": 200, "total_tokens": 500},
                }).encode()
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


def test_the_same_task_through_the_openai_compatible_backend_passes(ui_task, config_factory, sandbox,
                                                                    open_tmp: Path) -> None:
    from rsi.models.openai_backend import OpenAIModel, RetryPolicy

    server = ChatServer(reply(ONE_FILE))
    try:
        model = OpenAIModel(server.url, base_model="m", retry=RetryPolicy(attempts=1, initial_wait_s=0.01, max_wait_s=0.01))
        outcome = run_attempt(ui_config(config_factory), ui_task, model, sandbox, open_tmp / "c", seed=0)
    finally:
        server.close()
    assert outcome.verdict is Verdict.PASSED, outcome.reason
    [body] = server.bodies
    assert body["messages"][0] == {"role": "system", "content": UI_PROMPT.strip()} and body["max_tokens"] == 1024
    assert (outcome.prompt_tokens, outcome.completion_tokens) == (300, 200)
    assert_evidence(outcome, open_tmp)
