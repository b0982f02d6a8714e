"""The ui kind's judge with the real browser: Debian's Chromium, driven over the DevTools pipe.

Each browser test judges one small page written inline, with every check that page is about batched
into one launch (a launch costs about 2-3 s here). Chromium missing: the browser tests skip naming it
(and fail in CI, RSI_REQUIRE_SERVICES=1; .ci/services/50-chromium.sh installs it).
"""

from __future__ import annotations

import http.server
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest

from rsi.sandbox.base import Limits
from rsi.verdict import Verdict
from rsi.verifier.ui import (
    CHECKS,
    NO_BROWSER,
    UiOptions,
    find_chromium,
    judge_page,
    load_checks_file,
    parse_checks,
)
from rsi.verifier.ui.checks import CheckError
from rsi.verifier.ui.runner import score
from tests.conftest import need

REFERENCE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Counter</title>
<link rel="stylesheet" href="style.css"></head>
<body><main><h1>Counter</h1><p>Count: <span id="count">0</span></p>
<button id="inc" aria-label="Increment">+</button>
<label for="step">Step</label><input id="step" value="1">
<select id="unit" aria-label="Unit"><option value="one">one</option><option value="ten">ten</option></select></main>
<script src="app.js"></script></body></html>"""
REFERENCE_CSS = "body { font-family: sans-serif; background: #fff; color: #111; } button { margin: 8px; }"
REFERENCE_JS = """let n = 0;
const show = () => { document.getElementById('count').textContent = String(n); };
document.getElementById('inc').addEventListener('click', () => {
  n += Number(document.getElementById('step').value) * (document.getElementById('unit').value === 'ten' ? 10 : 1); show(); });
document.getElementById('step').addEventListener('keydown', (e) => { if (e.key === 'Enter') { n = 0; show(); } });
"""
ALL_CHECKS = [
    {"check": "loads"}, {"check": "no-uncaught-errors"}, {"check": "no-failed-requests"},
    {"check": "element", "role": "button", "name": "Increment", "count": 1},
    {"check": "element", "role": "heading", "name": "Counter"},
    {"check": "text", "text": "Count: 0"},
    {"check": "interact", "id": "click-twice", "steps": [{"click": {"role": "button", "name": "Increment"}},
                                                          {"click": {"selector": "#inc"}}],
     "expect": [{"text": "2", "selector": "#count"}]},
    {"check": "interact", "id": "type-select", "steps": [
        {"type": {"target": {"role": "textbox", "name": "Step"}, "text": "3"}},
        {"select": {"target": {"role": "combobox", "name": "Unit"}, "value": "ten"}},
        {"click": {"role": "button", "name": "Increment"}}],
     "expect": [{"text": "30", "selector": "#count"}, {"value": {"target": {"selector": "#step"}, "equals": "3"}}]},
    {"check": "interact", "id": "enter-resets", "steps": [
        {"click": {"selector": "#inc"}}, {"key": {"target": {"selector": "#step"}, "key": "Enter"}}],
     "expect": [{"text": "0", "selector": "#count"}, {"absent": {"role": "dialog"}}]},
    # punctuation is typed as text: '.' once went out as key code 46 (Delete), so '1.5' became '15'
    {"check": "interact", "id": "type-punctuation", "steps": [
        {"type": {"target": {"selector": "#step"}, "text": "1.5 a@b.c, (x)"}}],
     "expect": [{"value": {"target": {"selector": "#step"}, "equals": "1.5 a@b.c, (x)"}}]},
    {"check": "no-external-requests"}, {"check": "max-bytes", "bytes": 4000},
    {"check": "forbid-api", "names": ["eval(", "document.write"]}, {"check": "require-api", "names": ["addEventListener"]},
    {"check": "not-blank"}, {"check": "within-viewport"}, {"check": "no-overlap", "selectors": ["h1", "#inc"]},
    {"check": "contrast", "min_ratio": 4.5},
]


def write_page(html: str, **files: str) -> Path:
    """A page folder the sandbox's fresh uid can read (pytest's tmp_path sits under a 0700 folder)."""
    root = Path(tempfile.mkdtemp(prefix="rsi-ui-test-"))
    root.chmod(0o777)
    (root / "index.html").write_text(html, encoding="utf-8")
    for name, text in files.items():
        (root / name.replace("_", ".")).write_text(text, encoding="utf-8")
    for path in root.iterdir():
        path.chmod(0o666)
    return root


@pytest.fixture(scope="module")
def chromium() -> str:
    found = find_chromium()
    need(found is not None, "Debian's chromium is not installed (apt-get install chromium)")
    return str(found)


@pytest.fixture(scope="module")
def sandbox():
    from rsi.sandbox.local import LocalSandbox

    return LocalSandbox()


def chromium_processes(marker: str = "rsi-ui-profile-") -> set[int]:
    """Processes whose command line names a judge's profile folder (only the judge starts those)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    if marker.encode() in fh.read():
                        found.add(int(entry))
            except OSError:
                continue
    return found


