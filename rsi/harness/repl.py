"""The host side of the REPL substrate: start `repl_server.py` in a sandbox and run cells in it.

One `ReplSession` owns one sandboxed Python process for a whole attempt. It speaks the framed
protocol described in `repl_server.py`: requests as JSON lines on the process's stdin, replies as
`<token> <nbytes>` frames on its stdout. A reader thread collects frames, so every wait has a
deadline: the server interrupts a runaway cell itself after `step_s`, and if it does not answer
within `step_s + grace_s` (the agent defeated the timer, or the process died) the session kills the
whole process tree and says so in the cell's outcome. Nothing here raises for what agent code did;
`SandboxError` is raised only when the REPL cannot be started at all (infrastructure).
"""

from __future__ import annotations

import json
import queue
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rsi.errors import SandboxError
from rsi.harness.trajectory import clean_text
from rsi.sandbox.base import Limits, Sandbox, SandboxProcess

SERVER_SOURCE_PATH = Path(__file__).with_name("repl_server.py")

_EOF = object()


@dataclass
class SavedTool:
    """A helper the agent kept with `save_tool(name, function)`."""

    name: str
    function: str
    source: str
    cell: str


@dataclass
class CellOutcome:
    """What running one cell produced, before it is shaped into an observation."""

    output: str = ""
    output_bytes: int = 0
    error: str | None = None
    timed_out: bool = False
    submitted: bool = False
    died: bool = False
    exit_code: int | None = None
    wall_s: float = 0.0
    saved_tools: list[SavedTool] = field(default_factory=list)


def server_source() -> str:
    return SERVER_SOURCE_PATH.read_text(encoding="utf-8")


