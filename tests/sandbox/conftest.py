"""Fixtures for the sandbox tests: every backend this machine has, and host-side observers.

`backend` is parametrized over the local modes (local-bwrap, local-namespaces, local-userns,
local-bare) and docker; a mode this machine lacks is skipped (failed in CI) with the reason. Docker goes through the
Docker-API socket from $RSI_DOCKER_HOST (set by .ci/services/10-sandbox.sh) or /run/rsi-podman.sock;
`need()` skips it locally when no engine answers, and fails in CI.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
from pathlib import Path

import pytest

from tests.conftest import need

PODMAN_SOCKET = Path("/run/rsi-podman.sock")


def docker_url() -> str | None:
    url = os.environ.get("RSI_DOCKER_HOST")
    if url:
        return url
    return f"unix://{PODMAN_SOCKET}" if PODMAN_SOCKET.exists() else None


def make_backend(name: str):
    """One sandbox backend by test name, or a skip/fail (via need) when this machine lacks it."""
    from rsi.errors import SandboxError
    from rsi.sandbox.local import probe_mode
    from rsi.sandbox.select import make_sandbox

    if name.startswith("local-"):
        mode = name.removeprefix("local-")
        works, why = probe_mode(mode)
        need(works, f"{'bubblewrap' if mode == 'bwrap' else f'sandbox mode {mode}'}: {why}")
        return make_sandbox("local", mode=mode)
    if name == "docker":
        url = docker_url()
        need(url is not None, "a Docker-API engine (RSI_DOCKER_HOST; .ci/services/10-sandbox.sh)")
        sandbox = make_sandbox("docker", base_url=url)
        try:
            sandbox.client()
            images = [tag for image in sandbox.client().images.list() for tag in image.tags]
        except SandboxError as error:
            need(False, f"Docker-API engine at {url}: {error.message}")
        need(any(tag.endswith(sandbox.image.split("/")[-1]) for tag in images), f"image {sandbox.image}")
        return sandbox
    raise ValueError(name)


@pytest.fixture(scope="session")
def backends():
    """Cache: one instance per backend name for the whole session."""
    return {}


LOCAL_MODES = ["local-bwrap", "local-namespaces", "local-userns", "local-bare"]
ISOLATING = ["local-bwrap", "local-namespaces", "local-userns", "docker"]


@pytest.fixture(params=[*LOCAL_MODES, "docker"])
def backend(request, backends):
    if request.param not in backends:
        backends[request.param] = make_backend(request.param)
    return backends[request.param]


@pytest.fixture(params=ISOLATING)
def isolating_backend(request, backends):
    """Only the backends that promise file-system, network and PID isolation."""
    if request.param not in backends:
        backends[request.param] = make_backend(request.param)
    return backends[request.param]


@pytest.fixture
def open_tmp():
    """A temp folder the sandbox user can traverse (pytest's tmp_path sits under a 0700 folder)."""
    folder = Path(tempfile.mkdtemp(prefix="rsi-sandbox-test-"))
    folder.chmod(0o711)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def workdir(open_tmp: Path) -> Path:
    folder = open_tmp / "work"
    folder.mkdir()
    return folder


class Listener:
    """A TCP server on the host (all interfaces) that records every connection it receives."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("0.0.0.0", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections: list[tuple[str, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, addr = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.connections.append(addr)
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


def host_ip() -> str:
    """This machine's outward address (what a container on a bridge would use to reach the host)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.255.255.255", 1))
        return probe.getsockname()[0]
    except OSError:
        return "127.0.0.1"
    finally:
        probe.close()
