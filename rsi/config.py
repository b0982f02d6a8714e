"""A configuration: one fully resolved, content-hashed runtime setup that an attempt runs under.

Produced by resolving a contract (`configuration_from_contract`; for portfolios, with a variant's
overrides); consumed by the harness, the scheduler and the store.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rsi.contracts.hashing import canonical_json, sha256_text
from rsi.contracts.load import LoadedContract, override_contract, resolve_router
from rsi.contracts.schema import ContractSpec, routing_identity, runtime_harness_identity
from rsi.contracts.toml_source import format_key
from rsi.errors import ContractError, Problem


class Configuration(BaseModel):
    """A resolved configuration. `config_hash` covers everything that changes agent behaviour."""

    model_config = ConfigDict(frozen=True)
    name: str = Field(description="Variant name in its portfolio, or the contract name.")
    contract_ref: str = Field(description="Where the contract came from: a path, NAME@rN or GITREV:path.")
    spec: ContractSpec
    system_prompt: str = Field(default="", description="Resolved system prompt text (inline or from its file).")
    overrides: dict[str, Any] = Field(default_factory=dict, description="Dotted-key overrides applied to the contract.")
    parents: list[str] = Field(default_factory=list, description="Variants this one was derived from (lineage).")
    router_text: str = Field(default="", description="The learned router's JSON (routing.policy 'learned'), read "
                             "and sha256-checked when the contract was loaded, so a resumed run routes the same.")

    @property
    def config_hash(self) -> str:
        """Hash of the runtime-relevant content: base, specialists, harness (with prompt text), routing."""
        spec = self.spec.model_dump(mode="json")
        runtime = {key: spec[key] for key in ("base", "specialists", "harness", "routing")}
        runtime["routing"] = routing_identity(runtime["routing"])
        runtime["harness"] = {**runtime_harness_identity(runtime["harness"]), "system_prompt": self.system_prompt,
                              "system_prompt_file": ""}
        return sha256_text(canonical_json(runtime))[:16]


def configuration_from_contract(
    loaded: LoadedContract,
    name: str | None = None,
    overrides: dict[str, Any] | None = None,
    parents: list[str] | None = None,
) -> Configuration:
    """The runtime configuration of a contract, optionally with dotted-key overrides applied."""
    spec, prompt = loaded.spec, loaded.system_prompt
    if overrides:
        new_spec, prompt, problems = override_contract(loaded, overrides)
        if problems or new_spec is None:
            raise ContractError(
                [
                    Problem(loaded.path, None, key or format_key(loc), message)
                    for key, loc, message in problems
                ]
            )
        spec = new_spec
    router = resolve_router(loaded, spec) if spec.routing.policy == "learned" else ""
    return Configuration(
        name=name or spec.hcp.name,
        router_text=router,
        contract_ref=loaded.ref,
        spec=spec,
        system_prompt=prompt,
        overrides=dict(overrides or {}),
        parents=list(parents or []),
    )
