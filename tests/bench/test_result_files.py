"""Benchmark result files (bench/results.py) and RESULTS.md rendered from them (bench/render.py), issue 47 item 5.

Real git repositories in temporary directories, real benchmark processes (a miniature benchmark written
the way bench/README.md says), the real renderer; the last tests read this repository's own record.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"

TINY = '''"""A benchmark in miniature: its record first, then the work, then its figures."""
import argparse
import time
from pathlib import Path

import results


def render_result(result):
    rows = [f"| {seed} | {value} |" for seed, value in result["figures"]["squares"].items()]
    return "Squares of the seeds.\\n\\n| seed | square |\\n| --- | ---: |\\n" + "\\n".join(rows)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--wait-for", type=Path)
    results.add_arguments(parser)
    args = parser.parse_args()
    run = results.start("tiny", seeds=range(args.seeds), allow_dirty=args.allow_dirty, params=vars(args))
    while args.wait_for and not args.wait_for.exists():
        time.sleep(0.05)
    results.finish(run, {"squares": {str(s): s * s for s in range(args.seeds)}})


if __name__ == "__main__":
    main()
'''


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def bench_repo(tmp_path: Path, git_identity: None) -> Path:
    """A repository with this module's bench/results.py and bench/render.py, a miniature benchmark and a
    RESULTS.md holding one typed section, all committed."""
    repo = tmp_path / "repo"
    (repo / "bench").mkdir(parents=True)
    for name in ("results.py", "render.py"):
        shutil.copy(BENCH / name, repo / "bench" / name)
    (repo / "bench" / "tiny.py").write_text(TINY)
    (repo / "bench" / "RESULTS.md").write_text("# Benchmark results\n\n## old\n\nTyped by hand: 12 ms.\n")
    (repo / "README").write_text("a project\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a project with a benchmark")
    return repo


def tiny(repo: Path, *args: str, wait: bool = True) -> subprocess.CompletedProcess[str] | subprocess.Popen[str]:
    command = [sys.executable, "bench/tiny.py", *args]
    if not wait:
        return subprocess.Popen(command, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, cwd=repo, capture_output=True, text=True, timeout=60)


def render(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "bench/render.py", "--repo", str(repo), *args], cwd=repo,
                          capture_output=True, text=True, timeout=120)


def result_files(repo: Path) -> list[Path]:
    folder = repo / "bench" / "results"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


@pytest.fixture
def results_module(monkeypatch: pytest.MonkeyPatch):  # -> the bench/results.py module
    monkeypatch.syspath_prepend(str(BENCH))
    import results

    return results


def test_a_dirty_tree_is_refused_in_one_line_before_any_record(bench_repo: Path) -> None:
    (bench_repo / "README").write_text("a project, edited\n")
    done = tiny(bench_repo)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: ")
    assert "README" in done.stderr and "--allow-dirty" in done.stderr and "Traceback" not in done.stderr
    assert result_files(bench_repo) == []


def test_allow_dirty_marks_the_file_its_name_and_every_rendered_row(bench_repo: Path) -> None:
    (bench_repo / "README").write_text("a project, edited\n")
    (bench_repo / "scratch.txt").write_text("untracked, outside runs/: part of what ran\n")
    assert tiny(bench_repo, "--allow-dirty").returncode == 0
    [path] = result_files(bench_repo)
    data = json.loads(path.read_text())
    head = git(bench_repo, "rev-parse", "HEAD").strip()
    assert path.name.endswith(f"-{head[:7]}-dirty.json") and path.name.startswith("tiny-")
    assert (data["dirty"], data["dirty_paths"], data["commit"]) == (True, ["README", "scratch.txt"], head)
    assert render(bench_repo).returncode == 0
    text = (bench_repo / "bench" / "RESULTS.md").read_text()
    section = text[text.index("## tiny"):]
    assert "**DIRTY TREE**" in section and "`README`" in section
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[0] == "| seed | square |"  # the header row is not a result
    assert rows[1:] == ["| 0 (dirty) | 0 |", "| 1 (dirty) | 1 |", "| 2 (dirty) | 4 |"]


def test_result_files_and_untracked_run_outputs_leave_a_tree_clean(bench_repo: Path, results_module) -> None:
    (bench_repo / "runs" / "r1").mkdir(parents=True)
    (bench_repo / "runs" / "r1" / "out.json").write_text("{}")
    (bench_repo / "bench" / "results").mkdir()
    (bench_repo / "bench" / "results" / "other-2026-01-01-abc.json").write_text("{}")
    assert results_module.dirty_paths(bench_repo) == []
    (bench_repo / "bench" / "tiny.py").write_text(TINY.replace("square", "sq"))
    git(bench_repo, "mv", "README", "README.txt")
    assert results_module.dirty_paths(bench_repo) == ["README.txt", "bench/tiny.py"]


def test_the_record_is_written_before_the_figures_and_completed_after(bench_repo: Path) -> None:
    go = bench_repo.parent / "go"
    process = tiny(bench_repo, "--seeds", "2", "--wait-for", str(go), wait=False)
    try:
        deadline = time.monotonic() + 30
        while not result_files(bench_repo) and time.monotonic() < deadline:
            time.sleep(0.05)
        [path] = result_files(bench_repo)
        running = json.loads(path.read_text())
        assert (running["status"], running["figures"], running["finished"]) == ("running", None, None)
        assert running["commit"] == git(bench_repo, "rev-parse", "HEAD").strip() and running["dirty"] is False
        assert running["command"] == f"python bench/tiny.py --seeds 2 --wait-for {go}" and running["cwd"] == "."
        assert running["seeds"] == [0, 1] and len(running["load_start"]) == 3
        assert running["machine"]["cores"] == os.cpu_count() and running["versions"]["python"]
        go.touch()
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()
    done = json.loads(path.read_text())
    assert (done["status"], done["figures"]) == ("done", {"squares": {"0": 0, "1": 1}})
    assert done["finished"] >= done["started"] and len(done["load_end"]) == 3


def test_finish_publishes_by_rename_so_a_failure_leaves_the_start_record_whole(
        bench_repo: Path, results_module, monkeypatch: pytest.MonkeyPatch) -> None:
    run = results_module.start("atomic", argv=["bench/x.py"], repo=bench_repo)
    before = run.path.read_text()

    def crash(*_args: object) -> None:
        raise OSError("the machine went away before the rename")

    monkeypatch.setattr(results_module.os, "replace", crash)
    with pytest.raises(OSError):
        results_module.finish(run, {"rows": list(range(100_000))})
    assert run.path.read_text() == before and json.loads(before)["status"] == "running"
    monkeypatch.undo()
    with pytest.raises(TypeError):  # figures that are not JSON: the record stays as it was
        results_module.finish(run, {"rows": list(range(100_000)), "z": object()})
    assert run.path.read_text() == before
    assert [p.name for p in run.path.parent.iterdir()] == [run.path.name]  # no temporary file left behind


def test_the_same_command_reopens_its_running_record_and_another_gets_its_own(bench_repo: Path, results_module) -> None:
    first = results_module.start("long", argv=["bench/long.py", "--n", "3"], repo=bench_repo)
    again = results_module.start("long", argv=["bench/long.py", "--n", "3"], repo=bench_repo)
    assert again.path == first.path and len(again.data["resumes"]) == 1
    assert again.data["started"] == first.data["started"]
    other = results_module.start("long", argv=["bench/long.py", "--n", "4"], repo=bench_repo)
    assert other.path != first.path and other.path.name.endswith("-2.json")
    results_module.finish(again, {"n": 3})
    fresh = results_module.start("long", argv=["bench/long.py", "--n", "3"], repo=bench_repo)
    assert fresh.path not in (first.path, other.path)  # a finished record is never reopened


def test_render_check_catches_a_hand_edit_and_a_typed_section(bench_repo: Path) -> None:
    assert tiny(bench_repo).returncode == 0
    results_md = bench_repo / "bench" / "RESULTS.md"
    assert render(bench_repo, "--check").returncode == 1  # not rendered yet
    assert render(bench_repo).returncode == 0
    text = results_md.read_text()
    assert "## old\n\n*(historic: typed before result files; not rendered)*\n\nTyped by hand: 12 ms." in text
    assert "| 2 | 4 |" in text and "Reproduce: `python bench/tiny.py`" in text
    assert render(bench_repo, "--check").returncode == 0
    assert render(bench_repo).returncode == 0 and results_md.read_text() == text  # marked once
    results_md.write_text(text.replace("| 2 | 4 |", "| 2 | 5 |"))
    done = render(bench_repo, "--check")
    assert done.returncode == 1 and "'tiny'" in done.stderr and "'old'" not in done.stderr
    results_md.write_text(text + "\n## new\n\nTyped after result files: 3 ms.\n")
    done = render(bench_repo, "--check")
    assert done.returncode == 1 and "'new'" in done.stderr


def test_a_result_file_missing_a_key_is_a_located_error(bench_repo: Path) -> None:
    assert tiny(bench_repo).returncode == 0
    [path] = result_files(bench_repo)
    data = json.loads(path.read_text())
    del data["figures"]
    path.write_text(json.dumps(data))
    done = render(bench_repo)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert str(path) in done.stderr and "'figures'" in done.stderr


def test_this_repositorys_results_md_is_the_rendering_of_its_result_files() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, str(BENCH / "render.py"), "--check"], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    committed = [p for p in (BENCH / "results").glob("*.json") if json.loads(p.read_text()).get("status") == "done"]
    assert committed, "at least one benchmark's section is rendered from a committed result file"


def test_feedback_generation_renders_its_row_from_the_evaluations_own_records(results_module) -> None:
    """The figures bench/feedback_generation.py stores are the generation's records as they dump; its section
    is rendered from them: both retentions (heldout against generation 0, covered-train in-sample) and prices."""
    import importlib

    from rsi.evaluation.records import EvalDecision, GateSummary, RetentionSummary, SideCost
    from rsi.generation.outputs import EvaluateOutput, PromoteOutput
    from rsi.promotion.decision import LiftSummary, PairTable

    bench = importlib.import_module("feedback_generation")
    table = PairTable(both=29, candidate_only=12, parent_only=3, neither=163)
    lift = LiftSummary(tasks=207, candidate_rate=41 / 207, parent_rate=32 / 207, lift=9 / 207,
                       lift_ci95=(0.006, 0.083), method="newcombe", retention=29 / 32, table=table)
    evaluate = EvaluateOutput(
        lift=lift, retention=RetentionSummary(covered=20, still_solved=20, retention=1.0, parent_resolved=20, kept=20),
        decision=EvalDecision(promote=True, reason="lift +0.043 above 0",
                              gate=GateSummary(enabled=True, min_lift=0.0, retention_min=0.9)),
        costs={"candidate": SideCost(tasks=207, pass_rate=0.198, completion_tokens_per_task=143.1,
                                     seconds_per_task=29.3),
               "parent": SideCost(tasks=207, pass_rate=0.155, completion_tokens_per_task=77.4, seconds_per_task=17.9)})
    figures = json.loads(json.dumps({
        "suite": "pyfuncs2", "generation": "g0001", "wall_min": 103.0,
        "promote": PromoteOutput(status="deferred", candidate="text-checked-samples-2").model_dump(mode="json"),
        "evaluate": evaluate.model_dump(mode="json"),
        "sides": {name: cost.model_dump(mode="json") for name, cost in evaluate.costs.items()},
        "steps": {"run": ["done", 4364.0], "train": ["done", 113.0], "promote_adapter": ["pending", None]},
    }))
    result = {"short_commit": "abc1234", "params": {"budget_attempts": 240, "select_tasks": 0}, "figures": figures}
    text = bench.render_result(result)
    row = next(line for line in text.splitlines() if line.startswith("| pyfuncs2"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[1:] == ["`abc1234`", "text-checked-samples-2 (coverage-search evidence, 240 attempts)",
                         "+0.043 [+0.006, +0.083] (0.155 -> 0.198; newcombe)", "12:3", "29/32", "20/20",
                         "143.1 vs 77.4 (1.85x)", "29.3 vs 17.9", "promoted", "103 min"]
    assert "Steps (s): run 4364, train 113." in text
