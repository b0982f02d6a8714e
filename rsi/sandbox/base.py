"""The sandbox interface: run a command (or keep a process) inside an isolated working directory.

Two backends implement it (`local`, `docker`). Callers never learn which one serves them; they
read `SandboxProcess`/`ExecResult` and `Isolation` (what was actually isolated, recorded with
every attempt so a run on a weaker machine says so plainly).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Protocol

from pydantic import BaseModel, ConfigDict, Field, computed_field


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

    backend: str = Field(description="local-bwrap, local-namespaces, local-userns, local-bare or docker.")
    network_isolated: bool
    filesystem_readonly: bool = Field(description="Only system folders (read-only) and the workdir are visible.")
    pid_namespace: bool
    unprivileged_user: bool
    memory_per_attempt: bool = Field(
        default=False, description="The attempt's whole tree (and its tmpfs) shares one memory cap (cgroup, container)."
    )
    notes: str = ""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def weak(self) -> bool:
        """True unless network, PIDs and the file system were all isolated: evidence from such an
        attempt may have been obtained by reading hidden tests or other attempts (rlimits-only mode)."""
        return not (self.network_isolated and self.pid_namespace and self.filesystem_readonly)


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
    timed_out: bool
    """True once the backend killed it for its wall-clock limit."""

    @property
    def ids(self) -> tuple[int, int] | None:
        """The host (uid, gid) it runs as; None where the backend has no uid of its own to give."""
        ...

    def stderr_text(self) -> str:
        """What it wrote to stderr so far (capped by the backend's output limit)."""
        ...

    def poll(self) -> int | None: ...

    def kill(self) -> None:
        """Kill the whole process tree. Idempotent."""
        ...

    def wait(self, timeout_s: float | None = None) -> int | None: ...


class Sandbox(Protocol):
    """A sandbox backend."""

    name: str
    python: str
    """The interpreter attempt code runs under, as seen inside the sandbox (standard library only
    is promised; `python_with` finds one with more)."""

    def workdir_inside(self, workdir: Path) -> str:
        """Where `workdir` appears inside the sandbox (its own path locally, /work in docker)."""
        ...

    def python_with(self, *modules: str) -> str:
        """An interpreter inside this sandbox that can import every one of `modules` (e.g. "pytest").

        Found by trying (`import` inside the real sandbox, no agent code), once per backend
        instance, so a verifier can ask before any attempt runs. Raises SandboxError naming what is
        missing and why when no interpreter this sandbox can offer has them.
        """
        ...

    def run(
        self, argv: list[str], workdir: Path, limits: Limits, stdin: str | None = None, env: dict[str, str] | None = None
    ) -> ExecResult:
        """Run argv with `workdir` as its writable working directory; never raises for what argv did."""
        ...

    def start(
        self,
        argv: list[str],
        workdir: Path,
        limits: Limits,
        env: dict[str, str] | None = None,
        *,
        verifier: bool = False,
    ) -> SandboxProcess:
        """Start argv and return it with pipes; the caller must kill() it.

        `verifier=True` starts a trusted verifier process beside attempt code in the same working
        directory: it runs as a uid of its own that no attempt launch ever gets, and the working
        directory's ownership is left as it is (an attempt launch hands it to the attempt's uid).
        The returned process's `ids` attribute is the (uid, gid) it runs as on the host, or None
        where the backend has no uid to give (rsi is not root: every launch runs as rsi's uid).
        """
        ...

    def isolation(self) -> Isolation:
        """What this backend isolates on this machine."""
        ...
