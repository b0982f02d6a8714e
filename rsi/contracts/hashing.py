"""Contract identity: stable hashes of normalized content, for the whole contract and per release clock.

The hash is taken over canonical JSON of the *validated* model (defaults filled in, keys sorted),
so comments, key order, formatting and spelling a default explicitly never change it. The resolved
system prompt text stands in for `system_prompt`/`system_prompt_file`: moving a prompt into a file
with the same text is not a change. Bookkeeping fields (`hcp.revision`, `hcp.parent`, `hcp.created`,
`hcp.notes`) are excluded, so two revisions with equal content have equal identity.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from rsi.contracts.schema import (
    CLOCKS,
    ContractSpec,
    evaluation_identity,
    harness_identity,
    routing_identity,
    training_identity,
)

BOOKKEEPING = ("revision", "parent", "created", "notes")


def canonical_json(data: Any) -> str:
    """Key-sorted, whitespace-free JSON: the normal form every content hash is taken over."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def normalized_content(spec: ContractSpec, system_prompt: str) -> dict[str, Any]:
    """The content a contract's identity is taken over (plain JSON-able data)."""
    data = spec.model_dump(mode="json")
    data["hcp"] = {key: value for key, value in data["hcp"].items() if key not in BOOKKEEPING}
    data["harness"] = {**harness_identity(data["harness"]), "system_prompt": system_prompt, "system_prompt_file": ""}
    data["evaluation"] = evaluation_identity(data["evaluation"])
    data["training"] = training_identity(data["training"])
    data["routing"] = routing_identity(data["routing"])
    return data


def content_hash(spec: ContractSpec, system_prompt: str) -> str:
    """Identity of a contract: sha256 (hex) of its normalized content."""
    return sha256_text(canonical_json(normalized_content(spec, system_prompt)))


def clock_contents(spec: ContractSpec, system_prompt: str) -> dict[str, Any]:
    """What each release clock covers: base; specialists; harness + routing (with the prompt text)."""
    data = normalized_content(spec, system_prompt)
    return {
        "base": data["base"],
        "specialists": data["specialists"],
        "harness": {"harness": data["harness"], "routing": data["routing"]},
    }


def clock_hashes(spec: ContractSpec, system_prompt: str) -> dict[str, str]:
    return {clock: sha256_text(canonical_json(content)) for clock, content in clock_contents(spec, system_prompt).items()}


def clocks_moved(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Clocks whose hash differs, in the canonical order base, specialists, harness."""
    return [clock for clock in CLOCKS if before.get(clock) != after.get(clock)]
