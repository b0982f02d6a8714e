"""Terminal coverage output at the scale of a real suite: low coverage still draws, ids stay whole."""

from __future__ import annotations

import json
import re

from rsi.run.plot import sparkline, text_curve


def test_low_coverage_of_a_large_suite_still_draws_its_curve() -> None:
    curve = [0] * 30 + [1] * 20 + [2] * 20 + [5] * 30  # 5 of 164 tasks after 100 attempts
    lines = text_curve(curve, total_tasks=164, width=50, height=10)
    assert lines[0] == "tasks covered (of 164)"
    assert lines[1].startswith("   5 |")  # the axis spans what was covered
    assert sum(line.count("#") for line in lines) > 20
    assert set(sparkline(curve, 164, width=10)) - {" "}  # not a blank line


def test_coverage_command_keeps_task_ids_whole_and_bounds_the_task_rows(mini_ws, cli) -> None:
    """A 40-task run in an 80-column terminal: ids are not cut to `pyfuncs/ta…`, and the per-task table
    lists covered and tried tasks first, with one line for the rest instead of 40 rows."""
    ran = cli("run", "-p", "mini", "--budget-attempts", "8", "--limit-tasks", "40", "--job-size", "4", "--json",
              cwd=mini_ws.root, env={"RSI_ATTEMPT_OVERRIDE": "noop:0.5"})
    assert ran.returncode == 0, ran.stderr
    run_id = json.loads(ran.stdout)["run_id"]
    detail = json.loads(cli("coverage", run_id, "--json", cwd=mini_ws.root).stdout)["tasks_detail"]
    tried = [t["task_key"] for t in detail if t["attempts"] or t["errors"]]
    assert 0 < len(tried) <= 8

    out = cli("coverage", run_id, cwd=mini_ws.root, env={"COLUMNS": "80"})
    assert out.returncode == 0, out.stderr
    for key in tried:
        assert key in out.stdout, key  # whole, not truncated with an ellipsis
    assert not re.search(r"pyfuncs/\S*…", out.stdout)
    assert "attempts" in out.stdout.split("per task")[1]  # headers whole too
    assert "15 more tasks" in out.stdout  # 40 tasks, 25 rows shown
    every = cli("coverage", run_id, "--all-tasks", cwd=mini_ws.root, env={"COLUMNS": "200"})
    assert all(t["task_key"] in every.stdout for t in detail)


def test_rsi_run_without_a_scheduler_uses_the_default_end_to_end(mini_ws, cli) -> None:
    """`rsi run` with no `--scheduler` runs the registry's default (`thompson`, issue 40's choice across
    regimes): the run and every job record it, and it starts by examining each configuration with a
    one-task probe (both mini configurations sample) before exploiting any."""
    from rsi.run.spec import RunSpec
    from rsi.store import open_store

    ran = cli("run", "-p", "mini", "--budget-attempts", "12", "--limit-tasks", "8", "--job-size", "4", "--json",
              "--no-report", cwd=mini_ws.root, env={"RSI_ATTEMPT_OVERRIDE": "noop:0.5"})
    assert ran.returncode == 0, ran.stderr
    run_id = json.loads(ran.stdout)["run_id"]
    with open_store(mini_ws.db_url) as store:
        run, jobs = store.get_run(run_id), sorted(store.list_jobs(run_id), key=lambda j: j.job_index)
    assert run.scheduler == RunSpec().scheduler == "thompson"
    assert jobs and all(j.details["scheduler"] == "thompson" for j in jobs)
    probes = jobs[:2]
    assert [p.details["reason"].split(": ")[1] for p in probes] == ["probe 1/2", "probe 2/2"]
    assert all(len(p.planned_tasks) == 1 for p in probes) and probes[0].configuration_hash != probes[1].configuration_hash
