"""Who runs the embedded model's torch work: its own thread, with the chosen threads; the creating thread keeps one.

libgomp slows every small op of a thread whose OpenMP team shares the cores with another thread's team
(rsi.models.embedded.tuning.one_torch_thread_here), so the model's worker must be the only thread with a team."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from rsi.errors import ModelError

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _keep_torch_threads():
    """torch's process-wide thread count back as it was (pinning a thread also sets it)."""
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def _in_fresh_thread(work):
    """`work()` on a new thread (its torch settings are its own, as a fresh caller's would be)."""
    box = {}
    thread = threading.Thread(target=lambda: box.setdefault("value", work()))
    thread.start()
    thread.join()
    return box["value"]


def test_the_creating_thread_keeps_one_torch_thread_and_the_worker_loads(tmp_path: Path, monkeypatch) -> None:
    from rsi.models.embedded.backend import EmbeddedModel

    monkeypatch.setenv("RSI_TORCH_THREADS", "2")
    loaded_on: list[str] = []

    def spy(self, dtype):
        loaded_on.append(threading.current_thread().name)
        raise ModelError("no weights here")  # what a missing folder raises, without loading anything

    monkeypatch.setattr(EmbeddedModel, "_load", spy)

    def create() -> tuple[str, int]:
        try:
            EmbeddedModel(tmp_path, name="nothing", dtype="float32")
        except ModelError as error:
            return str(error), torch.get_num_threads()
        return "", torch.get_num_threads()

    message, caller_threads = _in_fresh_thread(create)
    assert message == "no weights here"  # raised in the constructor's thread, from the worker's load
    assert caller_threads == 1
    assert loaded_on == ["rsi-embedded-nothing"]


def test_own_thread_work_returns_and_raises_in_the_caller() -> None:
    from rsi.models.embedded.tuning import in_own_thread

    here = threading.current_thread().name
    assert in_own_thread(lambda: threading.current_thread().name) != here

    def fail():
        raise ValueError("from the worker")

    with pytest.raises(ValueError, match="from the worker"):
        in_own_thread(fail)
