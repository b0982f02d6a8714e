"""Verdicts: how an attempt ends. Infrastructure errors are never task failures."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator


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


def clean_text(text: str) -> str:
    """Text that JSON can carry: lone surrogates (e.g. from agent code's exception messages) -> '?'."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _clean(value: object) -> object:
    return clean_text(value) if isinstance(value, str) else value


class ExampleCheck(BaseModel):
    """One public example run on a candidate: what it returned (or raised) against what was expected."""

    model_config = ConfigDict(extra="forbid")

    call: str
    expected: str
    passed: bool
    got: str = Field(default="", description="repr of what the call returned (truncated).")
    error: str = Field(default="", description="The exception the call raised ('' when it returned).")

    _texts = field_validator("call", "expected", "got", "error", mode="before")(_clean)


class CheckRecord(BaseModel):
    """The task's public checks run on one candidate solution (never the hidden verifier); a task kind's
    `public_checks` makes it, the trajectory keeps it."""

    model_config = ConfigDict(extra="forbid")

    candidate: int = Field(ge=1, description="Which candidate of the attempt (1-based, in the order asked for).")
    passed: int = Field(ge=0, description="Checks passed: examples, plus the public script when there is one.")
    total: int = Field(ge=0)
    examples: list[ExampleCheck] = Field(default_factory=list)
    script_exit: int | None = Field(default=None, description="The public script's exit code (None: no script).")
    script_output: str = Field(default="", description="The public script's last output lines.")
    note: str = Field(default="", description="Why the checks could not run at all, or what of the working directory "
                      "they ran without (past the copy's depth, path length or size caps); '' when neither.")
    wall_s: float = 0.0
    selected: bool = Field(default=False, description="This candidate was the one submitted.")

    _texts = field_validator("script_output", "note", mode="before")(_clean)

    @property
    def all_passed(self) -> bool:
        return self.passed == self.total

    @property
    def first_failure(self) -> str:
        """The first failing check in words the model may be shown (public values only)."""
        for example in self.examples:
            if not example.passed:
                outcome = f"raised {example.error}" if example.error else f"returned {example.got}"
                return f"{example.call} {outcome}, expected {example.expected}"
        if self.script_exit not in (None, 0):
            return f"the public check script exited {self.script_exit}:\n{self.script_output}".rstrip()
        return self.note
