"""`rsi run --executor slurm` against the real single-node SLURM: the orchestrator records, workers only run."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow




def test_rsi_run_on_slurm_with_the_real_harness(slurm, mini_ws, cli, tmp_path) -> None:
    spec = importlib.util.spec_from_file_location("scripted", Path(__file__).with_name("scripted.py"))
    scripted = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scripted)
    script = tmp_path / "script.json"
    expected = scripted.write_script(mini_ws, script, count=3)
    result = cli("run", "-p", "mini", "--executor", "slurm", "--budget-attempts", "3", "--limit-tasks", "3",
                 "--sandbox", "local", "--slurm-mem-gb", "1", "--slurm-time-min", "5", "--json", "--no-report",
                 cwd=mini_ws.root, env={"RSI_MODEL_OVERRIDE": f"scripted:{script}"}, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout)
    assert outcome["attempts"] == 3 and outcome["errors"] == 0
    assert outcome["passes"] == sum(expected.values())
    run_dir = mini_ws.run_dir(outcome["run_id"])
    batches = list((run_dir / "slurm").glob("batch-*"))
    assert batches and all((b / "array_ids").is_file() for b in batches)
    # Results came back from SLURM workers (submitit result pickles), not from this process.
    assert list(run_dir.glob("slurm/batch-*/*_result.pkl"))
    import sqlite3

    with sqlite3.connect(mini_ws.runs_dir / "rsi.sqlite") as conn:
        rows = conn.execute("SELECT task_key, verdict FROM attempts WHERE run_id = ?", (outcome["run_id"],)).fetchall()
    assert {k: v == "passed" for k, v in rows} == expected


def test_resume_on_slurm_cancels_arrays_a_killed_run_left(slurm, mini_ws, cli, tmp_path) -> None:
    import signal

    env = {"RSI_ATTEMPT_OVERRIDE": "noop:0.5:0.5", "RSI_TEST_CRASH_AT": "attempt_recorded:1"}
    args = ("run", "-p", "mini", "--executor", "slurm", "--budget-attempts", "6", "--limit-tasks", "6",
            "--job-size", "6", "--slurm-mem-gb", "0.5", "--no-report")
    first = cli(*args, cwd=mini_ws.root, env=env, timeout=300)
    assert first.returncode == -signal.SIGKILL, first.stderr[-2000:]
    import sqlite3

    with sqlite3.connect(mini_ws.runs_dir / "rsi.sqlite") as conn:
        [(run_id,)] = conn.execute("SELECT id FROM runs").fetchall()
    second = cli("run", "--resume", run_id, "--executor", "slurm", "--slurm-mem-gb", "0.5", "--no-report", "--json",
                 cwd=mini_ws.root, env={**env, "RSI_TEST_CRASH_AT": ""}, timeout=300)
    assert second.returncode == 0, second.stderr[-3000:]
    assert json.loads(second.stdout)["attempts"] == 6
    first_batch = sorted((mini_ws.run_dir(run_id) / "slurm").glob("batch-*"))[0]
    assert (first_batch / "cancelled").exists()
    with sqlite3.connect(mini_ws.runs_dir / "rsi.sqlite") as conn:
        keys = [k for (k,) in conn.execute("SELECT idem_key FROM attempts WHERE run_id = ?", (run_id,))]
    assert len(keys) == len(set(keys)) == 6
