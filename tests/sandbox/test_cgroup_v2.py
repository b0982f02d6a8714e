"""The cgroup v2 path of rsi/sandbox/_cgroup.py against a fake hierarchy (this machine has cgroup v1).

A real v2 host was not available, so a temporary folder plays /sys/fs/cgroup and a small fake
kernel gives it cgroupfs semantics where they matter: making a group creates its knob files only
when the parent delegates `memory` (cgroup.subtree_control), and removing a group removes them.
What is checked is rsi's own logic: which hierarchy it picks and why, the probe, the limits it
writes (memory.max, memory.swap.max), joining (cgroup.procs), reading memory.peak and
memory.events, removal and the sweep of stale groups. The kernel's enforcement is not (the v1
enforcement is measured on this machine: tests/sandbox/test_containment.py).
"""

from __future__ import annotations

import os
import pathlib
from pathlib import Path

import pytest

from rsi.sandbox import _cgroup

KNOBS = ("memory.max", "memory.swap.max", "memory.peak", "memory.events", "cgroup.procs")


@pytest.fixture
def fake_v2(tmp_path: Path, monkeypatch):
    """A v2 hierarchy under tmp_path; this process lives in /rsi.slice/job (memory delegated)."""
    root = tmp_path / "cgroup"
    own = root / "rsi.slice" / "job"
    own.mkdir(parents=True)
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (own / "cgroup.subtree_control").write_text("memory pids\n")
    proc = tmp_path / "proc-self-cgroup"
    proc.write_text("0::/rsi.slice/job\n")
    real_mkdir, real_rmdir = pathlib.Path.mkdir, pathlib.Path.rmdir

    def mkdir(self, *args, **kwargs):
        real_mkdir(self, *args, **kwargs)
        parent_control = self.parent / "cgroup.subtree_control"
        if self.is_relative_to(root) and parent_control.is_file() and "memory" in parent_control.read_text().split():
            for knob in KNOBS:
                (self / knob).write_text("max\n" if knob.endswith(".max") else "")

    def rmdir(self):
        if self.is_relative_to(root):
            if (self / "cgroup.procs").is_file() and (self / "cgroup.procs").read_text().strip() not in ("", "0"):
                raise OSError(16, "Device or resource busy")
            for knob in KNOBS:
                (self / knob).unlink(missing_ok=True)
        real_rmdir(self)

    monkeypatch.setattr(pathlib.Path, "mkdir", mkdir)
    monkeypatch.setattr(pathlib.Path, "rmdir", rmdir)
    monkeypatch.setattr(_cgroup, "CGROUP_ROOT", root)
    monkeypatch.setattr(_cgroup, "PROC_CGROUP", proc)
    monkeypatch.setattr(_cgroup.os, "geteuid", lambda: 0)
    return own


def support() -> _cgroup.CgroupSupport:
    return _cgroup.cgroup_support.__wrapped__()  # not the process-wide cached answer


def test_v2_is_found_under_this_process_own_group(fake_v2: Path):
    found = support()
    assert (found.version, found.parent) == (2, fake_v2)
    assert "cgroup v2" in found.why
    assert [p.name for p in fake_v2.iterdir() if p.is_dir()] == []  # the probe group is gone


def test_v2_without_delegation_says_so(fake_v2: Path):
    (fake_v2 / "cgroup.subtree_control").write_text("pids\n")
    found = support()
    assert found.version is None
    assert "memory controller is not enabled" in found.why and "subtree_control" in found.why
    assert "no cgroup v1 memory controller" in found.why  # and v1 was tried after it


def test_v2_without_the_memory_controller_falls_back(fake_v2: Path):
    (_cgroup.CGROUP_ROOT / "cgroup.controllers").write_text("cpu io pids\n")
    found = support()
    assert found.version is None
    assert "no cgroup v2 memory controller for this process" in found.why


def test_v2_group_limits_join_read_and_removal(fake_v2: Path):
    group = _cgroup.MemoryGroup(support(), 768)
    assert group.path.parent == fake_v2 and group.path.name.startswith(f"rsi-{os.getpid()}-")
    assert (group.path / "memory.max").read_text() == str(768 << 20)
    assert (group.path / "memory.swap.max").read_text() == "0"
    group.joiner()()  # in the child this moves it in: it writes "0" to cgroup.procs
    assert (group.path / "cgroup.procs").read_text() == "0"
    (group.path / "memory.peak").write_text("805306368\n")
    (group.path / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 1\noom_kill 3\n")
    assert group.peak_bytes() == 805306368
    assert group.oom_kills() == 3
    (group.path / "cgroup.procs").write_text("")  # its processes are gone
    assert group.remove(timeout_s=1)
    assert not group.path.exists()


def test_v2_group_busy_is_not_removed_and_says_so(fake_v2: Path):
    group = _cgroup.MemoryGroup(support(), 256)
    (group.path / "cgroup.procs").write_text("4242\n")
    assert group.remove(timeout_s=0.05) is False
    (group.path / "cgroup.procs").write_text("")
    assert group.remove(timeout_s=1)


def test_stale_groups_of_dead_owners_are_swept(fake_v2: Path):
    dead = fake_v2 / "rsi-999999999-abcdef"
    mine = fake_v2 / f"rsi-{os.getpid()}-abcdef"
    other = fake_v2 / "unrelated"
    for group in (dead, mine, other):
        group.mkdir()
    assert _cgroup.sweep_stale(fake_v2) == 1
    assert not dead.exists() and mine.exists() and other.exists()
