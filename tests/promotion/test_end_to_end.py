"""One generation end to end through the real CLI: `rsi run` (real harness, sandbox and verifier; the
model replaced by the run's scripted-model hook) -> `rsi promote` -> `rsi trajectories export` ->
`rsi propose`.

The scripted model answers every task the same way: turn 1 explores, turn 2 writes the reference
solution and submits. So a configuration allowed one turn fails every task and one allowed three
turns solves every task: a real, verifier-checked difference between two configurations.
"""

from __future__ import annotations

import json

import git
import pytest

from rsi.contracts.gitio import parse_commit_message
from rsi.tasks.load import load_suite


def _run(cli, ws, portfolio: str, split: str, env: dict[str, str]) -> str:
    done = cli("run", "--portfolio", portfolio, "--split", split, "--limit-tasks", "3", "--budget-attempts", "3",
               "--workers", "2", "--no-report", "--json", cwd=ws.root, env=env)
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)["run_id"]


@pytest.mark.slow
def test_generation_run_promote_export_propose(workspace, cli, tmp_path, promote_cli, monkeypatch) -> None:
    monkeypatch.delenv("RSI_DB", raising=False)  # this workspace's own SQLite store
    ws = workspace
    replies = {}
    for task in load_suite(ws, "pyfuncs"):
        code = (task.solution_dir / task.spec.solution_file).read_text()
        replies[task.id] = [
            "Let me look first.\n```python\nprint('exploring')\n```",
            f"Now the solution.\n```python\nopen({task.spec.solution_file!r}, 'w').write({code!r})\nsubmit()\n```",
        ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"tasks": replies}))
    env = {"RSI_MODEL_OVERRIDE": f"scripted:{script}", "RSI_WORKSPACE": str(ws.root)}
    # The contract allows one turn (the parent fails); a portfolio variant allows three.
    revised = cli("hcp", "revise", "default", "--set", "harness.max_turns=1", "-m", "one turn", cwd=ws.root, env=env)
    assert revised.returncode == 0, revised.stderr
    (ws.portfolios_dir / "parent.toml").write_text(
        'schema_version = 1\n[portfolio]\nname = "parent"\nbase = "default"\n[[variants]]\nname = "one-turn"\n')
    (ws.portfolios_dir / "cand.toml").write_text(
        'schema_version = 1\n[portfolio]\nname = "cand"\nbase = "default"\n[[variants]]\nname = "three-turns"\n'
        '[variants.overrides]\n"harness.max_turns" = 3\n')
    repo = git.Repo(ws.root)
    repo.index.add(["portfolios/parent.toml", "portfolios/cand.toml"])
    repo.index.commit("test portfolios")
    runs = [_run(cli, ws, p, s, env) for p in ("cand", "parent") for s in ("train", "heldout")]

    promoted = promote_cli("promote", *runs, "--json", cwd=ws.root, env=env)
    assert promoted.returncode == 0, promoted.stderr + promoted.stdout
    outcome = json.loads(promoted.stdout)
    assert outcome["status"] == "promoted", outcome["decision"]["reason"]
    assert outcome["decision"]["candidate"]["config_name"] == "three-turns"
    assert outcome["decision"]["heldout"]["table"] == {"both": 0, "candidate_only": 3, "parent_only": 0, "neither": 0}
    head = repo.head.commit
    trailers = parse_commit_message(str(head.message))[2]
    assert trailers["HCP-Revision"] == "3" and repo.tags["hcp/default/r3"].commit == head
    assert "3/3 passed" in trailers["Evidence-Attempts"]

    out = tmp_path / "sft"
    exported = promote_cli("trajectories", "export", *runs, "--out", str(out), "--json", cwd=ws.root, env=env)
    assert exported.returncode == 0, exported.stderr
    manifest = json.loads(exported.stdout)
    assert manifest["dataset"]["examples"] == 3
    assert {e["config_name"] for e in manifest["source"]["attempts"]} == {"three-turns"}
    heldout = {t.key for t in load_suite(ws, "pyfuncs") if t.spec.split == "heldout"}
    assert not heldout & {e["task"] for e in manifest["source"]["attempts"]}
    line = json.loads((out / "train.jsonl").read_text().splitlines()[0])
    roles = [m["role"] for m in line["messages"]]
    assert roles == ["system", "user", "assistant", "user", "assistant"]
    assert line["messages"][3]["content"].startswith("Output:")  # the observation the harness showed

    proposed = promote_cli("propose", *runs, "--out", "portfolios/gen2.toml", "--json", cwd=ws.root, env=env)
    assert proposed.returncode == 0, proposed.stderr
    successor = json.loads(proposed.stdout)
    # one-turn solved nothing, but in 3 counted attempts: too few to judge (MIN_COUNTED_ATTEMPTS), so it is
    # kept as untried for the next run to examine, and no new variant builds on it.
    assert [k["name"] for k in successor["kept"]] == ["three-turns", "one-turn"]
    assert successor["kept"][1]["reason"].startswith("untried: solved nothing in only 3 counted attempt(s)")
    assert successor["dropped"] == []
    assert successor["new"] and all(v["parents"] == ["three-turns"] for v in successor["new"] if v["operator"] != "recombine")
