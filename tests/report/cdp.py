"""A small Chrome DevTools Protocol client for headless Chromium: the report's browser tests and
bench/report_size.py drive the page with it (navigate, evaluate, click, screenshot, console errors).

Launch flags that work on a bare Debian machine as root: --headless --no-sandbox --disable-gpu and a
fresh --user-data-dir; --remote-debugging-port=0 lets Chromium choose a free port and write it to
DevToolsActivePort in the profile, so parallel runs never race for a port.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", "--window-size=1400,900"]


def chromium_path(override: str | None = None) -> str | None:
    """The Chromium binary: `override` (e.g. $RSI_CHROMIUM), else Debian's `chromium` on PATH."""
    for candidate in (override, "chromium", "chromium-browser"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


class Page:
    """One Chromium tab over the DevTools protocol: navigate, evaluate, click, screenshot, console errors."""

    def __init__(self, ws_url: str) -> None:
        import websocket

        self._ws = websocket.create_connection(ws_url, timeout=60, suppress_origin=True)
        self._next = 0
        self.errors: list[str] = []
        self.events: list[dict[str, Any]] = []
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")

    def _note(self, message: dict[str, Any]) -> None:
        method, params = message.get("method", ""), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.errors.append(f"exception: {details.get('exception', {}).get('description') or details.get('text')}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append("console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"]))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.errors.append(f"log: {params['entry'].get('text')} ({params['entry'].get('url', '')})")
        self.events.append(message)

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        self._next += 1
        ident = self._next
        self._ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self._ws.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self._note(message)

    def wait_event(self, method: str, timeout_s: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        for message in self.events:
            if message.get("method") == method:
                self.events.remove(message)
                return message
        while time.monotonic() < deadline:
            message = json.loads(self._ws.recv())
            self._note(message)
            if message.get("method") == method:
                self.events.remove(message)
                return message
        raise TimeoutError(method)

    def navigate(self, url: str, timeout_s: float = 60.0) -> float:
        """Load `url`; returns seconds until the load event (the page's scripts have run by then)."""
        self.events.clear()
        started = time.monotonic()
        self.send("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired", timeout_s)
        return time.monotonic() - started

    def evaluate(self, expression: str, await_promise: bool = False) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=await_promise)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout_s: float = 20.0) -> Any:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.05)
        raise TimeoutError(expression)

    def click(self, selector: str) -> None:
        """A real mouse click at the centre of the element (scrolled into view first)."""
        # Centred, not at the top: the page's sticky header would take a click at the top edge.
        box = self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
                            " return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        self._ws.close()


class Browser:
    """Headless Chromium with a fresh profile, its DevTools port chosen by Chromium itself (no races)."""

    def __init__(self, binary: str) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="rsi-chromium-"))
        self.process = subprocess.Popen(
            [binary, *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.is_file() and port_file.read_text().strip()):
            if self.process.poll() is not None or time.monotonic() > deadline:
                stderr = self.process.stderr.read().decode(errors="replace")[-2000:] if self.process.stderr else ""
                self.close()
                raise RuntimeError(f"chromium did not start: {stderr}")
            time.sleep(0.05)
        self.port = int(port_file.read_text().split()[0])

    def page(self) -> Page:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/list", timeout=10) as response:
            targets = json.loads(response.read())
        target = next(t for t in targets if t.get("type") == "page")
        return Page(target["webSocketDebuggerUrl"])

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)
