"""What promoting a configuration changes in its contract: dotted-key sets from parent to candidate. Pure.

Only the runtime sections move (`base`, `specialists`, `harness`, `routing`: the content a
configuration hash covers); `[evaluation]`, `[training]` and `[serving]` belong to the contract, not
to the configuration, and stay as they are. Tables are compared key by key so a revision touches only
the leaves that differ (and `rsi diff` shows exactly those); lists are replaced whole. The prompt is
compared by its resolved text: a candidate whose prompt lives in a file the contract can read keeps
the file reference, otherwise the text is written inline.

Clock versions (`base.version`, `harness.version`) are never copied from the candidate (it may come
from an older revision): `revise_contract` bumps the version of every clock the change moves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rsi.contracts.schema import ContractSpec

RUNTIME_SECTIONS = ("base", "specialists", "harness", "routing")
_SKIPPED = ("system_prompt", "system_prompt_file", "version")


def promotion_sets(
    parent: ContractSpec,
    parent_prompt: str,
    candidate: ContractSpec,
    candidate_prompt: str,
    read_prompt_file: Callable[[str], str | None] = lambda _relative: None,
) -> dict[str, Any]:
    """Dotted-key assignments that turn `parent` into `candidate` (runtime sections only)."""
    old, new = parent.model_dump(mode="json"), candidate.model_dump(mode="json")
    sets: dict[str, Any] = {}
    for section in RUNTIME_SECTIONS:
        if section == "harness":
            old_h = {k: v for k, v in old["harness"].items() if k not in _SKIPPED}
            new_h = {k: v for k, v in new["harness"].items() if k not in _SKIPPED}
            _diff_into(sets, "harness", old_h, new_h)
        elif section == "base":
            old_b = {k: v for k, v in old["base"].items() if k != "version"}
            new_b = {k: v for k, v in new["base"].items() if k != "version"}
            _diff_into(sets, "base", old_b, new_b)
        else:
            _diff_into(sets, section, old[section], new[section])
    if candidate_prompt != parent_prompt:
        prompt_file = candidate.harness.system_prompt_file
        if prompt_file and read_prompt_file(prompt_file) == candidate_prompt:
            sets["harness.system_prompt_file"] = prompt_file
            sets["harness.system_prompt"] = ""
        else:
            sets["harness.system_prompt"] = candidate_prompt
            sets["harness.system_prompt_file"] = ""
    return dict(sorted(sets.items()))


def _diff_into(sets: dict[str, Any], prefix: str, old: Any, new: Any) -> None:
    if isinstance(old, dict) and isinstance(new, dict) and set(old) == set(new):
        for key in sorted(new):
            _diff_into(sets, f"{prefix}.{key}", old[key], new[key])
    elif old != new:
        sets[prefix] = new