def no_browser_left(before: set[int], within_s: float = 5.0) -> set[int]:
    """The judge's Chromium processes still there after `within_s` (SIGKILLed ones take a moment to go)."""
    deadline = time.monotonic() + within_s
    while True:
        left = chromium_processes() - before
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def by_id(result) -> dict:
    return {c.id: c for c in result.checks}


# -- without a browser -------------------------------------------------------------------------------------
def test_the_judge_runs_exactly_the_registered_checks() -> None:
    from rsi.verifier.ui import judge

    assert set(judge.RUNNERS) == set(CHECKS)
    assert set(judge.FIRST) | set(judge.LAST) | {"interact"} == set(CHECKS)


def test_bad_checks_are_located_by_file_line_and_key(tmp_path: Path) -> None:
    file = tmp_path / "checks.toml"
    file.write_text('[[check]]\ncheck = "loads"\n\n[[check]]\ncheck = "interact"\nsteps = [{click = {name = "Go"}}]\n'
                    'expect = [{text = "x"}]\n')
    checks, problems = load_checks_file(file)
    assert checks == [] and len(problems) == 1
    assert problems[0].line == 4 and problems[0].key.startswith("check[1].steps")
    assert "role" in problems[0].message
    with pytest.raises(CheckError, match=r"check\[0\]\.check: unknown check 'paint'"):
        parse_checks([{"check": "paint"}])
    with pytest.raises(CheckError, match=r"check\[0\]\.bogus"):
        parse_checks([{"check": "loads", "bogus": 1}])
    with pytest.raises(CheckError, match="duplicate id"):
        parse_checks([{"check": "loads", "id": "a"}, {"check": "not-blank", "id": "a"}])


def test_the_verdict_needs_every_check_of_every_required_layer() -> None:
    checks = parse_checks([{"check": "loads"}, {"check": "not-blank"}, {"check": "contrast"}])
    answers = [{"passed": True}, {"passed": True}, {"passed": False, "detail": "low"}]
    failed = score(checks, answers, None)
    assert failed.verdict is Verdict.FAILED and failed.layers == {"viability": 1.0, "visual": 0.5}
    assert "contrast-2 (visual): low" in failed.reason
    assert score(checks, answers, ["viability"]).verdict is Verdict.PASSED
    assert score(checks, answers, ["task"]).verdict is Verdict.ERROR  # a required layer with no check is the task's bug
    outcome = failed.outcome()
    assert outcome.layer_scores == {"viability": 1.0, "visual": 0.5} and outcome.reward == pytest.approx(2 / 3)


