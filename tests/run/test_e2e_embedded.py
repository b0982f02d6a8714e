"""End to end: `rsi run` with the real embedded model (SmolLM2-135M), real sandbox and verifier.

Small on purpose (2 tasks, 2 configurations, 3 attempts, short turns) so it fits in about two
minutes on 2 cores. It proves the whole chain runs for real, not that the tiny model solves tasks.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

TINY_PORTFOLIO = """schema_version = 1
[portfolio]
name = "tiny"
base = "default"

[[variants]]
name = "repl-short"
[variants.overrides]
"harness.max_turns" = 2
"harness.sampling.max_tokens" = 128

[[variants]]
name = "text-short"
[variants.overrides]
"harness.substrate" = "text"
"harness.max_turns" = 1
"harness.sampling.max_tokens" = 160
"""


def test_rsi_run_with_the_embedded_model(workspace, cli, monkeypatch) -> None:
    for var in ("RSI_DB", "RSI_ATTEMPT_OVERRIDE", "RSI_MODEL_OVERRIDE"):
        monkeypatch.delenv(var, raising=False)
    (workspace.portfolios_dir / "tiny.toml").write_text(TINY_PORTFOLIO)
    result = cli("run", "-p", "tiny", "--limit-tasks", "2", "--budget-attempts", "3", "--job-size", "2",
                 "--workers", "2", "--json", cwd=workspace.root, timeout=600,
                 env={"RSI_TORCH_THREADS": "1"})  # robust on an oversubscribed machine (see models/embedded.py)
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "done", outcome
    assert outcome["errors"] == 0, outcome
    assert 1 <= outcome["attempts"] <= 3
    assert outcome["tokens"] > 0  # the model really generated
    (use,) = outcome["model_use"]  # where the model's time went, for a user asking why a run is slow
    assert use.startswith("model 'SmolLM2-135M-Instruct': ") and "decoding steps with" in use, use
    with sqlite3.connect(workspace.runs_dir / "rsi.sqlite") as conn:
        rows = conn.execute("SELECT verdict, tokens, trajectory_path FROM attempts WHERE run_id = ?",
                            (outcome["run_id"],)).fetchall()
    assert len(rows) == outcome["attempts"]
    for verdict, tokens, trajectory in rows:
        assert verdict in ("passed", "failed", "timeout")
        data = json.loads(Path(trajectory).read_text())
        assert tokens > 0 and data["steps"], trajectory
    assert Path(outcome["report_path"]).is_file()
