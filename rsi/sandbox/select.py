"""Choosing a sandbox backend by name: `make_sandbox("auto" | "local" | "docker", **opts)`.

`auto` is the local backend, which itself picks the strongest mode that works on this machine
(bwrap > namespaces > userns > bare, rlimits only), saying which in its `Isolation`.
"""

from __future__ import annotations

from typing import Any

from rsi.errors import UserInputError
from rsi.sandbox.base import Sandbox

BACKENDS = ("auto", "local", "docker")


def make_sandbox(name: str = "auto", **opts: Any) -> Sandbox:
    """Build a sandbox backend.

    local options: mode ("auto", "bwrap", "namespaces", "userns", "bare"; a named one is required),
    use_bwrap (None=auto, True=required, False=skip bwrap), uid ("per-run" or an int), drop_privileges,
    memory_cgroup, output_limit_bytes.
    docker options: base_url (default $RSI_DOCKER_HOST, then $DOCKER_HOST, then the engine's default),
    image (default $RSI_SANDBOX_IMAGE or rsi-sandbox:latest), nano_cpus, output_limit_bytes.
    """
    if name in ("auto", "local"):
        from rsi.sandbox.local import LocalSandbox

        return LocalSandbox(**opts)
    if name == "docker":
        from rsi.sandbox.docker import DockerSandbox

        return DockerSandbox(**opts)
    raise UserInputError(f"unknown sandbox backend {name!r}", hint=f"choose one of: {', '.join(BACKENDS)}")
