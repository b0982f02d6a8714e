"""Contract revisions for adapters: the candidate that routes to a new adapter, and its promotion.

Design choice (documented in docs/training.md): a trained adapter never changes the parent contract
directly. Registering it writes a revision of a separate **candidate contract**,
`hcp/<parent>-candidate.toml`, through the normal revision machinery (`revise_contract`: tomlkit
edit, atomic write, `git commit --only`, tag `hcp/<parent>-candidate/r<N>`). That revision is the
parent's runtime (its base, harness, routing and specialists, copied as they are at the parent's
HEAD) plus the new adapter as a `[[specialists]]` entry named `sft` (its specialist revision bumped
each time) and `[routing] policy = "fixed", specialist = "sft"`, so every turn of the candidate is
served by the adapter. Its commit carries `Adapter-Id` and `Adapter-Parent` trailers.

Promotion is explicit and separate: only `promote_adapter` (rsi/promotion/adapter.py, called by `rsi eval`
when the gate passes, or by a generation) revises the parent with the same specialist and routing sets,
with the evaluation's numbers as trailers (`Adapter-Eval`, `Eval-Lift`, `Eval-Retention`, ...). A rerun
finds its own commit by the `Adapter-Eval` trailer and writes nothing twice.
"""

from __future__ import annotations

from typing import Any

from rsi.contracts.gitio import find_trailer_commit
from rsi.contracts.schema import SpecialistSpec
from rsi.errors import RevisionError
from rsi.promotion.adapter import (
    ADAPTER_TRAILER,
    SPECIALIST_NAME,
    ContractRevisionRef,
    read_prompt,
    revision_ref,
)
from rsi.workspace import Workspace

CANDIDATE_SUFFIX = "-candidate"


def candidate_name(parent: str) -> str:
    return parent if parent.endswith(CANDIDATE_SUFFIX) else f"{parent}{CANDIDATE_SUFFIX}"


def _relative(workspace: Workspace, name: str) -> str:
    return workspace.contract_path(name).relative_to(workspace.root).as_posix()


def ensure_revision_tagged(workspace: Workspace, name: str) -> None:
    """Tag the committed revision of hcp/<name>.toml if its tag is missing (a fresh `rsi init` tags nothing),
    so lineage and `rsi eval --against NAME@rN` can name it. A dirty or uncommitted file is left alone."""
    import tomllib

    from rsi.contracts.gitio import open_repo, read_at, repo_path, revision_tags, tag_name

    path = workspace.contract_path(name)
    if not path.is_file():
        return
    repo = open_repo(workspace)
    try:
        relative = repo_path(repo, path)
        text = read_at(repo, "HEAD", relative)
        if text is None or text != path.read_text(encoding="utf-8"):
            return
        revision = tomllib.loads(text).get("hcp", {}).get("revision")
        if not isinstance(revision, int) or revision in revision_tags(repo, name):
            return
        last = next(repo.iter_commits(paths=relative, max_count=1))
        repo.create_tag(tag_name(name, revision), ref=last.hexsha, message=f"HCP contract {name} revision {revision}")
    finally:
        repo.close()


def specialist_for(parent_spec: Any, adapter_id: str, relative_path: str, rank: int, target_modules: list[str]) -> SpecialistSpec:
    """The `sft` specialist entry for an adapter: its revision follows the parent's `sft`, if any."""
    previous = next((s for s in parent_spec.specialists if s.name == SPECIALIST_NAME), None)
    return SpecialistSpec(
        name=SPECIALIST_NAME,
        revision=(previous.revision + 1) if previous else 1,
        path=relative_path,
        sha256=adapter_id,
        rank=rank,
        target_modules=list(target_modules),
        role="SFT on selected passing trajectories (rsi train)",
    )


def runtime_with_adapter(parent_spec: Any, specialist: SpecialistSpec) -> Any:
    """The parent's spec with `specialist` replacing any same-named one, and fixed routing to it."""
    others = [s for s in parent_spec.specialists if s.name != specialist.name]
    routing = parent_spec.routing.model_copy(update={"policy": "fixed", "specialist": specialist.name, "rules": []})
    return parent_spec.model_copy(update={"specialists": [*others, specialist], "routing": routing})


