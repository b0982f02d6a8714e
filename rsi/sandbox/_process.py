"""Process plumbing shared by the sandbox backends: capped output capture, stdin feeding, ownership.

Kept apart from the backends because each piece guards against a specific hostile behaviour
(flooding output, planting symlinks for a chown to follow; killing lives in _reap.py),
and those guards are easier to read and test alone.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from pathlib import Path
from typing import IO

SANDBOX_UID = 65534  # nobody
SANDBOX_GID = 65534  # nogroup
DEFAULT_OUTPUT_LIMIT_BYTES = 1 << 20
TRUNCATION_MARK = "\n[... output truncated by the sandbox ...]\n"


class CappedReader:
    """Drains a pipe in a thread, keeping at most `limit_bytes`; the rest is read and discarded.

    Draining everything (rather than stopping at the cap) keeps a chatty child from blocking on a
    full pipe, so the wall-clock limit, not the pipe, decides when it stops.
    """

    def __init__(self, stream: IO[bytes], limit_bytes: int = DEFAULT_OUTPUT_LIMIT_BYTES) -> None:
        self._stream = stream
        self._limit = limit_bytes
        self._chunks: list[bytes] = []
        self._size = 0
        self.truncated = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        try:
            while True:
                chunk = self._stream.read1(65536) if hasattr(self._stream, "read1") else self._stream.read(65536)
                if not chunk:
                    break
                with self._lock:
                    room = self._limit - self._size
                    if room > 0:
                        self._chunks.append(chunk[:room])
                        self._size += min(room, len(chunk))
                    if len(chunk) > room:
                        self.truncated = True
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError, ValueError):
                self._stream.close()

    def join(self, timeout_s: float | None = None) -> bool:
        """Wait for end of stream; True when the writer side is closed everywhere."""
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    def text(self) -> str:
        with self._lock:
            data = b"".join(self._chunks)
        out = data.decode("utf-8", errors="replace")
        return out + TRUNCATION_MARK if self.truncated else out


def feed_stdin(stream: IO[bytes] | None, data: str | None) -> threading.Thread | None:
    """Write `data` to the child's stdin in a thread (a child that never reads must not block us)."""
    if stream is None:
        return None

    def write() -> None:
        try:
            if data:
                stream.write(data.encode())
                stream.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError, ValueError):
                stream.close()

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def give_to_sandbox_user(workdir: Path, uid: int = SANDBOX_UID, gid: int = SANDBOX_GID) -> None:
    """Make `workdir` and its tree owned by the sandbox user, never following links.

    fwalk with dir fds and follow_symlinks=False means a symlink planted in the working directory
    (say to /etc/shadow) is chowned itself, not its target; files with several hard links are
    skipped because one could be a link to a file outside.
    """
    if os.geteuid() != 0:
        return
    top = os.lstat(workdir)
    if not stat.S_ISDIR(top.st_mode):
        raise NotADirectoryError(str(workdir))
    if (top.st_uid, top.st_gid) != (uid, gid):
        os.chown(workdir, uid, gid, follow_symlinks=False)
    for _root, dirs, files, root_fd in os.fwalk(workdir, follow_symlinks=False):
        for name in dirs + files:
            try:
                st = os.stat(name, dir_fd=root_fd, follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISDIR(st.st_mode) and st.st_nlink > 1:
                continue
            if (st.st_uid, st.st_gid) != (uid, gid):
                with contextlib.suppress(OSError):
                    os.chown(name, uid, gid, dir_fd=root_fd, follow_symlinks=False)


def reachable_by_others(path: Path) -> bool:
    """True when every parent of `path` can be traversed by an unrelated user (o+x)."""
    for part in path.resolve().parents:
        try:
            mode = os.stat(part).st_mode
        except OSError:
            return False
        if not mode & stat.S_IXOTH:
            return False
    return True


class Deadline:
    """A monotonic deadline: `left()` seconds remain (never negative)."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return max(0.0, self.end - time.monotonic())

    def passed(self) -> bool:
        return time.monotonic() >= self.end
