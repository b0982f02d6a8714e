"""The task-kind seam moved the shipped kinds (cases, script, pytest) without changing what they are.

tests/tasks/data/kind_baseline.json was recorded from main before the seam existed
(`python -m tests.tasks.test_kind_baseline --record`, run from the repository root): every shipped task's
content hash (tasks/pyfuncs, pyfuncs2, workbench) and, for a sample of tasks of each kind, the real
verifier's verdict on the reference solution (solution/) and on the stub the agent starts from
(environment/). A hash that moved would orphan every stored attempt, coverage row and decontamination
key of that task; a verdict that moved would mean the kind now judges differently.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from rsi.tasks.load import load_suite, task_dirs
from rsi.workspace import shipped_root

BASELINE = Path(__file__).parent / "data" / "kind_baseline.json"
SUITES = ("pyfuncs", "pyfuncs2", "workbench")
# Enough of each kind to exercise every judge: the first tasks of each cases suite and all of workbench.
SAMPLE = ("pyfuncs/add-two", "pyfuncs/acronym", "pyfuncs2/a-or-an", "pyfuncs2/absolute-difference",
          "workbench/count-errors", "workbench/fix-median", "workbench/region-totals")


def current_hashes() -> dict[str, str]:
    return {task.key: task.content_hash for suite in SUITES for task in load_suite(shipped_root(), suite)}


def current_verdict(key: str, solution: str) -> list[object]:
    """[kind, verdict, reward] of the real verifier (local sandbox) on the task's `solution` folder ("solution" or
    "environment") copied as the final working directory."""
    from rsi.sandbox.select import make_sandbox
    from rsi.tasks.load import resolve_task
    from rsi.verifier import verify

    task = resolve_task(shipped_root(), key)
    folder = Path(tempfile.mkdtemp(prefix="rsi-kind-baseline-"))
    try:
        shutil.copytree(task.environment_dir, folder / "work")
        if solution == "solution":
            shutil.copytree(task.solution_dir, folder / "work", dirs_exist_ok=True)
        outcome = verify(task, folder / "work", make_sandbox("local"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return [task.spec.verifier.kind, outcome.verdict.value, round(outcome.reward, 6)]


def record() -> None:
    verdicts = {f"{key}:{which}": current_verdict(key, which) for key in SAMPLE for which in ("solution", "environment")}
    BASELINE.parent.mkdir(parents=True, exist_ok=True)
    BASELINE.write_text(json.dumps({"hashes": current_hashes(), "verdicts": verdicts}, indent=1, sort_keys=True) + "\n")


@pytest.fixture(scope="module")
def baseline() -> dict[str, dict[str, object]]:
    return json.loads(BASELINE.read_text(encoding="utf-8"))


def test_every_shipped_task_hashes_as_before_the_seam(baseline) -> None:
    recorded = baseline["hashes"]
    assert len(recorded) == sum(len(task_dirs(shipped_root() / "tasks" / suite)) for suite in SUITES)
    now = current_hashes()
    moved = sorted(key for key in recorded if now.get(key) != recorded[key])
    assert now.keys() == recorded.keys()
    assert not moved, f"{len(moved)} task hashes moved, e.g. {moved[:5]}"


@pytest.mark.parametrize("key", SAMPLE)
def test_each_kind_judges_reference_and_stub_as_before_the_seam(baseline, key: str) -> None:
    for which in ("solution", "environment"):
        recorded = baseline["verdicts"][f"{key}:{which}"]
        assert current_verdict(key, which) == recorded, f"{key} {which}"
    # The baseline itself says something: references pass and stubs do not.
    assert baseline["verdicts"][f"{key}:solution"][1] == "passed"
    assert baseline["verdicts"][f"{key}:environment"][1] != "passed"


if __name__ == "__main__" and "--record" in sys.argv:
    record()
