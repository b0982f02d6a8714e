"""GRPO: train tasks only, rollouts through the real harness, sandbox and hidden verifier, a tiny policy.

The policy is a tiny randomly initialised Llama built here (2 layers, hidden 64) with the embedded
model's tokenizer, saved as an HF folder: nothing is downloaded and a step takes seconds. It cannot
solve a task yet, so most tests answer rollouts through the scripted-rollout hook
(`RSI_GRPO_ROLLOUT_OVERRIDE`: rollout k of a group gets reply `k % n` of a fixed list: the reference
solution, a wrong function, no code) to get groups with mixed rewards from the real verifier (the
rollouts themselves: tests/training/test_rollouts.py); one test samples from the tiny policy itself
through the embedded backend, with its LoRA served as the `sft` specialist.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi.contracts.schema import GrpoSpec, TrainingSpec
from rsi.training.rollouts import ENV_ROLLOUT_OVERRIDE, plan_step_tasks, train_tasks
from rsi.verdict import Verdict


def make_tiny_base(base_folder: Path, out: Path) -> Path:
    """A tiny random Llama with the real tokenizer, as an HF folder (cached per test session by the caller)."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    if (out / "config.json").is_file():
        return out
    tokenizer = AutoTokenizer.from_pretrained(base_folder)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                         tie_word_embeddings=True, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    LlamaForCausalLM(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def tiny_base(base_folder, tmp_path_factory) -> Path:
    return make_tiny_base(base_folder, tmp_path_factory.mktemp("tiny") / "tiny-llama")


def replies_for(task) -> list[str]:
    code = (task.solution_dir / task.spec.solution_file).read_text()
    return [f"Here it is.\n```python\n{code}\n```", "```python\ndef nothing():\n    return None\n```", "I am not sure."]


def write_replies(path: Path, tasks) -> Path:
    path.write_text(json.dumps({"tasks": {t.id: replies_for(t) for t in tasks}}))
    return path


def tiny_parent(workspace, tiny: Path, max_tokens: int = 48):
    """The workspace's default contract on the tiny base, text substrate, one short turn, float32 serving."""
    from rsi.config import configuration_from_contract
    from rsi.contracts.refs import resolve_ref

    parent = configuration_from_contract(resolve_ref(workspace, "default"))
    spec = parent.spec
    base = spec.base.model_copy(update={"source": str(tiny), "format": "hf", "file": "", "id": "tiny-llama"})
    sampling = spec.harness.sampling.model_copy(update={"max_tokens": max_tokens})
    harness = spec.harness.model_copy(update={"substrate": "text", "max_turns": 1, "sampling": sampling})
    serving = spec.serving.model_copy(update={"dtype": "float32"})
    return parent.model_copy(update={"spec": spec.model_copy(update={"base": base, "harness": harness,
                                                                     "serving": serving})})


def grpo_request(workspace, tiny: Path, out: Path, steps: int = 2, group: int = 3, prompts: int = 2, **grpo):
    from rsi.training.grpo import GrpoRequest

    hyper = TrainingSpec(method="grpo", learning_rate=1e-2, seed=1,
                         grpo=GrpoSpec(steps=steps, group_size=group, prompts_per_step=prompts, **grpo))
    return GrpoRequest(workspace_root=str(workspace.root), parent=tiny_parent(workspace, tiny), base_folder=str(tiny),
                       suite="pyfuncs", out_dir=str(out / "adapter"), hyper=hyper, limit_tasks=4, threads=1,
                       device="cpu", sandbox="local", checkpoint_dir=str(out / "ckpt"))


# -- pure parts -----------------------------------------------------------------------------------


def test_train_tasks_leave_out_heldout_tasks_and_their_copies(workspace) -> None:
    from rsi.tasks.load import load_suite

    tasks = load_suite(workspace, "pyfuncs")
    heldout = [t for t in tasks if t.spec.split == "heldout"]
    assert heldout  # the suite has a heldout split to leak from
    copy = heldout[0].model_copy(update={"spec": heldout[0].spec.model_copy(update={"split": "train", "id": "copy"})})
    kept = train_tasks([*tasks, copy])
    assert kept and all(t.spec.split == "train" for t in kept)
    assert copy not in kept and not {t.content_hash for t in kept} & {t.content_hash for t in heldout}


def test_plan_visits_every_task_once_per_epoch_and_is_pure() -> None:
    steps = [plan_step_tasks(7, 3, seed=5, step=s) for s in range(1, 8)]
    flat = [i for step in steps for i in step]
    assert sorted(flat[:7]) == list(range(7)) and sorted(flat[7:14]) == list(range(7))
    assert steps == [plan_step_tasks(7, 3, seed=5, step=s) for s in range(1, 8)]
    assert steps != [plan_step_tasks(7, 3, seed=6, step=s) for s in range(1, 8)]


# -- real harness, sandbox, verifier --------------------------------------------------------------


def test_grpo_learns_from_verifier_rewards_on_train_tasks(workspace, tiny_base, tmp_path, monkeypatch) -> None:
    import torch
    from safetensors.torch import load_file

    from rsi.tasks.load import load_suite
    from rsi.training.grpo import train_grpo

    tasks = train_tasks(load_suite(workspace, "pyfuncs"))[:4]
    monkeypatch.setenv(ENV_ROLLOUT_OVERRIDE, f"scripted:{write_replies(tmp_path / 'r.json', tasks)}")
    seen = []
    outcome = train_grpo(grpo_request(workspace, tiny_base, tmp_path), seen.append)
    assert outcome.steps == 2 and [p.step for p in seen] == [1, 2]
    assert outcome.rollouts == 12 and len(outcome.rewards_per_step) == 2
    keys = {t.key for t in tasks}
    for record in outcome.records:
        assert set(record.tasks) <= keys and len(record.tasks) == 2  # train tasks only
        assert all(sorted(r) == [0.0, 0.0, 1.0] for r in record.rewards)  # rollouts 0, 1, 2 -> replies 0, 1, 2
        assert record.groups_trained == 2 and record.sequences == 6 and record.trained_tokens > 0
        assert record.errors == 0 and record.kl >= 0.0 and torch.isfinite(torch.tensor(record.loss))
    assert outcome.records[0].kl == pytest.approx(0.0, abs=1e-6)  # LoRA B starts at 0: policy == base
    assert outcome.records[1].kl > 0.0  # after one update the policy moved away from the base
    weights = load_file(str(Path(outcome.adapter_dir) / "adapter_model.safetensors"))
    assert max(float(w.abs().max()) for k, w in weights.items() if "lora_B" in k) > 0  # it learned something


def test_grpo_samples_the_policy_in_one_batch_through_the_embedded_backend(workspace, tiny_base, tmp_path) -> None:
    from rsi.training.grpo import _GrpoRun

    run = _GrpoRun(grpo_request(workspace, tiny_base, tmp_path, steps=1, group=4, prompts=1))
    try:
        [group] = run.sample(1).groups
        model = run.sampler.model  # the shared EmbeddedModel behind the handle
        assert len(group) == 4 and all(r.verdict in (Verdict.FAILED, Verdict.PASSED) for r in group)
        assert model.stats.largest_batch_rows == 4 and model.stats.requests == 4  # the group shared one batch
        assert list(run.sampler._served) == ["sft"] and len(model.adapters()) == 1  # the policy, served
        assert len({r.messages[-1]["content"] for r in group}) > 1  # sampled at temperature 1: a varied group
    finally:
        run.close()


def test_stage_flags_override_the_contracts_grpo_hyperparameters() -> None:
    from rsi.training.stage import TrainStageSpec, resolve_hyper

    contract = TrainingSpec(grpo=GrpoSpec(steps=7, group_size=8, kl_weight=0.1))
    hyper, cap = resolve_hyper(contract, TrainStageSpec(method="grpo", method_options={"group_size": 3}, max_steps=5))
    assert hyper.method == "grpo" and cap == 5
    assert (hyper.grpo.group_size, hyper.grpo.steps, hyper.grpo.kl_weight, hyper.grpo.prompts_per_step) == (3, 7, 0.1, 2)
    same, _ = resolve_hyper(contract, TrainStageSpec())
    assert same == contract  # no flag: the contract's [training] as written
    # any [training.grpo] key is an option (as `--option KEY=VALUE` reads it), and limit_tasks changes no hyperparameter
    tuned, _ = resolve_hyper(contract, TrainStageSpec(method="grpo", method_options={"temperature": 0.7, "limit_tasks": 3}))
    assert tuned == contract.model_copy(update={"method": "grpo", "grpo": contract.grpo.model_copy(update={"temperature": 0.7})})


@pytest.mark.parametrize(("method", "options", "message"), [
    ("grpo", {"group_size": 1}, "grpo option group_size=1: Input should be greater than or equal to 2"),
    ("grpo", {"limit_tasks": 0}, "grpo option limit_tasks=0: Input should be greater than or equal to 1"),
    ("grpo", {"groups": 4}, "grpo option groups: unknown; known: clip_range, group_size, kl_weight, learning_rate, "
                            "limit_tasks, max_response_tokens, prompts_per_step, reward, steps, temperature, updates_per_step"),
    ("sft", {"group_size": 4}, "sft option group_size: unknown; sft takes no options"),
])
def test_a_method_refuses_an_option_it_does_not_take_naming_it(method, options, message) -> None:
    from rsi.errors import UserInputError
    from rsi.training.stage import TrainStageSpec, resolve_hyper

    with pytest.raises(UserInputError) as raised:
        resolve_hyper(TrainingSpec(), TrainStageSpec(method=method, method_options=options))
    assert str(raised.value) == message
