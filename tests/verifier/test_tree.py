"""Agent-made folders: staged and removed whatever is in them, without recursion, leaving nothing."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

from rsi.verifier.stage import MAX_DEPTH, stage_submission
from rsi.verifier.tree import printable, remove_tree


def nest(top: Path, depth: int, name: str = "d") -> Path:
    """`depth` nested folders under `top`, made through descriptors (the path outgrows PATH_MAX)."""
    fd = os.open(top, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir(name, dir_fd=fd)
        child = os.open(name, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(os.open("leaf.py", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
    os.close(fd)
    return top


def hostile_tree(top: Path) -> Path:
    """Everything an agent can leave: deep and long, special files, links, sparse, 000, not UTF-8."""
    top.mkdir()
    (top / "solution.py").write_text("def f():\n    return 1\n")
    nest(top, 1300)
    (top / "long").mkdir()
    nest(top / "long", 40, "n" * 250)
    os.mkfifo(top / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(top / "sock"))
    sock.close()
    os.symlink("/etc/shadow", top / "shadow")
    os.symlink("loop", top / "loop")
    os.symlink("/etc", top / "etc-dir")
    with open(top / "sparse", "wb") as handle:
        handle.truncate(100 * 1024**3)
    locked = top / "locked"
    locked.mkdir()
    (locked / "inner").mkdir()
    (locked / "inner" / "x.py").write_text("x")
    (locked / "inner").chmod(0)
    locked.chmod(0)
    (top / "zero.py").write_text("y")
    (top / "zero.py").chmod(0)
    os.close(os.open(os.fsencode(top) + b"/bad\xff\xfe.py", os.O_CREAT | os.O_WRONLY, 0o644))
    return top


def test_remove_tree_removes_everything_and_follows_no_link(tmp_path: Path):
    tree = hostile_tree(tmp_path / "agent")
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    os.symlink(outside, tree / "to-outside")
    assert remove_tree(tree)
    assert not os.path.lexists(tree)
    assert outside.read_text() == "keep"
    assert Path("/etc/shadow").exists() and Path("/etc/passwd").exists()
    assert remove_tree(tree)  # absent is fine


def test_stage_refuses_what_it_cannot_copy_and_never_raises(tmp_path: Path):
    tree = hostile_tree(tmp_path / "agent")
    dest = tmp_path / "fresh"
    dest.mkdir()
    staged = stage_submission(tree, dest)
    assert "solution.py" in staged.copied
    refused = "\n".join(staged.refused)
    for what in ("fifo: not a regular file", "sock: cannot open", "shadow: symbolic link", "loop: symbolic link",
                 "sparse: larger than", f"deeper than {MAX_DEPTH} folders"):
        assert what in refused, what
    assert "bad\\xff\\xfe.py" in " ".join(printable(p) for p in staged.copied) or "bad\\xff" in refused
    refused.encode("utf-8")  # no surrogates: reasons travel as JSON
    for path in dest.rglob("*"):
        assert stat.S_ISDIR(path.lstat().st_mode) or stat.S_ISREG(path.lstat().st_mode)
        assert path.lstat().st_size <= 4 * 1024 * 1024
    assert remove_tree(tree) and remove_tree(dest)


def test_printable_escapes_and_shortens():
    assert printable("a\udcffb") == "a\\xffb"
    assert printable("x\ny") == "x\\x0ay"
    assert len(printable("z" * 10_000)) <= 245
