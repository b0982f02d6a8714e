"""`rsi trajectories export`: selected trajectories of a run as chat JSONL for SFT, with a manifest.

    <out>/
      train.jsonl     one {"messages": [{"role": ..., "content": ...}, ...]} per line (TRL SFTTrainer's
                      conversational format; `datasets.load_dataset("json", data_files=...)` reads it)
      manifest.json   provenance: dataset sha256, source runs and attempts (line by line), the contract
                      revision, the selection policy and its parameters, counts per task, tag and
                      configuration, what the policy dropped and why, the decontamination check
                      (`decontamination`: the suites checked, the protected tasks of all of them, and
                      `twins`: each train task refused as a twin of a protected task of any suite,
                      rsi/trajectories/twins.py), and
                      the sandbox isolation of the exported attempts (`isolation.weak_allowed` is
                      true when weakly isolated evidence went in under --allow-weak-isolation), and
                      `rendering`: "found" (the conversation the configuration that found the solution
                      held) or "deployed" (the solution in the deployed contract's own conversation)

Both files are written atomically (temp file, fsync, rename), the manifest last, so a folder with a
manifest always holds the complete dataset the manifest describes. The JSONL is deterministic (no
timestamps), so the same selection gives the same dataset hash.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from rsi.atomic import write_bytes_atomic
from rsi.contracts.hashing import canonical_json
from rsi.errors import RsiError, UserInputError
from rsi.promotion.evidence import ScoredAttempt
from rsi.promotion.isolation import AttemptIsolation, IsolationCheck, check_isolation
from rsi.promotion.stored import RunAttempts, load_run_attempts
from rsi.trajectories.render import agent_turns, final_code_of, render_deployed, render_messages
from rsi.trajectories.select import (
    SelectionOutcome,
    SelectionPolicy,
    TrajectoryCandidate,
    check_decontaminated,
    select_trajectories,
)
from rsi.trajectories.twins import Decontamination, decontamination_for
from rsi.workspace import Workspace

DATASET_FILE = "train.jsonl"
MANIFEST_FILE = "manifest.json"
MANIFEST_SCHEMA = "rsi-sft-export/1"
Rendering = Literal["found", "deployed"]


@dataclass(frozen=True)
class ExportOutcome:
    """What an export wrote."""

    out_dir: Path
    dataset_path: Path
    manifest_path: Path
    examples: int
    dataset_sha256: str
    manifest: dict[str, Any]


def decontamination_of(workspace: Workspace, stored: RunAttempts) -> Decontamination:
    """The workspace-wide check for a run's suite: every suite's protected (heldout, test) keys and content hashes,
    the store's for the run's suite, and the suite's train tasks that are twins of a protected task.
    A suite that won't load has no train tasks to judge as twins (its attempts keep the per-suite checks)."""
    from rsi.tasks.load import load_suite

    try:
        tasks = load_suite(workspace, stored.suite)
    except RsiError:
        tasks = []
    return decontamination_for(workspace, tasks, stored.heldout_keys, stored.heldout_hashes)


@dataclass(frozen=True)
class Gathered:
    """Candidates for selection, read failures by reason, rendered chats and isolation records by attempt."""

    candidates: list[TrajectoryCandidate]
    failures: dict[str, int]
    chats: dict[str, list[dict[str, str]]]
    isolation: dict[str, AttemptIsolation]


def gather_candidates(attempts: tuple[ScoredAttempt, ...]) -> Gathered:
    """Candidates for selection; trajectories are read (once each) only for passing train attempts (the
    rest are refused by the policy without needing them)."""
    from rsi.harness.trajectory import read_trajectory

    gathered = Gathered([], {}, {}, {})
    failures = gathered.failures
    for record in attempts:
        if not (record.passed and record.split == "train"):
            gathered.candidates.append(TrajectoryCandidate(record, "", 0))
            continue
        if not record.trajectory_path:
            failures["no trajectory recorded"] = failures.get("no trajectory recorded", 0) + 1
            continue
        try:
            trajectory = read_trajectory(Path(record.trajectory_path))
        except RsiError:
            failures["trajectory unreadable"] = failures.get("trajectory unreadable", 0) + 1
            continue
        messages = render_messages(trajectory)
        if not any(m["role"] == "assistant" for m in messages):
            failures["no assistant turn"] = failures.get("no assistant turn", 0) + 1
            continue
        gathered.chats[record.attempt_id] = messages
        gathered.isolation[record.attempt_id] = AttemptIsolation(record.attempt_id, trajectory.sandbox)
        gathered.candidates.append(TrajectoryCandidate(record, final_code_of(trajectory), agent_turns(trajectory)))
    return gathered


def contract_provenance(workspace: Workspace, contract: str | None) -> dict[str, Any] | None:
    """Name, revision, content hash and HEAD commit of the named contract (None if there is none)."""
    if not contract:
        return None
    from rsi.contracts.refs import resolve_ref

    try:
        loaded = resolve_ref(workspace, contract)
    except RsiError:
        return None
    commit = ""
    try:
        import git

        commit = git.Repo(workspace.root, search_parent_directories=True).head.commit.hexsha
    except Exception:  # no repository or no commit yet: the manifest says so with an empty commit
        commit = ""
    return {"name": loaded.name, "revision": loaded.revision, "content_hash": loaded.content_hash, "commit": commit}


