"""The error hierarchy: one root, one subclass per layer, each with a message and a hint.

The CLI maps these to exit codes: `UserInputError` subclasses (bad contracts, bad flags, unknown
names) exit 2, every other `RsiError` exits 1. Library code raises; only the CLI prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class RsiError(Exception):
    """Root of every error rsi raises on purpose. `hint` says what to do about it."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def lines(self) -> list[str]:
        """The lines the CLI prints, one per problem."""
        return [self.message]


class UserInputError(RsiError):
    """The user gave something invalid: a file, a flag, a name. Exit code 2."""

    exit_code = 2


@dataclass(frozen=True)
class Problem:
    """One problem in one input file, located as precisely as the source allows."""

    file: Path | str
    line: int | None
    key: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else f"{self.file}"
        return f"{where}: {self.key}: {self.message}" if self.key else f"{where}: {self.message}"


class ValidationError(UserInputError):
    """Every problem found in one or more input files, reported together."""

    def __init__(self, problems: list[Problem], hint: str | None = None) -> None:
        self.problems = list(problems)
        summary = "; ".join(str(p) for p in self.problems[:3])
        if len(self.problems) > 3:
            summary += f"; and {len(self.problems) - 3} more"
        super().__init__(summary, hint)

    def lines(self) -> list[str]:
        return [str(p) for p in self.problems]


class ContractError(ValidationError):
    """An HCP contract or a portfolio is invalid."""


class TaskError(ValidationError):
    """A task or a task suite is invalid."""


class WorkspaceError(UserInputError):
    """No workspace found, or the workspace is not usable."""


class RevisionError(RsiError):
    """A git operation on contract revisions failed or was refused."""


class SandboxError(RsiError):
    """A sandbox backend could not start or run a process (infrastructure, never a task failure)."""


class ModelError(RsiError):
    """A model backend failed (load, request, server)."""


class StoreError(RsiError):
    """The coverage store failed or holds something unexpected."""


class ExecutorError(RsiError):
    """An executor could not run attempts (infrastructure)."""


class TrainingError(RsiError):
    """The fine-tune stage failed."""


class VerifierUnavailable(RsiError):
    """This machine lacks what a task kind's verifier needs (the ui kind: Chromium); said before an attempt."""
