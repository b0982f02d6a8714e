"""Training methods and the executors that train: a throwaway method registered through
`TRAINING_METHODS` alone is selectable by a contract's `[training] method` and by `rsi train --method`,
takes options of its own through `rsi train --option KEY=VALUE` (checked by its recipe alone, the stage
and the CLI passing them on), and trains through the real stage (the real base identified, the real
adapter registry); a throwaway executor with a `TRAINING_RUNNERS` entry runs it; unknown names and
options are located errors.

Registrations go through `monkeypatch.setitem`, so each test leaves its registry as it found it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field
from typer.testing import CliRunner

from rsi.cli.app import app
from rsi.contracts.load import load_contract
from rsi.errors import ContractError, UserInputError
from rsi.executors.registry import EXECUTORS, TRAINING_RUNNERS, TrainingRunner
from rsi.training.methods import (
    TRAINING_METHODS,
    PreparedTraining,
    RecipeBase,
    RecipeContext,
    TrainedAdapter,
    TrainingProgress,
    validated_options,
)
from rsi.training.stage import TrainStageSpec, train_stage


class CopyProgress(TrainingProgress):
    copied: int

    def figures(self) -> dict[str, int | float | str]:
        return {"copied": self.copied, "loss": self.loss}


class CopyOptions(BaseModel):
    """The copy method's own options: what it writes (read by `setup`), and a hyperparameter it sets."""

    model_config = ConfigDict(extra="forbid")
    payload: str = "copied"
    rank: int | None = Field(default=None, ge=1)


class CopyRecipe(RecipeBase):
    """A method the project does not ship: 'trains' by writing a fixed PEFT-shaped folder (its checkpoint
    is RecipeBase's; its outcome is a plain dict, so it saves its own lineage parts)."""

    name = "copy"
    needs_dataset = False
    in_process_only = False
    trained: list[Any] = []

    def apply_options(self, training: Any, options: dict[str, Any]) -> Any:
        rank = validated_options(self.name, CopyOptions, options).rank
        return training if rank is None else training.model_copy(update={"rank": rank})

    def setup(self, ctx: RecipeContext) -> PreparedTraining:
        out_dir = ctx.training_dir("copy:" + ctx.parent.content_hash, None)
        ctx.note(f"copying onto {ctx.base['id']}")
        payload = CopyOptions.model_validate(ctx.spec.method_options).payload
        return PreparedTraining(request={"out": str(out_dir / "adapter"), "rank": ctx.hyper.rank, "payload": payload},
                                out_dir=out_dir, dataset={"sha256": "", "folder": "", "examples": 0, "kind": "copy"})

    def train(self, request: dict[str, Any], progress: Any) -> dict[str, Any]:
        out = Path(request["out"])
        out.mkdir(parents=True)
        (out / "adapter_config.json").write_text(json.dumps({"r": request["rank"], "peft_type": "LORA"}))
        (out / "adapter_model.safetensors").write_bytes(request["payload"].encode())
        if progress is not None:
            progress(CopyProgress(step=1, total_steps=1, loss=0.5, elapsed_s=0.1, eta_s=0.0, copied=2))
        CopyRecipe.trained.append(request)
        return {"adapter_dir": str(out)}

    def save(self, prepared: PreparedTraining, outcome: dict[str, Any]) -> TrainedAdapter:
        metrics = {"steps": 1, "first_loss": 0.5, "final_loss": 0.5, "tokens_per_s": 0.0, "wall_s": 0.1,
                   "device": "none", "copied": 2}
        return TrainedAdapter(adapter_dir=outcome["adapter_dir"], dataset=prepared.dataset, metrics=metrics)

    def summary(self, metrics: dict[str, Any]) -> str:
        return f"copy: {metrics['copied']} files"


@pytest.fixture
def copy_method(monkeypatch):
    CopyRecipe.trained = []
    monkeypatch.setitem(TRAINING_METHODS, "copy", CopyRecipe)
    return CopyRecipe


def with_training(workspace, text: str) -> Path:
    path = workspace.root / "hcp" / "default.toml"
    path.write_text(path.read_text() + f"\n[training]\n{text}\n")
    return path


