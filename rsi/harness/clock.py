"""The agent's clock: the attempt's own time (the code it runs, its candidates' checks), never the time it
spends queued for or waiting on our model.

On a shared machine a slow model is our fault, not the agent's: an attempt whose turns waited minutes for a
busy engine must not end as `timeout` (a task failure). So `harness.timeouts.agent_s` bounds the agent's
own time, and the model is bounded apart, per call (`model_s`, in rsi/harness/agent.py `call_model`): a
model that cannot serve in time is a `ModelError`, an infrastructure error that the orchestrator retries.
The time waited is kept in the trajectory (`final_metrics.model_wait_s`) beside the wall time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class AgentClock:
    """Agent time left: `budget_s` from `started`, stretched by every second spent waiting for the model."""

    def __init__(self, budget_s: float, started: float | None = None, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self.budget_s = budget_s
        self.started = now() if started is None else started
        self.model_wait_s = 0.0

    @property
    def deadline(self) -> float:
        """The monotonic time the agent's budget ends at, as of now (later by every model wait to come)."""
        return self.started + self.budget_s + self.model_wait_s

    def remaining(self) -> float:
        return self.deadline - self._now()

    def expired(self) -> bool:
        return self.remaining() <= 0

    def agent_s(self) -> float:
        """The agent's own time so far: wall time minus model waits."""
        return max(0.0, self._now() - self.started - self.model_wait_s)

    @contextmanager
    def waiting_for_model(self) -> Iterator[None]:
        """Time inside this block is the model's, not the agent's."""
        from rsi.model_waits import waiting

        began = self._now()
        try:
            with waiting():  # the executor's watchdog leaves it out too (rsi/model_waits.py)
                yield
        finally:
            self.model_wait_s += self._now() - began
