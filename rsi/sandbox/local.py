"""The `local` sandbox backend: a subprocess, inside bubblewrap when it works here, always under rlimits.

Two modes, chosen once per machine by actually trying bubblewrap (`probe_bwrap`):

* **bwrap** — `bwrap` starts as the calling user and builds a fresh mount namespace holding only the
  system directories (/usr, /etc and the merged-/usr links) read-only, a private /tmp, a new /proc
  and /dev, and the working directory bound read-write at its own path. Everything else — /work,
  /root, /home, the task's hidden tests/ and solution/, other attempts — simply does not exist
  inside. It unshares the network (no interface but lo), PIDs, IPC and UTS. When the caller is
  root, `setpriv` drops to uid/gid 65534 (nobody) with an empty bounding set and no_new_privs
  right before exec; a non-root caller is already unprivileged and bwrap drops every capability.
  Killing the outer bwrap kills the namespace's init, and with it everything inside.
* **bare** — no bubblewrap: the same rlimits, a scrubbed environment, a new session, and (as root)
  a drop to nobody; but the file system and the network are the host's. `Isolation` says so, and
  `rsi doctor` too.

Either way the environment is rebuilt from a whitelist (PATH, LANG, HOME=workdir, TMPDIR) plus what
the caller passes explicitly, and a wall-clock timer kills the whole tree. Code run here should use
paths relative to its working directory and `sandbox.python` as its interpreter: the project's
own Python lives under /root, which the sandbox user can neither see nor execute.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import secrets
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import IO, Literal

from rsi.errors import SandboxError
from rsi.sandbox._process import (
    DEFAULT_OUTPUT_LIMIT_BYTES,
    SANDBOX_GID,
    SANDBOX_UID,
    CappedReader,
    feed_stdin,
    give_to_sandbox_user,
    reachable_by_others,
)
from rsi.sandbox._reap import AttemptTree
from rsi.sandbox.base import ExecResult, Isolation, Limits

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
SYSTEM_PYTHON_CANDIDATES = ("/usr/bin/python3", "/usr/local/bin/python3")
MERGED_USR_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
# Fresh per-run uids: far above normal accounts, rootless-podman subuid ranges (100000-) and 65534.
PER_RUN_UID_BASE = 2_000_000_000
PER_RUN_UID_SPAN = 100_000_000


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


CPU_GRACE_S = 2


def _rlimit_setter(limits: Limits) -> Callable[[], None]:
    """preexec_fn: apply the rlimits in the child between fork and exec (inherited by bwrap's child)."""
    mb = 1024 * 1024
    pairs = [
        (resource.RLIMIT_CPU, limits.cpu_s),
        (resource.RLIMIT_AS, limits.memory_mb * mb),
        (resource.RLIMIT_FSIZE, limits.file_size_mb * mb),
        (resource.RLIMIT_NOFILE, limits.open_files),
        (resource.RLIMIT_NPROC, limits.processes),
        (resource.RLIMIT_CORE, 0),
    ]

    def apply() -> None:
        for which, value in pairs:
            _soft, hard = resource.getrlimit(which)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            # CPU: the soft limit delivers SIGXCPU (a recognisable "out of CPU time"), the hard limit
            # two seconds later SIGKILLs a process that ignores it. soft == hard would SIGKILL at once.
            ceiling = value + CPU_GRACE_S if which == resource.RLIMIT_CPU and hard == resource.RLIM_INFINITY else value
            resource.setrlimit(which, (value, ceiling))

    return apply


def _die_with_parent_setter() -> Callable[[], None]:
    """preexec step: SIGKILL the child when the thread that started it dies (as bwrap's
    --die-with-parent does), so a SIGKILLed orchestrator leaves no bare-mode attempt running.
    Looked up before fork: nothing but the prctl call itself happens in the child."""
    import ctypes
    import ctypes.util

    try:
        prctl = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return lambda: None
    pr_set_pdeathsig, sigkill = 1, 9

    def apply() -> None:
        prctl(pr_set_pdeathsig, sigkill, 0, 0, 0)

    return apply


def _bare_user_drop(uid: int, gid: int, rlimits: Callable[[], None]) -> Callable[[], None]:
    die_with_parent = _die_with_parent_setter()

    def apply() -> None:
        rlimits()
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
        die_with_parent()  # after the uid change, which clears it

    return apply


def _bare_preexec(rlimits: Callable[[], None]) -> Callable[[], None]:
    die_with_parent = _die_with_parent_setter()

    def apply() -> None:
        rlimits()
        die_with_parent()

    return apply


def _bwrap_argv(
    bwrap: str, workdir: Path, as_root: bool, status_fd: int, setpriv: str | None, uid: int = SANDBOX_UID, gid: int = SANDBOX_GID
) -> list[str]:
    root = Path("/")
    argv = [bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net", "--unshare-ipc"]
    argv += ["--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox"]
    if not as_root:
        argv += ["--unshare-user", "--cap-drop", "ALL"]
    argv += ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for name in MERGED_USR_LINKS:
        path = root / name
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), str(path)]
    argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp"]
    # bwrap would create the workdir's missing parents as root with mode 0700, which the sandbox
    # user could not traverse (absolute paths to its own working directory would fail).
    for parent in reversed(workdir.parents[:-1]):
        argv += ["--perms", "0755", "--dir", str(parent)]
    argv += ["--bind", str(workdir), str(workdir), "--chdir", str(workdir)]
    argv += ["--json-status-fd", str(status_fd), "--"]
    if as_root:
        assert setpriv is not None
        argv += [setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]
        argv += ["--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--"]
    return argv


