"""What a minimal sandbox root holds, shared by the bwrap and namespace modes.

The system folders (/usr, /etc and the merged-/usr links) read-only, plus, read-only at their own
paths, the folders of the project's own Python installation (its venv and the interpreter it
points to) when they live outside /usr: that interpreter has pytest, which a fresh machine's
/usr/bin/python3 does not (issue 11), and it is offered to verifiers through `python_with`.
Nothing else of the host: hidden tests, verify folders and runs/ do not exist inside.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
TOOL_PATH = SAFE_PATH + ":/usr/sbin:/sbin"
MERGED_USR_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
SYSTEM_DIRS = ("/usr", "/etc")
SYSTEM_PYTHON_CANDIDATES = ("/usr/bin/python3", "/usr/local/bin/python3")


def system_links_and_dirs() -> tuple[dict[str, str], list[str]]:
    """(/bin -> usr/bin style links, real directories to bind read-only) of this machine's root."""
    links: dict[str, str] = {}
    dirs = list(SYSTEM_DIRS)
    for name in MERGED_USR_LINKS:
        path = Path("/") / name
        if path.is_symlink():
            links[str(path)] = os.readlink(path)
        elif path.is_dir():
            dirs.append(str(path))
    return links, dirs


def project_python() -> str:
    """The interpreter running rsi (its venv's, when there is one)."""
    return sys.executable


def project_python_dirs() -> list[str]:
    """Folders to bind read-only so `project_python()` works inside: its venv and its base install.

    Empty when they already live under a bound system folder (/usr).
    """
    wanted: list[str] = []
    for prefix in {sys.prefix, sys.base_prefix, str(Path(sys.executable).resolve().parent.parent)}:
        real = str(Path(prefix).resolve())
        if any(real == d or real.startswith(d + "/") for d in SYSTEM_DIRS) or real == "/":
            continue
        wanted.append(real)
    # A folder inside another one is bound with it.
    wanted.sort()
    kept: list[str] = []
    for path in wanted:
        if not any(path.startswith(k + "/") for k in kept):
            kept.append(path)
    return kept


def parents_of(path: str) -> list[str]:
    """Every parent of `path` below /, outermost first."""
    return [str(p) for p in reversed(Path(path).parents[:-1])]
