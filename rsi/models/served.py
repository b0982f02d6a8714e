"""Queued model calls whose `model_s` clock measures a stalled model, not a busy one.

A backend that queues requests in this process (the embedded model) returns a `ServedFuture` from
`submit()`. Its `started` event is set when the request leaves the queue (joins the running batch,
or ends without being served), so a caller can tell "waiting behind others" from "being
generated", and its `progress` says when the request last gained a token. Once served, `model_s`
bounds the time WITHOUT progress: a model that stopped (dead, hung) fails the call; one that is slow
because the machine is shared (sixteen rows on one loaded core, a token every few seconds each) is
not, since its slowness is ours and retrying it only repeats the work (issue 37: on a shared CPU a
total-time bound turned every attempt after a load step into a retried error). A request still ends:
its `max_tokens` bound its generation. Model load happens before any request is queued. `abandon()`
tells the backend that nobody waits for the answer any more, so the row leaves the batch at the next
decoding step instead of generating to its end.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Protocol, runtime_checkable

from rsi.errors import ModelError
from rsi.models.base import GenerationRequest, GenerationResult


class Progress:
    """When a served request last moved (admitted, or a decoding step gave it a token): monotonic seconds."""

    def __init__(self) -> None:
        self.at = time.monotonic()

    def mark(self) -> None:
        self.at = time.monotonic()  # one float store: safe to call from the serving thread without a lock


class ServedFuture(Future[GenerationResult]):
    """A queued request's result, with `started` (left the queue), `abandoned` (nobody waits) and
    `progress` (when the backend last moved it; the backend calls `progress.mark()`)."""

    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Event()
        self.abandoned = threading.Event()
        self.progress = Progress()

    def set_running_or_notify_cancel(self) -> bool:
        running = super().set_running_or_notify_cancel()
        self.progress.mark()
        self.started.set()
        return running

    def set_result(self, result: GenerationResult) -> None:
        super().set_result(result)
        self.started.set()

    def set_exception(self, exception: BaseException | None) -> None:
        super().set_exception(exception)
        self.started.set()

    def cancel(self) -> bool:
        cancelled = super().cancel()
        if cancelled:
            self.started.set()
        return cancelled

    def abandon(self) -> None:
        """Cancel if still queued; otherwise ask the backend to drop the running request."""
        self.abandoned.set()
        self.cancel()

    def chained(self, transform: Callable[[GenerationResult], GenerationResult]) -> ServedFuture:
        """A future that resolves to `transform(result)` and shares this one's events (a wrapper's view)."""
        outer = ServedFuture()
        outer.started = self.started
        outer.abandoned = self.abandoned
        outer.progress = self.progress

        def forward(inner: Future[GenerationResult]) -> None:
            if inner.cancelled():
                Future.cancel(outer)
            elif (error := inner.exception()) is not None:
                Future.set_exception(outer, error)
            else:
                try:
                    Future.set_result(outer, transform(inner.result()))
                except Exception as failure:  # noqa: BLE001 - handed to whoever waits on outer
                    Future.set_exception(outer, failure)

        self.add_done_callback(forward)
        return outer


@runtime_checkable
class QueuedModel(Protocol):
    """A `ChatModel` that queues in process and says when a request starts being served."""

    name: str

    def submit(self, request: GenerationRequest) -> ServedFuture:
        """Queue `request` (raises at once for a request that cannot be served, e.g. an unknown specialist)."""
        ...


class DeadlineReached(Exception):
    """The caller's own deadline passed while its request was queued or being served."""


def wait_served(model: QueuedModel, request: GenerationRequest, model_s: float, deadline: float) -> GenerationResult:
    """Submit `request` and wait: queue time against `deadline`, serving against `model_s` without progress.

    Raises `DeadlineReached` when the deadline passes while the request is queued, `ModelError` when a
    served request gains no token for `model_s` (a stalled model); either way the request is abandoned
    so it stops costing the batch anything.
    """
    future = model.submit(request)
    while not future.started.is_set():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            future.abandon()
            raise DeadlineReached("agent time limit reached while the request waited for the model")
        future.started.wait(min(remaining, 1.0))
    while True:
        stalled_for = time.monotonic() - future.progress.at
        if stalled_for >= model_s:
            future.abandon()
            raise ModelError(f"model {model.name!r} made no progress for model_s={model_s:g}s while serving the request")
        try:
            return future.result(timeout=min(1.0, model_s - stalled_for))
        except FutureTimeout:
            continue
