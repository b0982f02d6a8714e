"""The `docker` sandbox backend: one throw-away container per command, through any Docker-API engine.

Tested against podman's Docker-compatible service (`podman system service`); Docker itself speaks the
same API. Every container runs with no network (`network_mode="none"`: on podman's default bridge a
container could reach the host), a read-only root, a tmpfs /tmp, uid/gid 65534, all capabilities
dropped, no-new-privileges, memory = memory+swap limit, a pids limit, CPU quota and rlimit ulimits.
The working directory is bind-mounted read-write at /work, so commands should use relative paths.

Pipes: the container is created with stdin open and *attached before it starts* (one hijacked,
multiplexed HTTP stream: 8-byte frame headers tag stdout/stderr). Half-closing our end of the
socket delivers EOF to the process's stdin; podman 4.3 honours that. A demultiplexing thread turns
the stream into a real pipe for stdout, so a `SandboxProcess` from here reads exactly like a local
one. `docker exec` was not used: an exec'd process outlives a kill of its parent less predictably,
and a container per process makes kill() = kill the whole tree.

The docker SDK is imported lazily, inside the methods that need it.
"""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import socket
import struct
import threading
import time
from pathlib import Path
from typing import IO, Any

from rsi.errors import SandboxError
from rsi.sandbox._process import (
    DEFAULT_OUTPUT_LIMIT_BYTES,
    SANDBOX_GID,
    SANDBOX_UID,
    TRUNCATION_MARK,
    give_to_sandbox_user,
)
from rsi.sandbox._pythons import PythonFinder
from rsi.sandbox.base import ExecResult, Isolation, Limits

DEFAULT_IMAGE = "rsi-sandbox:latest"
CONTAINER_WORKDIR = "/work"
CONTAINER_PATH = "/usr/local/bin:/usr/bin:/bin"
LABEL = "rsi.sandbox"
NPROC_ULIMIT = 4096
DEADLINE_LABEL = "rsi.deadline"
# As in the local backend: SIGXCPU at the soft CPU limit, SIGKILL this much later.
CPU_GRACE_S = 2
SWEEP_EVERY_S = 60.0
ORPHAN_GRACE_S = 60
# Verifier containers (as root): a fresh uid each, far from 65534 and rootless subuid ranges.
VERIFIER_UID_BASE = 2_100_000_000
VERIFIER_UID_SPAN = 40_000_000


KNOWN_SOCKETS = ("/run/rsi-podman.sock", "/run/podman/podman.sock", "/var/run/docker.sock")


def default_base_url() -> str | None:
    """$RSI_DOCKER_HOST, then $DOCKER_HOST, then the first known engine socket that exists here
    (the one .ci/services/10-sandbox.sh starts, podman's, docker's); None lets the SDK decide."""
    explicit = os.environ.get("RSI_DOCKER_HOST") or os.environ.get("DOCKER_HOST")
    if explicit:
        return explicit
    return next((f"unix://{path}" for path in KNOWN_SOCKETS if Path(path).exists()), None)


class _Capped:
    """A byte buffer that keeps at most `limit` bytes and remembers whether it dropped any."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.truncated = False

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        if len(chunk) > room:
            self.truncated = True

    def text(self) -> str:
        out = self.data.decode("utf-8", errors="replace")
        return out + TRUNCATION_MARK if self.truncated else out


def _recv_exact(sock: socket.socket, size: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < size:
        chunk = sock.recv(size - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def demultiplex(sock: socket.socket, on_stdout: Any, on_stderr: Any) -> None:
    """Read Docker's multiplexed attach stream until EOF, handing payloads to the two callbacks."""
    while True:
        header = _recv_exact(sock, 8)
        if header is None:
            return
        kind, size = header[0], struct.unpack(">I", header[4:])[0]
        payload = _recv_exact(sock, size) if size else b""
        if payload is None:
            return
        (on_stderr if kind == 2 else on_stdout)(payload)


