"""The host's end of a nonce-tagged line channel to a sandboxed process (cases, script and pytest kinds).

The host sends JSON lines on the process's stdin and reads JSON lines from its stdout, taking only
lines that start with a nonce the process was told privately; everything else is ignored, and reads
run under deadlines and a size cap, so a process that floods, hangs or lies about its framing ends
as a missing answer, never as a hang or a crash of the judge.
"""

from __future__ import annotations

import json
import os
import select
import time
from typing import Any

from rsi.sandbox.base import SandboxProcess

MAX_ANSWER_BYTES = 8 * 1024 * 1024


class Answers:
    """Reads nonce-tagged lines from the child's stdout under deadlines; everything else is ignored."""

    def __init__(self, stream: Any, nonce: str) -> None:
        self._fd = stream.fileno()
        self._prefix = (nonce + " ").encode()
        self._buffer = b""
        self.eof = False

    def next(self, timeout_s: float) -> dict[str, Any] | None:
        """The next tagged message; None on timeout or end of stream (see `eof`)."""
        deadline = time.monotonic() + timeout_s
        while True:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                if line.startswith(self._prefix):
                    try:
                        message = json.loads(line[len(self._prefix) :])
                    except ValueError:
                        continue
                    if isinstance(message, dict):
                        return message
            if len(self._buffer) > MAX_ANSWER_BYTES:
                raise Oversized()
            left = deadline - time.monotonic()
            if left <= 0 or self.eof:
                return None
            ready, _, _ = select.select([self._fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:
                self.eof = True
            self._buffer += chunk


class Oversized(Exception):
    pass


def send_line(process: SandboxProcess, message: dict[str, Any]) -> bool:
    try:
        process.stdin.write((json.dumps(message) + "\n").encode())
        process.stdin.flush()
        return True
    except (OSError, ValueError):
        return False


