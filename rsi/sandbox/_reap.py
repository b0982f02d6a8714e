"""Killing an attempt's processes, and never anyone else's.

Every signal sent here goes to a process that is provably the attempt's:

* the launched root, through a pidfd opened right after the launch (a pidfd names one process
  for good: once it is reaped, signalling it fails instead of hitting whoever got the number);
* every process whose REAL uid is the attempt's fresh per-run uid (rsi as root gives each launch
  its own uid above 2,000,000,000; nothing else on the machine runs as it, and code of the
  attempt cannot change it: the capabilities are gone), each re-checked after its pidfd is open;
* a namespace's init (found as the root's child while the root is alive and unreaped), whose
  death takes every process of the PID namespace with it;
* only where none of those applies (the rlimits-only mode with a shared uid): the root's process
  group and session while the root is unreaped (its number cannot be reused then), their
  descendants, and holders of the attempt's output pipes that are not this process or its direct
  children (a child of ours between fork and exec holds copies of ALL our descriptors: killing it
  failed a sibling sandbox's launch, issue 11's "closed its input before starting").
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import threading
import time
from collections.abc import Iterable

from rsi.sandbox._cgroup import MemoryGroup

LOG = logging.getLogger(__name__)


def pidfd_open(pid: int) -> int | None:
    """A pidfd for `pid`, or None when the process is gone (or the kernel has no pidfds)."""
    try:
        return os.pidfd_open(pid)
    except (OSError, AttributeError):
        return None


def pidfd_kill(pidfd: int | None, sig: int = signal.SIGKILL) -> None:
    if pidfd is None:
        return
    with contextlib.suppress(OSError):
        signal.pidfd_send_signal(pidfd, sig)


def pidfd_exited(pidfd: int, timeout_s: float) -> bool:
    """Wait up to `timeout_s` for the process behind `pidfd` to exit (it becomes readable then)."""
    try:
        ready, _, _ = select.select([pidfd], [], [], max(0.0, timeout_s))
    except (OSError, ValueError):
        return True
    return bool(ready)


def _status_fields(pid: int | str) -> dict[str, str] | None:
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            raw = fh.read(4096).decode(errors="replace")
    except OSError:
        return None
    fields = {}
    for line in raw.splitlines():
        key, _, value = line.partition(":")
        if key in ("State", "PPid", "Uid"):
            fields[key] = value.strip()
    return fields


def _alive(fields: dict[str, str]) -> bool:
    return fields.get("State", "Z")[:1] not in ("Z", "X")


def _real_uid(fields: dict[str, str]) -> int | None:
    parts = fields.get("Uid", "").split()
    return int(parts[0]) if parts else None


def uid_members(uid: int) -> list[int]:
    """Live (not zombie) processes whose real uid is `uid`.

    Read from /proc/PID/status, never from the owner of /proc/PID: a process that makes itself
    non-dumpable shows that directory as root's.
    """
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _status_fields(entry)
            if fields is not None and _alive(fields) and _real_uid(fields) == uid:
                found.append(int(entry))
    return found


def children_of(pid: int) -> list[int]:
    """Live processes whose parent is `pid` (exact while `pid` is alive or an unreaped zombie)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _status_fields(entry)
            if fields is not None and _alive(fields) and fields.get("PPid") == str(pid):
                found.append(int(entry))
    return found


def _open_verified(pid: int, check) -> int | None:
    """A pidfd for `pid` if, AFTER opening it, the process still passes `check` (so the pidfd is
    not a newcomer that reused the number between our scan and the open)."""
    pidfd = pidfd_open(pid)
    if pidfd is None:
        return None
    fields = _status_fields(pid)
    if fields is None or not _alive(fields) or not check(fields):
        os.close(pidfd)
        return None
    return pidfd