@lru_cache(maxsize=1)
def probe_bwrap() -> tuple[bool, str]:
    """Whether bwrap (plus setpriv when root) really works here: try `/bin/true` in the full setup."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False, "bubblewrap (bwrap) is not installed"
    as_root = os.geteuid() == 0
    setpriv = shutil.which("setpriv", path=SAFE_PATH + ":/usr/sbin:/sbin")
    if as_root and setpriv is None:
        return False, "setpriv (util-linux) is missing: cannot drop to an unprivileged user"
    import tempfile

    with tempfile.TemporaryDirectory(prefix="rsi-bwrap-probe-") as tmp:
        os.chmod(tmp, 0o777)
        read_fd, write_fd = os.pipe()
        try:
            argv = _bwrap_argv(bwrap, Path(tmp), as_root, write_fd, setpriv) + ["/bin/true"]
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


class LocalProcess:
    """A long-lived sandboxed process: stdin/stdout pipes, stderr drained into a capped buffer."""

    def __init__(self, tree: AttemptTree, wall_s: float) -> None:
        popen = tree.popen
        self._popen = popen
        self._tree = tree
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
        self.stdin: IO[bytes] = popen.stdin
        self.stdout: IO[bytes] = popen.stdout
        self._stderr = CappedReader(popen.stderr)
        self._ended = False
        self._closed = False
        self.timed_out = False
        self._lock = threading.Lock()
        self._timer = threading.Timer(wall_s, self._on_timeout)
        self._timer.daemon = True
        self._timer.start()

    @property
    def pid(self) -> int:
        return self._popen.pid

    def _on_timeout(self) -> None:
        if not self._tree.exited(0):
            self.timed_out = True
        # Kill only: the owner may be reading stdout right now (select + os.read on its descriptor).
        # Closing the pipe under it would fail that read with EBADF, or worse, let the descriptor
        # number be reused by another thread's file. The kill gives the reader end-of-stream instead.
        self._end()

    def poll(self) -> int | None:
        return self._tree.poll()

    def wait(self, timeout_s: float | None = None) -> int | None:
        return self._tree.reap(timeout_s)

    def _end(self) -> None:
        """Kill the whole tree and reap it (once)."""
        with self._lock:
            if self._ended:
                return
            self._ended = True
        self._timer.cancel()
        self._tree.kill()
        self._tree.reap(10)
        self._tree.close()

    def kill(self) -> None:
        """Kill the whole tree, reap it and close our ends of its pipes. Idempotent. The owner of
        the process calls it (the wall-clock timer only kills, see `_on_timeout`)."""
        self._end()
        with self._lock:
            if self._closed:
                return
            self._closed = True
        for stream in (self.stdin, self.stdout):
            with contextlib.suppress(OSError, ValueError):
                stream.close()

    def stderr_text(self) -> str:
        """What the process wrote to stderr so far (capped)."""
        return self._stderr.text()


class LocalSandbox:
    """Runs commands in subprocesses: inside bwrap when usable, otherwise with rlimits only."""

    name = "local"

    def __init__(
        self,
        *,
        use_bwrap: bool | None = None,
        drop_privileges: bool = True,
        output_limit_bytes: int = DEFAULT_OUTPUT_LIMIT_BYTES,
        uid: int | Literal["per-run"] = "per-run",
    ) -> None:
        """`use_bwrap=None` uses it when the probe succeeds; True fails loudly when it does not.

        `uid` (only when rsi runs as root): "per-run" gives every run/start its own unused uid
        (and gid) above 2,000,000,000; an int (e.g. 65534, nobody) uses that one for all. A fresh
        uid keeps sandboxes apart where namespaces do not: RLIMIT_NPROC counts processes per uid
        host-wide, so with one shared uid a fork bomb in one attempt starves every concurrent
        sandbox of processes (even the exec after the uid switch fails), and in bare mode processes
        of one attempt could signal or write into another's.
        """
        works, why = probe_bwrap()
        if use_bwrap and not works:
            raise SandboxError(f"bubblewrap requested but unusable: {why}", hint="run `rsi doctor`")
        self.use_bwrap = works if use_bwrap is None else use_bwrap
        self.bwrap_note = why
        self.as_root = os.geteuid() == 0
        self.drop_privileges = drop_privileges and self.as_root
        self.uid = uid
        self.output_limit_bytes = output_limit_bytes
        python = system_python()
        # Without a drop to nobody the current interpreter stays usable as a fallback.
        self.python: str = python or (shutil.which("python3") or "python3")

    def workdir_inside(self, workdir: Path) -> str:
        """Where the working directory appears inside the sandbox: bound at its own path."""
        return str(Path(workdir).resolve())

    def _uid_words(self) -> str:
        return "a fresh uid per run" if self.uid == "per-run" else f"uid {self.uid}"

    def _pick_ids(self) -> tuple[int, int]:
        """The (uid, gid) the next sandboxed process runs as (when rsi is root)."""
        if self.uid == "per-run":
            fresh = PER_RUN_UID_BASE + secrets.randbelow(PER_RUN_UID_SPAN)
            return fresh, fresh
        return self.uid, SANDBOX_GID if self.uid == SANDBOX_UID else self.uid

    # -- what is isolated -------------------------------------------------------------------------
    def isolation(self) -> Isolation:
        if self.use_bwrap:
            who = f"{self._uid_words()} via setpriv" if self.as_root else f"uid {os.geteuid()} (not root), no capabilities"
            return Isolation(
                backend="local-bwrap",
                network_isolated=True,
                filesystem_readonly=True,
                pid_namespace=True,
                unprivileged_user=True,
                notes=f"bubblewrap: only /usr,/etc read-only and the workdir read-write are visible; "
                f"private /tmp; {who}; rlimits",
            )
        unprivileged = self.drop_privileges or not self.as_root
        why = self.bwrap_note if self.bwrap_note != "bwrap works" else "bubblewrap disabled by configuration"
        who = f"; runs as {self._uid_words()}" if self.drop_privileges else ""
        if not self.as_root:
            who = "; runs as the calling user (it can signal the caller's own processes)"
        return Isolation(
            backend="local-bare",
            network_isolated=False,
            filesystem_readonly=False,
            pid_namespace=False,
            unprivileged_user=unprivileged,
            notes=f"no bubblewrap ({why}): rlimits, scrubbed environment and process-tree kill "
            f"only; the host file system and network are reachable{who}",
        )

    # -- launching --------------------------------------------------------------------------------
    def _launch(
        self, argv: list[str], workdir: Path, limits: Limits, env: dict[str, str] | None, stdin_pipe: bool
    ) -> AttemptTree:
        if not argv:
            raise SandboxError("empty command")
        workdir = Path(workdir).resolve()
        if not workdir.is_dir():
            raise SandboxError(f"sandbox working directory does not exist: {workdir}")
        if any(workdir.is_relative_to(system) for system in ("/usr", "/etc", "/proc", "/dev")):
            raise SandboxError(f"a sandbox working directory cannot live under a system folder: {workdir}")
        rlimits = _rlimit_setter(limits)
        child_env = sandbox_env(str(workdir), env)
        pass_fds: tuple[int, ...] = ()
        status_read: int | None = None
        try:
            uid, gid = self._pick_ids()
            if self.use_bwrap:
                if self.as_root:
                    give_to_sandbox_user(workdir, uid, gid)
                bwrap = shutil.which("bwrap")
                setpriv = shutil.which("setpriv", path=SAFE_PATH + ":/usr/sbin:/sbin")
                if bwrap is None:
                    raise SandboxError("bwrap disappeared from PATH")
                status_read, status_write = os.pipe()
                pass_fds = (status_write,)
                full = _bwrap_argv(bwrap, workdir, self.as_root, status_write, setpriv, uid, gid) + list(argv)
                preexec = rlimits
            else:
                full = list(argv)
                preexec = _bare_preexec(rlimits)
                if self.drop_privileges:
                    if not reachable_by_others(workdir):
                        raise SandboxError(
                            f"{workdir} is not reachable by the sandbox user (a parent lacks o+x)",
                            hint="put attempt working directories under a world-traversable folder",
                        )
                    give_to_sandbox_user(workdir, uid, gid)
                    preexec = _bare_user_drop(uid, gid, rlimits)
            popen = subprocess.Popen(
                full,
                cwd=workdir,
                env=child_env,
                stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                preexec_fn=preexec,
                start_new_session=True,
                pass_fds=pass_fds,
                close_fds=True,
            )
        except OSError as error:
            if status_read is not None:
                os.close(status_read)
            raise SandboxError(f"could not start {argv[0]}: {error}") from error
        finally:
            for fd in pass_fds:
                os.close(fd)
        # Membership by uid is exact only for a fresh per-run uid that the attempt really runs as.
        fresh_uid = self.as_root and self.uid == "per-run" and (self.use_bwrap or self.drop_privileges)
        tree = AttemptTree(popen, uid if fresh_uid else None, namespace=self.use_bwrap)
        if status_read is not None:
            self._await_bwrap_start(tree, status_read)
        return tree

    @staticmethod
    def _await_bwrap_start(tree: AttemptTree, status_read: int) -> None:
        """bwrap reports `child-pid` once the sandbox is set up; no report means setup failed.

        The pipe is drained to EOF afterwards: bwrap writes the exit status there too, and a closed
        read end would kill it with SIGPIPE.
        """
        status = os.fdopen(status_read, "rb")
        first = status.readline()
        CappedReader(status, 4096)
        try:
            started = "child-pid" in json.loads(first or b"{}")
        except ValueError:
            started = False
        if not started:
            popen = tree.popen
            try:
                _out, err = popen.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                tree.kill()
                err = b""
            tree.close()
            raise SandboxError(f"bwrap failed to set up the sandbox: {err.decode(errors='replace').strip()[:300]}")

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
        # Always sweep (before reaping, so the root's pid stays reserved meanwhile): a finished main
        # process may have left children behind. The pipe scan (shared-uid bare mode only) is
        # needed only if someone still holds the output pipes open.
        drained = self.use_bwrap or (out.join(0.05) and err.join(0.01))
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
        self, argv: list[str], workdir: Path, limits: Limits, env: dict[str, str] | None = None
    ) -> LocalProcess:
        """Start a long-lived process. It is bound to the calling THREAD (bwrap --die-with-parent,
        PR_SET_PDEATHSIG): if that thread exits, the process is killed. Start it from a thread
        that outlives it (the attempt's own thread), never from a short-lived helper thread."""
        tree = self._launch(argv, workdir, limits, env, stdin_pipe=True)
        streams = (tree.popen.stdin, tree.popen.stdout, tree.popen.stderr)
        tree.pipe_inodes = {os.fstat(s.fileno()).st_ino for s in streams if s is not None}
        return LocalProcess(tree, limits.wall_s)
