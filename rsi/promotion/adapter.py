"""Promoting an adapter: the parent contract's next revision serves what an evaluated candidate serves.

The candidate (`hcp/<parent>-candidate.toml`, written by rsi.training.candidate) routes to a newly trained
adapter; only `promote_adapter` (called by `rsi eval` when the gate passes, or by a generation) revises the
parent with the candidate's specialist and routing sets, with the evaluation's numbers as trailers
(`Adapter-Eval`, `Eval-Lift`, `Eval-Retention`, ...). A rerun finds its own commit by the `Adapter-Eval`
trailer and writes nothing twice.

What a candidate changes decides the adapter trailers: one specialist (a trained `sft`) is `Adapter-Id`;
several (one per partition of the train evidence) are all promoted, `Adapter-Id` naming the routed one
(else the first) and `Adapter-Ids` listing each; none (a candidate that changes only routing or the
harness, every adapter the parent's) is promoted as that runtime change, with no adapter trailer.

It lives in promotion, below training and evaluation, because it is a promotion of a contract revision:
evaluation applies its decision through it without importing training. The revision reference and the
trailer names are shared with the candidate writer, which imports them from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rsi.contracts.gitio import find_trailer_commit
from rsi.errors import RevisionError
from rsi.workspace import Workspace

if TYPE_CHECKING:
    from rsi.contracts.schema import ContractSpec, SpecialistSpec

SPECIALIST_NAME = "sft"  # the specialist a candidate serves a single adapter under
ADAPTER_TRAILER = "Adapter-Id"
ADAPTERS_TRAILER = "Adapter-Ids"  # every adapter a candidate of several changed specialists promotes
EVAL_TRAILER = "Adapter-Eval"


@dataclass(frozen=True)
class ContractRevisionRef:
    """A contract revision written (or found) for an adapter."""

    name: str
    revision: int
    tag: str
    commit: str
    content_hash: str
    written: bool

    @property
    def ref(self) -> str:
        return f"{self.name}@r{self.revision}"

    def summary(self) -> dict[str, Any]:
        return {"name": self.name, "revision": self.revision, "ref": self.ref, "tag": self.tag,
                "commit": self.commit, "content_hash": self.content_hash, "written": self.written}


def revision_ref(workspace: Workspace, name: str, commit: str, revision: int, written: bool) -> ContractRevisionRef:
    """The reference of a revision found in git (tagged here if its tag is missing)."""
    from rsi.contracts.refs import resolve_ref
    from rsi.promotion.promote import ensure_tag

    tag, _ = ensure_tag(workspace, name, revision, commit)
    loaded = resolve_ref(workspace, f"{name}@r{revision}")
    return ContractRevisionRef(name, revision, tag, commit, loaded.content_hash, written)


def read_prompt(contract: Any, relative: str) -> str | None:
    """A prompt file of a loaded contract, or None where it cannot be read (promotion_sets' reader)."""
    try:
        return str(contract.reader.read(relative))
    except Exception:
        return None


def changed_specialists(parent: ContractSpec, candidate: ContractSpec) -> list[SpecialistSpec]:
    """The candidate's specialists the parent does not serve as they are (new, retrained, revised), the one the
    candidate routes to first, then `sft`, then in the candidate's order. Pure."""
    changed = [s for s in candidate.specialists if s not in parent.specialists]
    return sorted(changed, key=lambda s: (s.name != candidate.routing.specialist, s.name != SPECIALIST_NAME))


def adapter_trailers(changed: list[SpecialistSpec]) -> dict[str, str]:
    """`Adapter-Id` (the first changed specialist's weights) and, for several, `Adapter-Ids` (each one's)."""
    hashed = [s for s in changed if s.sha256]
    if not hashed:
        return {}
    trailers = {ADAPTER_TRAILER: hashed[0].sha256}
    if len(hashed) > 1:
        trailers[ADAPTERS_TRAILER] = ", ".join(f"{s.sha256} ({s.name} r{s.revision})" for s in hashed)
    return trailers


def promotion_subject(changed: list[SpecialistSpec], candidate_ref: str) -> str:
    if not changed:
        return f"promote the runtime of {candidate_ref} (no adapter changed)"
    first, rest = changed[0], changed[1:]
    return (f"promote adapter {first.sha256[:12]} ({first.name} r{first.revision}) from {candidate_ref}"
            + "".join(f", {s.name} r{s.revision} {s.sha256[:12]}" for s in rest))


def promote_adapter(workspace: Workspace, parent_name: str, candidate_ref: str, eval_id: str,
                    trailers: dict[str, str], body: str) -> ContractRevisionRef:
    """Revise the parent with the candidate's runtime: specialists and routing, and the harness when the
    candidate carries one chosen on train evidence (idempotent by `Adapter-Eval`)."""
    from rsi.contracts.refs import resolve_ref
    from rsi.contracts.revisions import revise_contract
    from rsi.promotion.changes import promotion_sets
    from rsi.promotion.promote import load_head_contract

    found = find_trailer_commit(workspace, parent_name, EVAL_TRAILER, eval_id)
    if found is not None:
        return revision_ref(workspace, parent_name, found[0], found[1], written=False)
    parent = load_head_contract(workspace, parent_name)
    candidate = resolve_ref(workspace, candidate_ref)
    sets = promotion_sets(parent.spec, parent.system_prompt, candidate.spec, candidate.system_prompt,
                          read_prompt_file=lambda rel: read_prompt(parent, rel))
    if not sets:
        raise RevisionError(f"{parent_name} already serves the candidate's runtime; nothing to promote")
    changed = changed_specialists(parent.spec, candidate.spec)
    outcome = revise_contract(
        workspace, parent_name, sets, f"{promotion_subject(changed, candidate.ref)}\n\n{body}",
        {EVAL_TRAILER: eval_id, **adapter_trailers(changed), "Adapter-Candidate": candidate.ref, **trailers},
    )
    return ContractRevisionRef(parent_name, outcome.revision, outcome.tag, outcome.commit, outcome.content_hash, True)
