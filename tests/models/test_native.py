"""The exit guard for threads inside torch (rsi.models.embedded.native) and the CLI's exit through it (rsi.cli.app).

Sections here hold no torch: what is tested is the bookkeeping (settle waits for running sections,
refuses new ones, gives up at its bound) and that `rsi`'s exit keeps its exit code and its printed
output whichever way it ends the process. tests/run/test_stop_embedded.py does it with the real model.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rsi.models.embedded.native import NativeWork, ProcessExiting


def hold(work: NativeWork, what: str, release: threading.Event) -> threading.Thread:
    entered = threading.Event()

    def body() -> None:
        with work.section(what):
            entered.set()
            release.wait(30)

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    assert entered.wait(10)
    return thread


def test_settle_waits_for_a_running_section_and_refuses_new_ones() -> None:
    work = NativeWork()
    release = threading.Event()
    thread = hold(work, "a step", release)
    assert work.busy() == ["a step"]
    threading.Timer(0.3, release.set).start()
    started = time.monotonic()
    assert work.settle(10.0) is True
    assert time.monotonic() - started >= 0.25  # it did wait for the section to end
    thread.join(5)
    assert work.busy() == [] and work.exiting
    with pytest.raises(ProcessExiting), work.section("a load after exit began"):
        pytest.fail("a section must not start once the process is exiting")


def test_settle_gives_up_at_its_bound_while_a_section_runs() -> None:
    work = NativeWork()
    release = threading.Event()
    hold(work, "a long prefill", release)
    started = time.monotonic()
    assert work.settle(0.3) is False
    assert 0.25 <= time.monotonic() - started < 5
    assert work.busy() == ["a long prefill"]
    release.set()


def test_the_first_section_runs_the_hook_once() -> None:
    calls: list[NativeWork] = []
    work = NativeWork(on_first_use=calls.append)
    for _ in range(3):
        with work.section("x"):
            pass
    assert calls == [work]
    assert work.settle(0.0) is True  # nothing running: no wait


EXIT_SCRIPT = """
import atexit, sys, threading
from rsi.cli import app
from rsi.models.embedded import native

atexit.register(lambda: print("atexit ran", flush=True))
ready = threading.Event()
def stuck():
    with native.native_section("a model load"):
        ready.set()
        threading.Event().wait({hold_s})
threading.Thread(target=stuck, daemon=True).start()
ready.wait(30)
print("outcome printed")  # not flushed: a pipe buffers it
app._exit(130)
"""


@pytest.mark.parametrize(("hold_s", "normal_exit"), [(0.5, True), (3600, False)])
def test_rsi_exit_keeps_its_code_and_output_whether_or_not_a_section_ends(hold_s: float, normal_exit: bool) -> None:
    """A section that ends within the wait: the normal exit (atexit handlers run). One that does not: the
    process ends by os._exit after EXIT_WAIT_S, with the same code and its output flushed."""
    from rsi.cli.app import EXIT_WAIT_S

    root = Path(__file__).resolve().parents[2]
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", EXIT_SCRIPT.format(hold_s=hold_s)], capture_output=True,
                          text=True, timeout=300, cwd=root)
    took = time.monotonic() - started
    assert done.returncode == 130, done.stderr[-2000:]
    assert "outcome printed" in done.stdout
    assert ("atexit ran" in done.stdout) is normal_exit, done.stdout
    if not normal_exit:
        assert took >= EXIT_WAIT_S  # it waited its bound before giving up


TORCH_SCRIPT = """
import sys, threading, time
import torch
from rsi.cli import app
from rsi.models.embedded import native

def decode():  # what the embedded model's worker does: many small ops, each giving up the GIL and taking it back
    a = torch.randn(128, 128)
    while True:
        try:
            with native.native_section("a decoding step"):
                for _ in range(50):
                    a @ a
        except native.ProcessExiting:
            return
threading.Thread(target=decode, daemon=True).start()
time.sleep(1.0)
app._exit(130)
"""


@pytest.mark.slow  # imports torch in a subprocess
def test_rsi_exit_while_a_thread_runs_torch_ops_exits_130_not_sigabrt() -> None:
    """The abort's mechanism with real torch (no model): without the guard such a process dies of SIGABRT
    ("terminate called without an active exception") on most exits; with it, the exit code is the chosen one."""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", TORCH_SCRIPT], capture_output=True, text=True, timeout=900,
                          cwd=root)
    assert "terminate called" not in done.stderr, done.stderr[-2000:]
    assert done.returncode == 130, done.stderr[-2000:]
