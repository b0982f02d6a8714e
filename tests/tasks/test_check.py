"""`rsi tasks check`: reference solutions pass and empty/wrong ones fail, through the real verifier
and the real local sandbox."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "tasks" / "pyfuncs"


def _probes(result: dict) -> dict[str, str | None]:
    return {p["probe"]: p["verdict"] for p in result["probes"]}


def test_check_flags_broken_tasks(tmp_path: Path, cli) -> None:
    suite = tmp_path / "broken"
    suite.mkdir()
    shutil.copy(SHIPPED / "suite.toml", suite / "suite.toml")
    for task_id in ("add-two", "count-vowels", "is-even", "max-of-list", "absolute-value"):
        shutil.copytree(SHIPPED / task_id, suite / task_id)
    # count-vowels: the reference is wrong (forgets upper case), so it cannot pass its own cases.
    (suite / "count-vowels" / "solution" / "solution.py").write_text(
        "def count_vowels(s):\n    return sum(c in 'aeiou' for c in s)\n"
    )
    # is-even: the environment already holds a working solution, so doing nothing passes.
    shutil.copy(suite / "is-even" / "solution" / "solution.py", suite / "is-even" / "environment" / "solution.py")
    # max-of-list: every hidden case expects None, so a function returning None passes.
    cases = suite / "max-of-list" / "tests" / "cases.json"
    spec = json.loads(cases.read_text())
    spec["cases"] = [{"args": [[]], "expected": None}] * 6
    cases.write_text(json.dumps(spec))
    # absolute-value: the verifier is sound, but the instruction shows a wrong value and a public example
    # states it, so the reference fails its public checks (harness.check would steer candidates away from
    # right answers). The loader accepts it (the instruction shows it); only the reference can refuse it.
    instruction = suite / "absolute-value" / "instruction.md"
    instruction.write_text(instruction.read_text() + "    absolute(-3) == -3\n")
    toml = suite / "absolute-value" / "task.toml"
    toml.write_text(toml.read_text().split("[public]")[0] + '[public]\nexamples = [{call = "absolute(-3)", expected = "-3"}]\n')

    done = cli("tasks", "check", str(suite), "--sandbox", "local", "--json", cwd=tmp_path, timeout=300)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is False
    assert report["failed"] == ["broken/absolute-value", "broken/count-vowels", "broken/is-even", "broken/max-of-list"]
    by_key = {r["key"]: r for r in report["results"]}
    sound = {"reference": "passed", "empty": "failed", "wrong": "failed", "public": "passed"}
    assert _probes(by_key["broken/add-two"]) == sound
    assert _probes(by_key["broken/absolute-value"]) == sound | {"public": "failed"}
    public = next(p for p in by_key["broken/absolute-value"]["probes"] if p["probe"] == "public")
    assert public["reason"] == "0/1 public checks passed; examples[0] absolute(-3) returned 3, expected -3"
    assert _probes(by_key["broken/count-vowels"])["reference"] == "failed"
    assert _probes(by_key["broken/is-even"])["empty"] == "passed"
    assert _probes(by_key["broken/max-of-list"])["wrong"] == "passed"

    plain = cli("tasks", "check", str(suite), "--sandbox", "local", "--task", "count-vowels", cwd=tmp_path, timeout=300)
    assert plain.returncode == 1
    assert "broken/count-vowels: reference solution should pass but got failed" in plain.stdout
    assert "0/1 tasks sound" in plain.stdout
    plain = cli("tasks", "check", str(suite), "--sandbox", "local", "--task", "absolute-value", cwd=tmp_path, timeout=300)
    assert plain.returncode == 1
    assert ("broken/absolute-value: [public] contradicts the reference solution: 0/1 public checks passed; "
            "examples[0] absolute(-3) returned 3, expected -3") in plain.stdout


@pytest.mark.slow
def test_check_shipped_pyfuncs_passes_for_real(cli) -> None:
    done = cli(
        "tasks", "check", "tasks/pyfuncs", "--sandbox", "local", "--workers", "2", "--json", cwd=REPO, timeout=900
    )
    report = json.loads(done.stdout)
    assert done.returncode == 0, report["failed"]
    assert report["ok"] is True and report["tasks"] >= 60
    for result in report["results"]:
        want = {"reference": "passed", "empty": "failed", "wrong": "failed", "public": "passed"}
        assert _probes(result) == want, result["key"]
        reference = next(p for p in result["probes"] if p["probe"] == "reference")
        assert reference["reward"] == 1.0


def test_check_shipped_workbench_script_and_pytest_kinds(cli) -> None:
    """The general suite exercises the `script` and `pytest` verifier kinds end to end."""
    done = cli("tasks", "check", "tasks/workbench", "--sandbox", "local", "--json", cwd=REPO, timeout=300)
    report = json.loads(done.stdout)
    assert done.returncode == 0, report["failed"]
    kinds = set()
    sound = {"reference": "passed", "empty": "failed", "wrong": "failed"}
    for result in report["results"]:
        # count-errors has a public script, region-totals a public example, fix-median neither.
        public = {} if result["key"] == "workbench/fix-median" else {"public": "passed"}
        assert _probes(result) == sound | public, result["key"]
    for task_dir in (REPO / "tasks" / "workbench").iterdir():
        if (task_dir / "task.toml").is_file():
            kinds.add("script" if (task_dir / "tests" / "test.sh").is_file() else "pytest")
    assert kinds == {"script", "pytest"}
