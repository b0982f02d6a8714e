"""Closing the real embedded model (SmolLM2) while it generates: the worker ends at the next decoding
step, callers get an error instead of waiting for their generation, and the thread is not inside torch
after close returns (rsi.models.embedded.native: a process may then exit safely)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rsi.errors import ModelError

pytestmark = pytest.mark.slow


def test_close_stops_a_long_generation_at_the_next_step(base_folder: Path, ask_fn) -> None:
    from rsi.models.embedded.backend import EmbeddedModel
    from rsi.models.embedded.native import busy

    model = EmbeddedModel(base_folder, name="smol-close", max_batch=4)
    running = model.submit(ask_fn("Write a very long story about a dragon.", max_tokens=1500))
    queued_behind = [model.submit(ask_fn(f"Story {i}.", max_tokens=1500)) for i in range(8)]  # more than fit
    deadline = time.monotonic() + 900
    while model.stats.steps < 3:
        assert time.monotonic() < deadline and not running.done(), "the model made no progress"
        time.sleep(0.01)
    steps = model.stats.steps
    model.close(timeout_s=600)
    assert not model._worker.is_alive()
    # The step in progress ends (a loaded machine may fit one or two more between the read and the close);
    # the 1,500-token generation does not.
    assert model.stats.steps - steps <= 3, f"{model.stats.steps - steps} steps after close was asked"
    with pytest.raises(ModelError, match="closed before the request finished"):
        running.result(timeout=5)
    assert all(f.done() for f in queued_behind)  # admitted ones failed, queued ones cancelled: nobody waits
    assert not [what for what in busy() if "smol-close" in what]  # its worker left every native section
    with pytest.raises(ModelError, match="closed"):
        model.submit(ask_fn("After close."))
