"""`rsi status`, `rsi coverage`, `rsi report` on a real (no-op attempt) run, through the real CLI."""

from __future__ import annotations

import base64
import json
import re

import pytest

from rsi.run.plot import sparkline, text_curve
from rsi.run.summary import build_summary


@pytest.fixture
def finished_run(mini_ws, cli):
    env = {"RSI_ATTEMPT_OVERRIDE": "noop:0.35"}
    result = cli("run", "-p", "mini", "--budget-attempts", "18", "--limit-tasks", "9", "--job-size", "3",
                 "--json", cwd=mini_ws.root, env=env)
    assert result.returncode == 0, result.stderr
    return mini_ws, json.loads(result.stdout)


def test_run_json_status_coverage_and_report_agree(finished_run, cli) -> None:
    ws, outcome = finished_run
    run_id = outcome["run_id"]
    # The run ends at the budget (18 attempts) or earlier at full coverage; which one depends on the
    # scheduler and the no-op agent's draws. Every view below must agree with what it did.
    n = outcome["attempts"]
    assert outcome["status"] == "done" and 0 < n <= 18 and (n == 18 or outcome["covered"] == 9)

    status = cli("status", "--json", cwd=ws.root)
    assert status.returncode == 0, status.stderr
    s = json.loads(status.stdout)
    assert s["run_id"] == run_id  # latest run by default
    assert (s["attempts"], s["passes"], s["covered"], s["tasks"]) == (n, outcome["passes"], outcome["covered"], 9)
    assert s["budget"]["attempts"] == 18 and s["budget_used"] == pytest.approx(n / 18)
    assert len(s["curve"]) == n and s["curve"][-1] == outcome["covered"]
    assert s["curve"] == sorted(s["curve"])  # cumulative coverage never decreases

    cov = cli("coverage", run_id, "--json", cwd=ws.root)
    assert cov.returncode == 0, cov.stderr
    c = json.loads(cov.stdout)
    assert sum(t["attempts"] for t in c["tasks_detail"]) == n
    assert sum(1 for t in c["tasks_detail"] if t["passes"]) == outcome["covered"]
    assert sum(k["attempts"] for k in c["configurations"]) == n
    png = ws.run_dir(run_id) / "coverage.png"
    assert c["png"] == str(png) and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    text = cli("coverage", run_id, cwd=ws.root)
    assert text.returncode == 0
    assert "per configuration" in text.stdout and "attempts" in text.stdout and "#" in text.stdout

    report = cli("report", run_id, "--json", cwd=ws.root)
    assert report.returncode == 0, report.stderr
    html = (ws.run_dir(run_id) / "report.html").read_text()
    assert json.loads(report.stdout)["report"].endswith("report.html")
    # Self-contained: the plot is inline, nothing is fetched.
    [encoded] = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert base64.b64decode(encoded)[:4] == b"\x89PNG"
    assert "http://" not in html and "https://" not in html
    assert f"<b>{outcome['covered']}/9</b>" in html
    for name in ("baseline", "short"):
        assert name in html


def test_read_only_commands_name_a_missing_run_with_exit_2(mini_ws, cli) -> None:
    for args in (("status",), ("status", "nope"), ("coverage", "nope"), ("report", "nope")):
        result = cli(*args, cwd=mini_ws.root)
        assert result.returncode == 2, (args, result.stderr)
        assert "Traceback" not in result.stderr and "run" in result.stderr


def test_bad_run_flags_and_spec_files_exit_2_with_the_key(mini_ws, cli, tmp_path) -> None:
    bad = cli("run", "--executor", "ray", cwd=mini_ws.root)
    assert bad.returncode == 2 and "executor" in bad.stderr
    spec = tmp_path / "run.toml"
    spec.write_text('portfolio = "mini"\njob_size = 0\n')
    result = cli("run", "--spec", str(spec), cwd=mini_ws.root)
    assert result.returncode == 2
    assert f"{spec}:2: job_size" in result.stderr


