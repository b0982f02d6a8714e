"""`rsi trajectories export` and `rsi propose` through the real CLI entry point (subprocess)."""

from __future__ import annotations

import json

import pytest


@pytest.mark.slow
def test_cli_export_and_propose(builder, planned, tmp_path, promote_cli) -> None:
    a = builder.parent_config()
    b = builder.config("repl-hot", **{"harness.sampling.temperature": 0.7})
    train, heldout = builder.train_ids(), builder.heldout_ids()
    run_id = builder.run([planned(a, t) for t in train[:4]] + [planned(b, t, tokens=50) for t in train[2:6]]
                         + [planned(a, heldout[0]), planned(b, heldout[1])])
    ws = builder.workspace
    out = tmp_path / "sft"
    done = promote_cli("trajectories", "export", run_id, "--out", str(out), "--max-per-task", "1", cwd=ws.root)
    assert done.returncode == 0, done.stderr
    assert "wrote 6 examples" in done.stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["policy"]["max_per_task"] == 1
    assert all(count == 1 for count in manifest["counts"]["per_task"].values())
    exported = {entry["task"] for entry in manifest["source"]["attempts"]}
    assert not exported & {builder.tasks[t].key for t in heldout}
    # t2, t3 were solved by both; the cheaper (b, 50 tokens) wins
    assert {e["config_name"] for e in manifest["source"]["attempts"] if e["task"].endswith(train[2])} == {"repl-hot"}
    bad = promote_cli("trajectories", "export", run_id, "--out", str(out), "--rank-by", "vibes", cwd=ws.root)
    assert bad.returncode == 2 and "--rank-by" in bad.stderr and "Traceback" not in bad.stderr

    proposed = promote_cli("propose", run_id, "--out", "portfolios/gen2.toml", "--max-new", "3", "--json",
                               cwd=ws.root)
    assert proposed.returncode == 0, proposed.stderr
    result = json.loads(proposed.stdout)
    assert len(result["new"]) == 3 and all(v["parents"] for v in result["new"])
    assert {v["name"] for v in result["kept"]} == {"repl-greedy", "repl-hot"}
    shown = promote_cli("propose", run_id, "--out", "portfolios/gen2b.toml", cwd=ws.root)
    assert shown.returncode == 0 and "kept" in shown.stdout and "new   " in shown.stdout