def test_a_registered_training_method_is_chosen_by_contract_and_by_flag(workspace, copy_method) -> None:
    path = with_training(workspace, 'method = "copy"\nrank = 4')
    assert load_contract(path).spec.training.method == "copy"
    notes: list[str] = []
    outcome = train_stage(workspace, TrainStageSpec(contract=str(path), candidate=False), on_note=notes.append)
    assert copy_method.trained == [{"out": copy_method.trained[0]["out"], "rank": 4, "payload": "copied"}]
    assert outcome.lineage.method == "copy" and outcome.lineage.executor == "local" and outcome.registered
    assert outcome.metrics.steps == 1 and (outcome.metrics.model_extra or {})["copied"] == 2
    assert outcome.lineage.dataset.kind == "copy" and notes[0] == "copying onto SmolLM2-135M-Instruct"
    assert (Path(outcome.adapter_dir) / "adapter_model.safetensors").read_bytes() == b"copied"
    assert not Path(copy_method.trained[0]["out"]).parent.exists()  # the training folder, removed once registered

    path.write_text(path.read_text().replace('method = "copy"\nrank = 4', 'rank = 8'))  # sft, unless a flag says
    result = CliRunner().invoke(app, ["-C", str(workspace.root), "train", "--method", "copy", "--contract", str(path),
                                      "--no-candidate"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "copy: 2 files" in result.output and copy_method.trained[-1]["rank"] == 8


def test_a_registered_training_method_takes_options_of_its_own(workspace, copy_method) -> None:
    """`--option KEY=VALUE` reaches the method's recipe as given (VALUE read as TOML): one option it reads when
    it sets up, one that changes a hyperparameter, recorded in the lineage like any other."""
    path = with_training(workspace, 'method = "copy"')

    def train(*options: str):
        return CliRunner().invoke(app, ["-C", str(workspace.root), "train", "--contract", str(path), "--no-candidate",
                                        "--json", *options])

    done = train("--option", "payload=hello", "--option", "rank=2")
    assert done.exit_code == 0, done.output
    assert copy_method.trained[-1]["payload"] == "hello" and copy_method.trained[-1]["rank"] == 2
    outcome = json.loads(done.stdout)
    assert outcome["lineage"]["hyperparameters"]["rank"] == 2
    assert (Path(outcome["adapter_dir"]) / "adapter_model.safetensors").read_bytes() == b"hello"

    runs = len(copy_method.trained)
    for options, message in [
        (["--option", "colour=red"], "copy option colour: unknown; known: payload, rank"),
        (["--option", "rank=0"], "copy option rank=0: Input should be greater than or equal to 1"),
        (["--group-size", "3"], "copy option group_size: unknown; known: payload, rank"),  # the flag spells an option
        (["--option", "rank=2", "--option", "rank=3"], "--option rank: given twice"),
        (["--option", "payload"], "--option 'payload': expected KEY=VALUE"),
    ]:
        refused = train(*options)
        assert isinstance(refused.exception, UserInputError) and str(refused.exception) == message, refused.output
    assert len(copy_method.trained) == runs  # refused before any training


def test_an_unknown_training_method_is_a_located_error(workspace, cli) -> None:
    # an option the chosen method does not take: one line naming it, exit 2, before any training (the shipped contract)
    result = cli("train", "--method", "sft", "--group-size", "3", cwd=workspace.root,
                 env={"RSI_WORKSPACE": str(workspace.root)})
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "sft option group_size: unknown; sft takes no options" in result.stderr
    path = with_training(workspace, 'method = "copy"')
    with pytest.raises(ContractError) as raised:
        load_contract(path)
    (problem,) = raised.value.problems
    assert (Path(problem.file), problem.line, problem.key) == (path, len(path.read_text().splitlines()), "training.method")
    assert "unknown training method 'copy'; known: grpo, sft" in problem.message
    with pytest.raises(ValueError, match="unknown training method 'copy'"):
        TrainStageSpec(method="copy")
    for args in (["train", "--method", "copy"], ["generation", "--train-method", "copy"]):
        result = cli(*args, cwd=workspace.root, env={"RSI_WORKSPACE": str(workspace.root)})
        flag = args[1]
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert f"{flag}: unknown training method 'copy'; known: grpo, sft" in result.stderr


def test_a_registered_training_executor_runs_the_job(workspace, copy_method, monkeypatch) -> None:
    ran: list[tuple[Any, dict[str, Any]]] = []

    def inline(job, request, progress, folder, options, note):
        ran.append((request, options))
        note("inline job started")
        return job(request, progress)

    monkeypatch.setitem(EXECUTORS, "inline", EXECUTORS["local"])
    monkeypatch.setitem(TRAINING_RUNNERS, "inline", TrainingRunner(inline, in_process=False))
    path = with_training(workspace, 'method = "copy"')
    notes: list[str] = []
    outcome = train_stage(workspace, TrainStageSpec(contract=str(path), executor="inline", candidate=False,
                                                    slurm={"gpus": 0}), on_note=notes.append)
    assert outcome.lineage.executor == "inline" and ran[0][1] == {"gpus": 0} and "inline job started" in notes
    with pytest.raises(UserInputError, match="grpo trains in this process only.*use --executor local"):
        train_stage(workspace, TrainStageSpec(contract=str(path), method="grpo", executor="inline"))


def test_an_executor_that_does_not_train_is_refused(workspace, monkeypatch, cli) -> None:
    with pytest.raises(ValueError, match="unknown executor 'ray'; known: local, slurm"):
        TrainStageSpec(executor="ray")
    result = cli("train", "--executor", "ray", cwd=workspace.root, env={"RSI_WORKSPACE": str(workspace.root)})
    assert result.returncode == 2 and "--executor: unknown executor 'ray'; known: local, slurm" in result.stderr
    monkeypatch.setitem(EXECUTORS, "attempts-only", EXECUTORS["local"])
    with pytest.raises(ValueError, match="executor 'attempts-only' runs attempts only, not a training"):
        TrainStageSpec(executor="attempts-only")
