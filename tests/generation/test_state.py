"""The generation record: atomic state file, ids, listing, and what `start_or_resume` picks."""

from __future__ import annotations

import json

import pytest

from rsi.errors import UserInputError
from rsi.generation.generation import GenerationSpec, start_or_resume
from rsi.generation.state import STEPS, list_generations, read_state, state_path, write_state


def test_new_generation_records_inputs_and_every_step_pending(workspace) -> None:
    state, resumed = start_or_resume(workspace, GenerationSpec())
    assert not resumed and state.id == "g0001" and state.number == 1
    assert state.inputs == {"contract": "default", "revision": 1, "content_hash": state.inputs["content_hash"],
                            "portfolio": "default", "previous": None}
    assert list(state.steps) == list(STEPS) and all(s.status == "pending" and s.tries == 0 for s in state.steps.values())
    on_disk = json.loads(state_path(workspace, "g0001").read_text())
    assert on_disk["schema"] == "rsi-generation/1" and on_disk["status"] == "running"
    assert not list(state_path(workspace, "g0001").parent.glob(".*.tmp"))


def test_unfinished_generation_is_resumed_and_done_ones_are_followed(workspace) -> None:
    first, _ = start_or_resume(workspace, GenerationSpec())
    again, resumed = start_or_resume(workspace, GenerationSpec(portfolio="default"))
    assert resumed and again.id == first.id  # an unfinished generation always comes first
    fresh, resumed = start_or_resume(workspace, GenerationSpec(), new=True)
    assert not resumed and fresh.id == "g0002" and fresh.inputs["previous"] == "g0001"
    for state in (first, fresh):
        state.status = "done"
        write_state(workspace, state)
    fresh.step("propose").outputs["portfolio"] = "default"  # an existing successor is followed
    fresh.status = "done"
    write_state(workspace, fresh)
    third, resumed = start_or_resume(workspace, GenerationSpec())
    assert not resumed and third.id == "g0003" and third.inputs["previous"] == "g0002"
    assert [g.id for g in list_generations(workspace)] == ["g0001", "g0002", "g0003"]
    assert read_state(workspace, "g0002").step("propose").outputs == {"portfolio": "default"}


def test_bad_inputs_are_user_errors(workspace) -> None:
    with pytest.raises(UserInputError, match="no generation g0009"):
        read_state(workspace, "g0009")
    with pytest.raises(UserInputError, match="nosuch"):
        start_or_resume(workspace, GenerationSpec(portfolio="nosuch"))
    with pytest.raises(UserInputError, match="nosuch"):
        start_or_resume(workspace, GenerationSpec(contract="nosuch"))


def test_typed_outputs_read_partial_and_older_records(tmp_path) -> None:
    """A step records its id first and the rest when it ends; both states read as the typed record, and keys
    an older version wrote survive."""
    from rsi.generation.outputs import EvaluateOutput, RunOutput, TrainOutput
    from rsi.generation.state import GenerationState, now_utc

    stamp = now_utc()
    state = GenerationState(id="g0001", number=1, created=stamp, updated=stamp, spec={})
    state.step("run").outputs.update({"run_id": "r1"})
    assert state.outputs(RunOutput).run_id == "r1" and state.outputs(RunOutput).covered is None
    state.step("train").outputs.update({"adapter_id": "a" * 64, "candidate_ref": "default@r3", "steps": 6,
                                        "retired_key": "kept"})
    train = state.outputs(TrainOutput)
    assert (train.candidate_ref, train.steps, train.resumed_from_step) == ("default@r3", 6, 0)
    assert train.model_dump()["retired_key"] == "kept"
    assert state.outputs(EvaluateOutput).lift is None and state.outputs(EvaluateOutput).eval_id == ""
