"""The `local` sandbox backend: a subprocess in the strongest isolation this machine allows.

Four modes, the first that works here is chosen (each probed once per machine by a real trial run,
`probe_mode`; `rsi doctor` says which one and why the stronger ones are out):

| mode | needs | isolates |
|---|---|---|
| `bwrap` | bubblewrap | minimal root (/usr, /etc read-only; workdir read-write), net, PIDs, IPC, UTS |
| `namespaces` | root + util-linux `unshare` | the same, built by ns_init.py (namespaces.py) |
| `userns` | unprivileged user namespaces | the same, inside a user namespace |
| `bare` | nothing | rlimits, scrubbed environment, the fresh uid only: host files and network reachable |

Only `bare` is weak (`Isolation.weak`). In every mode: the environment is rebuilt from a whitelist
plus what the caller passes; rlimits cap each process; a memory cgroup caps the whole attempt where
the machine lets root create one (_cgroup.py); as root, each launch gets a fresh uid above
2,000,000,000; and killing an attempt kills exactly its processes, all of them (_reap.py).

Code run here should use paths relative to its working directory and `sandbox.python` (stdlib) or
`sandbox.python_with("pytest")` as its interpreter.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import threading
import time
from functools import cache
from pathlib import Path
from typing import Literal

from rsi.errors import SandboxError
from rsi.sandbox import _launch
from rsi.sandbox._bwrap import probe_bwrap
from rsi.sandbox._cgroup import CgroupSupport, MemoryGroup, cgroup_support
from rsi.sandbox._launch import Mode
from rsi.sandbox._layout import SAFE_PATH, SYSTEM_PYTHON_CANDIDATES, project_python, project_python_dirs
from rsi.sandbox._local_process import LocalProcess
from rsi.sandbox._process import (
    DEFAULT_OUTPUT_LIMIT_BYTES,
    SANDBOX_GID,
    SANDBOX_UID,
    CappedReader,
    feed_stdin,
    reachable_by_others,
)
from rsi.sandbox._pythons import PythonFinder
from rsi.sandbox._reap import AttemptTree
from rsi.sandbox.base import ExecResult, Isolation, Limits

__all__ = ["LocalProcess", "LocalSandbox", "MODES", "choose_mode", "probe_bwrap", "probe_mode", "system_python"]

MODES: tuple[Mode, ...] = ("bwrap", "namespaces", "userns", "bare")
# Fresh per-run uids: far above normal accounts, rootless-podman subuid ranges (100000-) and 65534.
PER_RUN_UID_BASE = 2_000_000_000
PER_RUN_UID_SPAN = 100_000_000
# Never handed out twice by this process: files a finished attempt left (owned by its uid) must not
# become writable by a later attempt.
_UIDS_IN_USE: set[int] = set()
_UIDS_LOCK = threading.Lock()
PYTHON_HINT = (
    "install the module for /usr/bin/python3 (e.g. apt-get install python3-pytest), or use a mode that binds "
    "the project's Python read-only (bwrap; namespaces as root; userns as a normal user)"
)


def system_python() -> str | None:
    """A Python the unprivileged sandbox user can execute (not the project's venv under /root)."""
    for candidate in SYSTEM_PYTHON_CANDIDATES:
        path = Path(candidate)
        if path.exists() and os.access(path, os.X_OK) and reachable_by_others(path.parent):
            return candidate
    return None


def sandbox_env(workdir: str, extra: dict[str, str] | None) -> dict[str, str]:
    """The child's whole environment: a whitelist, then the caller's explicit additions.

    Nothing is inherited from this process, so API keys, tokens, DB URLs and PYTHON* variables of the
    orchestrator never reach attempt code.
    """
    env = {
        "PATH": SAFE_PATH,
        "LANG": "C.UTF-8",
        "HOME": workdir,
        "TMPDIR": "/tmp",
        "USER": "sandbox",  # per-run uids have no passwd entry; getpass.getuser() reads these
        "LOGNAME": "sandbox",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    env.update(extra or {})
    return env


def _static_reason(mode: Mode) -> str:
    """Why `mode` cannot work here without trying it ('' when it might)."""
    from rsi.sandbox import namespaces

    if mode == "bare":
        return ""
    unshare, setpriv = namespaces.tools()
    if mode == "namespaces" and os.geteuid() != 0:
        return f"needs root (rsi runs as uid {os.geteuid()})"
    if unshare is None:
        return "util-linux `unshare` is missing"
    if setpriv is None:
        return "util-linux `setpriv` is missing"
    if mode == "userns" and system_python() is None and os.geteuid() == 0:
        return "no Python the per-run uid can execute (/usr/bin/python3)"
    return ""


@cache
def probe_mode(mode: Mode) -> tuple[bool, str]:
    """Whether `mode` really works on this machine: a trial run of Python in the full setup."""
    if mode == "bwrap":
        return probe_bwrap()
    why = _static_reason(mode)
    if why:
        return False, why
    folder = Path(tempfile.mkdtemp(prefix=f"rsi-{mode}-probe-"))
    try:
        folder.chmod(0o711)
        work = folder / "work"
        work.mkdir()
        sandbox = LocalSandbox(mode=mode, _probed=True)
        code = "import os, socket; socket.socket(); print(os.getuid())"
        result = sandbox.run([sandbox.python, "-I", "-c", code], work, Limits(wall_s=30))
    except SandboxError as error:
        return False, error.message[:300]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if result.exit_code != 0:
        return False, f"trial run exited {result.exit_code}: {(result.stderr or result.stdout).strip()[-300:]}"
    return True, f"{mode} works"


def choose_mode(requested: Mode | Literal["auto"] = "auto", use_bwrap: bool | None = None) -> tuple[Mode, list[str]]:
    """The mode to use, and one line per stronger mode passed over (why it is unavailable).

    An explicit mode (or use_bwrap=True) that does not work is an error, never a silent downgrade.
    """
    if use_bwrap and requested == "auto":
        requested = "bwrap"
    if requested != "auto":
        works, why = probe_mode(requested)
        if not works:
            raise SandboxError(f"sandbox mode {requested!r} requested but unusable: {why}", hint="run `rsi doctor`")
        return requested, []
    skipped = []
    for mode in MODES:
        if mode == "bwrap" and use_bwrap is False:
            skipped.append("bwrap: disabled by configuration")
            continue
        works, why = probe_mode(mode)
        if works:
            return mode, skipped
        skipped.append(f"{mode}: {why}")
    raise AssertionError("the bare mode always works")


class LocalSandbox:
    """Runs commands in subprocesses, in the strongest mode this machine allows (or the one asked)."""

    name = "local"

    def __init__(
        self,
        *,
        mode: Mode | Literal["auto"] = "auto",
        use_bwrap: bool | None = None,
        drop_privileges: bool = True,
        output_limit_bytes: int = DEFAULT_OUTPUT_LIMIT_BYTES,
        uid: int | Literal["per-run"] = "per-run",
        memory_cgroup: bool = True,
        _probed: bool = False,
    ) -> None:
        """`mode="auto"` picks the strongest working mode (`use_bwrap=False` skips bwrap; True
        requires it); a named mode is required and fails loudly when it does not work.

        `uid` (only when rsi runs as root): "per-run" gives every run/start its own unused uid
        (and gid) above 2,000,000,000; an int (e.g. 65534, nobody) uses that one for all. A fresh
        uid keeps sandboxes apart even in the bare mode, and makes "every process of the attempt"
        an exact set (its real uid), so killing an attempt can never hit anyone else's process.
        `memory_cgroup=False` keeps only per-process memory limits.
        """
        if _probed:
            assert mode != "auto"
            self.mode: Mode = mode
            self.skipped: list[str] = []
        else:
            self.mode, self.skipped = choose_mode(mode, use_bwrap)
        self.as_root = os.geteuid() == 0
        self.drop_privileges = drop_privileges and self.as_root
        self.uid = uid
        self.output_limit_bytes = output_limit_bytes
        self.cgroups = cgroup_support() if memory_cgroup else CgroupSupport(None, None, "disabled by configuration")
        python = system_python()
        # Without a drop to another uid the current interpreter stays usable as a fallback.
        self.python: str = python or (shutil.which("python3") or "python3")
        self._setup_python = python or project_python()
        # The project's Python is bound read-only into the minimal root (pytest lives there); in
        # the user-namespace mode started by root the per-run uid could not read it anyway.
        offers_project = self.mode in ("bwrap", "namespaces") or (self.mode == "userns" and not self.as_root)
        self.extra_ro: tuple[str, ...] = tuple(project_python_dirs()) if offers_project else ()
        self._pythons = PythonFinder()

    @property
    def use_bwrap(self) -> bool:
        return self.mode == "bwrap"

    def workdir_inside(self, workdir: Path) -> str:
        """Where the working directory appears inside the sandbox: bound at its own path."""
        return str(Path(workdir).resolve())

    def _uid_words(self) -> str:
        return "a fresh uid per run" if self.uid == "per-run" else f"uid {self.uid}"

    def _pick_ids(self, verifier: bool = False) -> tuple[int, int]:
        """The (uid, gid) the next sandboxed process runs as (when rsi is root). A verifier
        process always gets a fresh one: never the uid attempt code runs as, even a fixed one."""
        if self.uid != "per-run" and not verifier:
            return self.uid, SANDBOX_GID if self.uid == SANDBOX_UID else self.uid
        with _UIDS_LOCK:
            while True:
                fresh = PER_RUN_UID_BASE + secrets.randbelow(PER_RUN_UID_SPAN)
                if fresh not in _UIDS_IN_USE:
                    _UIDS_IN_USE.add(fresh)
                    return fresh, fresh

    # -- what is isolated -------------------------------------------------------------------------
    def isolation(self) -> Isolation:
        from rsi.sandbox._isolation import describe

        return describe(self)

    # -- interpreters -----------------------------------------------------------------------------
    def python_with(self, *modules: str) -> str:
        """An interpreter inside this sandbox that imports `modules`: Debian's python3, else the
        project's own (bound read-only in the bwrap and namespace modes). Probed once, cached."""
        return self._pythons.find(self, [self.python, project_python()], modules, PYTHON_HINT)

    # -- launching --------------------------------------------------------------------------------
    def _launch(
        self,
        argv: list[str],
        workdir: Path,
        limits: Limits,
        env: dict[str, str] | None,
        stdin_pipe: bool,
        verifier: bool = False,
    ) -> AttemptTree:
        if not argv:
            raise SandboxError("empty command")
        workdir = Path(workdir).resolve()
        if not workdir.is_dir():
            raise SandboxError(f"sandbox working directory does not exist: {workdir}")
        if any(workdir.is_relative_to(system) for system in ("/usr", "/etc", "/proc", "/dev")):
            raise SandboxError(f"a sandbox working directory cannot live under a system folder: {workdir}")
        run_as = self._pick_ids(verifier) if self.drop_privileges else None
        # Membership by uid is exact only for a fresh per-run uid that the attempt really runs as.
        fresh_uid = run_as[0] if run_as is not None and (self.uid == "per-run" or verifier) else None
        group = None
        try:
            group = MemoryGroup(self.cgroups, limits.memory_mb) if self.cgroups.version else None
            launch = _launch.Launch(
                mode=self.mode, argv=list(argv), workdir=workdir, limits=limits, as_root=self.as_root,
                run_as=run_as, setup_python=self._setup_python, extra_ro=self.extra_ro, group=group,
                hand_over=not verifier,
            )
            _launch.plan(launch)
            tree = _launch.start(launch, sandbox_env(str(workdir), env), stdin_pipe, fresh_uid)
            tree.ids = run_as
            return tree
        except (SandboxError, OSError) as error:
            if group is not None:
                group.remove()
            if isinstance(error, SandboxError):
                raise
            raise SandboxError(f"could not start {argv[0]}: {error}") from error

    def run(
        self,
        argv: list[str],
        workdir: Path,
        limits: Limits,
        stdin: str | None = None,
        env: dict[str, str] | None = None,
    ) -> ExecResult:
        started = time.monotonic()
        tree = self._launch(argv, workdir, limits, env, stdin_pipe=stdin is not None)
        popen = tree.popen
        assert popen.stdout is not None and popen.stderr is not None
        tree.pipe_inodes = {os.fstat(popen.stdout.fileno()).st_ino, os.fstat(popen.stderr.fileno()).st_ino}
        out = CappedReader(popen.stdout, self.output_limit_bytes)
        err = CappedReader(popen.stderr, self.output_limit_bytes)
        feed_stdin(popen.stdin, stdin)
        timed_out = not tree.exited(limits.wall_s)
        # Always kill (before reaping, so the root's pid stays reserved meanwhile): a finished main
        # process may have left children behind. The pipe scan (shared-uid bare mode only) is
        # needed only if someone still holds the output pipes open.
        drained = self.mode != "bare" or (out.join(0.05) and err.join(0.01))
        tree.kill(sweep_pipes=not drained)
        tree.reap()
        tree.close()
        out.join(2)
        err.join(2)
        return ExecResult(
            exit_code=None if timed_out else popen.returncode,
            stdout=out.text(),
            stderr=err.text(),
            timed_out=timed_out,
            wall_s=time.monotonic() - started,
            isolation=self.isolation(),
        )

    def start(
        self,
        argv: list[str],
        workdir: Path,
        limits: Limits,
        env: dict[str, str] | None = None,
        *,
        verifier: bool = False,
    ) -> LocalProcess:
        """Start a long-lived process. It is bound to the calling THREAD (die-with-parent,
        PR_SET_PDEATHSIG): if that thread exits, the process is killed. Start it from a thread
        that outlives it (the attempt's own thread), never from a short-lived helper thread.
        `verifier`: see `Sandbox.start` (a fresh uid of its own, the workdir's owner unchanged)."""
        tree = self._launch(argv, workdir, limits, env, stdin_pipe=True, verifier=verifier)
        streams = (tree.popen.stdin, tree.popen.stdout, tree.popen.stderr)
        tree.pipe_inodes = {os.fstat(s.fileno()).st_ino for s in streams if s is not None}
        return LocalProcess(tree, limits.wall_s)
