"""End to end with the real embedded model (SmolLM2-135M): both substrates, the real verifier.

Kept small (short max_tokens, few turns): these prove the plumbing with a real model, tokenizer and
chat template, not the model's skill. Greedy decoding, so each run is repeatable.
"""

from __future__ import annotations

import json

import pytest

from rsi.harness.attempt import run_attempt
from rsi.harness.trajectory import read_trajectory
from rsi.verdict import Verdict

pytestmark = pytest.mark.slow

# Generous: on a shared 2-core machine the 135M model can be slow; the attempts stay short anyway.
TIMEOUTS = {"agent_s": 900, "model_s": 600, "step_s": 10}


@pytest.fixture(scope="module")
def real_model():
    from rsi.models.factory import make_model

    from .conftest import make_config

    model = make_model(make_config().spec, None)
    yield model
    model.close()


def _roomy(task):
    """The task with a long agent deadline: a loaded CI machine must not turn plumbing into timeouts."""
    return task.model_copy(update={"spec": task.spec.model_copy(update={"agent_timeout_s": 900.0})})


def _check_trajectory(outcome, substrate: str):
    assert outcome.verdict in (Verdict.PASSED, Verdict.FAILED), (outcome.verdict, outcome.reason)
    assert outcome.prompt_tokens > 0 and outcome.completion_tokens > 0
    trajectory = read_trajectory(outcome.trajectory_path)
    assert trajectory.configuration.substrate == substrate
    assert trajectory.outcome.verdict is outcome.verdict
    agent_steps = [s for s in trajectory.steps if s.source == "agent"]
    assert agent_steps and all(s.metrics.completion_tokens > 0 for s in agent_steps)
    assert json.loads(outcome.trajectory_path.read_text())["schema_version"] == "rsi-trajectory/1"
    return trajectory


def test_text_substrate_with_the_real_model(real_model, config_factory, pyfuncs, sandbox, open_tmp):
    from rsi.workspace import shipped_root

    config = config_factory(
        harness={"substrate": "text", "sampling": {"max_tokens": 64}, "timeouts": TIMEOUTS},
        system_prompt=(shipped_root() / "hcp" / "prompts" / "text.md").read_text(),
    )
    outcome = run_attempt(config, _roomy(pyfuncs["add-two"]), real_model, sandbox, open_tmp / "text", seed=0)
    trajectory = _check_trajectory(outcome, "text")
    step = [s for s in trajectory.steps if s.source == "agent"][0]
    if step.code is not None:
        assert outcome.final_code == step.code  # the code block became the solution file
    if outcome.verdict is Verdict.PASSED:
        assert "def add" in outcome.final_code


def test_repl_substrate_with_the_real_model(real_model, config_factory, pyfuncs, sandbox, open_tmp):
    from rsi.workspace import shipped_root

    config = config_factory(
        harness={"substrate": "repl", "max_turns": 2, "sampling": {"max_tokens": 64}, "timeouts": TIMEOUTS},
        system_prompt=(shipped_root() / "hcp" / "prompts" / "repl.md").read_text(),
    )
    outcome = run_attempt(config, _roomy(pyfuncs["add-two"]), real_model, sandbox, open_tmp / "repl", seed=0)
    trajectory = _check_trajectory(outcome, "repl")
    assert 1 <= outcome.turns <= 2
    for step in trajectory.steps:
        if step.source == "agent":
            assert step.observation  # every turn got an observation: output, error or a correction


def test_rsi_attempt_runs_the_real_model_and_prints_the_transcript(cli, workspace):
    import tomlkit

    contract = tomlkit.parse((workspace.hcp_dir / "default.toml").read_text())
    contract["hcp"]["name"] = "quick"
    contract["harness"]["substrate"] = "text"
    contract["harness"]["system_prompt_file"] = "prompts/text.md"
    contract["harness"]["sampling"]["max_tokens"] = 48
    contract["harness"]["timeouts"]["model_s"] = 600
    (workspace.hcp_dir / "quick.toml").write_text(tomlkit.dumps(contract))

    done = cli("attempt", "hcp/quick.toml", "pyfuncs/add-two", "--seed", "1", cwd=workspace.root)
    assert done.returncode == 0, done.stderr
    assert "pyfuncs/add-two" in done.stdout and "turn 1 agent" in done.stdout
    assert ("PASSED" in done.stdout) or ("FAILED" in done.stdout)
    (path,) = (workspace.runs_dir / "attempts").glob("*/trajectory.json")
    trajectory = read_trajectory(path)
    assert trajectory.seed == 1 and trajectory.configuration.substrate == "text"
    assert trajectory.final_metrics.completion_tokens > 0
