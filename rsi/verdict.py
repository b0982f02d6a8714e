"""Verdicts: how an attempt ends. Infrastructure errors are never task failures."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field


class Verdict(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"  # infrastructure: sandbox did not start, verifier crashed on its own, model backend down
    TIMEOUT = "timeout"

    @property
    def counts_as_attempt(self) -> bool:
        """Errors are retried and never count toward coverage or failure rates."""
        return self is not Verdict.ERROR


class VerifierOutcome(BaseModel):
    """What the hidden verifier concluded about a final working directory."""

    verdict: Verdict
    reason: str = ""
    reward: float = Field(default=0.0, ge=0.0, le=1.0)
    output: str = Field(default="", description="Verifier output, truncated; never shown to the agent.")
    wall_s: float = 0.0
    layer_scores: dict[str, float] = Field(
        default_factory=dict, description="Per-layer share of passed checks (ui kind: viability, task, ...)."
    )
    artifacts: dict[str, str] = Field(
        default_factory=dict, description="name -> path of a file the verifier kept (ui kind: screenshot, checks)."
    )