def _tagged_commit(workspace: Workspace, name: str, revision: int) -> str:
    from rsi.contracts.gitio import open_repo, tag_name

    repo = open_repo(workspace)
    try:
        return repo.tags[tag_name(name, revision)].commit.hexsha
    finally:
        repo.close()


def _ensure_candidate_file(workspace: Workspace, parent: Any, name: str, notes: str) -> None:
    """Create hcp/<name>.toml as a copy of the parent's committed text, renamed, as revision 1 (committed, tagged)."""
    import tomlkit

    from rsi.contracts.gitio import open_repo, repo_path, revision_tags, tag_name

    path = workspace.contract_path(name)
    repo = open_repo(workspace)
    try:
        relative = repo_path(repo, path)
        committed = True
        try:
            repo.head.commit.tree / relative  # noqa: B018 - raises KeyError when absent
        except (KeyError, ValueError):
            committed = False
        if not committed:
            document = tomlkit.parse(parent.source)
            document["hcp"]["name"] = name
            document["hcp"]["revision"] = 1
            document["hcp"]["parent"] = 0
            document["hcp"]["notes"] = notes
            path.write_text(tomlkit.dumps(document), encoding="utf-8")
            repo.git.add("--", relative)
            repo.git.commit("--only", "--no-verify", "-m",
                            f"hcp({name}): r1: derived from {parent.name}: {notes}", "--", relative)
        if 1 not in revision_tags(repo, name):
            first = list(repo.iter_commits(paths=relative))[-1]
            repo.create_tag(tag_name(name, 1), ref=first.hexsha, message=f"HCP contract {name} revision 1")
    finally:
        repo.close()


def write_candidate(workspace: Workspace, parent_name: str, adapter_id: str, adapter_path: str, rank: int,
                    target_modules: list[str], parent_ref: str | None = None,
                    harness_sets: dict[str, Any] | None = None) -> ContractRevisionRef:
    """Write (or find) the candidate revision that serves `adapter_id` on top of the parent's runtime
    (with `harness_sets`, the parent's runtime changed by them first: a harness chosen on train evidence)."""
    from rsi.contracts.refs import resolve_ref
    from rsi.promotion.promote import load_head_contract

    name = candidate_name(parent_name)
    found = find_trailer_commit(workspace, name, ADAPTER_TRAILER, adapter_id)
    if found is not None:
        return revision_ref(workspace, name, found[0], found[1], written=False)
    parent = resolve_ref(workspace, parent_ref) if parent_ref else load_head_contract(workspace, parent_name)
    specialist = specialist_for(parent.spec, adapter_id, adapter_path, rank, target_modules)
    runtime, prompt = _with_harness(parent, harness_sets or {})
    return write_derived(
        workspace, name, parent, runtime_with_adapter(runtime, specialist), prompt,
        f"adapter {adapter_id[:12]} as specialist {SPECIALIST_NAME} r{specialist.revision} over {parent.name} "
        f"r{parent.revision}\n\nNot promoted: `rsi eval {name}@rN --against {parent.name}@r{parent.revision}` decides.",
        {ADAPTER_TRAILER: adapter_id, "Adapter-Parent": f"{parent.name}@r{parent.revision} {parent.content_hash}"},
        notes=f"Adapter candidates of {parent.name} (written by rsi train; promote explicitly).",
    )


SPECIALIST_SET_TRAILER = "Adapter-Set"


def specialists_with(parent_spec: Any, trained: list[tuple[str, str, str]], rank: int, target_modules: list[str],
                     role: str) -> list[Any]:
    """The parent's specialists with each (name, adapter id, path) added or replaced; a specialist's revision is
    its own release clock: it moves only when its adapter changed (an unchanged one keeps the parent's entry)."""
    current = {s.name: s for s in parent_spec.specialists}
    for name, adapter_id, path in trained:
        previous = current.get(name)
        if previous is not None and previous.sha256 == adapter_id:
            continue
        current[name] = SpecialistSpec(name=name, revision=(previous.revision + 1) if previous else 1, path=path,
                                       sha256=adapter_id, rank=rank, target_modules=list(target_modules),
                                       role=role.format(name=name))
    return [current[s.name] for s in parent_spec.specialists] + [
        current[name] for name, _, _ in trained if name not in {s.name for s in parent_spec.specialists}]


