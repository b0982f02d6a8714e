"""The sandbox interface: run a command (or keep a process) inside an isolated working directory.

Two backends implement it (`local`, `docker`). Callers never learn which one serves them; they
read `SandboxProcess`/`ExecResult` and `Isolation` (what was actually isolated, recorded with
every attempt so a run on a weaker machine says so plainly).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Protocol

from pydantic import BaseModel, ConfigDict, Field


class Limits(BaseModel):
    """Resource limits for one sandboxed process tree."""

    model_config = ConfigDict(extra="forbid")
    wall_s: float = Field(default=30.0, gt=0, description="Wall clock; the whole tree is killed after it.")
    cpu_s: int = Field(default=30, ge=1)
    memory_mb: int = Field(default=1024, ge=64, description="Address space (local) or memory (docker).")
    file_size_mb: int = Field(default=64, ge=1)
    open_files: int = Field(default=256, ge=16)
    processes: int = Field(default=64, ge=4)


class Isolation(BaseModel):
    """What the backend really isolated for this process; stored with every attempt."""

    backend: str
    network_isolated: bool
    filesystem_readonly: bool
    pid_namespace: bool
    unprivileged_user: bool
    notes: str = ""


class ExecResult(BaseModel):
    """Outcome of one finished sandboxed command."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    wall_s: float
    isolation: Isolation


class SandboxProcess(Protocol):
    """A long-lived sandboxed process with pipes (the REPL substrate lives in one)."""

    stdin: IO[bytes]
    stdout: IO[bytes]

    def poll(self) -> int | None: ...

    def kill(self) -> None:
        """Kill the whole process tree. Idempotent."""
        ...

    def wait(self, timeout_s: float | None = None) -> int | None: ...


class Sandbox(Protocol):
    """A sandbox backend."""

    name: str

    def run(
        self, argv: list[str], workdir: Path, limits: Limits, stdin: str | None = None, env: dict[str, str] | None = None
    ) -> ExecResult:
        """Run argv with `workdir` as its writable working directory; never raises for what argv did."""
        ...

    def start(
        self, argv: list[str], workdir: Path, limits: Limits, env: dict[str, str] | None = None
    ) -> SandboxProcess:
        """Start argv and return it with pipes; the caller must kill() it."""
        ...

    def isolation(self) -> Isolation:
        """What this backend isolates on this machine."""
        ...
