"""The `ui` task kind's judge: the agent's page in headless Chromium, scored by layered checks.

    checks.py   the check registry (name -> layer, parameter model), UiOptions, checks.toml loading
    judge.py    the child: Chromium over the DevTools pipe, the page on a fake origin, the checks
    cdp.py      the DevTools-protocol client the child uses (standard library only)
    runner.py   the parent: the child under a wall-time limit in the sandbox, the typed UiResult

The seam's `ui` kind calls `verify_ui(options, checks, workdir, sandbox=..., limits=..., out_dir=...)`.
"""

from __future__ import annotations

from pathlib import Path

from rsi.sandbox.base import Limits, Sandbox
from rsi.verdict import VerifierOutcome
from rsi.verifier.ui.checks import (
    CHECKS,
    LAYERS,
    CheckError,
    CheckSpec,
    UiOptions,
    load_checks_file,
    parse_checks,
)
from rsi.verifier.ui.runner import (
    NO_BROWSER,
    CheckResult,
    UiResult,
    chromium_version,
    find_chromium,
    judge_page,
)

__all__ = [
    "CHECKS", "LAYERS", "NO_BROWSER", "CheckError", "CheckResult", "CheckSpec", "UiOptions", "UiResult",
    "chromium_version", "find_chromium", "judge_page", "load_checks_file", "parse_checks", "verify_ui",
]


def verify_ui(
    options: UiOptions,
    checks: list[CheckSpec],
    workdir: Path,
    *,
    sandbox: Sandbox | None = None,
    limits: Limits | None = None,
    out_dir: Path | None = None,
) -> VerifierOutcome:
    """Judge the page in `workdir`; the repo's outcome (layer scores and kept files included). Never raises."""
    return judge_page(options, checks, Path(workdir), sandbox=sandbox, limits=limits, out_dir=out_dir).outcome()