class ReplSession:
    """A stateful Python process inside a sandbox, driven cell by cell."""

    def __init__(
        self,
        sandbox: Sandbox,
        workdir: Path,
        limits: Limits,
        *,
        python: str = "python3",
        step_s: float = 20.0,
        tools: list[str] | None = None,
        end_call: str = "",
        startup_s: float = 30.0,
        grace_s: float = 5.0,
        env: dict[str, str] | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.workdir = workdir
        self.limits = limits
        self.python = python
        self.step_s = step_s
        self.tools = list(tools or [])
        self.end_call = end_call
        self.startup_s = startup_s
        self.grace_s = grace_s
        self.env = env
        self.token = secrets.token_hex(16)
        self.python_version = ""
        self._process: SandboxProcess | None = None
        self._frames: queue.Queue[Any] = queue.Queue()
        self._stray: deque[str] = deque(maxlen=40)
        self._next_id = 0

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the server and wait for its ready frame; SandboxError if it never comes."""
        config = json.dumps(
            {"token": self.token, "step_s": self.step_s, "tools": self.tools, "end_call": self.end_call}
        )
        argv = [self.python, "-c", server_source(), config]
        try:
            self._process = self.sandbox.start(argv, self.workdir, self.limits, env=self.env)
        except SandboxError:
            raise
        except Exception as error:  # a backend bug or OS failure is still infrastructure
            raise SandboxError(f"could not start the REPL in sandbox {self.sandbox.name!r}: {error}") from error
        # The reader owns this process's stream and queue: after a restart, an old reader's EOF
        # lands in the old queue, never in the new session's.
        threading.Thread(
            target=self._read_frames, args=(self._process, self._frames, self.token), name="repl-reader", daemon=True
        ).start()
        ready = self._wait_frame(self.startup_s)
        if not isinstance(ready, dict) or ready.get("op") != "ready":
            stray = " | ".join(self._stray)[-600:]
            self.kill()
            raise SandboxError(
                f"the REPL did not start in sandbox {self.sandbox.name!r} ({self.python}): {stray or 'no output'}"
            )
        self.python_version = str(ready.get("python", ""))

    def restart(self) -> None:
        """Kill this process and start a fresh one (state is lost, files stay); SandboxError if it fails."""
        self.kill()
        self.token = secrets.token_hex(16)
        self._frames = queue.Queue()
        self._stray.clear()
        self.start()

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def kill(self) -> None:
        """Kill the REPL's whole process tree (idempotent)."""
        if self._process is not None:
            try:
                self._process.kill()
                self._process.wait(timeout_s=10)
            except Exception:  # noqa: BLE001 - best effort: the process may already be gone
                pass

    def close(self) -> None:
        """End the session: after this nothing of the agent runs any more.

        The whole tree is killed at once while the REPL is still alive. A polite close first (the REPL
        exiting, then the kill) left a window in which the agent's own daemon, watching for the REPL's
        exit, rewrote solution.py after the agent had ended and before its tree was killed
        (tests/verifier/hostile_payloads.py `daemon_outlives_attempt`)."""
        self.kill()

    # -- running cells --------------------------------------------------------------------------
    def run(self, code: str) -> CellOutcome:
        """Run one cell; a runaway cell is interrupted, a dead or stuck REPL is reported."""
        started = time.monotonic()
        if not self.alive:
            return CellOutcome(died=True, exit_code=self._exit_code(), error="the Python session is not running")
        self._next_id += 1
        try:
            self._send({"op": "exec", "id": self._next_id, "code": code})
        except OSError as error:
            return CellOutcome(died=True, exit_code=self._exit_code(), error=f"the Python session is gone ({error})")
        frame = self._wait_frame(self.step_s + self.grace_s)
        wall_s = time.monotonic() - started
        if isinstance(frame, dict) and frame.get("op") == "result":
            head, tail = str(frame.get("output_head", "")), str(frame.get("output_tail", ""))
            size = int(frame.get("output_bytes", 0))
            shown = len(head.encode()) + len(tail.encode())
            output = head if not tail else head + (f"\n... [{size - shown} bytes omitted] ...\n" if size > shown else "") + tail
            raised = frame.get("error")
            return CellOutcome(
                output=clean_text(output),
                output_bytes=size,
                error=clean_text(raised) if raised else None,
                timed_out=bool(frame.get("timed_out")),
                submitted=bool(frame.get("submitted")),
                wall_s=float(frame.get("wall_s", wall_s)),
                saved_tools=[SavedTool(**tool) for tool in frame.get("saved_tools", [])],
            )
        # No answer in time, or the process ended: kill it so nothing keeps running unseen.
        stuck = frame is None
        self.kill()
        if stuck:
            message = f"the cell did not stop within {self.step_s:g}s (plus {self.grace_s:g}s grace); the session was killed"
        else:
            message = "the Python session died while running this cell"
        return CellOutcome(died=True, timed_out=stuck, exit_code=self._exit_code(), error=message, wall_s=wall_s)

    # -- protocol -------------------------------------------------------------------------------
    def _send(self, payload: dict[str, Any]) -> None:
        assert self._process is not None
        self._process.stdin.write(json.dumps(payload).encode("utf-8") + b"\n")
        self._process.stdin.flush()

    def _wait_frame(self, timeout_s: float) -> Any:
        """The next frame, `_EOF` if the process's stdout ended, None on timeout."""
        try:
            return self._frames.get(timeout=max(timeout_s, 0.01))
        except queue.Empty:
            return None

    def _read_frames(self, process: SandboxProcess, frames: queue.Queue[Any], token: str) -> None:
        stream = process.stdout
        prefix = token.encode("ascii") + b" "
        try:
            while True:
                line = stream.readline()
                if not line:
                    break
                if not line.startswith(prefix):
                    if line.strip():
                        self._stray.append(line.decode("utf-8", "replace").rstrip())
                    continue
                try:
                    size = int(line[len(prefix) :].strip())
                    frames.put(json.loads(stream.read(size).decode("utf-8")))
                except (ValueError, UnicodeDecodeError):
                    self._stray.append("(malformed frame)")
        except (OSError, ValueError):
            pass
        frames.put(_EOF)

    def _exit_code(self) -> int | None:
        return self._process.poll() if self._process is not None else None