def test_no_chromium_is_one_clear_error_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("RSI_CHROMIUM", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    result = judge_page(UiOptions(), parse_checks([{"check": "loads"}]), tmp_path)
    assert result.verdict is Verdict.ERROR and result.reason == NO_BROWSER and "\n" not in result.reason


def test_a_browser_that_does_not_start_is_an_error_not_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RSI_CHROMIUM", "/bin/false")
    page = write_page("<p>hi</p>")
    try:
        result = judge_page(UiOptions(), parse_checks([{"check": "loads"}]), page, limits=Limits(wall_s=30))
    finally:
        shutil.rmtree(page, ignore_errors=True)
    assert result.verdict is Verdict.ERROR and result.reason.startswith("Chromium did not start"), result


# -- with the real browser -----------------------------------------------------------------------------------
def test_a_reference_page_passes_every_layer_in_the_sandbox(chromium: str, sandbox, tmp_path: Path) -> None:
    page = write_page(REFERENCE, style_css=REFERENCE_CSS, app_js=REFERENCE_JS)
    try:
        result = judge_page(UiOptions(), parse_checks(ALL_CHECKS), page, sandbox=sandbox, limits=Limits(wall_s=90),
                            out_dir=tmp_path / "out")
    finally:
        shutil.rmtree(page, ignore_errors=True)
    failing = [(c.id, c.detail) for c in result.checks if not c.passed]
    assert result.verdict is Verdict.PASSED, failing
    assert result.layers == {layer: 1.0 for layer in ("viability", "task", "interaction", "constraints", "visual")}
    assert result.screenshot == tmp_path / "out" / "screenshot.png"
    assert result.screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    outcome = result.outcome()
    assert outcome.verdict is Verdict.PASSED and outcome.artifacts["screenshot"] == str(result.screenshot)
    assert (tmp_path / "out" / "ui-checks.json").is_file()


BROKEN_CHECKS = [
    {"check": "loads"}, {"check": "no-uncaught-errors", "id": "errors"}, {"check": "no-failed-requests", "id": "missing"},
    {"check": "element", "role": "button", "name": "Add"},
    {"check": "interact", "id": "dead-button", "steps": [{"click": {"role": "button", "name": "Add"}}],
     "expect": [{"text": "1", "selector": "#n"}]},
    {"check": "interact", "id": "no-such-target", "steps": [{"click": {"role": "button", "name": "Remove"}}],
     "expect": [{"text": "0", "selector": "#n"}]},
    {"check": "text", "id": "hidden-text", "text": "secret"},
    {"check": "contrast", "id": "pale", "min_ratio": 4.5},
]


def test_a_page_that_throws_on_load_and_has_a_dead_button_fails_those_layers(chromium: str, sandbox) -> None:
    page = write_page('<h1 style="color:#ccc">Adder</h1><p>n = <span id="n">0</span></p><button>Add</button>'
                      '<p style="opacity:0">secret</p><img src="missing.png" alt="">'
                      '<script>undefinedFunction();</script>')
    try:
        result = judge_page(UiOptions(), parse_checks(BROKEN_CHECKS), page, sandbox=sandbox, limits=Limits(wall_s=60))
    finally:
        shutil.rmtree(page, ignore_errors=True)
    checks = by_id(result)
    assert result.verdict is Verdict.FAILED
    assert not checks["errors"].passed and "undefinedFunction" in checks["errors"].detail
    assert not checks["missing"].passed and "missing.png" in checks["missing"].detail
    assert checks["loads-0"].passed and checks["element-3"].passed  # the page is there; it just misbehaves
    assert not checks["dead-button"].passed and "'1' not shown in #n" in checks["dead-button"].detail
    assert not checks["no-such-target"].passed and "no element matches" in checks["no-such-target"].detail
    assert not checks["hidden-text"].passed and "not perceivable" in checks["hidden-text"].detail
    assert not checks["pale"].passed
    assert result.layers["interaction"] == 0.0 and result.layers["task"] == 0.5


class _Listener(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        type(self).hits.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def test_outside_requests_fail_constraints_and_never_leave_even_without_the_sandbox(chromium: str) -> None:
    """Unsandboxed on purpose: the host's network is open, so only the judge's own refusal stands between."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Listener)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    page = write_page(f"""<h1>Beacon</h1><script>
fetch('http://127.0.0.1:{port}/fetch').catch(() => {{}});
new Image().src = 'http://127.0.0.1:{port}/img';
try {{ new WebSocket('ws://127.0.0.1:{port}/ws'); }} catch (e) {{}}
fetch('https://example.com/x').catch(() => {{}});
</script>""")
    try:
        checks = [{"check": "no-external-requests", "id": "outside"}, {"check": "not-blank"}, {"check": "loads"}]
        result = judge_page(UiOptions(), parse_checks(checks), page, limits=Limits(wall_s=60))
    finally:
        shutil.rmtree(page, ignore_errors=True)
        server.shutdown()
    outside = by_id(result)["outside"]
    assert result.verdict is Verdict.FAILED and not outside.passed
    assert f"127.0.0.1:{port}" in outside.detail
    assert result.layers["constraints"] == 0.0 and result.layers["visual"] == 1.0
    assert _Listener.hits == []


def test_a_blank_page_fails_visual(chromium: str, sandbox) -> None:
    page = write_page('<body style="background:#fafafa"><div id="app"></div></body>')
    try:
        checks = [{"check": "not-blank", "id": "blank"}, {"check": "loads"}, {"check": "no-uncaught-errors"}]
        result = judge_page(UiOptions(), parse_checks(checks), page, sandbox=sandbox, limits=Limits(wall_s=60))
    finally:
        shutil.rmtree(page, ignore_errors=True)
    assert result.verdict is Verdict.FAILED and result.layers == {"viability": 1.0, "visual": 0.0}
    assert "one flat colour" in by_id(result)["blank"].detail


SPIN = ('<h1>Spin</h1><button id="go">Go</button><span id="out">0</span>'
        '<script>document.getElementById("go").onclick = () => { while (true) {} };</script>')


def test_a_page_that_spins_in_a_click_handler_fails_in_time_and_leaves_no_browser(chromium: str) -> None:
    before = chromium_processes()
    page = write_page(SPIN)
    started = time.monotonic()
    try:
        checks = [{"check": "interact", "id": "spin", "steps": [{"click": {"selector": "#go"}}],
                   "expect": [{"text": "1", "selector": "#out"}]}, {"check": "no-uncaught-errors", "id": "errors"},
                  {"check": "text", "text": "Spin"}]
        result = judge_page(UiOptions(step_s=2), parse_checks(checks), page, limits=Limits(wall_s=40))
    finally:
        shutil.rmtree(page, ignore_errors=True)
    wall = time.monotonic() - started
    assert result.verdict is Verdict.FAILED and wall < 40, (result, wall)
    checks_by_id = by_id(result)
    assert "stopped responding" in checks_by_id["spin"].detail
    assert not checks_by_id["errors"].passed  # a frozen page fails viability whatever else it did
    assert no_browser_left(before) == set()


def test_a_page_that_holds_the_judge_past_the_wall_limit_is_killed_and_failed(chromium: str) -> None:
    before = chromium_processes()
    profiles = set(Path(tempfile.gettempdir()).glob("rsi-ui-profile-*"))
    page = write_page("<h1>Forever</h1><script>while (true) {}</script>")
    started = time.monotonic()
    try:
        # load_s and step_s far above the wall: only the parent's kill can end it
        result = judge_page(UiOptions(load_s=60, step_s=60), parse_checks([{"check": "loads"}]), page,
                            limits=Limits(wall_s=6))
    finally:
        shutil.rmtree(page, ignore_errors=True)
    assert result.verdict is Verdict.FAILED and "wall limit" in result.reason, result
    assert time.monotonic() - started < 6 + 10
    assert no_browser_left(before) == set()
    assert set(Path(tempfile.gettempdir()).glob("rsi-ui-profile-*")) - profiles == set()  # its profile went too


def test_a_huge_allocation_is_cut_off_and_failed(chromium: str, sandbox) -> None:
    page = write_page("<h1>Big</h1><script>const keep = []; for (let i = 0; i < 40; i++) {"
                      " const a = new Uint8Array(100 * 1024 * 1024); a.fill(1); keep.push(a); }</script>")
    try:
        checks = [{"check": "loads"}, {"check": "text", "text": "Big"}]
        result = judge_page(UiOptions(), parse_checks(checks), page, sandbox=sandbox, limits=Limits(wall_s=60, memory_mb=1024))
    finally:
        shutil.rmtree(page, ignore_errors=True)
    assert result.verdict is Verdict.FAILED and "more than 2048 MB" in result.reason, result
