"""A small `ui` task written on disk for the ui kind's tests: a counter page (one copy for every test).

`make_ui_task(root)` writes tasks/<suite>/counter with a stub page, a reference, hidden checks in four
layers and one public check, everything readable by the sandbox's fresh uid. `ui_kind` registers the
kind at run time where the installed metadata predates its pyproject.toml line (before `make install`).
"""

from __future__ import annotations

from pathlib import Path

TASK_TOML = """id = "counter"
title = "A counter"
split = "train"
difficulty = "easy"
verifier_timeout_s = 60

[verifier]
kind = "ui"
viewport = [640, 480]

[public]
checks = [ { check = "text", text = "0", selector = "#count" } ]
"""

INSTRUCTION = """Make a web page in index.html: a counter. It shows the count in an element with id `count`
(starting at 0) and has a button named Increment that adds one to it.
"""

STUB = "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Counter</title></head><body><p>TODO</p></body></html>\n"

REFERENCE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Counter</title><link rel="stylesheet" href="style.css"></head>
<body><h1>Counter</h1><p>Count: <span id="count">0</span></p>
<button id="inc">Increment</button>
<script src="app.js"></script></body></html>
"""
REFERENCE_CSS = "body { font-family: sans-serif; background: #fff; color: #111; }\n"
REFERENCE_JS = """let n = 0;
document.getElementById('inc').addEventListener('click', () => {
  n += 1; document.getElementById('count').textContent = String(n); });
"""
# The same page in one file (what a model's single ```html block carries).
ONE_FILE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Counter</title>
<style>body { font-family: sans-serif; background: #fff; color: #111; }</style></head>
<body><h1>Counter</h1><p>Count: <span id="count">0</span></p>
<button id="inc">Increment</button>
<script>let n = 0;
document.getElementById('inc').addEventListener('click', () => {
  n += 1; document.getElementById('count').textContent = String(n); });</script></body></html>
"""
# Looks right, does nothing: passes the public check, fails the hidden interaction.
DEAD_BUTTON = ONE_FILE.replace("n += 1;", "")

CHECKS = """[[check]]
check = "loads"

[[check]]
check = "no-uncaught-errors"

[[check]]
check = "element"
id = "the-button"
role = "button"
name = "Increment"

[[check]]
check = "text"
text = "0"
selector = "#count"

[[check]]
check = "interact"
id = "click-twice"
steps = [ { click = { role = "button", name = "Increment" } }, { click = { selector = "#inc" } } ]
expect = [ { text = "2", selector = "#count" } ]

[[check]]
check = "no-external-requests"

[[check]]
check = "not-blank"
"""


def make_ui_task(root: Path, suite: str = "pages", toml: str = TASK_TOML, checks: str = CHECKS) -> Path:
    """tasks/<suite>/counter under `root` (a tasks folder or a workspace's), world-readable."""
    folder = root / suite / "counter"
    for sub in ("environment", "solution", "tests"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    (folder / "task.toml").write_text(toml)
    (folder / "instruction.md").write_text(INSTRUCTION)
    (folder / "environment" / "index.html").write_text(STUB)
    (folder / "solution" / "index.html").write_text(REFERENCE)
    (folder / "solution" / "style.css").write_text(REFERENCE_CSS)
    (folder / "solution" / "app.js").write_text(REFERENCE_JS)
    (folder / "tests" / "checks.toml").write_text(checks)
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return folder


def register_ui_kind(monkeypatch) -> object:
    """The ui kind in the registry: the metadata's entry where `make install` wrote it, else set at run time."""
    from rsi import plugins
    from rsi.verifier.ui.kind import UI

    if "ui" not in plugins.VERIFIER_KINDS:
        monkeypatch.setitem(plugins.VERIFIER_KINDS, "ui", UI)
    return plugins.VERIFIER_KINDS["ui"]
