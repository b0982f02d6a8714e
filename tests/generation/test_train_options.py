"""`rsi generation --train-option KEY=VALUE`: the training method's own options reach its training stage, and a
bad one is refused before the generation starts (not after the run and harvest it would follow)."""

from __future__ import annotations

import pytest

from rsi.errors import UserInputError
from rsi.generation.generation import Generation, GenerationSpec, start_or_resume
from rsi.generation.state import list_generations


class Captured(Exception):
    """Raised by the stand-in training stage once it has the spec it was given."""


def test_train_options_reach_the_training_stage(workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = GenerationSpec(train_method="grpo", train_options={"group_size": 3, "prompts_per_step": 2})
    state, _ = start_or_resume(workspace, spec)
    assert state.spec["train_options"] == {"group_size": 3, "prompts_per_step": 2}  # stored: a resume keeps them
    seen = []

    def train_stage(_workspace, stage, **_kw):
        seen.append(stage)
        raise Captured

    monkeypatch.setattr("rsi.training.stage.train_stage", train_stage)
    with pytest.raises(Captured):
        Generation(workspace, state, lambda _m: None).step_train()
    assert seen[0].method == "grpo" and seen[0].method_options == {"group_size": 3, "prompts_per_step": 2}


def test_a_bad_train_option_is_refused_before_the_generation_starts(workspace) -> None:
    with pytest.raises(UserInputError, match="sft option group_size: unknown; sft takes no options"):
        start_or_resume(workspace, GenerationSpec(train_options={"group_size": 3}))
    with pytest.raises(UserInputError, match="group_size"):
        start_or_resume(workspace, GenerationSpec(train_method="grpo", train_options={"group_size": "many"}))
    assert list_generations(workspace) == []


def test_the_cli_flag_is_one_line_exit_2(workspace, cli) -> None:
    done = cli("generation", "--train-method", "grpo", "--train-option", "bogus=1", cwd=workspace.root)
    assert done.returncode == 2, done.stderr
    assert "grpo option bogus: unknown; known:" in done.stderr and "Traceback" not in done.stderr
    twice = cli("nightly", "--train-option", "a=1", "--train-option", "a=2", cwd=workspace.root)
    assert twice.returncode == 2 and "--train-option a: given twice" in twice.stderr, twice.stderr
    assert list_generations(workspace) == []
