"""The bubblewrap mode of the local backend: the bwrap command line, and the once-per-machine probe."""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

from rsi.sandbox._layout import SAFE_PATH, TOOL_PATH, parents_of, system_links_and_dirs
from rsi.sandbox._process import SANDBOX_GID, SANDBOX_UID


def setpriv_argv(setpriv: str, uid: int | None, gid: int | None) -> list[str]:
    """setpriv: to uid/gid (when given) with no supplementary groups, no capabilities, no_new_privs."""
    argv = [setpriv]
    if uid is not None and gid is not None:
        argv += [f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]
    return argv + ["--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--"]


def bwrap_argv(
    bwrap: str,
    workdir: Path,
    as_root: bool,
    status_fd: int,
    setpriv: str | None,
    uid: int = SANDBOX_UID,
    gid: int = SANDBOX_GID,
    extra_ro: tuple[str, ...] = (),
) -> list[str]:
    argv = [bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net", "--unshare-ipc"]
    argv += ["--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox"]
    if not as_root:
        argv += ["--unshare-user", "--cap-drop", "ALL"]
    links, dirs = system_links_and_dirs()
    for path in dirs:
        argv += ["--ro-bind", path, path]
    for path, target in links.items():
        argv += ["--symlink", target, path]
    argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp"]
    # bwrap would create missing parents as root with mode 0700, which the sandbox user could not
    # traverse (absolute paths to its own working directory, or to the project's Python, would fail).
    made: set[str] = set()
    for target in (*extra_ro, str(workdir)):
        for parent in parents_of(target):
            if parent not in made:
                made.add(parent)
                argv += ["--perms", "0755", "--dir", parent]
    for path in extra_ro:
        argv += ["--ro-bind", path, path]
    argv += ["--bind", str(workdir), str(workdir), "--chdir", str(workdir)]
    argv += ["--json-status-fd", str(status_fd), "--"]
    if as_root:
        assert setpriv is not None
        argv += setpriv_argv(setpriv, uid, gid)
    return argv


@lru_cache(maxsize=1)
def probe_bwrap() -> tuple[bool, str]:
    """Whether bwrap (plus setpriv when root) really works here: try `/bin/true` in the full setup."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False, "bubblewrap (bwrap) is not installed"
    as_root = os.geteuid() == 0
    setpriv = shutil.which("setpriv", path=TOOL_PATH)
    if as_root and setpriv is None:
        return False, "setpriv (util-linux) is missing: cannot drop to an unprivileged user"
    import tempfile

    with tempfile.TemporaryDirectory(prefix="rsi-bwrap-probe-") as tmp:
        os.chmod(tmp, 0o777)
        read_fd, write_fd = os.pipe()
        try:
            argv = bwrap_argv(bwrap, Path(tmp), as_root, write_fd, setpriv) + ["/bin/true"]
            try:
                done = subprocess.run(argv, capture_output=True, timeout=20, pass_fds=(write_fd,), env={"PATH": SAFE_PATH})
            except (OSError, subprocess.TimeoutExpired) as error:
                return False, f"bwrap failed to run: {error}"
        finally:
            os.close(write_fd)
            os.close(read_fd)
    if done.returncode != 0:
        return False, f"bwrap does not work here: {done.stderr.decode(errors='replace').strip()[:300]}"
    return True, "bwrap works"
