"""A no-op attempt function: no model, no sandbox, a verdict decided from the key.

For measuring orchestration overhead (bench/orchestration_overhead.py) and for testing executors
and crash safety where the point is the machinery, not the agent. It is picklable, so it also
crosses SLURM. It is never selected by a normal `rsi run` (only through the documented testing
hook RSI_ATTEMPT_OVERRIDE=noop:..., see rsi/run/attempt_fn.py).
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field

from rsi.executors.base import AttemptResult, AttemptSpec
from rsi.verdict import Verdict


class NoopAttempt(BaseModel):
    """Passes with probability `pass_rate` (a deterministic function of task and configuration)."""

    model_config = ConfigDict(frozen=True)
    pass_rate: float = Field(default=0.5, ge=0.0, le=1.0)
    sleep_s: float = Field(default=0.0, ge=0.0, description="Pretend work, to make runs killable mid-job.")
    error_keys: frozenset[str] = Field(default=frozenset(), description="Keys whose first try raises (infra error).")
    crash_keys: frozenset[str] = Field(default=frozenset(), description="Keys whose process dies (os._exit).")
    tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0, description="Of `tokens`, the completion tokens.")
    log_path: str = Field(default="", description="Append each executed key here (tests count executions).")

    def __call__(self, spec: AttemptSpec) -> AttemptResult:
        started = datetime.now(UTC)
        if self.sleep_s:
            time.sleep(self.sleep_s)
        if self.log_path:
            # One short O_APPEND write per line: atomic, so concurrent threads never interleave.
            fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, f"{spec.key}\n".encode())
            finally:
                os.close(fd)
        if spec.key in self.crash_keys:
            os._exit(3)  # a worker killed from outside (OOM, node failure): no result at all
        if spec.key in self.error_keys and spec.try_index == 0:
            raise RuntimeError(f"scripted infrastructure failure for {spec.key}")
        digest = hashlib.sha256(f"{spec.config.config_hash}|{spec.task_key}|{spec.attempt_index}|{spec.seed}".encode())
        draw = int.from_bytes(digest.digest()[:8], "big") / 2**64
        passed = draw < self.pass_rate
        return AttemptResult(
            key=spec.key,
            verdict=Verdict.PASSED if passed else Verdict.FAILED,
            reason="noop: scripted pass" if passed else "noop: scripted failure",
            tokens=self.tokens,
            completion_tokens=self.completion_tokens,
            started=started,
            finished=datetime.now(UTC),
            host=f"{socket.gethostname()}:{os.getpid()}",
        )
