"""A configuration: one fully resolved, content-hashed runtime setup that an attempt runs under.

Produced by resolving a contract (and, for portfolios, a variant's overrides); consumed by the
harness, the scheduler and the store. Pure data.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rsi.contracts.schema import ContractSpec, runtime_harness_identity


def canonical_json(data: Any) -> str:
    """Key-sorted, whitespace-free JSON: the normal form every content hash is taken over."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Configuration(BaseModel):
    """A resolved configuration. `config_hash` covers everything that changes agent behaviour."""

    model_config = ConfigDict(frozen=True)
    name: str = Field(description="Variant name in its portfolio, or the contract name.")
    contract_ref: str = Field(description="Where the contract came from: a path, NAME@rN or GITREV:path.")
    spec: ContractSpec
    system_prompt: str = Field(default="", description="Resolved system prompt text (inline or from its file).")
    overrides: dict[str, Any] = Field(default_factory=dict, description="Dotted-key overrides applied to the contract.")
    parents: list[str] = Field(default_factory=list, description="Variants this one was derived from (lineage).")

    @property
    def config_hash(self) -> str:
        """Hash of the runtime-relevant content: base, specialists, harness (with prompt text), routing."""
        spec = self.spec.model_dump(mode="json")
        runtime = {key: spec[key] for key in ("base", "specialists", "harness", "routing")}
        runtime["harness"] = {**runtime_harness_identity(runtime["harness"]), "system_prompt": self.system_prompt,
                              "system_prompt_file": ""}
        return sha256_text(canonical_json(runtime))[:16]
