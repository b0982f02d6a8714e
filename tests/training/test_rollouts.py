"""GRPO rollouts are planned attempts run through the orchestrator, recorded as their own run.

Real harness, real local sandbox, real hidden verifier, real SQLite store; the model is a scripted
one handed in through the orchestrator's `model_for` hook (the place GRPO hands its live policy):
reply k of a group is `replies[k % 3]` (the reference solution, a wrong function, no code), so a group
holds passes and failures. The last test trains GRPO for one step on a tiny random Llama.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rsi.errors import ModelError, TrainingError, UserInputError
from rsi.run.kinds import ROLLOUT_SCHEDULER
from rsi.training.rollouts import RolloutStep, sample_groups, train_tasks
from rsi.verdict import Verdict
from tests.training.test_grpo import grpo_request, replies_for, tiny_base, write_replies  # noqa: F401 - a fixture

REPO = Path(__file__).resolve().parents[2]


def parent_config(workspace):
    """The workspace's default contract, text substrate, one turn (room for the reference solutions)."""
    from rsi.config import configuration_from_contract
    from rsi.contracts.refs import resolve_ref

    parent = configuration_from_contract(resolve_ref(workspace, "default"))
    spec = parent.spec
    sampling = spec.harness.sampling.model_copy(update={"max_tokens": 1024})
    harness = spec.harness.model_copy(update={"substrate": "text", "max_turns": 1, "sampling": sampling})
    return parent.model_copy(update={"spec": spec.model_copy(update={"harness": harness})})


def rollout_plan(workspace, groups: int = 2, group_size: int = 3, reuse_key: str = "", split: str = "train"):
    from rsi.tasks.load import load_suite
    from rsi.training.rollouts import rollout_configuration

    tasks = load_suite(workspace, "pyfuncs")
    chosen = train_tasks(tasks)[:groups] if split == "train" else [t for t in tasks if t.spec.split == split][:groups]
    config = rollout_configuration(parent_config(workspace), workspace.root / "policy", 1.0, 8, ["q_proj", "v_proj"])
    return RolloutStep(1, config, tuple(chosen), group_size, seed=7, reuse_key=reuse_key)


class Policy:
    """One model object for every rollout, as GRPO's live sampler is; counts the attempts it served.
    `flaky` makes the first try of every attempt fail like a backend outage (an infrastructure error)."""

    def __init__(self, flaky: bool = False) -> None:
        self.flaky = flaky
        self.calls: list[tuple[str, int]] = []
        self.requests: list = []

    def __call__(self, spec, task):
        from rsi.models.scripted import ScriptedModel

        self.calls.append((spec.key, spec.try_index))
        if self.flaky and spec.try_index == 0:
            return ScriptedModel([ModelError("backend down")], name="policy")
        reply = replies_for(task)[spec.attempt_index % 3]

        def answer(request):
            self.requests.append(request)
            return reply

        return ScriptedModel(answer, name="policy")


def _store(workspace):
    from rsi.store import open_store

    return open_store(workspace.db_url)


def test_rollouts_are_their_own_recorded_run_and_never_coverage(workspace) -> None:
    from rsi.run.layout import RunLayout

    plan = rollout_plan(workspace, groups=2, group_size=4)
    assert plan.config.spec.routing.specialist == "sft" and plan.config.spec.harness.sampling.temperature == 1.0
    policy = Policy()
    batch = sample_groups(workspace, plan, policy, sandbox="local")
    assert [[r.verdict for r in g] for g in batch.groups] == [[Verdict.PASSED, Verdict.FAILED, Verdict.FAILED,
                                                                Verdict.PASSED]] * 2
    assert [[r.reward for r in g] for g in batch.groups] == [[1.0, 0.0, 0.0, 1.0]] * 2
    # The live model served every rollout, through the policy adapter's name (routing fixed to `sft`).
    assert len(policy.calls) == 8 and {r.specialist for r in policy.requests} == {"sft"}
    with _store(workspace) as store:
        run = store.get_run(batch.run_id)
        rows = store.list_attempts(batch.run_id)
        jobs = store.list_jobs(batch.run_id)
        suite_keys = {t.key for t in plan.tasks}
        assert run.scheduler == ROLLOUT_SCHEDULER and run.status == "done" and run.split == "train"
        assert [j.planned_tasks for j in jobs] == [[t.key] for t in plan.tasks]  # job i is group i
        assert len(rows) == 8 and sum(r.passed for r in rows) == 4
        seeds = {(r.job_index, r.attempt_index): r.seed for r in rows}  # the orchestrator's seeds, all distinct
        assert [[r.seed for r in g] for g in batch.groups] == [[seeds[(g, k)] for k in range(4)] for g in range(2)]
        assert len(set(seeds.values())) == 8
        # Passing attempts exist, but rollouts are not coverage search: every all-runs read leaves them out.
        assert store.covered_tasks("pyfuncs", "train") == set()
        assert store.covered_tasks("pyfuncs", "train", [batch.run_id]) == suite_keys
        assert store.attempt_history("pyfuncs", "train") == []
        assert all(s.attempts == 0 for s in store.task_stats("pyfuncs", "train"))
        assert store.configuration_stats("pyfuncs", "train") == []
    layout = RunLayout(workspace.run_dir(batch.run_id))
    for g, group in enumerate(batch.groups):
        for k, rollout in enumerate(group):
            path = Path(rollout.trajectory_path)
            assert path.parent == layout.attempt_dir(g, plan.tasks[g].key, k)  # the orchestrator's folders
            trajectory = json.loads(path.read_text())
            assert trajectory["sandbox"]["backend"].startswith("local")  # ran in the real sandbox
            reason = trajectory["outcome"]["reason"]
            assert rollout.messages[1]["role"] == "user" and rollout.messages[-1]["role"] == "assistant"
            assert all(reason not in m["content"] for m in rollout.messages)  # the verifier's words never reach it
    assert batch.groups[0][2].messages[-1]["content"] == "I am not sure."  # a reply without code is trained on too
    # `rsi run --resume` cannot resume it (the live policy is gone): a one-line refusal naming what does.
    from rsi.run.setup import open_stored_run

    with _store(workspace) as store, pytest.raises(UserInputError, match="holds a GRPO step's rollouts") as refused:
        open_stored_run(store, workspace, batch.run_id)
    assert "rsi train --method grpo" in (refused.value.hint or "")


