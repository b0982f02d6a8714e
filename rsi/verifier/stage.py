"""Stage a FRESH verification directory from an attempt's final working directory.

The final working directory is the agent's: anything in it may be hostile. Only regular files are
copied (no symlinks, devices, FIFOs, sockets, or files with several hard links), within size,
count and depth caps, and never a name that could hijack a Python or pytest process that loads from that
directory (conftest.py, sitecustomize.py, pytest.ini, *.pth, bytecode caches, ...). Files are read
through directory fds with O_NOFOLLOW, so swapping a file for a link mid-copy does not help.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from rsi.verifier.tree import list_entries, open_dir, printable, remove_tree

MAX_FILES = 500
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_TOTAL_BYTES = 32 * 1024 * 1024
MAX_DEPTH = 32
MAX_DIRS = 2000
PATH_MAX = 4096  # Linux's limit on a path given to one call: a longer one cannot be written where we copy to
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
                remove_tree(entry.path)
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
    remove_tree(root)


KEPT = "kept"


def kept_dir(work: Path) -> Path:
    """Where a judge writes the files it keeps (the ui kind's screenshot): beside `work`, in the fresh root,
    which is ours (0711) and never the sandbox's; `rsi.verifier.verify` moves what the outcome's `artifacts`
    name from here into the attempt's evidence folder before the root is removed."""
    return Path(work).parent / KEPT


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


def _files_and_dirs(dir_fd: int) -> tuple[list[str], list[str]]:
    files: list[str] = []
    dirs: list[str] = []
    for name, is_dir in list_entries(dir_fd):
        (dirs if is_dir else files).append(name)
    return sorted(files), sorted(dirs)


def stage_submission(
    final_workdir: Path,
    dest: Path,
    *,
    only: set[str] | None = None,
    exclude_top: set[str] | None = None,
    reserved_names: bool = True,
) -> StagedFiles:
    """Copy the agent's regular files from `final_workdir` into `dest` (an existing empty folder).

    `only` restricts the copy to these relative paths (e.g. just the solution file); `exclude_top`
    names top-level entries never taken from the submission (e.g. `tests`, which the verifier owns).
    `reserved_names=False` keeps conftest.py and the like (for stored evidence, never for verifying).
    Never raises for what is in the folder: whatever cannot be copied is listed in `refused`.
    The walk is iterative and at most MAX_DEPTH folders deep (one descriptor per level).
    """
    staged = StagedFiles()
    try:
        top = open_dir(final_workdir)
    except OSError:
        return staged
    budget = [MAX_TOTAL_BYTES]
    exclude_top = exclude_top or set()
    folders = [0]
    stack: list[tuple[int, tuple[str, ...], list[str]]] = []
    try:
        subdirs = _stage_folder(top, (), dest, staged, only, exclude_top, budget, folders, reserved_names)
        stack.append((top, (), subdirs))
        while stack:
            fd, rel, pending = stack[-1]
            if not pending:
                if fd != top:
                    os.close(fd)
                stack.pop()
                continue
            name = pending.pop(0)
            shown = printable("/".join((*rel, name)))
            try:
                child = open_dir(name, dir_fd=fd)
            except OSError as error:
                staged.refused.append(f"{shown}/: cannot open ({error.strerror})")
                continue
            below = _stage_folder(child, (*rel, name), dest, staged, only, exclude_top, budget, folders, reserved_names)
            stack.append((child, (*rel, name), below))
    finally:
        for fd, _rel, _pending in stack:
            if fd != top:
                os.close(fd)
        os.close(top)
    return staged


def _stage_folder(
    fd: int,
    rel: tuple[str, ...],
    dest: Path,
    staged: StagedFiles,
    only: set[str] | None,
    exclude_top: set[str],
    budget: list[int],
    folders: list[int],
    reserved_names: bool = True,
) -> list[str]:
    """Copy the files of one folder; return the sub-folders still to visit (the others refused)."""
    try:
        files, dirs = _files_and_dirs(fd)
    except OSError as error:
        staged.refused.append(f"{printable('/'.join(rel)) or '.'}/: cannot list ({error.strerror})")
        return []
    keep: list[str] = []
    for name in dirs:
        shown = printable("/".join((*rel, name)))
        if (reserved_names and refused_name(name)) or (not rel and name in exclude_top):
            staged.refused.append(f"{shown}/: reserved name")
        elif len(rel) + 1 >= MAX_DEPTH:
            staged.refused.append(f"{shown}/: workdir nests deeper than {MAX_DEPTH} folders")
        elif folders[0] >= MAX_DIRS:
            staged.refused.append(f"{shown}/: folder count cap reached")
        else:
            folders[0] += 1
            keep.append(name)
    for name in files:
        rel_file = "/".join((*rel, name))
        shown = printable(rel_file)
        if only is not None and rel_file not in only:
            continue
        if (reserved_names and refused_name(name)) or (not rel and name in exclude_top):
            staged.refused.append(f"{shown}: reserved name")
            continue
        if len(staged.copied) >= MAX_FILES:
            staged.refused.append(f"{shown}: file count cap reached")
            continue
        target = dest / rel_file
        if len(os.fsencode(target)) >= PATH_MAX:  # the agent's path, under our folder, is past what one call takes
            staged.refused.append(f"{shown}: path longer than PATH_MAX ({PATH_MAX} bytes)")
            continue
        try:
            reason = _copy_one(name, fd, target, budget)
        except OSError as error:  # e.g. a name too long for the destination's file system
            reason = ("path longer than PATH_MAX" if error.errno == errno.ENAMETOOLONG else "cannot copy") + \
                f" ({error.strerror})"
        if reason:
            staged.refused.append(f"{shown}: {reason}")
        else:
            staged.copied.append(rel_file)
    if only is not None:
        keep = [name for name in keep if any(path.startswith("/".join((*rel, name)) + "/") for path in only)]
    return keep


def copy_task_tests(tests_dir: Path, dest: Path) -> list[str]:
    """Copy the task's own (trusted) tests/ folder into `dest`; bytecode caches are left out."""
    shutil.copytree(tests_dir, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"))
    return sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
