"""What promoting a configuration changes in its contract: dotted-key sets from parent to candidate. Pure.

Only the runtime sections move (`base`, `specialists`, `harness`, `routing`: the content a
configuration hash covers); `[evaluation]`, `[training]` and `[serving]` belong to the contract, not
to the configuration, and stay as they are. Tables are compared key by key so a revision touches only
the leaves that differ (and `rsi diff` shows exactly those); lists are replaced whole. The prompt is
compared by its resolved text: a candidate whose prompt lives in a file the contract can read keeps
the file reference, otherwise the text is written inline.

Release clocks: when the base or the harness content changes and the candidate did not bump the
clock's version itself, the version is bumped here, so that a promotion always moves its clock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rsi.contracts.schema import ContractSpec

RUNTIME_SECTIONS = ("base", "specialists", "harness", "routing")
_PROMPT_KEYS = ("system_prompt", "system_prompt_file")


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
            old_h = {k: v for k, v in old["harness"].items() if k not in _PROMPT_KEYS}
            new_h = {k: v for k, v in new["harness"].items() if k not in _PROMPT_KEYS}
            _diff_into(sets, "harness", old_h, new_h)
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
    harness_moved = any(k.startswith(("harness.", "routing")) and k != "harness.version" for k in sets)
    if harness_moved and "harness.version" not in sets:
        sets["harness.version"] = parent.harness.version + 1
    base_moved = any(k.startswith("base.") and k != "base.version" for k in sets)
    if base_moved and "base.version" not in sets:
        sets["base.version"] = parent.base.version + 1
    return dict(sorted(sets.items()))


def _diff_into(sets: dict[str, Any], prefix: str, old: Any, new: Any) -> None:
    if isinstance(old, dict) and isinstance(new, dict) and set(old) == set(new):
        for key in sorted(new):
            _diff_into(sets, f"{prefix}.{key}", old[key], new[key])
    elif old != new:
        sets[prefix] = new
