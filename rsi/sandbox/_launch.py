"""Starting one sandboxed command in a given local mode: the command line, preexec steps, and the
wait for the sandbox to report it is set up (a setup failure is a SandboxError: infrastructure).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rsi.errors import SandboxError
from rsi.sandbox import namespaces
from rsi.sandbox._bwrap import bwrap_argv
from rsi.sandbox._cgroup import MemoryGroup
from rsi.sandbox._layout import TOOL_PATH
from rsi.sandbox._preexec import Step, chain, die_with_parent, drop_to, rlimit_setter, rlimit_values
from rsi.sandbox._process import CappedReader, give_to_sandbox_user, reachable_by_others
from rsi.sandbox._reap import AttemptTree
from rsi.sandbox.base import Limits

Mode = Literal["bwrap", "namespaces", "userns", "bare"]
SETUP_TIMEOUT_S = 30.0


@dataclass
class Launch:
    """What one launch needs: mode, identity, limits; `plan` fills in the command line."""

    mode: Mode
    argv: list[str]
    workdir: Path
    limits: Limits
    as_root: bool
    run_as: tuple[int, int] | None  # the uid/gid the attempt drops to (root only)
    setup_python: str
    extra_ro: tuple[str, ...]
    group: MemoryGroup | None
    hand_over: bool = True  # give the workdir to run_as (attempts); a verifier process leaves it
    full: list[str] = field(default_factory=list)
    preexec: Step | None = None
    status: tuple[int, int] | None = None  # (read, write) ends of the setup status pipe


def _need_reachable(workdir: Path) -> None:
    if not reachable_by_others(workdir):
        raise SandboxError(
            f"{workdir} is not reachable by the sandbox user (a parent lacks o+x)",
            hint="put attempt working directories under a world-traversable folder",
        )


def plan(launch: Launch) -> None:
    """Fill in `full`, `preexec` and `status` for the launch's mode (handing the workdir over first)."""
    join = launch.group.joiner() if launch.group is not None else None
    if launch.run_as is not None and launch.mode in ("userns", "bare"):
        _need_reachable(launch.workdir)  # the attempt's own uid walks the host's path to it
    if launch.run_as is not None and launch.hand_over:
        give_to_sandbox_user(launch.workdir, *launch.run_as)
    if launch.mode == "bare":
        drop = drop_to(*launch.run_as) if launch.run_as is not None else None
        launch.full = list(launch.argv)
        launch.preexec = chain(join, rlimit_setter(launch.limits), drop, die_with_parent())
        return
    launch.status = os.pipe()
    write_fd = launch.status[1]
    if launch.mode == "bwrap":
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise SandboxError("bwrap disappeared from PATH")
        setpriv = shutil.which("setpriv", path=TOOL_PATH)
        uid, gid = launch.run_as or (0, 0)
        launch.full = bwrap_argv(bwrap, launch.workdir, launch.as_root, write_fd, setpriv, uid, gid, launch.extra_ro)
        launch.full += launch.argv
        launch.preexec = chain(join, rlimit_setter(launch.limits), die_with_parent())
        return
    launch.full = namespaces.unshare_argv(
        user_ns=launch.mode == "userns",
        setup_python=launch.setup_python,
        workdir=launch.workdir,
        argv=launch.argv,
        rlimits=rlimit_values(launch.limits),
        status_fd=write_fd,
        tmp_mb=launch.limits.memory_mb,
        extra_ro=launch.extra_ro,
        run_as=launch.run_as,
    )
    # rlimits are applied inside, right before the attempt: the setup step (PID 1) must not be
    # starved by a 64 MB address-space limit meant for attempt code.
    launch.preexec = chain(join, die_with_parent())


def start(launch: Launch, env: dict[str, str], stdin_pipe: bool, fresh_uid: int | None) -> AttemptTree:
    """Popen the planned command; return its AttemptTree once the sandbox reports it is set up."""
    pass_fds = (launch.status[1],) if launch.status else ()
    try:
        popen = subprocess.Popen(
            launch.full,
            cwd=launch.workdir,
            env=env,
            stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=launch.preexec,
            start_new_session=True,
            pass_fds=pass_fds,
            close_fds=True,
        )
    except OSError as error:
        if launch.status:
            os.close(launch.status[0])
        raise SandboxError(f"could not start {launch.argv[0]}: {error}") from error
    finally:
        for fd in pass_fds:
            os.close(fd)
    tree = AttemptTree(popen, fresh_uid, namespace=launch.mode != "bare", cgroup=launch.group)
    if launch.status:
        why = _await_setup(launch.mode, launch.status[0])
        if why is not None:
            _abandon(tree, f"{launch.mode} sandbox failed to set up: {why}")
    return tree


def _await_setup(mode: Mode, status_read: int) -> str | None:
    """None once the sandbox reports it is set up; otherwise what it said (or '' for nothing)."""
    ready, _, _ = select.select([status_read], [], [], SETUP_TIMEOUT_S)
    if not ready:
        os.close(status_read)
        return f"no report within {SETUP_TIMEOUT_S:g} s"
    if mode != "bwrap":
        return namespaces.read_status(status_read)
    # bwrap reports `child-pid` once set up. The pipe is drained to EOF afterwards: bwrap writes the
    # exit status there too, and a closed read end would kill it with SIGPIPE.
    status = os.fdopen(status_read, "rb")
    first = status.readline()
    CappedReader(status, 4096)
    try:
        return None if "child-pid" in json.loads(first or b"{}") else ""
    except ValueError:
        return ""


def _abandon(tree: AttemptTree, what: str) -> None:
    """Kill a launch whose sandbox did not come up and raise, with its stderr as the reason."""
    err = b""
    tree.kill()
    with contextlib.suppress(subprocess.TimeoutExpired, ValueError, OSError):
        _out, err = tree.popen.communicate(timeout=5)
    tree.close()
    detail = err.decode(errors="replace").strip()[-300:]
    raise SandboxError(f"{what} {detail}".strip(), hint="run `rsi doctor`")
