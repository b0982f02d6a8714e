"""What runs in a launched child between fork and exec (subprocess's preexec_fn), and the rlimits.

Everything heavy (ctypes lookups, the numbers) is prepared in the parent: the forked child of a
multi-threaded process may only make plain system calls. The namespace modes apply the rlimits
later, inside the sandbox (ns_init.py), from the same `rlimit_values`.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Callable

from rsi.sandbox.base import Limits

CPU_GRACE_S = 2
RLIMIT_NAMES = {
    "cpu": resource.RLIMIT_CPU, "as": resource.RLIMIT_AS, "fsize": resource.RLIMIT_FSIZE,
    "nofile": resource.RLIMIT_NOFILE, "nproc": resource.RLIMIT_NPROC, "core": resource.RLIMIT_CORE,
}
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, SIGKILL = 1, 38, 9

Step = Callable[[], None]


def rlimit_values(limits: Limits) -> dict[str, tuple[int, int]]:
    """name -> (soft, hard), never above this process's own hard limits."""
    mb = 1024 * 1024
    wanted = {
        "cpu": limits.cpu_s, "as": limits.memory_mb * mb, "fsize": limits.file_size_mb * mb,
        "nofile": limits.open_files, "nproc": limits.processes, "core": 0,
    }
    values = {}
    for name, value in wanted.items():
        _soft, hard = resource.getrlimit(RLIMIT_NAMES[name])
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        # CPU: the soft limit delivers SIGXCPU (a recognisable "out of CPU time"), the hard limit
        # two seconds later SIGKILLs a process that ignores it. soft == hard would SIGKILL at once.
        ceiling = value + CPU_GRACE_S if name == "cpu" and hard == resource.RLIM_INFINITY else value
        values[name] = (value, ceiling)
    return values


def rlimit_setter(limits: Limits) -> Step:
    pairs = [(RLIMIT_NAMES[name], pair) for name, pair in rlimit_values(limits).items()]

    def apply() -> None:
        for which, pair in pairs:
            resource.setrlimit(which, pair)

    return apply


def _prctl() -> Callable[..., int] | None:
    import ctypes
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def die_with_parent() -> Step:
    """SIGKILL the child when the THREAD that started it dies (as bwrap's --die-with-parent), so a
    SIGKILLed orchestrator leaves nothing running. Must come after any uid change (which clears it)."""
    prctl = _prctl()

    def apply() -> None:
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)

    return apply


def drop_to(uid: int, gid: int) -> Step:
    """setgroups([]), gid, uid (root loses every capability with it) and no_new_privs."""
    prctl = _prctl()

    def apply() -> None:
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
        if prctl is not None:
            prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)

    return apply


def chain(*steps: Step | None) -> Step:
    """One preexec_fn running `steps` in order (None entries skipped)."""
    todo = [step for step in steps if step is not None]

    def apply() -> None:
        for step in todo:
            step()

    return apply
