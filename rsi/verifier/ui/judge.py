"""The UI judge child: load the agent's page in headless Chromium and run the checks. Standard library only.

Started by runner.py inside the attempt's sandbox as `python3 -I -c <cdp.py + this file>`; reads one
JSON request line on stdin and writes one JSON line tagged with the request's nonce on stdout:

    {"nonce", "checks": [{"index", "passed", "detail"}], "screenshot": bool, "error"?: "..."}

`error` is set only for what is ours (Chromium missing or not starting): the parent turns it into an
infrastructure ERROR. Everything the page causes is a check result.

Confinement (docs/sandbox.md, "The UI judge"): the page is served from a fake https origin by
request interception (Fetch domain), never from file://; every other request is refused and
recorded, and the browser's own proxy points at a dead local port, so even a request the
interception does not see (a WebSocket, a browser-initiated fetch) reaches nothing; the sandbox has
no network anyway. The DOM is read from an isolated world (Page.createIsolatedWorld): the page
cannot rewrite the functions the judge calls. Every protocol call has a deadline; once the renderer
stops answering, the remaining checks fail as "the page stopped responding" and no screenshot is
taken. Chromium runs in its own session; this process is a child subreaper, so at exit it kills
Chromium's group and every descendant that was re-parented to it.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import json
import mimetypes
import os
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path
from typing import Any

if __name__ != "__main__":  # as a script, cdp.py's text is prepended (runner.judge_source)
    from rsi.verifier.ui.cdp import BrowserGone, Pipe, Unresponsive

ORIGIN = "https://page.rsi.invalid"
WORLD = "rsi-judge"
PR_SET_CHILD_SUBREAPER = 36
DEAD_PROXY = "http://127.0.0.1:9"  # the discard port: nothing listens, every proxied request fails
NAMED_KEYS = {
    "Enter": (13, "\r"), "Tab": (9, ""), "Escape": (27, ""), "Backspace": (8, ""), "Delete": (46, ""),
    "ArrowUp": (38, ""), "ArrowDown": (40, ""), "ArrowLeft": (37, ""), "ArrowRight": (39, ""),
    "Home": (36, ""), "End": (35, ""), " ": (32, " "), "Space": (32, " "),
}
SKIP_DIRS = {".rsi-verifier", "tests"}


def ours(parts: tuple[str, ...]) -> bool:
    """A path the page must not see or count: the verifier's folders (the screenshot's .rsi-ui-*)."""
    return bool(set(parts) & SKIP_DIRS) or any(part.startswith(".rsi-ui") for part in parts[:1])


class PageFrozen(Exception):
    """The page stopped answering (a spinning handler, a crashed renderer): every later check fails."""


# -- isolated-world helpers: one function source, called on a DOM node or on the document -------------
DOM_HELPERS = r"""
(() => {
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const visible = (el) => {
    if (!el || !el.getBoundingClientRect) return false;
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) return false;
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.display === 'none' || cs.visibility === 'hidden' || cs.visibility === 'collapse') return false;
      if (parseFloat(cs.opacity) < 0.1) return false;
    }
    const doc = document.documentElement;
    const right = Math.max(doc.scrollWidth, innerWidth), bottom = Math.max(doc.scrollHeight, innerHeight);
    const x = r.left + scrollX, y = r.top + scrollY;
    return x + r.width > 0 && y + r.height > 0 && x < right && y < bottom;
  };
  const colour = (s) => { const m = (s || '').match(/[\d.]+/g) || []; return m.map(Number); };
  const alpha = (c) => c.length > 3 ? c[3] : 1;
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
                       return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const background = (el) => {
    const layers = [];
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const c = colour(getComputedStyle(e).backgroundColor);
      if (c.length >= 3 && alpha(c) > 0) { layers.push(c); if (alpha(c) >= 1) break; }
    }
    let out = [255, 255, 255];
    for (let i = layers.length - 1; i >= 0; i--) {
      const a = alpha(layers[i]);
      out = out.map((v, k) => layers[i][k] * a + v * (1 - a));
    }
    return out;
  };
  const perceivable = (scope, text) => {
    // the deepest elements whose text holds `text`, at least one of them perceivable
    const want = norm(text).toLowerCase();
    const stack = [scope];
    while (stack.length) {
      const el = stack.pop();
      const inner = norm(el.innerText !== undefined ? el.innerText : el.textContent).toLowerCase();
      if (!inner.includes(want)) continue;
      const kids = Array.from(el.children).filter((k) => norm(k.innerText || k.textContent).toLowerCase().includes(want));
      if (kids.length === 0) {
        if (visible(el)) {
          const c = colour(getComputedStyle(el).color);
          if (c.length < 3 || alpha(c) > 0.1) return true;
        }
      } else { stack.push(...kids); }
    }
    return false;
  };
  return {norm, visible, colour, alpha, lum, background, perceivable};
})()
"""


class Session:
    """One browser with one page on the fake origin, and everything the page did."""

    def __init__(self, request: dict[str, Any]) -> None:
        self.request = request
        self.root = Path(request.get("root", ".")).resolve()
        self.entry = request.get("entry", "index.html")
        self.width, self.height = request.get("viewport", [800, 600])
        self.step_s = float(request.get("step_s", 5.0))
        self.load_s = float(request.get("load_s", 10.0))
        self.errors: list[str] = []
        self.external: list[str] = []
        self.failed: list[str] = []
        self.frozen = ""
        self.loaded = False
        self.first_load = False
        # the parent names the folder when it runs us unsandboxed, so it can remove it after a wall-time kill
        self.profile = request.get("profile") or tempfile.mkdtemp(prefix="rsi-ui-profile-")
        self.process: subprocess.Popen[bytes] | None = None
        self.pipe: Pipe | None = None
        self.frame = ""

    # -- the browser -----------------------------------------------------------------------------
    def start(self) -> None:
        to_browser, from_judge = os.pipe()
        from_browser, to_judge = os.pipe()
        high = [os.dup(fd) for fd in (to_browser, to_judge)]

        def preexec() -> None:  # fds 3 and 4 are the protocol pipe (--remote-debugging-pipe)
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        flags = [
            "--headless", "--disable-gpu", "--remote-debugging-pipe", f"--user-data-dir={self.profile}",
            f"--proxy-server={DEAD_PROXY}", "--proxy-bypass-list=<-loopback>", "--no-first-run",
            "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-extensions", "--disable-default-apps", "--mute-audio",
            "--disable-quic", "--disable-breakpad", "--hide-scrollbars", "--deny-permission-prompts",
            "--disable-features=Translate,MediaRouter,OptimizationHints,DialMediaRouteProvider",
            f"--window-size={self.width},{self.height}", "--js-flags=--max-old-space-size=256",
        ]
        if os.geteuid() == 0 or self.request.get("no_sandbox"):
            flags.append("--no-sandbox")  # Chromium refuses to run its sandbox as root
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TMPDIR")}
        env["HOME"] = self.profile
        self.process = subprocess.Popen(
            [self.request["chromium"], *flags, "about:blank"], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, pass_fds=(3, 4), preexec_fn=preexec,
            start_new_session=True, env=env,
        )
        for fd in (to_browser, to_judge, *high):
            os.close(fd)
        self.pipe = Pipe(from_browser, from_judge)
        self.pipe.handlers["Fetch.requestPaused"] = self._serve
        self.pipe.handlers["Page.javascriptDialogOpening"] = self._dialog
        self.pipe.handlers["Runtime.exceptionThrown"] = self._exception
        self.pipe.handlers["Network.webSocketCreated"] = self._websocket
        self.pipe.handlers["Network.loadingFailed"] = lambda m: None
        self.pipe.handlers["Log.entryAdded"] = self._log_entry
        self.pipe.handlers["Target.targetCreated"] = self._target
        self.pipe.handlers["Inspector.targetCrashed"] = self._crashed
        targets = self.pipe.call("Target.getTargets", timeout_s=30, session=False)["targetInfos"]
        page = next(t for t in targets if t.get("type") == "page")
        self.page_target = page["targetId"]
        self.pipe.session = self.pipe.call("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True},
                                           session=False)["sessionId"]
        self.pipe.call("Target.setDiscoverTargets", {"discover": True}, session=False)
        self.pipe.call("Browser.setDownloadBehavior", {"behavior": "deny"}, session=False)
        for domain in ("Page", "Runtime", "Network", "Accessibility", "DOM", "Inspector", "Log"):
            self.pipe.call(f"{domain}.enable")
        self.pipe.call("Fetch.enable", {"patterns": [{"urlPattern": "*"}]})
        self.pipe.call("Emulation.setDeviceMetricsOverride",
                       {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False})

    def stderr_tail(self) -> str:
        if self.process is None or self.process.stderr is None:
            return ""
        try:
            os.set_blocking(self.process.stderr.fileno(), False)
            return (self.process.stderr.read() or b"").decode(errors="replace")[-600:]
        except OSError:
            return ""

    def close(self) -> None:
        if self.process is not None:
            with contextlib.suppress(OSError):
                os.killpg(self.process.pid, signal.SIGKILL)
        reap_descendants()
        subprocess.run(["rm", "-rf", self.profile], check=False)

    # -- handlers answered from inside the read loop ------------------------------------------------
    def _serve(self, message: dict[str, Any]) -> None:
        params = message["params"]
        url, ident = params["request"]["url"], params["requestId"]
        assert self.pipe is not None
        if not url.startswith(ORIGIN + "/"):
            if not url.startswith(("data:", "blob:", "about:")):
                self.external.append(url[:200])
            self.pipe.send("Fetch.failRequest", {"requestId": ident, "errorReason": "BlockedByClient"})
            return
        path = url[len(ORIGIN) + 1:].split("?")[0].split("#")[0] or self.entry
        file = (self.root / path).resolve()
        body, status = b"", 404
        if file.is_relative_to(self.root) and file.is_file() and not ours(file.relative_to(self.root).parts):
            body, status = file.read_bytes(), 200
        elif path != "favicon.ico":  # the browser asks for it by itself: not the page's request
            self.failed.append(f"{path} (404)")
        kind = mimetypes.guess_type(str(file))[0] or "application/octet-stream"
        if kind.startswith("text/") or kind.endswith("javascript"):
            kind += "; charset=utf-8"
        self.pipe.send("Fetch.fulfillRequest", {
            "requestId": ident, "responseCode": status, "body": base64.b64encode(body).decode(),
            "responseHeaders": [{"name": "Content-Type", "value": kind}, {"name": "Cache-Control", "value": "no-store"}],
        })

    def _dialog(self, message: dict[str, Any]) -> None:
        # accept beforeunload (a reload must go through); dismiss alert/confirm/prompt
        accept = message["params"].get("type") in ("beforeunload", "alert")
        assert self.pipe is not None
        self.pipe.send("Page.handleJavaScriptDialog", {"accept": accept})

    def _exception(self, message: dict[str, Any]) -> None:
        details = message["params"].get("exceptionDetails", {})
        text = details.get("exception", {}).get("description") or details.get("text") or "an exception"
        self.errors.append(str(text).splitlines()[0][:200])

    def _websocket(self, message: dict[str, Any]) -> None:
        self.external.append(message["params"].get("url", "ws:?")[:200])

    def _log_entry(self, message: dict[str, Any]) -> None:
        """A local file the page tried to load or open (a link, a frame, `location = 'file:///...'`): the browser
        refuses it before any request exists, and says so only in its log. It counts as a request outside the
        page's origin."""
        entry = message["params"].get("entry", {})
        if entry.get("level") == "error" and "Not allowed to load local resource" in entry.get("text", ""):
            self.external.append(str(entry.get("url") or entry.get("text", ""))[:200])

    def _target(self, message: dict[str, Any]) -> None:
        info = message["params"].get("targetInfo", {})
        if info.get("type") == "page" and info.get("targetId") != getattr(self, "page_target", None):
            assert self.pipe is not None  # a popup: closed at once (its requests are refused anyway)
            self.external.append(f"popup {info.get('url', '')[:160]}")
            self.pipe.send("Target.closeTarget", {"targetId": info["targetId"]}, session=False)

    def _crashed(self, message: dict[str, Any]) -> None:
        self.frozen = "the page's renderer crashed"

    # -- page-level operations ---------------------------------------------------------------------
    def call(self, method: str, params: dict[str, Any] | None = None, timeout_s: float | None = None) -> dict[str, Any]:
        if self.frozen:
            raise PageFrozen(self.frozen)
        assert self.pipe is not None
        try:
            return self.pipe.call(method, params, timeout_s or self.step_s)
        except Unresponsive as error:
            self.frozen = f"the page stopped responding ({error})"
            raise PageFrozen(self.frozen) from error

    def load(self, clear_storage: bool) -> None:
        """Navigate to the entry page; `loaded` says whether DOMContentLoaded came within load_s."""
        assert self.pipe is not None
        if clear_storage:
            self.call("Storage.clearDataForOrigin", {"origin": ORIGIN, "storageTypes": "all"})
        self.pipe.events.clear()
        self.call("Page.navigate", {"url": f"{ORIGIN}/{self.entry}"}, timeout_s=self.load_s)
        try:
            self.loaded = self.pipe.wait_event("Page.domContentEventFired", self.load_s) is not None
            if self.loaded:  # a page that never fires load is judged as it stands
                self.pipe.wait_event("Page.loadEventFired", min(3.0, self.load_s))
        except BrowserGone as error:
            self.frozen = self.frozen or f"the browser ended ({error})"
            raise PageFrozen(self.frozen) from error
        self.settle()

    def settle(self, seconds: float = 0.15) -> None:
        """Let timers and rendering run, then prove the page still answers (or mark it frozen)."""
        if self.frozen:
            raise PageFrozen(self.frozen)
        assert self.pipe is not None
        try:
            self.pipe.pump(seconds)
        except BrowserGone as error:
            self.frozen = self.frozen or f"the browser ended ({error})"
            raise PageFrozen(self.frozen) from error
        self.evaluate("1")

    def world(self) -> int:
        if not self.frame:
            self.frame = self.call("Page.getFrameTree")["frameTree"]["frame"]["id"]
        try:
            return self.call("Page.createIsolatedWorld", {"frameId": self.frame, "worldName": WORLD})["executionContextId"]
        except RuntimeError:  # the main frame changed (a navigation): look it up again
            self.frame = self.call("Page.getFrameTree")["frameTree"]["frame"]["id"]
            return self.call("Page.createIsolatedWorld", {"frameId": self.frame, "worldName": WORLD})["executionContextId"]

    def evaluate(self, expression: str) -> Any:
        """`expression` in a fresh isolated world (the page's globals cannot reach it); `H` = DOM_HELPERS."""
        context = self.world()
        source = f"(() => {{ const H = {DOM_HELPERS}; return ({expression}); }})()"
        result = self.call("Runtime.evaluate", {"expression": source, "contextId": context, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"].get("exception", {}).get("description", "evaluation failed"))
        return result.get("result", {}).get("value")

    def url(self) -> str:
        return str(self.call("Page.getFrameTree")["frameTree"]["frame"].get("url", ""))

    def on_page(self) -> str:
        """'' while the document is still ours, else why not (a navigation away, a javascript: swap)."""
        url = self.url()
        if not url.startswith(ORIGIN + "/"):
            return f"the page navigated away to {url[:120]}"
        return ""

    def screenshot(self, scale: float = 1.0) -> bytes:
        clip = {"x": 0, "y": 0, "width": self.width, "height": self.height, "scale": scale}
        data = self.call("Page.captureScreenshot", {"format": "png", "clip": clip, "captureBeyondViewport": False})
        return base64.b64decode(data["data"])

    # -- targets -------------------------------------------------------------------------------------
    def find(self, target: dict[str, Any]) -> list[int]:
        """backend node ids matching TARGET ({role, name} through Chromium's own accessibility tree, or {selector})."""
        if "selector" in target and "role" not in target:
            ids = self.evaluate(
                f"Array.from(document.querySelectorAll({json.dumps(target['selector'])})).length")
            nodes = []
            for i in range(int(ids or 0)):
                nodes.append(self.node_by_js(f"document.querySelectorAll({json.dumps(target['selector'])})[{i}]"))
            return [n for n in nodes if n]
        doc = self.call("DOM.getDocument", {"depth": 0})["root"]["backendNodeId"]
        found = self.call("Accessibility.queryAXTree", {"backendNodeId": doc, "role": target["role"]})["nodes"]
        want = " ".join(str(target.get("name", "")).split()).lower()
        out = []
        for node in found:
            if node.get("ignored") or "backendDOMNodeId" not in node:
                continue
            name = " ".join(str(node.get("name", {}).get("value", "")).split()).lower()
            if "name" in target and name != want:
                continue
            out.append(int(node["backendDOMNodeId"]))
        if "selector" in target:  # role and selector together: both must hold
            allowed = set(self.find({"selector": target["selector"]}))
            out = [n for n in out if n in allowed]
        return out

    def node_by_js(self, expression: str) -> int | None:
        context = self.world()
        result = self.call("Runtime.evaluate", {"expression": expression, "contextId": context})
        object_id = result.get("result", {}).get("objectId")
        if not object_id:
            return None
        return int(self.call("DOM.describeNode", {"objectId": object_id})["node"]["backendNodeId"])

    def on_node(self, node: int, function: str, *args: Any) -> Any:
        """Call `function(H, ...args)` with `this` = the node, in an isolated world."""
        context = self.world()
        object_id = self.call("DOM.resolveNode", {"backendNodeId": node, "executionContextId": context})["object"]["objectId"]
        source = f"function(...args) {{ const H = {DOM_HELPERS}; return ({function}).call(this, H, ...args); }}"
        result = self.call("Runtime.callFunctionOn", {"objectId": object_id, "functionDeclaration": source,
                                                      "arguments": [{"value": a} for a in args], "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"].get("exception", {}).get("description", "call failed"))
        return result.get("result", {}).get("value")


def descendants() -> list[int]:
    """Every process below this one (Chromium's tree: its zygotes re-parent to us, the subreaper)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    parents[int(entry)] = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    mine, found = {os.getpid()}, []
    changed = True
    while changed:
        changed = False
        for pid, parent in parents.items():
            if parent in mine and pid not in mine:
                mine.add(pid)
                found.append(pid)
                changed = True
    return found


class MemoryWatch(threading.Thread):
    """Kills the browser when its whole tree's resident memory passes `limit_mb` (rlimits cannot: Chromium
    reserves a terabyte of address space, and typed arrays live outside V8's heap limit)."""

    def __init__(self, session: Session, limit_mb: int) -> None:
        super().__init__(daemon=True)
        self.session, self.limit_mb, self.peak_mb, self.tripped = session, limit_mb, 0, False
        self.stop = threading.Event()
        self.page_size = os.sysconf("SC_PAGE_SIZE")

    def run(self) -> None:
        while not self.stop.wait(0.05):
            pages = 0
            for pid in descendants():
                try:
                    with open(f"/proc/{pid}/statm", "rb") as fh:
                        pages += int(fh.read().split()[1])
                except (OSError, IndexError, ValueError):
                    continue
            used = pages * self.page_size >> 20
            self.peak_mb = max(self.peak_mb, used)
            if used > self.limit_mb and self.session.process is not None:
                self.tripped = True
                self.session.frozen = f"the page used more than {self.limit_mb} MB of memory"
                with contextlib.suppress(OSError):
                    os.killpg(self.session.process.pid, signal.SIGKILL)
                return


def reap_descendants() -> None:
    """Kill and reap every process still below this one (Chromium's zygotes re-parent to us: subreaper)."""
    me = os.getpid()
    for _ in range(50):
        children = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == me:
                children.append(int(entry))
        for pid in children:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            if not children:
                return
        if not children:
            return
        time.sleep(0.02)


# -- the checks (names and parameters: checks.py's registry; validated by the parent) -------------------
Result = tuple[bool, str]


def _target_words(target: dict[str, Any]) -> str:
    return " ".join(f"{k}={v!r}" for k, v in target.items())


def _one(session: Session, target: dict[str, Any]) -> int:
    nodes = session.find(target)
    if not nodes:
        raise LookupError(f"no element matches {_target_words(target)}")
    return nodes[0]


def check_text(session: Session, params: dict[str, Any]) -> Result:
    selector = params.get("selector")
    text = params["text"]
    scope = f"document.querySelector({json.dumps(selector)})" if selector else "document.body"
    found = session.evaluate(f"(() => {{ const s = {scope}; if (!s) return 'missing';"
                             f" return H.perceivable(s, {json.dumps(text)}) ? 'ok' : "
                             f"(H.norm(s.innerText).toLowerCase().includes(H.norm({json.dumps(text)}).toLowerCase()) ? 'hidden' : H.norm(s.innerText).slice(0, 120)); }})()")
    where = f" in {selector}" if selector else ""
    if found == "ok":
        return True, f"{text!r} is shown{where}"
    if found == "missing":
        return False, f"no element matches {selector!r}"
    if found == "hidden":
        return False, f"{text!r} is in the DOM{where} but not perceivable (hidden, transparent, off-page or clipped)"
    return False, f"{text!r} not shown{where}; visible text starts {found!r}"


def check_element(session: Session, params: dict[str, Any]) -> Result:
    target: dict[str, Any] = {k: params[k] for k in ("role", "name", "selector") if k in params}
    nodes = [n for n in session.find(target) if session.on_node(n, "function(H) { return H.visible(this); }")]
    count = params.get("count")
    if count is not None:
        return len(nodes) == count, f"{len(nodes)} visible element(s) match {_target_words(target)}, {count} wanted"
    return bool(nodes), f"{len(nodes)} visible element(s) match {_target_words(target)}"


def _click(session: Session, node: int) -> None:
    point = session.on_node(node, "function(H) { this.scrollIntoView({block: 'center', inline: 'center'});"
                                  " const r = this.getBoundingClientRect();"
                                  " return H.visible(this) ? [r.left + r.width / 2, r.top + r.height / 2] : null; }")
    if not point:
        raise LookupError("the target is not visible")
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        session.call("Input.dispatchMouseEvent", {"type": kind, "x": point[0], "y": point[1], "button": "left",
                                                  "clickCount": 0 if kind == "mouseMoved" else 1})


def _virtual_key(char: str) -> int:
    """The Windows virtual key code of a typed character: letters, digits and space have their own; any other
    character gets 0 and is typed by its text alone. (ord() of punctuation is another key's code: '.' is 46,
    VK_DELETE, which deleted instead of typing a decimal point or an email's dot.)"""
    if len(char) == 1 and char.isascii() and (char.isalnum() or char == " "):
        return ord(char.upper())
    return 0


def _key(session: Session, key: str, text: str | None = None, commands: list[str] | None = None,
         modifiers: int = 0) -> None:
    code, default_text = NAMED_KEYS.get(key, (_virtual_key(key), key if len(key) == 1 else ""))
    typed = default_text if text is None else text
    down: dict[str, Any] = {"type": "keyDown" if typed else "rawKeyDown", "key": " " if key == "Space" else key,
                            "windowsVirtualKeyCode": code, "modifiers": modifiers}
    if typed:
        down["text"] = typed
    if commands:
        down["commands"] = commands
    session.call("Input.dispatchKeyEvent", down)
    session.call("Input.dispatchKeyEvent", {"type": "keyUp", "key": down["key"], "windowsVirtualKeyCode": code,
                                            "modifiers": modifiers})


def run_step(session: Session, step: dict[str, Any]) -> None:
    (action, arg), = step.items()
    if action == "click":
        _click(session, _one(session, arg))
    elif action == "type":
        node = _one(session, arg["target"])
        _click(session, node)
        session.call("DOM.focus", {"backendNodeId": node})
        if session.on_node(node, "function(H) { return ('value' in this) ? String(this.value) : ''; }"):
            _key(session, "a", text="", commands=["selectAll"], modifiers=2)
            _key(session, "Backspace")
        for char in arg["text"]:
            if char == "\n":  # a line break is the Enter key (in a textarea; a form field may submit)
                _key(session, "Enter")
            elif char == "\t":  # the Tab key would move the focus: a tab typed into the field is inserted
                session.call("Input.insertText", {"text": "\t"})
            else:
                _key(session, char, text=char)
    elif action == "key":
        node = _one(session, arg["target"])
        session.call("DOM.focus", {"backendNodeId": node})
        _key(session, arg["key"])
    elif action == "select":
        node = _one(session, arg["target"])
        ok = session.on_node(node, "function(H, v) { if (!this.options) return false;"
                                   " const o = Array.from(this.options).find((o) => o.value === v || H.norm(o.text) === v);"
                                   " if (!o) return false; this.value = o.value;"
                                   " this.dispatchEvent(new Event('input', {bubbles: true}));"
                                   " this.dispatchEvent(new Event('change', {bubbles: true})); return true; }", arg["value"])
        if not ok:
            raise LookupError(f"no option {arg['value']!r} in {_target_words(arg['target'])}")
    elif action == "reload":
        session.load(clear_storage=False)
        if not session.loaded:
            raise LookupError("the page did not load again")
    else:  # the parent validated the steps; this is a bug of ours
        raise ValueError(f"unknown step {action!r}")
    session.settle()


def check_expectation(session: Session, expect: dict[str, Any]) -> Result:
    (kind, arg), = expect.items() if len(expect) == 1 and "text" not in expect else [("text", expect)]
    if kind == "text":
        return check_text(session, arg)
    if kind == "element":
        return check_element(session, arg)
    if kind == "absent":
        nodes = [n for n in session.find(arg) if session.on_node(n, "function(H) { return H.visible(this); }")]
        return not nodes, f"{len(nodes)} visible element(s) match {_target_words(arg)}, none wanted"
    if kind == "value":
        node = _one(session, arg["target"])
        value = session.on_node(node, "function(H) { return ('value' in this) ? String(this.value) : H.norm(this.innerText); }")
        return value == arg["equals"], f"value of {_target_words(arg['target'])} is {value!r}, {arg['equals']!r} wanted"
    raise ValueError(f"unknown expectation {kind!r}")


def check_interact(session: Session, params: dict[str, Any]) -> Result:
    # every interact check starts from a fresh load with the origin's storage cleared: checks are independent
    session.load(clear_storage=True)
    if not session.loaded:
        return False, "the page did not load"
    for number, step in enumerate(params.get("steps", []), 1):
        try:
            run_step(session, step)
        except LookupError as error:
            return False, f"step {number}: {error}"
        away = session.on_page()
        if away:
            return False, f"step {number}: {away}"
    details = []
    for expect in params.get("expect", []):
        try:
            passed, detail = check_expectation(session, expect)
        except LookupError as error:
            passed, detail = False, str(error)
        if not passed:
            return False, f"after {len(params.get('steps', []))} step(s): {detail}"
        details.append(detail)
    return True, "; ".join(details)[:400] or "steps ran"


def check_within_viewport(session: Session, params: dict[str, Any]) -> Result:
    selector = json.dumps(params.get("selector") or "body *")
    out = session.evaluate(f"(() => {{ scrollTo(0, 0); const bad = [];"
                           f" for (const e of document.querySelectorAll({selector})) {{"
                           f"  if (!H.visible(e)) continue; const r = e.getBoundingClientRect();"
                           f"  if (r.left < -1 || r.right > innerWidth + 1) bad.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ' [' + Math.round(r.left) + ', ' + Math.round(r.right) + ']'); }}"
                           f" return bad; }})()")
    if out:
        return False, f"{len(out)} element(s) outside the {session.width}px viewport width: {', '.join(out[:3])}"
    return True, f"every element lies within {session.width}px"


def check_no_overlap(session: Session, params: dict[str, Any]) -> Result:
    selectors = json.dumps(params["selectors"])
    out = session.evaluate(f"(() => {{ scrollTo(0, 0); const boxes = [];"
                           f" for (const s of {selectors}) {{ const e = document.querySelector(s);"
                           f"  if (!e || !H.visible(e)) return 'missing ' + s; boxes.push([s, e.getBoundingClientRect()]); }}"
                           f" for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {{"
                           f"  const a = boxes[i][1], b = boxes[j][1];"
                           f"  const w = Math.min(a.right, b.right) - Math.max(a.left, b.left), h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);"
                           f"  if (w > 1 && h > 1) return boxes[i][0] + ' overlaps ' + boxes[j][0]; }}"
                           f" return ''; }})()")
    return not out, out or "no two boxes intersect"


def check_contrast(session: Session, params: dict[str, Any]) -> Result:
    selector = json.dumps(params.get("selector") or "body")
    minimum = float(params.get("min_ratio", 4.5))
    out = session.evaluate(f"(() => {{ const scope = document.querySelector({selector}); if (!scope) return null;"
                           f" let worst = null;"
                           f" for (const e of [scope, ...scope.querySelectorAll('*')]) {{"
                           f"  const own = Array.from(e.childNodes).some((n) => n.nodeType === 3 && n.data.trim());"
                           f"  if (!own || !H.visible(e)) continue;"
                           f"  const fg = H.colour(getComputedStyle(e).color), bg = H.background(e);"
                           f"  const a = H.alpha(fg), mix = fg.slice(0, 3).map((v, k) => v * a + bg[k] * (1 - a));"
                           f"  const l1 = H.lum(mix), l2 = H.lum(bg);"
                           f"  const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);"
                           f"  if (!worst || ratio < worst[0]) worst = [ratio, e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')]; }}"
                           f" return worst || [21, '']; }})()")
    if out is None:
        return False, f"no element matches {params.get('selector')!r}"
    ratio, where = out
    if not where:
        return True, "no text to judge"
    return ratio >= minimum, f"lowest contrast {ratio:.2f} ({where}), {minimum:g} wanted"


def png_pixels(data: bytes) -> tuple[int, int, int, list[bytes]]:
    """(width, height, bytes per pixel, rows) of an 8-bit non-interlaced PNG (what Chromium writes)."""
    width, height, depth, colour_type = struct.unpack(">IIBB", data[16:26])
    if depth != 8 or data[28] != 0:
        raise ValueError("unsupported PNG")
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[colour_type]
    chunks, at = [], 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        if kind == b"IDAT":
            chunks.append(data[at + 8:at + 8 + length])
        at += 12 + length
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if kind == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 255
        elif kind == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, previous, strict=False))
        elif kind == 3:
            for i in range(stride):
                line[i] = (line[i] + ((line[i - channels] if i >= channels else 0) + previous[i]) // 2) & 255
        elif kind == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b, c = previous[i], previous[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def check_not_blank(session: Session, params: dict[str, Any]) -> Result:
    small = session.screenshot(scale=0.25)  # a quarter-size copy: decoded in pure Python
    width, height, channels, rows = png_pixels(small)
    counts: dict[bytes, int] = {}
    for row in rows:
        for x in range(0, width * channels, channels):
            pixel = row[x:x + min(channels, 3)]
            counts[pixel] = counts.get(pixel, 0) + 1
    dominant = max(counts, key=lambda p: counts[p])
    differing = sum(n for p, n in counts.items() if max(abs(a - b) for a, b in zip(p, dominant, strict=False)) > 24)
    needed = max(4, width * height // 2000)
    if differing < needed:
        return False, f"the screenshot is one flat colour ({differing} of {width * height} pixels differ)"
    return True, f"{differing} of {width * height} pixels differ from the background"


def _script_text(session: Session) -> str:
    parts = []
    for path in sorted(session.root.rglob("*")):
        if path.is_file() and path.suffix.lower() in (".html", ".htm", ".js", ".mjs") and not ours(
                path.relative_to(session.root).parts):
            parts.append(path.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(parts)


def check_forbid_api(session: Session, params: dict[str, Any]) -> Result:
    text = _script_text(session)
    used = [name for name in params["names"] if name in text]
    return not used, f"uses {', '.join(used)}" if used else f"none of {', '.join(params['names'])} appears"


def check_require_api(session: Session, params: dict[str, Any]) -> Result:
    text = _script_text(session)
    missing = [name for name in params["names"] if name not in text]
    return not missing, f"{', '.join(missing)} never appears" if missing else f"uses {', '.join(params['names'])}"


def check_max_bytes(session: Session, params: dict[str, Any]) -> Result:
    total = sum(p.stat().st_size for p in session.root.rglob("*")
                if p.is_file() and not ours(p.relative_to(session.root).parts))
    return total <= params["bytes"], f"the solution files hold {total} bytes, at most {params['bytes']} allowed"


def check_loads(session: Session, params: dict[str, Any]) -> Result:
    ok = session.first_load
    return ok, "DOMContentLoaded fired" if ok else f"DOMContentLoaded did not fire within {session.load_s:g} s"


def check_no_uncaught_errors(session: Session, params: dict[str, Any]) -> Result:
    if session.errors:
        return False, f"{len(session.errors)} uncaught error(s): {'; '.join(session.errors[:3])}"
    return True, "no uncaught error"


def check_no_failed_requests(session: Session, params: dict[str, Any]) -> Result:
    if session.failed:
        return False, f"{len(session.failed)} failed request(s): {', '.join(session.failed[:3])}"
    return True, "every request of the page's own origin succeeded"


def check_no_external_requests(session: Session, params: dict[str, Any]) -> Result:
    if session.external:
        return False, f"{len(session.external)} request(s) outside the page's origin, refused: {', '.join(session.external[:3])}"
    return True, "no request left the page's origin"


RUNNERS = {
    "loads": check_loads, "no-uncaught-errors": check_no_uncaught_errors, "no-failed-requests": check_no_failed_requests,
    "element": check_element, "text": check_text, "interact": check_interact,
    "no-external-requests": check_no_external_requests, "max-bytes": check_max_bytes,
    "forbid-api": check_forbid_api, "require-api": check_require_api,
    "not-blank": check_not_blank, "within-viewport": check_within_viewport, "no-overlap": check_no_overlap,
    "contrast": check_contrast,
}
# Judged on the freshly loaded page first; then the interactions (each reloads); then what the whole
# session saw (errors, requests), so an error an interaction raised counts too.
FIRST = ("element", "text", "not-blank", "within-viewport", "no-overlap", "contrast", "max-bytes", "forbid-api", "require-api")
LAST = ("loads", "no-uncaught-errors", "no-failed-requests", "no-external-requests")


def judge(request: dict[str, Any]) -> dict[str, Any]:
    checks = request["checks"]
    results: dict[int, tuple[bool, str]] = {}
    session = Session(request)
    answer: dict[str, Any] = {"nonce": request["nonce"], "screenshot": False}
    try:
        try:
            session.start()
        except (Unresponsive, OSError, StopIteration, KeyError, RuntimeError) as error:
            why = f"{error}; {session.stderr_tail().strip()}"
            if "--no-sandbox" in why or "sandbox" in why.lower():  # no user namespaces here: ours confines it
                session.close()
                session = Session({**request, "no_sandbox": True})
                try:
                    session.start()
                    why = ""
                except (Unresponsive, OSError, StopIteration, KeyError, RuntimeError) as again:
                    why = f"{again}; {session.stderr_tail().strip()}"
            if why:
                answer["error"] = f"Chromium did not start: {why}"[:800]
                return answer
        watch = MemoryWatch(session, int(request.get("memory_mb", 1024)))
        watch.start()
        with contextlib.suppress(PageFrozen):
            session.load(clear_storage=True)
        session.first_load = session.loaded
        if not session.frozen and request.get("screenshot_path"):
            try:
                shot = Path(request["screenshot_path"])
                shot.parent.mkdir(exist_ok=True)
                shot.write_bytes(session.screenshot())
                answer["screenshot"] = True
            except PageFrozen:
                pass
        order = sorted(range(len(checks)), key=lambda i: (0 if checks[i]["check"] in FIRST else
                                                         2 if checks[i]["check"] in LAST else 1, i))
        for index in order:
            check = checks[index]
            name = check["check"]
            if name not in LAST and name not in ("max-bytes", "forbid-api", "require-api") and session.frozen:
                results[index] = (False, session.frozen)
                continue
            try:
                results[index] = RUNNERS[name](session, check)
            except PageFrozen as error:
                results[index] = (False, str(error))
            except (LookupError, RuntimeError) as error:
                results[index] = (False, str(error)[:300])
            except BrowserGone as error:
                session.frozen = session.frozen or f"the browser ended ({error})"
                results[index] = (False, session.frozen)
        if session.frozen:  # a frozen or crashed page fails viability whatever else it did
            for index, check in enumerate(checks):
                if check["check"] in ("loads", "no-uncaught-errors") and results[index][0]:
                    results[index] = (False, session.frozen)
        watch.stop.set()
        answer["peak_mb"] = watch.peak_mb
        if watch.tripped:
            session.frozen = f"the page used more than {watch.limit_mb} MB of memory"
            for index, check in enumerate(checks):
                if check["check"] in ("loads", "no-uncaught-errors"):
                    results[index] = (False, session.frozen)
    finally:
        session.close()
    answer["checks"] = [{"index": i, "passed": results[i][0], "detail": results[i][1]} for i in range(len(checks))]
    answer["frozen"] = session.frozen
    return answer


def main() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    request = json.loads(sys.stdin.readline())
    try:
        answer = judge(request)
    except Exception as error:  # our own bug: reported as such (the parent makes it an ERROR)
        answer = {"nonce": request.get("nonce"), "error": f"the judge crashed: {type(error).__name__}: {error}"}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
