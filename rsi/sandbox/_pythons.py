"""Finding an interpreter inside a sandbox that can import given modules (`Sandbox.python_with`).

Decided by trying: `python -I -c "import m1, m2"` in the real sandbox, in a scratch folder holding
no agent code, once per backend instance; a miss names every interpreter tried and why it failed,
so a verifier can refuse a task kind plainly before any attempt runs.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from pathlib import Path

from rsi.errors import SandboxError
from rsi.sandbox.base import Limits


class PythonFinder:
    """Per-backend cache of `modules -> interpreter` (or the error saying why there is none)."""

    def __init__(self) -> None:
        self._found: dict[tuple[str, ...], str | SandboxError] = {}
        self._lock = threading.Lock()

    def find(self, sandbox, candidates: list[str], modules: tuple[str, ...], hint: str) -> str:
        key = tuple(sorted(modules))
        with self._lock:
            if key not in self._found:
                self._found[key] = _try(sandbox, list(dict.fromkeys(candidates)), key, hint)
            found = self._found[key]
        if isinstance(found, SandboxError):
            raise found
        return found


def _try(sandbox, candidates: list[str], modules: tuple[str, ...], hint: str) -> str | SandboxError:
    tried = []
    folder = Path(tempfile.mkdtemp(prefix="rsi-python-probe-"))
    try:
        folder.chmod(0o711)
        work = folder / "work"
        work.mkdir()
        for python in candidates:
            try:
                result = sandbox.run([python, "-I", "-c", f"import {', '.join(modules)}"], work, Limits(wall_s=60))
            except SandboxError as error:  # e.g. the interpreter cannot be executed by the sandbox user
                tried.append(f"{python}: {error.message[:160]}")
                continue
            if result.exit_code == 0:
                return python
            last = (result.stderr.strip().splitlines() or [f"exit {result.exit_code}"])[-1]
            tried.append(f"{python}: {last[:160]}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    backend = sandbox.isolation().backend
    return SandboxError(f"no interpreter in the {backend} sandbox can import {', '.join(modules)} ({'; '.join(tried)})", hint=hint)
