"""Walk and remove folders an agent made, whatever it put in them, without recursion and without paths.

An agent's working directory may hold ~thousands of nested folders (Python's recursive walkers raise
RecursionError past ~1,000 levels), paths longer than PATH_MAX, names that are not UTF-8, modes
like 000, FIFOs and sockets, and symbolic links into the host. Everything here works through
directory descriptors opened with O_NOFOLLOW, one level at a time, so no path is ever resolved
through a link and no call sees more than one name.

`remove_tree` never descends: it hoists every sub-folder of a folder it empties to the top of the
tree (a rename between two descriptors it holds), so the depth it works at is always one or two,
however deep the tree was, and it keeps at most three descriptors open.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
MAX_REMOVE_ROUNDS = 1_000_000


def printable(name: str, limit: int = 240) -> str:
    """A file name as text that survives JSON and terminals (non-UTF-8 bytes escaped), at most
    `limit` characters (the middle of a longer one is elided)."""
    text = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    text = "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in text)
    return text if len(text) <= limit else f"{text[: limit // 2]}...{text[-limit // 2 :]}"


def open_dir(name: str | Path, dir_fd: int | None = None) -> int:
    """A descriptor of the folder `name` (never through a symbolic link); OSError otherwise."""
    return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)


def _owner_access(fd: int) -> None:
    """Give the owner rwx on a folder (an agent may leave it 000); harmless when we cannot."""
    with contextlib.suppress(OSError):
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        if mode & 0o700 != 0o700:
            os.fchmod(fd, mode | 0o700)


def list_entries(fd: int) -> list[tuple[str, bool]]:
    """(name, is a real folder) for each entry of the folder `fd`."""
    with os.scandir(fd) as listing:
        found = []
        for entry in listing:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            found.append((entry.name, is_dir))
    return found


def _free_name(top_fd: int, counter: list[int]) -> str:
    while True:
        counter[0] += 1
        name = f".rsi-rm-{counter[0]}"
        try:
            os.stat(name, dir_fd=top_fd, follow_symlinks=False)
        except FileNotFoundError:
            return name
        except OSError:
            continue


def _empty_child(top_fd: int, name: str, counter: list[int]) -> None:
    """Unlink the files of top/name and hoist its folders to top level (under fresh names)."""
    try:
        child = open_dir(name, dir_fd=top_fd)
    except OSError:
        return
    try:
        _owner_access(child)
        for entry, is_dir in list_entries(child):
            if not is_dir:
                with contextlib.suppress(OSError):
                    os.unlink(entry, dir_fd=child)
                continue
            with contextlib.suppress(OSError):
                grandchild = open_dir(entry, dir_fd=child)
                _owner_access(grandchild)  # a folder's rename needs write access to it ('..')
                os.close(grandchild)
            with contextlib.suppress(OSError):
                os.rename(entry, _free_name(top_fd, counter), src_dir_fd=child, dst_dir_fd=top_fd)
    finally:
        os.close(child)


def clear_dir(top_fd: int) -> bool:
    """Remove everything inside the folder `top_fd`; True when it ended empty."""
    _owner_access(top_fd)
    counter = [0]
    for _ in range(MAX_REMOVE_ROUNDS):
        try:
            entries = list_entries(top_fd)
        except OSError:
            return False
        if not entries:
            return True
        progress = False
        for name, is_dir in entries:
            if not is_dir:
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=top_fd)
                    progress = True
                continue
            _empty_child(top_fd, name, counter)
            with contextlib.suppress(OSError):
                os.rmdir(name, dir_fd=top_fd)
                progress = True
        if not progress:
            return False
    return False


def remove_tree(path: str | Path) -> bool:
    """Remove `path` (a folder, file or link) and everything in it; never raises, never follows a link.

    True when nothing is left. A symbolic link is removed itself, never its target.
    """
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        with contextlib.suppress(OSError):
            os.unlink(path)
        return not os.path.lexists(path)
    try:
        top = open_dir(path)
    except OSError:
        return False
    try:
        clear_dir(top)
    finally:
        os.close(top)
    with contextlib.suppress(OSError):
        os.rmdir(path)
    return not os.path.lexists(path)