def test_infrastructure_errors_are_retried_by_the_orchestrator_not_trained_on(workspace) -> None:
    plan = rollout_plan(workspace, groups=1, group_size=3)
    policy = Policy(flaky=True)
    batch = sample_groups(workspace, plan, policy, sandbox="local", retry_backoff_s=0.01)
    [group] = batch.groups
    assert [r.verdict for r in group] == [Verdict.PASSED, Verdict.FAILED, Verdict.FAILED]
    assert sorted(t for _, t in policy.calls) == [0, 0, 0, 1, 1, 1]  # every attempt failed once, then retried
    with _store(workspace) as store:
        rows = store.list_attempts(batch.run_id)
    assert len(rows) == 3 and all(r.error_retries == 1 and r.counted for r in rows)


def test_heldout_tasks_are_refused_before_any_run_exists(workspace) -> None:
    plan = rollout_plan(workspace, groups=1, split="heldout")
    with pytest.raises(TrainingError, match="heldout"):
        sample_groups(workspace, plan, Policy(), sandbox="local")
    with _store(workspace) as store:
        assert store.list_runs() == []


def test_a_live_model_needs_the_local_executor(workspace) -> None:
    from rsi.run.orchestrator import Orchestrator
    from rsi.run.spec import RunSpec

    with pytest.raises(UserInputError, match="live model"):
        Orchestrator(RunSpec(executor="slurm"), workspace, model_for=Policy()).run()
    with _store(workspace) as store:
        assert store.list_runs() == []


KILLED = """
import sys
from pathlib import Path
from rsi.workspace import Workspace
from rsi.training.rollouts import sample_groups
from tests.training.test_rollouts import Policy, rollout_plan
workspace = Workspace(Path(sys.argv[1]))
sample_groups(workspace, rollout_plan(workspace, reuse_key="step-1"), Policy(), sandbox="local")
"""


@pytest.mark.timeout(600)
def test_a_step_killed_while_sampling_resumes_its_run_without_repeating(workspace) -> None:
    env = {**os.environ, "RSI_TEST_CRASH_AT": "attempt_recorded:2"}
    killed = subprocess.run([sys.executable, "-c", KILLED, str(workspace.root)], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode == -9, killed.stderr[-3000:]
    with _store(workspace) as store:
        [run] = store.list_runs("pyfuncs")
        before = {r.idem_key for r in store.list_attempts(run.id) if r.counted}
    assert run.scheduler == ROLLOUT_SCHEDULER and run.status == "running" and 2 <= len(before) < 6

    policy = Policy()
    batch = sample_groups(workspace, rollout_plan(workspace, reuse_key="step-1"), policy, sandbox="local")
    assert batch.run_id == run.id  # the same run, resumed
    assert {key for key, _ in policy.calls} & before == set()  # nothing recorded was run again
    assert len(policy.calls) == 6 - len(before)
    with _store(workspace) as store:
        rows = store.list_attempts(run.id)
        assert len(rows) == 6 and store.get_run(run.id).status == "done" and len(store.list_runs()) == 1
    assert [[r.reward for r in g] for g in batch.groups] == [[1.0, 0.0, 0.0]] * 2

    again = Policy()
    assert sample_groups(workspace, rollout_plan(workspace, reuse_key="step-1"), again, sandbox="local").run_id == run.id
    assert again.calls == []  # a finished step sampled again under the same key runs nothing
    other = sample_groups(workspace, rollout_plan(workspace, reuse_key=""), Policy(), sandbox="local")
    assert other.run_id != run.id  # no key: always a new run


@pytest.mark.timeout(900)
def test_grpo_trains_on_rollouts_recorded_as_runs(workspace, tiny_base, tmp_path, monkeypatch) -> None:  # noqa: F811
    from rsi.tasks.load import load_suite
    from rsi.training.grpo import train_grpo
    from rsi.training.rollouts import ENV_ROLLOUT_OVERRIDE

    tasks = train_tasks(load_suite(workspace, "pyfuncs"))[:4]
    monkeypatch.setenv(ENV_ROLLOUT_OVERRIDE, f"scripted:{write_replies(tmp_path / 'r.json', tasks)}")
    outcome = train_grpo(grpo_request(workspace, tiny_base, tmp_path, steps=1, group=3, prompts=2))
    [record] = outcome.records
    assert record.groups_trained == 2 and record.trained_tokens > 0 and sorted(record.rewards[0]) == [0.0, 0.0, 1.0]
    with _store(workspace) as store:
        run = store.get_run(record.rollout_run)
        rows = store.list_attempts(run.id)
        assert run.scheduler == ROLLOUT_SCHEDULER and run.status == "done"
        assert len(rows) == 6 and [r.task_key for r in sorted(rows, key=lambda r: r.job_index) if r.attempt_index == 0] == record.tasks
        assert store.covered_tasks("pyfuncs", "train") == set()  # passing rollouts are not coverage
