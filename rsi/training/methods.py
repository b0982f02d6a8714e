"""The training methods: name -> recipe factory, behind the `TrainingRecipe` protocol.

A contract's `[training] method`, `rsi train --method`, `rsi generation --train-method` and the stage
and generation specs validate against the registry (`TrainingMethodName`), and
`rsi.training.stage.train_stage` trains through it. The registry is `rsi.plugins.TRAINING_METHODS`
(entry point group `rsi.training_methods`), typed here: adding a method is one file (its recipe class,
a factory of itself) and one line of pyproject.toml (`sft = "rsi.training.train:SftRecipe"`).

A recipe is the stage's view of one way of training, in torchtune's phases:

    options  the method's own settings (`rsi train --option KEY=VALUE` and the flags that spell one out,
             `TrainStageSpec.method_options`): `apply_options` checks them (an unknown or bad one is a
             UserInputError naming it) and returns the hyperparameters they change; the ones that
             change no hyperparameter (which data) `setup` reads from the spec. The stage passes them on
             without knowing what any of them means
    setup    check the inputs, identify the data (the `.train-KEY` folder is keyed by it, so the same
             training resumes in the same folder), build the picklable request of the job
    resume   the checkpoint a rerun of the same training resumes from (None: it starts afresh)
    train    the loop itself, `(request, progress) -> outcome` with `outcome.adapter_dir` a PEFT folder;
             it restores the checkpoint in its folder before the first step. It runs where the stage's
             executor runs training jobs (`rsi.executors.registry.TRAINING_RUNNERS`): in this process,
             or pickled onto a SLURM node without a progress callback
    save     the outcome as the adapter folder and the lineage parts the adapter registry saves

Every step reports one `TrainingProgress` (the shared type: a method adds its own numbers as fields and
names what a display shows in `figures`). Light on purpose (no torch at import): a recipe's module is
imported when its entry point is first used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from pydantic import BaseModel, Field
from pydantic import ValidationError as PydanticError

from rsi import plugins
from rsi.contracts.schema import TrainingMethodName as TrainingMethodName  # re-exported for callers
from rsi.errors import UserInputError
from rsi.plugins import PluginRegistry, training_method_name

if TYPE_CHECKING:
    from rsi.contracts.load import LoadedContract
    from rsi.contracts.schema import TrainingSpec
    from rsi.training.stage import TrainStageSpec
    from rsi.workspace import Workspace

FieldValue = int | float | str


class TrainingProgress(BaseModel):
    """A snapshot after one optimizer step, the type every method reports (displays render it; loops
    never print). Methods subclass it with their own numbers."""

    step: int
    total_steps: int
    loss: float
    elapsed_s: float
    eta_s: float

    def figures(self) -> dict[str, FieldValue]:
        """The numbers a display shows beside the step, in order (a method's own ones included)."""
        return {"loss": round(self.loss, 4)}


ProgressFn = Callable[[TrainingProgress], None]


@dataclass(frozen=True)
class RecipeContext:
    """What the stage resolved before any method runs: the contract, the hyperparameters with the
    spec's overrides, the base (folder and identity), and where a training keeps its folder."""

    workspace: Workspace
    spec: TrainStageSpec
    parent: LoadedContract
    hyper: TrainingSpec
    max_steps: int | None
    base_folder: Path
    base: dict[str, Any]
    note: Callable[[str], None]
    training_dir: Callable[[str, str | None], Path]  # (data digest, init adapter id) -> its `.train-KEY/`


class PreparedTraining(BaseModel):
    """What `setup` made: the job's request, its folder, and the data the lineage records."""

    request: Any = Field(description="The picklable request `train` takes.")
    out_dir: Path = Field(description="The `.train-KEY` folder (checkpoint, adapter); removed once registered.")
    dataset: dict[str, Any] = Field(description="The lineage's `dataset` record.")
    source_runs: list[str] = Field(default_factory=list)


class TrainedAdapter(BaseModel):
    """What `save` hands to registration: the adapter folder and the method's lineage parts."""

    adapter_dir: str
    dataset: dict[str, Any]
    source_runs: list[str] = Field(default_factory=list)
    metrics: dict[str, Any] = Field(description="The lineage's metrics (rsi.training.stage.TrainMetrics fields).")


class TrainingRecipe(Protocol):
    """One training method (see the module docstring)."""

    name: str
    needs_dataset: bool  # an exported dataset (SFT); False: the method samples its own data (GRPO)
    in_process_only: bool  # True: only an executor that trains in this process (GRPO: rollouts need the sandbox here)

    def apply_options(self, training: TrainingSpec, options: Mapping[str, Any]) -> TrainingSpec:
        """`training` with the method's options applied (none given: `training` as it is); an unknown or
        bad option is a UserInputError naming it (`unknown_options`, `validated_options`)."""
        ...

    def setup(self, ctx: RecipeContext) -> PreparedTraining: ...

    def resume(self, prepared: PreparedTraining) -> Path | None: ...

    def train(self, request: Any, progress: ProgressFn | None) -> Any: ...

    def save(self, prepared: PreparedTraining, outcome: Any) -> TrainedAdapter: ...

    def summary(self, metrics: dict[str, Any]) -> str:
        """One line `rsi train` prints about the method's own numbers ('' for none)."""
        ...


class RecipeBase:
    """What most recipes share: no options of their own, the checkpoint in `checkpoint/` of the training's
    folder, an outcome model whose fields but `adapter_dir` are the lineage's metrics, and no summary line
    of their own."""

    name: str

    def apply_options(self, training: TrainingSpec, options: Mapping[str, Any]) -> TrainingSpec:
        unknown_options(self.name, options, ())
        return training

    def resume(self, prepared: PreparedTraining) -> Path | None:
        folder = prepared.out_dir / "checkpoint"
        return folder if folder.is_dir() else None

    def save(self, prepared: PreparedTraining, outcome: BaseModel) -> TrainedAdapter:
        metrics = outcome.model_dump(mode="json")
        return TrainedAdapter(adapter_dir=metrics.pop("adapter_dir"), dataset=prepared.dataset,
                              source_runs=prepared.source_runs, metrics=metrics)

    def summary(self, metrics: dict[str, Any]) -> str:
        return ""


Options = TypeVar("Options", bound=BaseModel)


def unknown_options(method: str, options: Mapping[str, Any], known: Iterable[str]) -> None:
    """A UserInputError naming the first option `method` does not take (`known`: the ones it does)."""
    names = sorted(known)
    for key in sorted(set(options) - set(names)):
        takes = f"known: {', '.join(names)}" if names else f"{method} takes no options"
        raise UserInputError(f"{method} option {key}: unknown; {takes}")


def validated_options(method: str, model: type[Options], options: Mapping[str, Any],
                      base: Mapping[str, Any] | None = None) -> Options:
    """`options` over `base` as a `model` (its fields are the options `method` takes); an unknown or bad
    option is a UserInputError naming it and the value given."""
    unknown_options(method, options, model.model_fields)
    try:
        return model.model_validate({**(base or {}), **options})
    except PydanticError as error:
        first = error.errors()[0]
        key = str(first["loc"][0]) if first["loc"] else ""
        given = f"={options[key]!r}" if key in options else ""
        raise UserInputError(f"{method} option {key}{given}: {first['msg']}") from None


TRAINING_METHODS = cast("PluginRegistry[Callable[[], TrainingRecipe]]", plugins.TRAINING_METHODS)


def training_recipe(name: str) -> TrainingRecipe:
    """The recipe of method `name` (see TRAINING_METHODS); an unknown name is a UserInputError."""
    try:
        factory = TRAINING_METHODS[training_method_name(name)]
    except ValueError as error:
        raise UserInputError(str(error)) from None
    return factory()
