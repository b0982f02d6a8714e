"""Every figure a user reads has one definition, shared by all commands (issue 37 item 4): on one stored
run, `rsi run`, `rsi status`, `rsi coverage`, `rsi promote --dry-run` and the report agree on the
coverage (one denominator per split, named), the run's wall time (its sessions, not the attempts'
summed times) and the tokens; the live rates are completion tokens only, over a stated window; `rsi
show` takes an attempt folder, a task folder of a run, or a run and a task id."""

from __future__ import annotations

import json
import re

import pytest

from rsi.executors.noop import NoopAttempt
from rsi.run.orchestrator import run_portfolio
from rsi.run.spec import RunSpec
from tests.run.scripted import write_script


@pytest.fixture
def scripted_run(mini_ws, cli, tmp_path):
    """A real run (scripted model, real harness, sandbox and verifier) of 4 train tasks, 2 of them solvable."""
    script = tmp_path / "script.json"
    expected = write_script(mini_ws, script, count=4)
    env = {"RSI_MODEL_OVERRIDE": f"scripted:{script}"}
    result = cli("run", "-p", "mini", "--limit-tasks", "4", "--budget-attempts", "6", "--job-size", "2", "--json",
                 cwd=mini_ws.root, env=env)
    assert result.returncode == 0, result.stderr
    return mini_ws, json.loads(result.stdout), expected


def test_the_figures_agree_across_commands(scripted_run, cli) -> None:
    ws, outcome, expected = scripted_run
    run_id = outcome["run_id"]
    assert outcome["split"] == "train" and outcome["tasks"] == 4 and 0 < outcome["covered"] <= 2
    covered = outcome["covered"]
    text = f"{covered}/4 train tasks ({covered / 4:.1%})"

    status = json.loads(cli("status", run_id, "--json", cwd=ws.root).stdout)
    assert (status["covered"], status["tasks"], status["split"], status["tokens"]) == (
        covered, 4, "train", outcome["tokens"])
    # wall time: the run's sessions (what `rsi run` said), not the attempts' summed times
    assert status["wall_from"] == "sessions" and status["wall_s"] == pytest.approx(outcome["elapsed_s"], abs=0.01)
    assert status["attempt_s"] > 0
    status_text = cli("status", run_id, cwd=ws.root, env={"COLUMNS": "200"}).stdout
    assert f"coverage     {text}" in status_text and "wall time" in status_text

    coverage = cli("coverage", run_id, "--json", cwd=ws.root)
    c = json.loads(coverage.stdout)
    assert (c["covered"], c["tasks"], c["split"]) == (covered, 4, "train")
    assert f"coverage {text} after" in cli("coverage", run_id, cwd=ws.root, env={"COLUMNS": "200"}).stdout

    promote = cli("promote", run_id, "--dry-run", "--allow-weak-isolation", cwd=ws.root, env={"COLUMNS": "300"})
    assert f"coverage {text}, " in promote.stdout, promote.stdout + promote.stderr
    attempted = int(re.search(r"coverage [^,]+, (\d+) attempted", promote.stdout).group(1))
    assert attempted <= 4
    promoted = json.loads(cli("promote", run_id, "--dry-run", "--allow-weak-isolation", "--json", cwd=ws.root).stdout)
    assert promoted["coverage"] == {"covered": covered, "tasks": 4, "split": "train", "attempted": attempted}

    page = (ws.run_dir(run_id) / "report.html").read_text()
    assert f"<b>{covered}/4</b> train tasks ({covered / 4:.1%})" in page and "wall time of the run" in page
    wall = float(re.search(r"wall time of the run</th><td class='l'>([0-9.]+) s", page).group(1))
    assert wall == pytest.approx(outcome["elapsed_s"], abs=0.51)  # shown to the second


def test_show_takes_an_attempt_folder_a_task_folder_or_a_run_and_task(scripted_run, cli) -> None:
    ws, outcome, expected = scripted_run
    run_id = outcome["run_id"]
    task_key = next(iter(expected))
    task_id = task_key.split("/", 1)[1]
    listed = cli("show", run_id, task_id, "--json", cwd=ws.root)
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert rows and all(r["task"] == task_key and r["verdict"] in ("passed", "failed") for r in rows)
    attempt = rows[0]["folder"]
    task_folder = str(ws.run_dir(run_id) / "attempts" / rows[0]["job"] / task_key.replace("/", "__"))
    by_folder = cli("show", task_folder, cwd=ws.root, env={"COLUMNS": "250"})
    assert by_folder.returncode == 0, by_folder.stderr
    assert "attempt(s) of " + task_key in by_folder.stdout and "rsi show FOLDER" in by_folder.stdout
    rendered = cli("show", attempt, cwd=ws.root)
    assert rendered.returncode == 0 and rows[0]["verdict"].upper() in rendered.stdout
    assert cli("show", run_id, f"{task_key.split('/')[0]}/{task_id}", "--json", cwd=ws.root).returncode == 0
    missing = cli("show", run_id, "no-such-task", cwd=ws.root)
    assert missing.returncode == 2 and "no attempt of task" in missing.stderr
    job_folder = cli("show", str(ws.run_dir(run_id) / "attempts"), cwd=ws.root)
    assert job_folder.returncode == 2 and "rsi show RUN TASK" in job_folder.stderr


def test_the_live_rates_count_completion_tokens_over_the_window(mini_ws, monkeypatch) -> None:
    """The progress line's tokens per second are completion tokens (prompt tokens apart) over the same
    window as the attempt rate: 30 completion tokens an attempt make 30 x the attempts per second."""
    import rsi.run.totals as totals

    monkeypatch.setattr(totals, "RATE_MIN_S", 0.3)
    snapshots = []

    class Recorder:
        def update(self, progress, event=None) -> None:
            snapshots.append(progress)

        def close(self) -> None: ...

    run_portfolio(RunSpec(portfolio="mini", budget_attempts=16, limit_tasks=8, job_size=4, workers=2, report=False),
                  mini_ws, Recorder(), attempt_fn=NoopAttempt(pass_rate=0.0, sleep_s=0.1, tokens=100,
                                                              completion_tokens=30))
    rated = [p for p in snapshots if p.completion_tokens_per_s]
    assert rated, "no snapshot had a rate"
    last = rated[-1]
    assert last.completion_tokens_per_s == pytest.approx(30 * last.rate_per_min / 60)
    assert last.rate_window_s >= 0.3 and last.eta_basis.startswith("at ")
    assert snapshots[-1].tokens == 16 * 100  # the total still counts prompt + completion, and says so
