"""Process-tree plumbing shared by the sandbox backends: capped output capture, tree kill, ownership.

Kept apart from the backends because each piece guards against a specific hostile behaviour
(flooding output, escaping the process group with setsid, planting symlinks for a chown to follow),
and those guards are easier to read and test alone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import threading
import time
from collections.abc import Iterable
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


def _proc_table() -> dict[int, tuple[int, int, int]]:
    """pid -> (ppid, process group, session) for every visible process."""
    table: dict[int, tuple[int, int, int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        # The command name may contain spaces and parentheses; fields resume after the last ')'.
        fields = raw[raw.rfind(b")") + 2 :].split()
        if len(fields) > 3:
            table[int(entry)] = (int(fields[1]), int(fields[2]), int(fields[3]))
    return table


def tree_members(roots: set[int], group: int | None = None) -> set[int]:
    """Live descendants of `roots` plus every process still in its group or session `group`.

    A snapshot; callers stop the tree first. A process that called setsid *and* was orphaned
    before the walk is out of reach here, which is why the bwrap mode (PID namespace) is preferred.
    """
    table = _proc_table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _pgrp, _sid) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    if group is not None:
        found |= {pid for pid, (_ppid, pgrp, sid) in table.items() if group in (pgrp, sid)}
    stack = [*roots, *found]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def pipe_holders(inodes: set[int]) -> set[int]:
    """Processes holding any of the given pipes open (found through /proc/*/fd)."""
    wanted = {f"pipe:[{inode}]" for inode in inodes}
    holders: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fds = os.listdir(f"/proc/{entry}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{entry}/fd/{fd}") in wanted:
                    holders.add(int(entry))
                    break
            except OSError:
                continue
    return holders


def _signal_all(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def kill_tree(
    root_pid: int | None, pgid: int | None = None, pipe_inodes: set[int] | None = None, walk: bool = True
) -> None:
    """Kill `root_pid`, its process group and every descendant, including ones that called setsid.

    The tree is frozen with SIGSTOP first and re-walked until it stops growing, so a fork loop
    cannot outrun the walk; then everything gets SIGKILL. Inside bwrap's PID namespace killing the
    root is already enough (the namespace dies with its init); this also covers the bare mode.
    Pass `root_pid=None` once the root has been reaped (its pid may belong to someone else now);
    the group stays safe to signal while any member lives, since Linux never reuses such a pid.
    `pipe_inodes` (the child's stdout/stderr pipes) also catches a double-forked daemon that left
    the session but still holds the output pipes, the one way it could stall a caller.
    `walk=False` skips the /proc walk (for a PID namespace, whose members die with its init).
    """
    seen: set[int] = set() if root_pid is None else {root_pid}
    if not walk:
        if pgid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
        _signal_all(seen, signal.SIGKILL)
        return
    for _ in range(20):
        if pgid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGSTOP)
        fresh = tree_members(seen, pgid) - seen
        if pipe_inodes:
            fresh |= pipe_holders(pipe_inodes) - seen - {os.getpid()}
        _signal_all(fresh | seen, signal.SIGSTOP)
        if not fresh:
            break
        seen |= fresh
    if pgid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    _signal_all(seen, signal.SIGKILL)


def wait_unreaped(pid: int, timeout_s: float) -> bool:
    """Wait until child `pid` has exited *without reaping it* (its pid stays reserved); True if it did."""
    done = threading.Event()

    def waiter() -> None:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        done.set()

    threading.Thread(target=waiter, daemon=True).start()
    return done.wait(timeout_s)


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
