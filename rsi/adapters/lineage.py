"""The typed parts of an adapter's lineage.json (rsi.adapters.registry.AdapterLineage).

Each part is read into a record with typed attributes and written back exactly as it was given: a
part dumps only the keys it was built with (a default never adds a key to a stored file) and keeps
keys it does not know (`extra="allow"`), so every lineage.json written before reads, and one written
now has the keys it always had. Parts absent from a lineage (`partition` of an adapter trained on
all the evidence, `origin` of one rsi trained) are None in Python and {} in the JSON, as before.
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)


class LineagePart(BaseModel):
    """A part of lineage.json: typed to read, written as given (the module docstring)."""

    model_config = ConfigDict(extra="allow")

    @model_serializer(mode="wrap")
    def _as_given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        given = self.model_fields_set | set(self.model_extra or {})
        return {key: value for key, value in data.items() if key in given}


class BaseIdentity(LineagePart):
    """The base model trained on: the contract's `[base]` with the weights' digest."""

    id: str = ""
    version: int = 1
    format: str = ""
    source: str = ""
    file: str = ""
    sha256: str = Field(default="", description="The GGUF's sha256, or a hash of the HF folder's weights.")


class DatasetRecord(LineagePart):
    """What the adapter learned from: an export (SFT), the sampled train tasks (GRPO), or nothing ({}: imported)."""

    sha256: str = ""
    folder: str = Field(default="", description="The exported folder ('' where the method samples its own data).")
    examples: int = 0
    kind: str = Field(default="", description="'' for an exported dataset; e.g. 'grpo-rollouts'.")
    manifest: dict[str, Any] = Field(default_factory=dict, description="The export's manifest.json, whole.")


class ParentContract(LineagePart):
    """The contract revision the adapter was trained for."""

    name: str = ""
    revision: int | None = None
    ref: str = Field(default="", description="NAME@rN")
    content_hash: str = ""
    commit: str = Field(default="", description="The workspace's HEAD when it was trained ('' for an import).")


class Hyperparameters(LineagePart):
    """The training settings: the contract's `[training]` with the run's overrides (all of its keys are kept,
    typed or not), or what an imported adapter's adapter_config.json says."""

    method: str | None = None
    rank: int | None = None
    alpha: int | None = None
    lora_alpha: int | float | None = Field(default=None, description="An imported adapter's (adapter_config.json).")
    target_modules: list[str] | str | None = Field(default=None, description="A list, or peft's 'all-linear'.")
    learning_rate: float | int | None = None
    epochs: int | None = None
    batch_size: int | None = None
    max_length: int | None = None
    seed: int | None = None
    max_steps: int | None = Field(default=None, description="The stage's step cap (None: none).")


class PartitionRecord(LineagePart):
    """The part of the train evidence a specialist learned (rsi.training.specialists)."""

    name: str
    rule: str = Field(default="", description="`[training] specialists_by` that made the part.")
    tasks: list[str] = Field(default_factory=list)
    examples: int = 0
    dataset_sha256: str = ""
    parent_contract: str = Field(default="", description="NAME@rN the parts were cut for.")


class ImportOrigin(LineagePart):
    """Where an adapter trained outside rsi came from (`rsi specialists import`)."""

    imported_from: str = ""
    base_model_name_or_path: str | None = None
    tensors: int | None = Field(default=None, description="LoRA tensors checked against the base.")
    peft_version: str = ""
