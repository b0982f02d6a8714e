"""How far the response-only (LongStraw) gradient is from the full one, on the embedded model and real text.

One GRPO group on a pyfuncs train task: the prompt the text harness shows (system prompt + task message,
rendered by the chat template), G responses (the reference solution and variants of it, fenced as the
model answers), advantages from made-up rewards. The same group's LoRA gradient is computed with
response-only replay (prompt state detached) and exact replay (equal to the full gradient, tested in
tests/training/test_replay.py); printed: the relative norm of their difference, overall and per module,
and the cosine between them. `--tiny` does the same on the 2-layer random model of the tests.

    nice -n 10 .venv/bin/python bench/grpo_gradients.py --task add-two --group 4
"""

from __future__ import annotations

import argparse
import math


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="add-two")
    parser.add_argument("--group", type=int, default=4)
    args = parser.parse_args()
    import torch

    from rsi.contracts.load import load_contract
    from rsi.contracts.schema import TrainingSpec
    from rsi.harness import prompts
    from rsi.models.embedded.weights import hf_folder
    from rsi.tasks.load import resolve_task
    from rsi.training.grpo import tokenize_rollout
    from rsi.training.grpo_loss import TrainGroup, backward_group, group_advantages
    from rsi.training.train import load_lora_model
    from rsi.workspace import shipped_root

    torch.set_num_threads(1)
    root = shipped_root()
    base = hf_folder(load_contract(root / "hcp" / "default.toml").spec.base)
    tokenizer, model = load_lora_model(str(base), TrainingSpec(seed=3), "cpu", torch.float32)
    with torch.no_grad():  # a LoRA that has moved (B = 0 at init would make every v_proj A-gradient zero)
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0.0, 0.01)
    task = resolve_task(root, f"pyfuncs/{args.task}")
    system = (root / "hcp" / "prompts" / "text.md").read_text()
    user = prompts.task_message(task.instruction, task.spec.solution_file, substrate="text", style="plain",
                                end_marker="submit()", end_by_call=True, tool_names=[])
    code = (task.solution_dir / task.spec.solution_file).read_text()
    replies = [f"```python\n{code}```", f"Here is the function.\n```python\n{code}```",
               "```python\ndef f(*args):\n    return None\n```", "I do not know."][: args.group]
    rewards = [1.0, 1.0, 0.0, 0.0][: args.group]
    group = TrainGroup([], [], [], group_advantages(rewards))
    for reply in replies:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user},
                    {"role": "assistant", "content": reply}]
        prompt, response, mask = tokenize_rollout(tokenizer, messages, 1024)
        group.prompt_ids = prompt
        group.responses.append(response)
        group.masks.append(mask)

    def grads(exact: bool) -> dict[str, torch.Tensor]:
        model.zero_grad(set_to_none=True)
        fresh = TrainGroup(group.prompt_ids, group.responses, group.masks, group.advantages)
        backward_group(model, fresh, clip=0.2, kl_weight=0.0, scale=1 / len(replies), replay=True, exact=exact)
        return {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}

    response_only, full = grads(False), grads(True)

    def rel(key: str) -> float:
        names = [n for n in full if key in n]
        diff = math.sqrt(sum(float(((response_only[n] - full[n]) ** 2).sum()) for n in names))
        return diff / math.sqrt(sum(float((full[n] ** 2).sum()) for n in names))

    dot = sum(float((response_only[n] * full[n]).sum()) for n in full)
    norms = math.sqrt(sum(float((g**2).sum()) for g in response_only.values())) * math.sqrt(
        sum(float((g**2).sum()) for g in full.values()))
    print(f"prompt {len(group.prompt_ids)} tokens, responses {[len(r) for r in group.responses]} tokens")
    print(f"relative difference |g_response_only - g_full| / |g_full|: all {rel(''):.4f}, q_proj {rel('q_proj'):.4f}, "
          f"v_proj {rel('v_proj'):.4f}, last layer q_proj {rel('layers.29.self_attn.q_proj'):.2e}; "
          f"cosine {dot / norms:.4f}")


if __name__ == "__main__":
    main()
