"""Carriers apart (issue 47 item 2): `rsi ablate` measures the harness as a carrier in two arms, `rsi eval` runs the
parent as cost-matched best-of-n on heldout, and the lift is split into harness, weights, interaction and spend.

The end-to-end test is a harness-only lift through the real harness, sandbox, public checks and verifier; only the
model is scripted, and every side reads the same script, so weights cannot matter: each heldout task's first reply
is wrong and its next ones are right, so only a harness that samples past the first reply and checks the samples
against the public examples (text substrate, greedy first, 2 samples, first-pass) solves it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi.cli.render_eval import heldout_cost_matched_line
from rsi.evaluation import (
    COST_MATCHED,
    HeldoutCostMatchedSummary,
    cost_matched_basis,
    cost_matched_per_task,
    plan_heldout_best_of_n,
)
from rsi.generation.ablation import ablate_generation, carriers_of, lift_shares, read_ablation, shares_lines
from rsi.generation.outputs import EvaluateOutput, TrainOutput
from rsi.generation.state import GenerationState, now_utc, write_state
from rsi.run.attempt_fn import HarnessAttempt
from tests.evaluation.test_evaluation import setup  # noqa: F401 - the evaluation tests' fixture

CHECKED = {"harness.substrate": "text", "harness.system_prompt_file": "prompts/text.md", "harness.check": "first-pass",
           "harness.sampling.greedy_first": True, "harness.sampling.samples": 2, "harness.sampling.temperature": 0.7}


def test_n_spends_the_candidates_tokens_per_task_rounded_half_up() -> None:
    assert cost_matched_per_task(812.0, 83.0) == 10  # 9.78
    assert cost_matched_per_task(250.0, 100.0) == 3  # 2.5 rounds up
    assert cost_matched_per_task(120.0, 100.0, parent_attempts=2) == 2  # 2.4: the parent's own attempts scaled
    assert cost_matched_per_task(40.0, 100.0) == 1  # a cheaper candidate: at least one attempt
    assert cost_matched_per_task(10_000.0, 10.0) == 64  # capped at EvalSpec's bound ...
    assert "capped at 64" in cost_matched_basis("e1", 10_000.0, 10.0, 1)  # ... and the basis says so
    assert cost_matched_basis("e1", 812.0, 83.0, 1).startswith("n = round(1 x 812.0 / 83.0) = 10")
    greedy = plan_heldout_best_of_n(3, "", temperature=0.0)
    assert greedy.per_task == 3 and greedy.overrides and greedy.basis == "n = 3, given"
    assert plan_heldout_best_of_n(1, "b", temperature=0.0).overrides == {}  # one greedy answer is its best single one


def test_shares_decompose_the_lift_and_spend_is_read_beside_the_harness() -> None:
    shares = lift_shares(parent=0.40, candidate=0.55, harness_alone=0.50, weights_alone=0.43, spend_alone=0.46, tasks=100)
    assert (shares.total, shares.harness, shares.weights) == (0.15, 0.10, 0.03)
    assert shares.interaction == 0.02 and shares.harness + shares.weights + shares.interaction == pytest.approx(0.15)
    assert shares.spend == 0.06 and shares.harness_beyond_spend == 0.04
    none = lift_shares(parent=0.4, candidate=0.4, harness_alone=0.3, weights_alone=0.5, spend_alone=None, tasks=3)
    assert none.spend is None and none.harness_beyond_spend is None and none.interaction == pytest.approx(0.0)
    text = "\n".join(shares_lines(shares, "n = 3"))
    assert "harness      +0.100" in text and "weights      +0.030" in text and "spend        +0.060" in text


def _script(path: Path, tasks) -> Path:
    """Per heldout task: a wrong reply as long as the right one, then the right one twice (text-substrate blocks)."""
    replies = {}
    for task in tasks:
        code = (task.solution_dir / task.spec.solution_file).read_text()
        wrong = "def nothing():\n    return None\n# " + "x" * len(code)
        replies[task.id] = [f"```python\n{wrong}\n```", f"```python\n{code}\n```", f"```python\n{code}\n```"]
    path.write_text(json.dumps({"tasks": replies}))
    return path


@pytest.fixture
def harness_generation(workspace, setup, tmp_path):  # noqa: F811 - the fixture imported above
    """A generation whose candidate carries an adapter and a checked harness, evaluated once against its parent."""
    from rsi.adapters.registry import register_adapter
    from rsi.evaluation import EvalSpec, evaluate
    from rsi.training.candidate import write_candidate

    folder = tmp_path / "peft2"
    folder.mkdir()
    (folder / "adapter_config.json").write_text("{}")
    (folder / "adapter_model.safetensors").write_bytes(b"other weights")
    record = register_adapter(workspace, folder, {
        "name": "sft", "base": {}, "dataset": {}, "source_runs": [setup["run_id"]],
        "parent_contract": {"ref": "default@r2"}, "hyperparameters": {}, "metrics": {}, "code": {"rsi_version": "0.1.0"}})
    candidate = write_candidate(workspace, "default", record.id, record.relative_adapter_dir(workspace), 8,
                                ["q_proj", "v_proj"], parent_ref="default@r2", harness_sets=CHECKED)
    heldout = sorted((t for t in setup["tasks"] if t.spec.split == "heldout"), key=lambda t: t.key)[:2]
    script = _script(tmp_path / "checked.json", heldout)
    fn = HarnessAttempt(workspace_root=str(workspace.root), model_override=f"scripted:{script}")
    measured = evaluate(workspace, EvalSpec(candidate=candidate.ref, parent="default@r2", limit_heldout=2,
                                            limit_covered=0, workers=2), attempt_fn=fn)
    assert measured.lift.candidate_rate == 1.0 and measured.lift.parent_rate == 0.0  # the generation's own lift
    stamp = now_utc()
    state = GenerationState(id="g0001", number=1, created=stamp, updated=stamp, spec={"contract": "default"},
                            inputs={"contract": "default", "revision": 2})
    state.step("train").outputs = TrainOutput(adapter_id=record.id, parent_ref="default@r2",
                                              candidate_ref=candidate.ref).model_dump(mode="json")
    state.step("evaluate").outputs = EvaluateOutput(eval_id=measured.eval_id, lift=measured.lift,
                                                    costs=measured.costs).model_dump(mode="json")
    write_state(workspace, state)
    return candidate.ref, measured, fn, script


def _harness(contract):
    """The harness as the agent meets it: the [harness] table (less its clock version and where its prompt is stored) and the prompt."""
    return contract.spec.harness.model_dump(exclude={"version", "system_prompt_file"}), contract.system_prompt


@pytest.mark.slow
def test_a_harness_only_lift_is_attributed_to_the_harness(workspace, harness_generation, cli, scripted_env) -> None:
    from rsi.contracts.refs import resolve_ref
    from rsi.generation.ablation import AblationSpec

    candidate_ref, measured, fn, script = harness_generation
    candidate, parent = resolve_ref(workspace, candidate_ref), resolve_ref(workspace, "default@r2")
    assert carriers_of(candidate, parent) == ["adapter", "harness"] and "harness" not in carriers_of(candidate)

    record = ablate_generation(workspace, AblationSpec(limit_heldout=2, workers=2, carriers=["harness"]), attempt_fn=fn)
    assert [(row.carrier, row.arm) for row in record.rows] == [("harness", "without"), ("harness", "alone")]
    without, alone = record.rows
    weights_only = resolve_ref(workspace, without.ablated_ref)  # the candidate with its parent's harness
    harness_only = resolve_ref(workspace, alone.ablated_ref)  # the parent with the candidate's harness
    assert _harness(weights_only) == _harness(parent) and weights_only.spec.routing.specialist == "sft"
    assert _harness(harness_only) == _harness(candidate) != _harness(parent) and not harness_only.spec.specialists

    # The harness is what lifts: the candidate without it solves nothing, the parent with it everything.
    assert without.lift.candidate_rate == 1.0 and without.lift.parent_rate == 0.0
    assert alone.lift.candidate_rate == 1.0 and alone.lift.parent_rate == 0.0
    n = cost_matched_per_task(measured.costs["candidate"].completion_tokens_per_task,
                              measured.costs["parent"].completion_tokens_per_task)
    assert n >= 2 and record.spend_n == n and measured.eval_id in record.spend_basis
    spend = alone.spend
    assert spend is not None and spend.per_task == n and spend.attempts == 2 * n and spend.pass_rate == 0.0
    assert spend.completion_tokens_per_task > alone.costs["parent"].completion_tokens_per_task  # it did spend
    shares = record.shares
    assert shares is not None and shares.total == 1.0 and shares.harness == 1.0
    assert shares.weights == 0.0 and shares.interaction == 0.0 and shares.spend == 0.0
    assert shares.harness_beyond_spend == 1.0
    assert read_ablation(workspace, "g0001") == record

    # The CLI resumes the measured record (nothing runs) and shows the shares, in text and in --json.
    env = {**scripted_env, "RSI_MODEL_OVERRIDE": f"scripted:{script}"}
    shown = cli("ablate", "--carriers", "harness", "--json", cwd=workspace.root, env=env)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["shares"]["harness"] == 1.0
    text = cli("lineage", cwd=workspace.root, env=env)
    assert text.returncode == 0, text.stderr
    assert "harness alone (into the parent) adds +1.000" in text.stdout
    assert "harness      +1.000" in text.stdout and "weights      +0.000" in text.stdout


def test_the_cost_matched_line_says_n_its_basis_and_both_lifts() -> None:
    from rsi.promotion.decision import paired_lift

    lift = paired_lift({"a": False, "b": True}, {"a": False, "b": False}).summary()
    summary = HeldoutCostMatchedSummary(job_index=COST_MATCHED - 2, per_task=3, basis="n = 3, given", sampling="s",
                                        tasks=2, attempts=6, pass_rate=0.5, completion_tokens_per_task=90.0, lift=lift)

    class Outcome:  # only the candidate's lift is read
        pass

    outcome = Outcome()
    outcome.lift = paired_lift({"a": True, "b": True}, {"a": False, "b": False}).summary()  # type: ignore[attr-defined]
    line = heldout_cost_matched_line(summary, outcome)  # type: ignore[arg-type]
    assert "best-of-3" in line and "0.500 on 2 tasks" in line and "+0.500" in line and "+1.000" in line
    assert "n = 3, given" in line
