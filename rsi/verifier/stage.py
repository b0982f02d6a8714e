"""Stage a FRESH verification directory from an attempt's final working directory.

The final working directory is the agent's: anything in it may be hostile. Only regular files are
copied (no symlinks, devices, FIFOs, sockets, or files with several hard links), within size and
count caps, and never a name that could hijack a Python or pytest process that loads from that
directory (conftest.py, sitecustomize.py, pytest.ini, *.pth, bytecode caches, ...). Files are read
through directory fds with O_NOFOLLOW, so swapping a file for a link mid-copy does not help.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

MAX_FILES = 500
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_TOTAL_BYTES = 32 * 1024 * 1024
# Names that make a Python or pytest process run code or change configuration on its own.
HIJACK_NAMES = frozenset(
    {
        "conftest.py",
        "sitecustomize.py",
        "usercustomize.py",
        "pytest.ini",
        ".pytest.ini",
        "tox.ini",
        "setup.cfg",
        "pyproject.toml",
        "pyvenv.cfg",
        "__pycache__",
        ".pytest_cache",
    }
)
HIJACK_SUFFIXES = (".pth", ".pyc", ".pyo", ".so")


@dataclass
class StagedFiles:
    """What was copied into the fresh directory, and what was refused (with why)."""

    copied: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def refused_name(name: str) -> bool:
    return name in HIJACK_NAMES or name.endswith(HIJACK_SUFFIXES)


STALE_AFTER_S = 6 * 3600


def _fresh_parent() -> Path:
    """/tmp/rsi-verify-<uid>/ when it is safely ours (a real dir, our own, 0711), else the temp dir.

    One parent lets a later verification sweep roots left behind by a verifier that was SIGKILLed.
    """
    base = Path(tempfile.gettempdir())
    parent = base / f"rsi-verify-{os.geteuid()}"
    try:
        parent.mkdir(mode=0o711, exist_ok=True)
        st = os.lstat(parent)
    except OSError:
        return base
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) != 0o711:
        return base
    return parent


def _sweep_stale(parent: Path) -> None:
    cutoff = time.time() - STALE_AFTER_S
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.name.startswith("v-") and entry.is_dir(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            continue


def make_fresh_root() -> Path:
    """A new private root for one verification: 0711, so the sandbox user can reach work/ only."""
    parent = _fresh_parent()
    if parent.name.startswith("rsi-verify-"):
        _sweep_stale(parent)
    root = Path(tempfile.mkdtemp(prefix="v-" if parent.name.startswith("rsi-verify-") else "rsi-verify-", dir=parent))
    os.chmod(root, 0o711)
    (root / "work").mkdir(mode=0o755)
    return root


def remove_fresh_root(root: Path) -> None:
    shutil.rmtree(root, ignore_errors=True)


def _copy_one(name: str, dir_fd: int, dest: Path, budget: list[int]) -> str | None:
    """Copy one entry; return a refusal reason or None."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError as error:
        # ELOOP is what O_NOFOLLOW answers for a symbolic link.
        return "symbolic link" if error.errno == 40 else f"cannot open ({error.strerror})"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file"
        if st.st_nlink > 1:
            return "has several hard links"
        if st.st_size > MAX_FILE_BYTES:
            return f"larger than {MAX_FILE_BYTES} bytes"
        if st.st_size > budget[0]:
            return "total size cap reached"
        data = b""
        while len(data) <= MAX_FILE_BYTES:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            data += chunk
        if len(data) > MAX_FILE_BYTES or len(data) > budget[0]:
            return "grew past the size cap while copying"
        budget[0] -= len(data)
    finally:
        os.close(fd)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    os.chmod(dest, 0o644)
    return None


def stage_submission(
    final_workdir: Path,
    dest: Path,
    *,
    only: set[str] | None = None,
    exclude_top: set[str] | None = None,
) -> StagedFiles:
    """Copy the agent's regular files from `final_workdir` into `dest` (an existing empty folder).

    `only` restricts the copy to these relative paths (e.g. just the solution file); `exclude_top`
    names top-level entries never taken from the submission (e.g. `tests`, which the verifier owns).
    """
    staged = StagedFiles()
    src = Path(final_workdir)
    if not src.is_dir() or src.is_symlink():
        return staged
    budget = [MAX_TOTAL_BYTES]
    exclude_top = exclude_top or set()
    for root, dirs, files, root_fd in os.fwalk(src, follow_symlinks=False):
        rel_root = Path(root).relative_to(src)
        keep_dirs = []
        for name in dirs:
            if refused_name(name) or (rel_root == Path(".") and name in exclude_top):
                staged.refused.append(f"{(rel_root / name).as_posix()}/: reserved name")
            else:
                keep_dirs.append(name)
        dirs[:] = keep_dirs  # fwalk honours in-place pruning
        for name in sorted(files):
            rel_file = (rel_root / name).as_posix()
            if only is not None and rel_file not in only:
                continue
            if refused_name(name) or (rel_root == Path(".") and name in exclude_top):
                staged.refused.append(f"{rel_file}: reserved name")
                continue
            if len(staged.copied) >= MAX_FILES:
                staged.refused.append(f"{rel_file}: file count cap reached")
                continue
            reason = _copy_one(name, root_fd, dest / rel_file, budget)
            if reason:
                staged.refused.append(f"{rel_file}: {reason}")
            else:
                staged.copied.append(rel_file)
    return staged


def copy_task_tests(tests_dir: Path, dest: Path) -> list[str]:
    """Copy the task's own (trusted) tests/ folder into `dest`; bytecode caches are left out."""
    shutil.copytree(tests_dir, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"))
    return sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