def kill_uid(uid: int, timeout_s: float = 5.0) -> list[int]:
    """SIGKILL every process of real uid `uid` until none is left alive; the survivors (normally none).

    A process with a SIGKILL pending cannot fork any more, so each round can only leave children
    forked before it; the loop ends quickly even for a fork bomb.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        pids = uid_members(uid)
        if not pids or time.monotonic() >= deadline:
            return pids
        for pid in pids:
            pidfd = _open_verified(pid, lambda f: _real_uid(f) == uid)
            if pidfd is not None:
                pidfd_kill(pidfd)
                os.close(pidfd)
        time.sleep(0.002)


def namespace_inits(root_pid: int) -> list[int]:
    """pidfds of the root's children, opened while the root is alive: a namespace's init.

    Call before killing the root; the children's ppid is checked again after each pidfd is open.
    """
    fds = []
    for child in children_of(root_pid):
        pidfd = _open_verified(child, lambda f: f.get("PPid") == str(root_pid))
        if pidfd is not None:
            fds.append(pidfd)
    return fds


# -- the shared-uid, rlimits-only fallback ------------------------------------------------------------


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
        if len(fields) > 3 and fields[0] not in (b"Z", b"X"):
            table[int(entry)] = (int(fields[1]), int(fields[2]), int(fields[3]))
    return table


def _session_members(table: dict[int, tuple[int, int, int]], roots: set[int], group: int | None) -> set[int]:
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


def pipe_holders(inodes: set[int], table: dict[int, tuple[int, int, int]]) -> set[int]:
    """Processes holding any of the given pipes, minus this process and its direct children.

    Our direct children are excluded because a sibling sandbox's child between fork and exec holds
    copies of every descriptor we have, this attempt's pipes included; it is not the attempt's.
    """
    wanted = {f"pipe:[{inode}]" for inode in inodes}
    me = os.getpid()
    holders: set[int] = set()
    for pid, (ppid, _pgrp, _sid) in table.items():
        if pid == me or ppid == me:
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/fd/{fd}") in wanted:
                    holders.add(pid)
                    break
    return holders


def _signal_all(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def kill_session(root_pid: int, pipe_inodes: set[int] | None) -> None:
    """Freeze and kill the root's group, session and descendants (and the pipes' holders).

    The caller guarantees the root is not reaped (its pid, which is also the group and session
    id, stays reserved). The tree is frozen with SIGSTOP and re-walked until it stops growing, so
    a fork loop cannot outrun the walk. A daemon that left the session AND closed the pipes is out
    of reach here; that is why this is only the last-resort mode.
    """
    seen: set[int] = {root_pid}
    for _ in range(20):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(root_pid, signal.SIGSTOP)
        table = _proc_table()
        fresh = _session_members(table, seen, root_pid) - seen
        if pipe_inodes:
            fresh |= pipe_holders(pipe_inodes, table) - seen
        _signal_all(fresh | seen, signal.SIGSTOP)
        if not fresh:
            break
        seen |= fresh
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(root_pid, signal.SIGKILL)
    _signal_all(seen, signal.SIGKILL)


class AttemptTree:
    """The processes of one sandboxed launch, and the one way to end them all.

    `uid`: the launch's fresh per-run uid (None when the uid is shared: not root, or a fixed uid).
    `namespace`: the root is a namespace builder (bwrap, unshare) whose child is the PID
    namespace's init. Reaping the root goes through `reap`/`poll`, which share a lock with `kill`,
    so the root's pid is never signalled after someone else reaped it.
    """

    def __init__(
        self, popen, uid: int | None, namespace: bool, pipe_inodes: set[int] | None = None, cgroup: MemoryGroup | None = None
    ) -> None:
        self.popen = popen
        self.uid = uid
        self.namespace = namespace
        self.pipe_inodes = pipe_inodes
        self.cgroup = cgroup
        self.ids: tuple[int, int] | None = None  # the host (uid, gid) it runs as; None: rsi's own
        self.pidfd = pidfd_open(popen.pid)  # the child is ours and unreaped: this names it for good
        self._lock = threading.Lock()
        self.survivors: list[int] = []

    def kill(self, sweep_pipes: bool = True, wait_s: float = 5.0) -> None:
        """Kill every process of the attempt and return once they are dead (or `wait_s` passed)."""
        inits: list[int] = []
        with self._lock:
            unreaped = self.popen.returncode is None
            if unreaped and self.namespace:
                inits = namespace_inits(self.popen.pid)
            if unreaped and self.uid is None and not self.namespace:
                kill_session(self.popen.pid, self.pipe_inodes if sweep_pipes else None)
            pidfd_kill(self.pidfd)
            if self.pidfd is None and unreaped:  # no pidfds on this kernel: the pid is still ours here
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.popen.pid, signal.SIGKILL)
        deadline = time.monotonic() + wait_s
        for pidfd in inits:
            pidfd_kill(pidfd)
            pidfd_exited(pidfd, deadline - time.monotonic())
            os.close(pidfd)
        if self.uid is not None:
            self.survivors = kill_uid(self.uid, max(0.5, deadline - time.monotonic()))
            if self.survivors:  # e.g. stuck in uninterruptible sleep; they die when it returns
                LOG.warning("processes %s of sandbox uid %d survived SIGKILL for %.0f s", self.survivors, self.uid, wait_s)

    def poll(self) -> int | None:
        with self._lock:
            return self.popen.poll()

    def exited(self, timeout_s: float | None) -> bool:
        """Wait (without reaping) until the root has exited; True if it did within `timeout_s`."""
        if self.popen.returncode is not None:
            return True
        if self.pidfd is None:
            with contextlib.suppress(Exception):
                self.popen.wait(timeout=timeout_s)
            return self.popen.returncode is not None
        ready, _, _ = select.select([self.pidfd], [], [], timeout_s)
        return bool(ready)

    def reap(self, timeout_s: float | None = None) -> int | None:
        """Wait for the root to exit and reap it; its exit code, or None on timeout."""
        if not self.exited(timeout_s):
            return None
        with self._lock:
            return self.popen.wait()

    def release_cgroup(self) -> None:
        """Remove the memory group (after the kill: it must be empty by then)."""
        if self.cgroup is not None:
            if not self.cgroup.remove():
                LOG.warning("memory group %s is not empty after the kill; left for a later sweep", self.cgroup.path)
            self.cgroup = None

    def close(self) -> None:
        """Release the group and the pidfd; only the owner calls it, once nothing waits on the root."""
        self.release_cgroup()
        if self.pidfd is not None:
            with contextlib.suppress(OSError):
                os.close(self.pidfd)
            self.pidfd = None
