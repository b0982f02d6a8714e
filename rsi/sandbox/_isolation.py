"""The `Isolation` record of the local backend: what each mode really isolates on this machine."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from rsi.sandbox.base import Isolation

if TYPE_CHECKING:
    from rsi.sandbox.local import LocalSandbox

MINIMAL_ROOT = (
    "only /usr, /etc (read-only), the project's Python (read-only) and the workdir (read-write) are visible"
)


def memory_words(sandbox: LocalSandbox) -> str:
    if sandbox.cgroups.version is not None:
        return f"memory capped per attempt (cgroup v{sandbox.cgroups.version}: all processes and their tmpfs)"
    return f"only per-process memory limits hold (rlimits; no cgroup: {sandbox.cgroups.why})"


def _who(sandbox: LocalSandbox) -> str:
    if not sandbox.as_root:
        return f"uid {os.geteuid()} (not root), no capabilities"
    if not sandbox.drop_privileges:
        return "root without capabilities (drop_privileges=False)"
    if sandbox.mode == "userns":
        return f"{sandbox._uid_words()} (root of its own user namespace, no capabilities, no_new_privs)"
    return f"{sandbox._uid_words()} via setpriv, no capabilities, no_new_privs"


def describe(sandbox: LocalSandbox) -> Isolation:
    memory = memory_words(sandbox)
    capped = sandbox.cgroups.version is not None
    passed_over = f"; stronger modes unavailable: {' | '.join(sandbox.skipped)}" if sandbox.skipped else ""
    if sandbox.mode == "bare":
        who = f"runs as {sandbox._uid_words()}" if sandbox.drop_privileges else "runs as the calling user"
        return Isolation(
            backend="local-bare",
            network_isolated=False,
            filesystem_readonly=False,
            pid_namespace=False,
            unprivileged_user=sandbox.drop_privileges or not sandbox.as_root,
            memory_per_attempt=capped,
            notes=f"WEAK, rlimits only (no namespaces): the host file system and network are reachable; {who}; "
            f"scrubbed environment; {memory}{passed_over}",
        )
    how = {
        "bwrap": "bubblewrap",
        "namespaces": "util-linux unshare (mount, PID, net, IPC, UTS namespaces)",
        "userns": "util-linux unshare in an unprivileged user namespace",
    }[sandbox.mode]
    view = MINIMAL_ROOT if sandbox.extra_ro else MINIMAL_ROOT.replace(", the project's Python (read-only)", "")
    return Isolation(
        backend=f"local-{sandbox.mode}",
        network_isolated=True,
        filesystem_readonly=True,
        pid_namespace=True,
        unprivileged_user=sandbox.drop_privileges or not sandbox.as_root,
        memory_per_attempt=capped,
        notes=f"{how}: {view}; private /tmp; no network but lo; {_who(sandbox)}; rlimits; {memory}{passed_over}",
    )