def write_candidate_specialists(workspace: Workspace, parent_name: str, trained: list[tuple[str, str, str]], rank: int,
                                target_modules: list[str], parent_ref: str | None = None,
                                harness_sets: dict[str, Any] | None = None) -> ContractRevisionRef:
    """Write (or find) the candidate revision that lists one specialist per trained part over the parent's runtime.

    Routing stays the parent's: which specialist acts on a turn is the routing policy's choice (fixed, rules or
    a learned router fitted on its own), not the trainer's. Idempotent by the `Adapter-Set` trailer."""
    import hashlib

    from rsi.contracts.refs import resolve_ref
    from rsi.promotion.promote import load_head_contract

    name = candidate_name(parent_name)
    key = hashlib.sha256("\n".join(f"{n} {a}" for n, a, _ in sorted(trained)).encode()).hexdigest()
    found = find_trailer_commit(workspace, name, SPECIALIST_SET_TRAILER, key)
    if found is not None:
        return revision_ref(workspace, name, found[0], found[1], written=False)
    parent = resolve_ref(workspace, parent_ref) if parent_ref else load_head_contract(workspace, parent_name)
    runtime, prompt = _with_harness(parent, harness_sets or {})
    specialists = specialists_with(runtime, trained, rank, target_modules, "SFT on the {name} part of the train evidence")
    listed = ", ".join(f"{n} {a[:12]}" for n, a, _ in trained)
    return write_derived(
        workspace, name, parent, runtime.model_copy(update={"specialists": specialists}), prompt,
        f"{len(trained)} specialists ({listed}) over {parent.name} r{parent.revision}\n\n"
        f"Not promoted: `rsi eval {name}@rN --against {parent.name}@r{parent.revision}` decides.",
        {SPECIALIST_SET_TRAILER: key, "Adapter-Parent": f"{parent.name}@r{parent.revision} {parent.content_hash}"},
        notes=f"Adapter candidates of {parent.name} (written by rsi train; promote explicitly).",
    )


def write_derived(workspace: Workspace, name: str, origin: Any, desired: Any, prompt: str, message: str,
                  trailers: dict[str, str], notes: str) -> ContractRevisionRef:
    """A revision of hcp/<name>.toml (created from `origin`'s committed text when absent) whose runtime is `desired`
    (a ContractSpec) with system prompt `prompt`: the candidate contracts of adapters, and ablated contracts."""
    from rsi.contracts.revisions import revise_contract
    from rsi.promotion.changes import promotion_sets
    from rsi.promotion.promote import load_head_contract

    _ensure_candidate_file(workspace, origin, name, notes)
    current = load_head_contract(workspace, name)
    sets = promotion_sets(current.spec, current.system_prompt, desired, prompt,
                          read_prompt_file=lambda rel: read_prompt(current, rel))
    if not sets:  # the newest revision already holds exactly this runtime (another derivation wrote it)
        return revision_ref(workspace, name, _tagged_commit(workspace, name, current.revision), current.revision, False)
    outcome = revise_contract(workspace, name, sets, message, trailers)
    return ContractRevisionRef(name, outcome.revision, outcome.tag, outcome.commit, outcome.content_hash, True)


def _with_harness(parent: Any, harness_sets: dict[str, Any]) -> tuple[Any, str]:
    """The parent's spec and prompt with `harness_sets` applied (unchanged without sets)."""
    if not harness_sets:
        return parent.spec, parent.system_prompt
    from rsi.contracts.load import override_contract

    spec, prompt, problems = override_contract(parent, harness_sets)
    if spec is None or problems:
        raise RevisionError(f"the chosen harness does not apply to {parent.ref}: {problems[:3]}")
    return spec, prompt