def export_trajectories(
    workspace: Workspace,
    run_ids: list[str],
    out_dir: Path,
    policy: SelectionPolicy | None = None,
    contract: str | None = "default",
    allow_weak_isolation: bool = False,
    render: Rendering = "found",
) -> ExportOutcome:
    """Select, decontaminate, check isolation, render and write (see the module docstring).

    Raises WeakIsolationError (exit 2) when a selected example comes from a weakly isolated attempt
    and `allow_weak_isolation` is off (rsi/promotion/isolation.py); nothing is written then.
    `render="deployed"` renders each solution into `contract`'s own conversation (`render_deployed`).
    """
    from rsi.store import open_store

    policy = policy or SelectionPolicy()
    store = open_store(workspace.db_url)
    try:
        stored: RunAttempts = load_run_attempts(store, run_ids, workspace.runs_dir)
    finally:
        store.close()
    checked = decontamination_of(workspace, stored)
    gathered = gather_candidates(stored.attempts)
    outcome = select_trajectories(gathered.candidates, policy, checked.hashes, checked.reasons)
    check_decontaminated(outcome.selected, checked.hashes, checked.keys, checked.reasons)
    if not outcome.selected:
        raise UserInputError(
            f"nothing to export: runs {', '.join(run_ids)} have no passing train attempt with a readable trajectory"
            + (f" (refused: {'; '.join(f'{n} {why}' for why, n in sorted(outcome.dropped.items()))})"
               if outcome.dropped else ""),
            hint="check `rsi coverage` for the run; heldout tasks are never exported",
        )
    isolation = check_isolation((gathered.isolation[c.record.attempt_id] for c in outcome.selected),
                                allow_weak_isolation, what="to export training data")
    chats, rendering = gathered.chats, {"name": "found"}
    if render == "deployed":
        chats, rendering = deployed_chats(workspace, stored.suite, contract, outcome.selected)
    lines = [canonical_json({"messages": chats[c.record.attempt_id]}) for c in outcome.selected]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    import hashlib

    digest = hashlib.sha256(data).hexdigest()
    manifest = build_manifest(workspace, stored, outcome, policy, contract, gathered.failures, isolation)
    manifest["dataset"] = {"file": DATASET_FILE, "sha256": digest, "examples": len(lines), "format": "chat-messages"}
    manifest["rendering"] = rendering
    manifest["decontamination"] = {**checked.record, "passed": True}
    out_dir = Path(out_dir)
    dataset_path, manifest_path = out_dir / DATASET_FILE, out_dir / MANIFEST_FILE
    manifest_path.unlink(missing_ok=True)  # the manifest marks a complete export: remove it first
    write_bytes_atomic(dataset_path, data)
    write_bytes_atomic(manifest_path, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode("utf-8"))
    return ExportOutcome(out_dir, dataset_path, manifest_path, len(lines), digest, manifest)


def deployed_chats(
    workspace: Workspace, suite: str, contract: str | None, selected: tuple[TrajectoryCandidate, ...]
) -> tuple[dict[str, list[dict[str, str]]], dict[str, Any]]:
    """Each selected solution in the deployed contract's own conversation, and the manifest's record of it."""
    from rsi.config import configuration_from_contract
    from rsi.contracts.refs import resolve_ref
    from rsi.tasks.load import load_suite

    if not contract:
        raise UserInputError("--render deployed needs the deployed contract (--contract NAME)")
    loaded = resolve_ref(workspace, contract)
    config = configuration_from_contract(loaded)
    tool_names = _offered_tools(workspace, config.spec.harness.tool_library)
    tasks = {t.key: t for t in load_suite(workspace, suite)}
    chats = {}
    for candidate in selected:
        task = tasks.get(candidate.record.task_key)
        if task is None:
            raise UserInputError(f"--render deployed: task {candidate.record.task_key} is no longer in suite {suite}")
        chats[candidate.record.attempt_id] = render_deployed(config, task.instruction, task.spec.solution_file,
                                                             candidate.final_code, tool_names)
    harness = config.spec.harness
    return chats, {"name": "deployed", "contract": loaded.name, "revision": loaded.revision,
                   "config_hash": config.config_hash, "substrate": harness.substrate,
                   "prompt_style": harness.prompt_style, "end_marker": harness.end_marker}


def build_manifest(
    workspace: Workspace, stored: RunAttempts, outcome: SelectionOutcome, policy: SelectionPolicy,
    contract: str | None, failures: dict[str, int], isolation: IsolationCheck,
) -> dict[str, Any]:
    """The manifest's provenance (everything but the dataset file and the decontamination check)."""
    configs = stored.configurations
    return {
        "schema": MANIFEST_SCHEMA,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "source": {
            "runs": list(stored.run_ids),
            "suite": stored.suite,
            "attempts": [
                {
                    "line": index,
                    "attempt": c.record.attempt_id,
                    "run": c.record.run_id,
                    "task": c.record.task_key,
                    "task_hash": c.record.task_hash,
                    "config_hash": c.record.config_hash,
                    "config_name": c.record.config_name,
                    "tokens": c.record.tokens,
                    "turns": c.turns,
                    "code_key": c.code_key,
                }
                for index, c in enumerate(outcome.selected)
            ],
        },
        "contract": contract_provenance(workspace, contract),
        "configurations": {
            h: {"name": configs[h].name, "contract_ref": configs[h].contract_ref, "parents": list(configs[h].parents)}
            for h in sorted({c.record.config_hash for c in outcome.selected})
            if h in configs
        },
        "policy": policy.describe(),
        "counts": {
            "per_task": outcome.per_task(),
            "per_tag": outcome.per_tag(),
            "per_config": outcome.per_config(),
            "dropped": {**outcome.dropped, **failures},
        },
        "isolation": isolation.summary(),
    }


def _offered_tools(workspace: Workspace, revision: str) -> list[str]:
    """The helper names the deployed harness lists in its task message (its tool library's), [] without one."""
    from rsi.harness.tools import library_root, read_manifest

    return [h.name for h in read_manifest(library_root(workspace.runs_dir), revision).helpers] if revision else []
