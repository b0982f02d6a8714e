"""Atomic file writes: a reader (or a process restarted after SIGKILL) sees the old file or the whole new one.

Temp file in the same folder, fsync, `os.replace`, then fsync the folder so the rename itself is durable.
Every state file rsi writes (contracts, trajectories, generation state, registry records, exports)
goes through here.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_bytes_atomic(path: Path, data: bytes) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    with contextlib.suppress(OSError):
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
    return path


def write_text_atomic(path: Path, text: str) -> Path:
    """Text as UTF-8, byte for byte (no newline translation: contracts keep their line endings)."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: Path, data: Any) -> Path:
    """Indented, key-sorted JSON with a final newline."""
    return write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
