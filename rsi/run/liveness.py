"""Is a run being run right now, and by which process?

The process running a run holds its lock (a file lock in the run folder: one orchestrator per
run) and writes an owner file beside it naming itself. Readers (`rsi status`, `rsi runs`) never
take the lock (a status poll must not make a starting `--resume` fail): a run is live when its
owner file names a process that is alive on this host. A clean exit removes the owner file; after
a SIGKILL it stays, naming a process that no longer exists.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from rsi.atomic import write_json_atomic
from rsi.errors import UserInputError

LOCK_FILE = ".lock"
OWNER_FILE = "owner.json"


@dataclass(frozen=True)
class Liveness:
    """What the run folder says about the process running a run."""

    live: bool
    pid: int | None = None
    host: str = ""
    since: str = ""  # ISO timestamp of when that process took the run
    known: bool = True  # False: no run folder here (a shared store, the run made on another machine)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def probe(run_dir: Path) -> Liveness:
    """Liveness of the run whose folder is `run_dir` (see the module docstring)."""
    if not run_dir.is_dir():
        return Liveness(live=False, known=False)
    try:
        owner = json.loads((run_dir / OWNER_FILE).read_text(encoding="utf-8"))
        pid, host = int(owner["pid"]), str(owner["host"])
    except (OSError, ValueError, KeyError, TypeError):
        return Liveness(live=False)
    if host != socket.gethostname():
        return Liveness(live=True, pid=pid, host=host, since=str(owner.get("since", "")))  # cannot check there
    return Liveness(live=_pid_alive(pid), pid=pid, host=host, since=str(owner.get("since", "")))


class RunLock:
    """Held by the one process running a run: `with RunLock(run_dir, run_id): ...`."""

    def __init__(self, run_dir: Path, run_id: str) -> None:
        from filelock import FileLock

        self.run_dir = run_dir
        self.run_id = run_id
        self._lock = FileLock(str(run_dir / LOCK_FILE))

    def __enter__(self) -> RunLock:
        from filelock import Timeout

        try:
            self._lock.acquire(timeout=0)
        except Timeout as error:
            other = probe(self.run_dir)
            who = f" (pid {other.pid} on {other.host})" if other.pid else ""
            raise UserInputError(f"run {self.run_id} is being run by another process{who}") from error
        write_json_atomic(self.run_dir / OWNER_FILE, {"pid": os.getpid(), "host": socket.gethostname(),
                                                      "since": datetime.now(UTC).isoformat()})
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            (self.run_dir / OWNER_FILE).unlink(missing_ok=True)
        finally:
            self._lock.release()
