"""A DevTools-protocol client over Chromium's `--remote-debugging-pipe` (fds 3 and 4), standard library only.

Runs inside the judge child (judge.py), which runs inside the sandbox under the sandbox's plain
python3: no websocket, no port, no third-party module. Every call has a deadline: a page whose
renderer spins never blocks this process (the read is a `select` with a timeout); the judge then
reports the page as unresponsive, and the parent's wall-time kill is the backstop for everything else.

Fetch.requestPaused and Page.javascriptDialogOpening are answered from inside the read loop (a paused
request or an open alert() would otherwise stall the page while we wait for an unrelated answer).
"""

from __future__ import annotations

import json
import os
import select
import time
from collections.abc import Callable
from typing import Any

Handler = Callable[[dict[str, Any]], None]


class Unresponsive(Exception):
    """The browser did not answer within the deadline (a frozen renderer, or a crashed browser)."""


class BrowserGone(Unresponsive):
    """The pipe closed: the browser process ended."""


class Pipe:
    """One CDP connection: `call` (blocking with a deadline), events kept for `drain`/`wait_event`."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._read, self._write = read_fd, write_fd
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []
        self.handlers: dict[str, Handler] = {}
        self.session: str | None = None

    # -- wire ----------------------------------------------------------------------------------------
    def send(self, method: str, params: dict[str, Any] | None = None, session: bool = True) -> int:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        data = json.dumps(message).encode() + b"\0"
        try:
            while data:
                written = os.write(self._write, data)
                data = data[written:]
        except OSError as error:
            raise BrowserGone(f"the browser closed its pipe ({error})") from error
        return self._next

    def _read_one(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Unresponsive("no answer from the browser")
            ready, _, _ = select.select([self._read], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                raise BrowserGone("the browser closed its pipe")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def _dispatch(self, message: dict[str, Any]) -> None:
        handler = self.handlers.get(message.get("method", ""))
        if handler is not None:
            handler(message)
        else:
            self.events.append(message)

    def call(self, method: str, params: dict[str, Any] | None = None, timeout_s: float = 10.0,
             session: bool = True) -> dict[str, Any]:
        ident = self.send(method, params, session)
        deadline = time.monotonic() + timeout_s
        while True:
            message = self._read_one(deadline)
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error'].get('message')}")
                return message.get("result", {})
            if "method" in message:
                self._dispatch(message)

    def pump(self, seconds: float) -> None:
        """Read and dispatch events for `seconds` (answers paused requests and dialogs meanwhile)."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                message = self._read_one(deadline)
                if "method" in message:
                    self._dispatch(message)
        except Unresponsive as error:
            if isinstance(error, BrowserGone):
                raise

    def wait_event(self, method: str, timeout_s: float) -> dict[str, Any] | None:
        """The first queued or arriving event `method` (removed from the queue), or None at the deadline."""
        deadline = time.monotonic() + timeout_s
        while True:
            for message in self.events:
                if message.get("method") == method:
                    self.events.remove(message)
                    return message
            try:
                message = self._read_one(deadline)
            except BrowserGone:
                raise
            except Unresponsive:
                return None
            if "method" in message:
                self._dispatch(message)
