"""A long-lived process of the local backend (`LocalSandbox.start`): pipes, wall-clock timer, tree kill."""

from __future__ import annotations

import contextlib
import threading
from typing import IO

from rsi.sandbox._process import CappedReader
from rsi.sandbox._reap import AttemptTree


class LocalProcess:
    """A long-lived sandboxed process: stdin/stdout pipes, stderr drained into a capped buffer."""

    def __init__(self, tree: AttemptTree, wall_s: float) -> None:
        popen = tree.popen
        self._popen = popen
        self._tree = tree
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
        self.stdin: IO[bytes] = popen.stdin
        self.stdout: IO[bytes] = popen.stdout
        self._stderr = CappedReader(popen.stderr)
        self._ended = False
        self._closed = False
        self.timed_out = False
        self._lock = threading.Lock()
        self._end_lock = threading.Lock()
        self._timer = threading.Timer(wall_s, self._on_timeout)
        self._timer.daemon = True
        self._timer.start()

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def ids(self) -> tuple[int, int] | None:
        """The host (uid, gid) the process runs as; None when it runs as rsi's own uid."""
        return self._tree.ids

    def _on_timeout(self) -> None:
        if not self._tree.exited(0):
            self.timed_out = True
        # Kill only: the owner may be reading stdout right now (select + os.read on its descriptor).
        # Closing the pipe under it would fail that read with EBADF, or worse, let the descriptor
        # number be reused by another thread's file. The kill gives the reader end-of-stream instead.
        self._end()

    def poll(self) -> int | None:
        return self._tree.poll()

    def wait(self, timeout_s: float | None = None) -> int | None:
        return self._tree.reap(timeout_s)

    def _end(self) -> None:
        """Kill the whole tree, reap it and remove its memory group (once). When it returns, no
        process of the attempt is alive."""
        with self._end_lock:  # a second caller waits until the first one's kill is complete
            if self._ended:
                return
            self._ended = True
            self._timer.cancel()
            self._tree.kill()
            self._tree.reap(10)
            self._tree.release_cgroup()

    def kill(self) -> None:
        """Kill the whole tree, reap it and close our ends of its pipes. Idempotent. The owner of
        the process calls it (the wall-clock timer only kills, see `_on_timeout`)."""
        self._end()
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._tree.close()
        for stream in (self.stdin, self.stdout):
            with contextlib.suppress(OSError, ValueError):
                stream.close()

    def stderr_text(self) -> str:
        """What the process wrote to stderr so far (capped)."""
        return self._stderr.text()
