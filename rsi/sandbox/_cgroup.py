"""Per-attempt memory caps with a cgroup, where this machine lets rsi create one.

rlimits cap each process's address space; an attempt of eight processes (or one that fills a
tmpfs) is not capped by them. A memory cgroup per launch caps the whole tree, files in its tmpfs
included (tmpfs pages are charged to the group that wrote them). The launched process joins the
group between fork and exec (writing 0 to cgroup.procs), so every descendant is in it.

Found once per process (`cgroup_support`), by creating and removing a probe group under this
process's own group (a child group nests under whatever limits the machine already set):

* cgroup v2 (/sys/fs/cgroup/cgroup.controllers lists `memory`): memory.max (+ memory.swap.max 0);
  the parent must delegate `memory` to its children (cgroup.subtree_control);
* cgroup v1 (a `memory` hierarchy): memory.limit_in_bytes (+ memory.memsw.limit_in_bytes).

Anywhere else (no root, no delegation) `cgroup_support()` says why, and only per-process limits hold.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")  # module constants, read at call time (the tests point them elsewhere)


@dataclass(frozen=True)
class CgroupSupport:
    """Where per-launch memory groups go, or why there are none."""

    version: int | None  # 1, 2, or None when unusable
    parent: Path | None
    why: str


def _own_group(controller: str | None) -> str | None:
    """This process's group path in the v1 hierarchy of `controller` (None: the v2 one)."""
    try:
        lines = PROC_CGROUP.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _id, controllers, path = line.split(":", 2)
        if controller is None and _id == "0" and controllers == "":
            return path
        if controller is not None and controller in controllers.split(","):
            return path
    return None


def _v2_parent() -> Path | None:
    if "memory" not in (CGROUP_ROOT / "cgroup.controllers").read_text().split():
        return None
    own = _own_group(None)
    return None if own is None else CGROUP_ROOT / own.lstrip("/")


def _v1_parent() -> Path | None:
    own = _own_group("memory")
    mount = CGROUP_ROOT / "memory"
    if own is None or not (mount / "memory.limit_in_bytes").exists():
        return None
    return mount / own.lstrip("/")


def _try_group(version: int, parent: Path) -> str:
    """Create, limit and remove a probe group: '' when all of it works, else what failed."""
    probe = parent / f"rsi-probe-{secrets.token_hex(4)}"
    try:
        probe.mkdir()
    except OSError as error:
        return f"cannot create a group under {parent}: {error.strerror}"
    try:
        knob = "memory.max" if version == 2 else "memory.limit_in_bytes"
        if not (probe / knob).exists():
            return f"the memory controller is not enabled for groups under {parent} (cgroup.subtree_control)"
        (probe / knob).write_text(str(64 << 20))
        return ""
    except OSError as error:
        return f"cannot set a memory limit under {parent}: {error.strerror}"
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()


def sweep_stale(parent: Path) -> int:
    """Remove empty groups left by rsi processes that died without cleaning up (a SIGKILLed
    orchestrator, say); a group still holding processes, or whose owner lives, is left alone."""
    removed = 0
    with contextlib.suppress(OSError):
        for group in parent.glob("rsi-*-*"):
            owner = group.name.split("-")[1]
            if owner.isdigit() and int(owner) != os.getpid() and not Path(f"/proc/{owner}").exists():
                with contextlib.suppress(OSError):
                    group.rmdir()
                    removed += 1
    return removed


@lru_cache(maxsize=1)
def cgroup_support() -> CgroupSupport:
    if os.geteuid() != 0:
        return CgroupSupport(None, None, "rsi is not root, and no cgroup is delegated to it")
    candidates: list[tuple[int, Path | None]] = []
    with contextlib.suppress(OSError):
        if (CGROUP_ROOT / "cgroup.controllers").exists():
            candidates.append((2, _v2_parent()))
    candidates.append((1, _v1_parent()))
    reasons = []
    for version, parent in candidates:
        if parent is None:
            reasons.append(f"no cgroup v{version} memory controller for this process")
            continue
        why = _try_group(version, parent)
        if not why:
            sweep_stale(parent)
            return CgroupSupport(version, parent, f"cgroup v{version} memory groups under {parent}")
        reasons.append(why)
    return CgroupSupport(None, None, "; ".join(reasons))


class MemoryGroup:
    """One launch's memory group: created with its limit, joined by the child, removed after."""

    def __init__(self, support: CgroupSupport, limit_mb: int) -> None:
        assert support.parent is not None and support.version is not None
        self.version = support.version
        self.path = support.parent / f"rsi-{os.getpid()}-{secrets.token_hex(6)}"
        self.path.mkdir()
        limit = str(limit_mb << 20)
        try:
            if self.version == 2:
                (self.path / "memory.max").write_text(limit)
                with contextlib.suppress(OSError):
                    (self.path / "memory.swap.max").write_text("0")
            else:
                (self.path / "memory.limit_in_bytes").write_text(limit)
                with contextlib.suppress(OSError):  # absent without swap accounting
                    (self.path / "memory.memsw.limit_in_bytes").write_text(limit)
        except OSError:
            self.remove()
            raise
        self.procs = os.fsencode(self.path / "cgroup.procs")

    def joiner(self):
        """A preexec step: move the calling (forked) process into the group. Only os calls inside."""
        procs = self.procs

        def join() -> None:
            fd = os.open(procs, os.O_WRONLY)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)

        return join

    def peak_bytes(self) -> int | None:
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        try:
            return int((self.path / name).read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def oom_kills(self) -> int:
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        with contextlib.suppress(OSError, ValueError):
            for line in (self.path / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return 0

    def remove(self, timeout_s: float = 5.0) -> bool:
        """rmdir the group, retrying while its last processes finish dying; True when gone."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.path.rmdir()
                return True
            except FileNotFoundError:
                return True
            except OSError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.01)
