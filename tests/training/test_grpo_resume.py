"""GRPO killed with SIGKILL resumes after its last finished step and ends where an uninterrupted run ends;
`rsi train --method grpo` registers the adapter with its method, rewards per step and rollout count.

Real peft on a tiny random Llama (tests/training/test_grpo.py), real harness, sandbox and verifier; the
rollouts answered through the scripted-rollout hook (reply `seed % 3`), so both runs sample the same
groups and the comparison is exact up to float rounding. The kill is a real SIGKILL of a subprocess.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.training.test_grpo import grpo_request, tiny_base, write_replies  # noqa: F401 - tiny_base is a fixture

GRPO = """
import os, signal, sys
from rsi.training.grpo import GrpoRequest, train_grpo
request = GrpoRequest.model_validate_json(open(sys.argv[1]).read())
kill_at = int(sys.argv[2])
def progress(p):
    if p.step == kill_at:  # after the step's checkpoint was written
        os.kill(os.getpid(), signal.SIGKILL)
print(train_grpo(request, progress).model_dump_json())
"""


def _grpo(request_file: Path, env: dict[str, str], kill_at: int = 0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", GRPO, str(request_file), str(kill_at)], capture_output=True,
                          text=True, timeout=900, env={**os.environ, **env})


def _weights(adapter_dir: str) -> dict:
    from safetensors.torch import load_file

    return load_file(str(Path(adapter_dir) / "adapter_model.safetensors"))


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_killed_grpo_resumes_and_matches_an_uninterrupted_run(workspace, tiny_base, tmp_path) -> None:  # noqa: F811
    from rsi.tasks.load import load_suite
    from rsi.training.rollouts import ENV_ROLLOUT_OVERRIDE, train_tasks

    replies = write_replies(tmp_path / "replies.json", train_tasks(load_suite(workspace, "pyfuncs"))[:4])
    env = {ENV_ROLLOUT_OVERRIDE: f"scripted:{replies}", "RSI_TORCH_THREADS": "1"}

    def request_file(name: str) -> Path:
        path = tmp_path / f"{name}.json"
        path.write_text(grpo_request(workspace, tiny_base, tmp_path / name, steps=3, group=3).model_dump_json())
        return path

    straight = _grpo(request_file("straight"), env)
    assert straight.returncode == 0, straight.stderr[-3000:]
    whole = json.loads(straight.stdout)
    assert whole["resumed_from_step"] == 0 and whole["steps"] == 3

    killed = _grpo(request_file("killed"), env, kill_at=2)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    assert not (tmp_path / "killed" / "adapter").exists() and (tmp_path / "killed" / "ckpt" / "state.pt").is_file()

    resumed = _grpo(request_file("killed"), env)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    again = json.loads(resumed.stdout)
    assert again["resumed_from_step"] == 2 and again["steps"] == 3  # steps 1-2 from the checkpoint, 3 trained
    assert again["rewards_per_step"] == whole["rewards_per_step"] and again["rollouts"] == whole["rollouts"] == 18
    assert [r["tasks"] for r in again["records"]] == [r["tasks"] for r in whole["records"]]
    assert again["losses"] == pytest.approx(whole["losses"], abs=1e-5)
    a, b = _weights(whole["adapter_dir"]), _weights(again["adapter_dir"])
    assert a.keys() == b.keys() and max(float((a[k] - b[k]).abs().max()) for k in a) < 1e-5
    assert max(float(a[k].abs().max()) for k in a if "lora_B" in k) > 0


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_rsi_train_method_grpo_registers_method_rewards_and_rollouts(workspace, tiny_base, tmp_path, cli) -> None:  # noqa: F811
    from rsi.tasks.load import load_suite
    from rsi.training.rollouts import ENV_ROLLOUT_OVERRIDE, train_tasks

    replies = write_replies(tmp_path / "replies.json", train_tasks(load_suite(workspace, "pyfuncs"))[:3])
    env = {"RSI_WORKSPACE": str(workspace.root), ENV_ROLLOUT_OVERRIDE: f"scripted:{replies}",
           "RSI_TORCH_THREADS": "1"}
    sets = [f'base.source="{tiny_base}"', 'base.format="hf"', 'base.file=""', 'base.id="tiny-llama"',
            'harness.substrate="text"', "harness.max_turns=1", "harness.sampling.max_tokens=48",
            'serving.dtype="float32"', 'training.method="grpo"', "training.grpo.steps=2", "training.learning_rate=0.01"]
    revised = cli("hcp", "revise", "default", *[a for s in sets for a in ("--set", s)], "-m", "tiny GRPO",
                  cwd=workspace.root, env=env)
    assert revised.returncode == 0, revised.stderr
    done = cli("train", "--group-size", "3", "--option", "prompts_per_step=2", "--limit-tasks", "3", "--sandbox", "local",
               "--json", cwd=workspace.root, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    outcome = json.loads(done.stdout)
    assert "reward" in done.stderr and "2/2" in done.stderr  # the progress of the last step
    shown = cli("adapters", "show", outcome["adapter_id"][:12], "--json", cwd=workspace.root, env=env)
    lineage = json.loads(shown.stdout)["lineage"]
    assert lineage["method"] == "grpo" and lineage["hyperparameters"]["method"] == "grpo"
    assert lineage["metrics"]["rollouts"] == 12 and len(lineage["metrics"]["rewards_per_step"]) == 2
    assert lineage["dataset"]["kind"] == "grpo-rollouts" and lineage["dataset"]["examples"] == 3
    assert all(t.startswith("pyfuncs/") for t in lineage["dataset"]["tasks"])
    assert outcome["candidate"]["ref"].startswith("default-candidate@r")
    bad = cli("train", "--method", "rl", cwd=workspace.root, env=env)
    assert bad.returncode == 2 and "--method" in bad.stderr
    no_data = cli("train", "--method", "sft", cwd=workspace.root, env=env)
    assert no_data.returncode == 2 and "DATASET" in no_data.stderr
