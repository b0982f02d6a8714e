"""The namespace modes of the local backend, for machines without bubblewrap: util-linux `unshare`.

* **namespaces** (rsi is root): `unshare --mount --pid --net --ipc --uts --fork --kill-child`
  starts ns_init.py as root inside fresh namespaces; it builds a bwrap-like minimal root and runs
  the attempt through `setpriv` as the fresh per-run uid (see ns_init.py for the layout).
* **userns** (no root needed): the same, inside a new user namespace as well (`--user
  --map-root-user`), where the kernel allows unprivileged ones. The attempt keeps the caller's uid
  on the host (namespace root without any capability inside). When rsi IS root and picks this
  mode, it first drops to the fresh per-run uid, so the namespace belongs to that uid.

Both are probed once per machine by a real trial run (`local.probe_mode`). Killing the `unshare`
process kills the namespace's init (--kill-child), and with it every process inside.
"""

from __future__ import annotations

import marshal
import os
import shutil
from functools import lru_cache
from pathlib import Path

from rsi.errors import SandboxError
from rsi.sandbox._bwrap import setpriv_argv
from rsi.sandbox._layout import TOOL_PATH, system_links_and_dirs

UNSHARE_FLAGS = ("--mount", "--pid", "--net", "--ipc", "--uts", "--fork", "--kill-child", "--propagation", "private")


@lru_cache(maxsize=1)
def init_source() -> str:
    return (Path(__file__).parent / "ns_init.py").read_text(encoding="utf-8")


def tools() -> tuple[str | None, str | None]:
    """(unshare, setpriv) paths, None where missing."""
    return shutil.which("unshare", path=TOOL_PATH), shutil.which("setpriv", path=TOOL_PATH)


def unshare_argv(
    *,
    user_ns: bool,
    setup_python: str,
    workdir: Path,
    argv: list[str],
    rlimits: dict[str, tuple[int, int]],
    status_fd: int,
    tmp_mb: int,
    extra_ro: tuple[str, ...] = (),
    run_as: tuple[int, int] | None = None,
) -> list[str]:
    """The full command line. `run_as`: (uid, gid) the attempt drops to (root mode), or, in the
    user-namespace mode started by root, the uid that owns the namespace."""
    unshare, setpriv = tools()
    if unshare is None or setpriv is None:
        raise SandboxError("unshare and setpriv (util-linux) are needed for the namespace sandbox")
    links, dirs = system_links_and_dirs()
    inner_drop = setpriv_argv(setpriv, None, None) if user_ns else setpriv_argv(setpriv, *(run_as or (None, None)))
    config = {
        "ro": [*dirs, *extra_ro],
        "links": links,
        "workdir": str(workdir),
        "tmp_mb": tmp_mb,
        "rlimits": rlimits,
        "status_fd": status_fd,
    }
    outer: list[str] = []
    if user_ns and run_as is not None:  # root: the namespace is made by (and belongs to) the per-run uid
        # --pdeathsig after the uid change (which clears the one set before exec): dies with rsi.
        outer = [setpriv, f"--reuid={run_as[0]}", f"--regid={run_as[1]}", "--clear-groups", "--pdeathsig=KILL", "--"]
    flags = [*UNSHARE_FLAGS, *(("--user", "--map-root-user") if user_ns else ())]
    # marshal version 2 is readable by every Python 3 the setup step may run under.
    encoded = marshal.dumps(config, 2).hex()
    # The attempt's command follows as separate arguments (one argument may hold at most 128 KiB).
    return [*outer, unshare, *flags, "--", setup_python, "-I", "-S", "-c", init_source(), encoded, "--", *inner_drop, *argv]


def read_status(status_read: int) -> str | None:
    """None once ns_init reports the root is built; otherwise why the setup failed (or '' on EOF)."""
    with os.fdopen(status_read, "rb") as status:
        line = status.readline(8192).decode(errors="replace").strip()
    if line == "ok":
        return None
    return line.removeprefix("error ").strip()