def test_spec_file_fields_are_overridden_by_flags(mini_ws, cli, tmp_path) -> None:
    spec = tmp_path / "run.toml"
    spec.write_text('portfolio = "mini"\nbudget_attempts = 50\nlimit_tasks = 4\n[slurm]\nmem_gb = 2\n')
    result = cli("run", "--spec", str(spec), "--budget-attempts", "3", "--json", "--no-report",
                 cwd=mini_ws.root, env={"RSI_ATTEMPT_OVERRIDE": "noop:0"})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["attempts"] == 3


def test_summary_counts_errors_apart_and_curve_is_cumulative() -> None:
    from datetime import UTC, datetime

    from rsi.store.rows import AttemptRow, JobRow, RunRow

    run = RunRow(id="r", status="done", portfolio="p", suite="s", split="train", created=datetime.now(UTC),
                 finished=None, seed=0, budget={"attempts": 4}, args={"tasks": ["s/a", "s/b", "s/c"]})
    jobs = [JobRow(run_id="r", job_index=0, configuration_hash="h1", planned_tasks=["s/a", "s/b"], status="done"),
            JobRow(run_id="r", job_index=1, configuration_hash="h2", planned_tasks=["s/b", "s/c"], status="done",
                   details={"reason": "fill the gap", "scheduler": "greedy"})]

    def row(job, task, counted, passed, retries=0, h="h1"):
        return AttemptRow(idem_key=f"r|{job}|{task}|0", run_id="r", job_index=job, task_key=task, counted=counted,
                          passed=passed, verdict="passed" if passed else "failed", error_retries=retries,
                          configuration_hash=h, tokens=5, wall_s=1.0)

    attempts = [row(0, "s/a", True, True), row(0, "s/b", True, False, retries=2),
                row(1, "s/b", True, True, h="h2"), row(1, "s/c", False, False, retries=1, h="h2")]
    s = build_summary(run, jobs, attempts, {"h1": "one", "h2": "two"})
    assert (s.attempts, s.passes, s.errors, s.covered, s.tasks) == (3, 2, 4, 2, 3)
    assert s.curve == [1, 1, 2]
    assert [j.new_covered for j in s.job_lines] == [1, 1]
    assert [j.reason for j in s.job_lines] == ["", "fill the gap"]
    by_name = {c.name: c for c in s.config_lines}
    assert by_name["one"].unique_solves == 1 and by_name["two"].errors == 2
    assert next(t for t in s.task_lines if t.task_key == "s/c").errors == 2
    by_task = {t.task_key: t for t in s.task_lines}
    assert by_task["s/b"].tried_by == ["one", "two"] and by_task["s/b"].solved_by == ["two"]
    assert by_task["s/c"].tried_by == []  # its one attempt was an uncounted infrastructure error


def test_text_plots() -> None:
    lines = text_curve([0, 1, 1, 2, 3, 3, 4], total_tasks=4, width=7, height=4)
    assert lines[0] == "tasks covered (of 4)"
    assert lines[1].startswith("   4 |") and lines[1].endswith("#")
    assert lines[-3].count("#") == 6  # every column but the first has at least one covered task
    assert sparkline([0, 2, 4], 4, width=3) == " ▄█"
    assert text_curve([], 3) == ["(no counted attempts yet)"]


def test_rsi_runs_never_cuts_the_run_id_or_the_figures(finished_run, cli) -> None:
    import sqlite3

    ws, outcome = finished_run
    run_id = outcome["run_id"]
    with sqlite3.connect(ws.runs_dir / "rsi.sqlite") as conn:  # a harvest's label: as long as it gets
        conn.execute("UPDATE runs SET portfolio = ? WHERE id = ?", ("harvest of " + ", ".join([run_id] * 4), run_id))
    text = cli("runs", cwd=ws.root, env={"COLUMNS": "80"})
    assert text.returncode == 0, text.stderr
    [row] = [line for line in text.stdout.splitlines() if line.startswith(run_id)]  # the whole id
    assert len(row.rstrip()) <= 80 and "harvest of" in row and "…" in row  # the label gave way
    assert f"{outcome['covered']}/9 " in row and row.rstrip().endswith(f"{outcome['attempts']}/18")