class _SocketWriter(io.RawIOBase):
    """The write half of the attach socket as a file; close() half-closes, which is stdin EOF."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        try:
            self._sock.sendall(bytes(data))
        except OSError as error:
            raise BrokenPipeError(str(error)) from error
        return len(data)

    def close(self) -> None:
        if not self.closed:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_WR)
        super().close()


class DockerProcess:
    """A long-lived process in its own container, with stdin/stdout as files; kill() removes it."""

    def __init__(
        self,
        container: Any,
        sock: socket.socket,
        wall_s: float,
        output_limit_bytes: int,
        ids: tuple[int, int] | None = None,
    ) -> None:
        self.ids = ids  # the host (uid, gid) the container runs as; None: the caller's own
        self._container = container
        self._sock = sock
        self._exit_code: int | None = None
        self._killed = False
        self._lock = threading.Lock()
        self.timed_out = False
        self.stdin: IO[bytes] = io.BufferedWriter(_SocketWriter(sock))
        read_fd, write_fd = os.pipe()
        self.stdout: IO[bytes] = os.fdopen(read_fd, "rb")
        self._stdout_w = os.fdopen(write_fd, "wb", buffering=0)
        self._stderr = _Capped(output_limit_bytes)
        self._pump = threading.Thread(target=self._demux, daemon=True)
        self._pump.start()
        self._timer = threading.Timer(wall_s, self._on_timeout)
        self._timer.daemon = True
        self._timer.start()

    @property
    def container_id(self) -> str:
        return str(self._container.id)

    def _demux(self) -> None:
        def to_stdout(chunk: bytes) -> None:
            with contextlib.suppress(OSError, ValueError):
                self._stdout_w.write(chunk)

        try:
            demultiplex(self._sock, to_stdout, self._stderr.add)
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError, ValueError):
                self._stdout_w.close()

    def _on_timeout(self) -> None:
        # Decide from what we know, not from a fresh engine query: under load `reload()` can fail,
        # and poll() then reports a kill (-9), which made a wall-clock kill look like a crash.
        if self._exit_code is None:
            self.timed_out = True
        self.kill()

    def poll(self) -> int | None:
        if self._exit_code is not None:
            return self._exit_code
        try:
            self._container.reload()
        except Exception:
            return self._exit_code if self._killed else -9
        state = self._container.attrs.get("State", {})
        if state.get("Status") in ("exited", "dead", "stopped") or state.get("Running") is False and state.get(
            "FinishedAt", ""
        ) not in ("", "0001-01-01T00:00:00Z"):
            self._exit_code = int(state.get("ExitCode", -1))
        return self._exit_code

    def wait(self, timeout_s: float | None = None) -> int | None:
        if self._exit_code is not None:
            return self._exit_code
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            code = self.poll()
            if code is not None:
                return code
            if deadline is not None and time.monotonic() >= deadline:
                return None
            time.sleep(0.05)

    def kill(self) -> None:
        """Kill the container (the whole tree) and remove it. Idempotent."""
        with self._lock:
            if self._killed:
                return
            self._killed = True
        self._timer.cancel()
        with contextlib.suppress(Exception):
            self._container.kill()
        if self._exit_code is None:
            with contextlib.suppress(Exception):
                self._container.reload()
                self._exit_code = int(self._container.attrs.get("State", {}).get("ExitCode", -9)) or -9
        with contextlib.suppress(Exception):
            self._container.remove(force=True)
        with contextlib.suppress(OSError):
            self._sock.close()
        self._pump.join(2)

    def stderr_text(self) -> str:
        return self._stderr.text()


class DockerSandbox:
    """Runs each command in a fresh container of `image` on the engine at `base_url`."""

    name = "docker"
    python = "/usr/bin/python3"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        image: str | None = None,
        nano_cpus: int = 1_000_000_000,
        output_limit_bytes: int = DEFAULT_OUTPUT_LIMIT_BYTES,
        tmpfs_mb: int = 64,
        orphan_grace_s: float = ORPHAN_GRACE_S,
    ) -> None:
        self.base_url = base_url or default_base_url()
        self.image = image or os.environ.get("RSI_SANDBOX_IMAGE") or DEFAULT_IMAGE
        self.nano_cpus = nano_cpus
        self.output_limit_bytes = output_limit_bytes
        self.tmpfs_mb = tmpfs_mb
        self._client: Any = None
        self._pythons = PythonFinder()
        self._last_sweep = 0.0
        self.orphan_grace_s = orphan_grace_s

    # -- engine -----------------------------------------------------------------------------------
    def client(self) -> Any:
        """The SDK client, connected and checked on first use."""
        if self._client is None:
            try:
                import docker
            except ImportError as error:  # pragma: no cover - docker is a core dependency
                raise SandboxError("the `docker` Python package is not installed") from error
            try:
                client = docker.DockerClient(base_url=self.base_url) if self.base_url else docker.from_env()
                client.ping()
            except Exception as error:
                raise SandboxError(
                    f"no Docker-API engine at {self.base_url or 'the default socket'}: {error}",
                    hint="set RSI_DOCKER_HOST (e.g. unix:///run/rsi-podman.sock) or run .ci/services/10-sandbox.sh",
                ) from error
            self._client = client
        return self._client

    def _sweep_orphans(self, client: Any) -> None:
        """Remove sandbox containers past their deadline (at most once a minute per instance)."""
        now = time.time()
        if now - self._last_sweep < SWEEP_EVERY_S:
            return
        self._last_sweep = now
        try:
            for container in client.containers.list(all=True, filters={"label": LABEL}):
                deadline = container.labels.get(DEADLINE_LABEL, "")
                if deadline.isdigit() and int(deadline) + self.orphan_grace_s < now:
                    with contextlib.suppress(Exception):
                        container.remove(force=True)
        except Exception:  # housekeeping must never fail a launch
            return

    def engine_version(self) -> str:
        info = self.client().version()
        name = next((c.get("Name", "") for c in info.get("Components", []) if c.get("Name")), "engine")
        return f"{name} {info.get('Version', '?')}"

    def workdir_inside(self, workdir: Path) -> str:
        """Where the working directory appears inside the container."""
        return CONTAINER_WORKDIR

    def python_with(self, *modules: str) -> str:
        """The image's python3, if it can import `modules` (probed once in a container)."""
        hint = f"build an image whose {self.python} has them (scripts/build_sandbox_image.sh) and set RSI_SANDBOX_IMAGE"
        return self._pythons.find(self, [self.python], modules, hint)

    def isolation(self) -> Isolation:
        return Isolation(
            backend="docker",
            memory_per_attempt=True,
            network_isolated=True,
            filesystem_readonly=True,
            pid_namespace=True,
            unprivileged_user=True,
            notes=f"image {self.image} at {self.base_url or 'default engine'}; network none, read-only root, "
            f"tmpfs /tmp, uid {SANDBOX_UID if os.geteuid() == 0 else os.geteuid()}, cap_drop ALL, "
            f"no-new-privileges, mem/pids/cpu limits",
        )

    # -- launching --------------------------------------------------------------------------------
    def _launch(
        self, argv: list[str], workdir: Path, limits: Limits, env: dict[str, str] | None, verifier: bool = False
    ) -> tuple[Any, socket.socket, tuple[int, int] | None]:
        if not argv:
            raise SandboxError("empty command")
        workdir = Path(workdir).resolve()
        if not workdir.is_dir():
            raise SandboxError(f"sandbox working directory does not exist: {workdir}")
        client = self.client()
        import docker
        from docker.types import Ulimit

        self._sweep_orphans(client)

        # As root the workdir is handed to 65534, the container's user; a verifier container runs
        # as a fresh uid of its own and leaves the workdir's owner alone. Otherwise the container
        # runs as the caller's own uid:gid, which already owns the workdir (as `docker run -u`).
        ids: tuple[int, int] | None = None
        if os.geteuid() == 0 and verifier:
            fresh = VERIFIER_UID_BASE + secrets.randbelow(VERIFIER_UID_SPAN)
            ids = (fresh, fresh)
        elif os.geteuid() == 0:
            give_to_sandbox_user(workdir)
            ids = (SANDBOX_UID, SANDBOX_GID)
        user = f"{ids[0]}:{ids[1]}" if ids else f"{os.geteuid()}:{os.getegid()}"
        mb = 1024 * 1024
        environment = {"PATH": CONTAINER_PATH, "LANG": "C.UTF-8", "HOME": CONTAINER_WORKDIR, "TMPDIR": "/tmp"}
        environment.update(env or {})
        fsize = limits.file_size_mb * mb
        try:
            container = client.containers.create(
                self.image,
                command=list(argv),
                working_dir=CONTAINER_WORKDIR,
                user=user,
                environment=environment,
                network_mode="none",
                mem_limit=f"{limits.memory_mb}m",
                memswap_limit=f"{limits.memory_mb}m",
                pids_limit=limits.processes,
                nano_cpus=int(self.nano_cpus),
                read_only=True,
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                tmpfs={"/tmp": f"rw,size={self.tmpfs_mb}m,mode=1777"},
                volumes={str(workdir): {"bind": CONTAINER_WORKDIR, "mode": "rw"}},
                ulimits=[
                    Ulimit(name="cpu", soft=limits.cpu_s, hard=limits.cpu_s + CPU_GRACE_S),
                    Ulimit(name="fsize", soft=fsize, hard=fsize),
                    Ulimit(name="nofile", soft=limits.open_files, hard=limits.open_files),
                    # Listing any ulimit replaces the engine's defaults, and runc may not raise one
                    # past the daemon's own hard cap: state nproc too. It counts per uid across the
                    # host, so it is generous; pids_limit is the per-container bound.
                    Ulimit(name="nproc", soft=NPROC_ULIMIT, hard=NPROC_ULIMIT),
                ],
                stdin_open=True,
                hostname="sandbox",
                # The wall limit is enforced by a timer in this process; the label lets a later
                # launch remove containers that outlived an orchestrator killed with SIGKILL.
                labels={LABEL: "1", DEADLINE_LABEL: str(int(time.time() + limits.wall_s))},
            )
        except docker.errors.ImageNotFound as error:
            raise SandboxError(
                f"sandbox image {self.image} not found", hint="build it: scripts/build_sandbox_image.sh"
            ) from error
        except Exception as error:
            raise SandboxError(f"could not create the sandbox container: {error}") from error
        try:
            attached = client.api.attach_socket(
                container.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
            )
            sock: socket.socket = getattr(attached, "_sock", attached)
            container.start()
        except Exception as error:
            with contextlib.suppress(Exception):
                container.remove(force=True)
            raise SandboxError(f"could not start the sandbox container: {error}") from error
        return container, sock, ids

    def run(
        self,
        argv: list[str],
        workdir: Path,
        limits: Limits,
        stdin: str | None = None,
        env: dict[str, str] | None = None,
    ) -> ExecResult:
        started = time.monotonic()
        container, sock, _ids = self._launch(argv, workdir, limits, env)
        out, err = _Capped(self.output_limit_bytes), _Capped(self.output_limit_bytes)
        timed_out = False
        exit_code: int | None = None
        try:

            def send() -> None:
                with contextlib.suppress(OSError):
                    if stdin:
                        sock.sendall(stdin.encode())
                    sock.shutdown(socket.SHUT_WR)

            threading.Thread(target=send, daemon=True).start()
            pump = threading.Thread(target=_pump_quietly, args=(sock, out.add, err.add), daemon=True)
            pump.start()
            pump.join(limits.wall_s)
            if pump.is_alive():
                timed_out = True
                with contextlib.suppress(Exception):
                    container.kill()
            else:
                left = max(1.0, limits.wall_s - (time.monotonic() - started))
                try:
                    exit_code = int(container.wait(timeout=left)["StatusCode"])
                except Exception:
                    timed_out = True
                    with contextlib.suppress(Exception):
                        container.kill()
        finally:
            with contextlib.suppress(OSError):
                sock.close()
            with contextlib.suppress(Exception):
                container.remove(force=True)
        return ExecResult(
            exit_code=None if timed_out else exit_code,
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
    ) -> DockerProcess:
        """A process in a container of its own; `verifier`: see `Sandbox.start`."""
        container, sock, ids = self._launch(argv, workdir, limits, env, verifier)
        return DockerProcess(container, sock, limits.wall_s, self.output_limit_bytes, ids)


def _pump_quietly(sock: socket.socket, on_stdout: Any, on_stderr: Any) -> None:
    with contextlib.suppress(OSError, ValueError):
        demultiplex(sock, on_stdout, on_stderr)
