"""The one registry of sandbox backends: name -> factory, and `make_sandbox(name, **opts)`.

`auto` is the local backend, which itself picks the strongest mode that works on this machine
(bwrap > namespaces > userns > bare, rlimits only), saying which in its `Isolation`. Specs and flags
that name a backend validate against SANDBOXES (`SandboxName`), so adding one is one entry here.
Light on purpose: the backends are imported by their factories, when one is made.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator

from rsi.errors import UserInputError
from rsi.registry import name_check
from rsi.sandbox.base import Sandbox


def _local(**opts: Any) -> Sandbox:
    from rsi.sandbox.local import LocalSandbox

    return LocalSandbox(**opts)


def _docker(**opts: Any) -> Sandbox:
    from rsi.sandbox.docker import DockerSandbox

    return DockerSandbox(**opts)


DEFAULT = "auto"

SANDBOXES: dict[str, Callable[..., Sandbox]] = {
    "auto": _local,
    "local": _local,
    "docker": _docker,
}


sandbox_name = name_check(SANDBOXES, "sandbox backend")
SandboxName = Annotated[str, AfterValidator(sandbox_name)]


def make_sandbox(name: str = DEFAULT, **opts: Any) -> Sandbox:
    """Build a sandbox backend.

    local options: mode ("auto", "bwrap", "namespaces", "userns", "bare"; a named one is required),
    use_bwrap (None=auto, True=required, False=skip bwrap), uid ("per-run" or an int), drop_privileges,
    memory_cgroup, output_limit_bytes.
    docker options: base_url (default $RSI_DOCKER_HOST, then $DOCKER_HOST, then the engine's default),
    image (default $RSI_SANDBOX_IMAGE or rsi-sandbox:latest), nano_cpus, output_limit_bytes.
    """
    factory = SANDBOXES.get(name)
    if factory is None:
        raise UserInputError(f"unknown sandbox backend {name!r}", hint=f"choose one of: {', '.join(SANDBOXES)}")
    return factory(**opts)
