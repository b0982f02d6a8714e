"""`rsi promote`: write a promotion decision as the next HCP revision, with its evidence, into git.

Flow (every step before the write is read-only):

1. read the run's attempts from the store; read the parent contract **as committed at HEAD** (not the
   working tree: after a crash the working tree may hold a half-finished revision); refuse evidence
   from weakly isolated attempts unless allowed (rsi/promotion/isolation.py);
2. decide (pure: rsi.promotion.decision) — candidate, heldout gate (lift, heldout retention, and the price
   read from the heldout attempts' trajectories: rsi.promotion.price), routing;
3. idempotency: if a commit in the contract's history carries this decision's `Decision-Hash`
   trailer, the decision is already written: make sure its tag exists and report it;
4. refuse with the reason when the decision does not promote;
5. compute the dotted-key sets from parent to candidate (rsi.promotion.changes) and a deterministic
   message (evidence in the body, key numbers in trailers) and call `revise_contract` — which writes
   atomically, commits only the contract, tags `hcp/<name>/r<N>`, and recovers its own interrupted
   revision when called again with the same request.

Crash safety. SIGKILL before `revise_contract` writes leaves git untouched. Inside it, the journal
makes a rerun finish the same revision (same request: the decision and its message are deterministic
functions of the stored attempts and the HEAD contract). Between commit and tag, step 3 finds the
commit by its trailer and tags it. Promotion writes nothing to the store, so the database cannot be
left inconsistent by a crash here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from rsi.errors import RevisionError, RsiError, UserInputError
from rsi.promotion.changes import promotion_sets
from rsi.promotion.decision import CiMethod, GatePolicy, PromotionDecision, decide_promotion
from rsi.promotion.isolation import IsolationCheck, check_isolation, read_isolation
from rsi.promotion.price import price_text
from rsi.promotion.stored import RunAttempts, load_run_attempts, read_attempt_costs
from rsi.verdict import Verdict
from rsi.workspace import Workspace

DECISION_TRAILER = "Decision-Hash"

Status = Literal["promoted", "already", "refused", "dry-run", "deferred"]


@dataclass(frozen=True)
class PromoteOutcome:
    """What `promote_run` did."""

    status: Status
    decision: PromotionDecision
    contract: str
    parent_revision: int
    revision: int | None = None
    commit: str | None = None
    tag: str | None = None
    sets: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    trailers: dict[str, str] = field(default_factory=dict)
    diff: Any = None  # rsi.contracts.diff.ContractDiff for --dry-run
    notes: tuple[str, ...] = ()
    isolation: IsolationCheck | None = None

    def summary(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "contract": self.contract,
            "parent_revision": self.parent_revision,
            "revision": self.revision,
            "commit": self.commit,
            "tag": self.tag,
            "sets": self.sets,
            "trailers": self.trailers,
            "decision": self.decision.summary(),
            "diff": self.diff.to_json() if self.diff is not None else None,
            "notes": list(self.notes),
            "isolation": self.isolation.summary() if self.isolation is not None else None,
        }


def contract_relative(workspace: Workspace, name: str) -> str:
    return workspace.contract_path(name).relative_to(workspace.root).as_posix()


def load_head_contract(workspace: Workspace, name: str) -> Any:
    """The contract as committed at HEAD (UserInputError if it is not committed)."""
    from rsi.contracts.refs import load_contract_at

    if not workspace.contract_path(name).is_file():
        known = ", ".join(sorted(p.stem for p in workspace.hcp_dir.glob("*.toml"))) or "none"
        raise UserInputError(f"{name}: no contract {workspace.contract_path(name)} (contracts here: {known})")
    return load_contract_at(workspace, "HEAD", contract_relative(workspace, name), f"HEAD:{contract_relative(workspace, name)}")


def find_decision_commit(workspace: Workspace, name: str, decision_hash: str) -> tuple[str, int] | None:
    """(commit, revision) of the commit carrying `Decision-Hash: <hash>` for this contract, if any."""
    from rsi.contracts.gitio import find_trailer_commit

    return find_trailer_commit(workspace, name, DECISION_TRAILER, decision_hash)


def ensure_tag(workspace: Workspace, name: str, revision: int, commit: str) -> tuple[str, bool]:
    """Tag `commit` as hcp/<name>/r<revision> unless the tag exists; (tag, created)."""
    from rsi.contracts.gitio import open_repo, revision_tags, tag_name

    repo = open_repo(workspace)
    tags = revision_tags(repo, name)
    tag = tag_name(name, revision)
    if revision in tags:
        if tags[revision].commit.hexsha != commit:
            raise RevisionError(
                f"tag {tag} points at {tags[revision].commit.hexsha[:12]}, but the promotion commit is {commit[:12]}",
                hint=f"inspect `git log -- {contract_relative(workspace, name)}` and the tags hcp/{name}/*",
            )
        return tag, False
    repo.create_tag(tag, ref=commit, message=f"HCP contract {name} revision {revision}")
    return tag, True


def evidence_isolation(stored: RunAttempts, allow_weak: bool) -> IsolationCheck:
    """The weak-isolation gate over every counted attempt (errors count for nothing, so they are not
    evidence); reads each attempt's trajectory file once. Raises WeakIsolationError (exit 2)."""
    counted = [a for a in stored.attempts if a.verdict is not Verdict.ERROR]
    records = (read_isolation(a.attempt_id, a.trajectory_path) for a in counted)
    return check_isolation(records, allow_weak, what="to promote")


def evidence_trailers(decision: PromotionDecision, parent_revision: int) -> dict[str, str]:
    """The key evidence as commit trailers (one line each; deterministic)."""
    candidate = decision.candidate
    assert candidate is not None
    trailers = {
        DECISION_TRAILER: decision.decision_hash,
        "Evidence-Runs": ",".join(decision.evidence.run_ids),
        "Evidence-Config": candidate.config_name,
        "Evidence-Config-Hash": candidate.config_hash,
        "Evidence-Parent": f"r{parent_revision} {decision.parent_hash}",
        "Evidence-Attempts": f"{candidate.passes}/{candidate.attempts} passed ({candidate.errors} errors not counted)",
        "Evidence-Pass-Rate": f"{candidate.pass_rate:.4f} CI95 {candidate.pass_ci.as_text()} wilson",
        "Evidence-Coverage": (
            f"{len(candidate.tasks_solved)}/{len(candidate.tasks_attempted)} tasks solved on {decision.selection_split}; "
            f"{len(candidate.marginal)} marginal; run covered {len(decision.evidence.covered)} of the "
            f"{len(decision.evidence.tasks)} tasks attempted (coverage of the split: `rsi coverage`)"
        ),
    }
    if decision.lift is not None:
        lift = decision.lift
        retention = f"{lift.retention:.4f}" if lift.retention is not None else "no tasks"
        trailers["Evidence-Heldout"] = (
            f"{lift.candidate_rate:.4f} vs {lift.parent_rate:.4f} on {lift.tasks} tasks; lift {lift.lift:+.4f} "
            f"CI95 {lift.ci.as_text()} {lift.method}; retention {retention}"
        )
    if decision.prices:
        trailers["Evidence-Price"] = price_text(decision.prices.get("candidate"), decision.prices.get("parent"))
    gate = decision.gate
    trailers["Evidence-Gate"] = (
        f"enabled={str(gate.enabled).lower()} min_lift={gate.min_lift} retention_min={gate.retention_min} "
        f"max_token_ratio={gate.max_token_ratio} min_lift_per_1k_tokens={gate.min_lift_per_1k_tokens} method={gate.method}"
    )
    return trailers


def evidence_body(decision: PromotionDecision) -> str:
    """The commit message body: the decision's reason, every configuration's evidence, the routing rule."""
    lines = [decision.reason, "", f"Evidence ({decision.selection_split} split of {', '.join(decision.evidence.run_ids)}):"]
    for config in sorted(decision.evidence.configs, key=lambda c: (c.config_name, c.config_hash)):
        tags = " ".join(f"{t.tag}={t.solved}/{t.tasks}" for t in config.tags if t.tag != "*")
        lines.append(
            f"- {config.config_name} ({config.config_hash}): {config.passes}/{config.attempts} passed, "
            f"rate {config.pass_rate:.3f} {config.pass_ci.as_text()}, solved {len(config.tasks_solved)}, "
            f"marginal {len(config.marginal)}" + (f"; {tags}" if tags else "")
        )
    if decision.routing:
        lines += ["", "Routing by tag (best configuration per tag; advisory, the contract runs one configuration):"]
        lines += [f"- {r.tag} -> {r.config_name} ({r.solved}/{r.tasks})" for r in decision.routing]
    return "\n".join(lines)


def _dry_run_diff(parent: Any, sets: dict[str, Any]) -> Any:
    """The diff `rsi diff` would show between the parent and the revision these sets would write."""
    from rsi.contracts.diff import diff_contracts
    from rsi.contracts.hashing import clock_hashes, clocks_moved, content_hash
    from rsi.contracts.load import LoadedContract, override_contract

    spec, prompt, problems = override_contract(parent, sets)
    if spec is None or problems:
        raise UserInputError(f"the promotion would not validate: {problems[:3]}")
    moved = clocks_moved(parent.clock_hashes, clock_hashes(spec, prompt))
    updates: dict[str, Any] = {"hcp": spec.hcp.model_copy(update={"revision": parent.revision + 1, "parent": parent.revision})}
    if "harness" in moved and spec.harness.version == parent.spec.harness.version:
        updates["harness"] = spec.harness.model_copy(update={"version": parent.spec.harness.version + 1})
    if "base" in moved and spec.base.version == parent.spec.base.version:
        updates["base"] = spec.base.model_copy(update={"version": parent.spec.base.version + 1})
    spec = spec.model_copy(update=updates)
    revised = LoadedContract(
        spec=spec, path=parent.path, source="", system_prompt=prompt, content_hash=content_hash(spec, prompt),
        clock_hashes=clock_hashes(spec, prompt), ref=f"{parent.name}@r{parent.revision + 1} (dry run)", reader=parent.reader,
    )
    return diff_contracts(parent, revised)


def promote_run(
    workspace: Workspace,
    run_ids: list[str],
    contract: str = "default",
    dry_run: bool = False,
    method: CiMethod = "newcombe",
    routing: bool = True,
    allow_weak_isolation: bool = False,
    defer_heldout_gate: bool = False,
) -> PromoteOutcome:
    """Decide and (unless refused or dry-run) write the promotion; see the module docstring.

    Evidence from weakly isolated attempts is refused (WeakIsolationError, exit 2) unless
    `allow_weak_isolation`; the commit's `Evidence-Isolation` trailer records what was used.

    `defer_heldout_gate` (a generation's promote step): where the runs hold train evidence only, the
    configuration the train evidence ranks first is returned as `deferred`, with the sets that would
    write it and nothing written: the generation's own heldout evaluation is its gate (the harness goes
    into the adapter's candidate contract, and both are promoted together or not at all).
    """
    from rsi.config import configuration_from_contract
    from rsi.contracts.revisions import revise_contract
    from rsi.store import open_store

    parent = load_head_contract(workspace, contract)
    store = open_store(workspace.db_url)
    try:
        stored: RunAttempts = load_run_attempts(store, run_ids, workspace.runs_dir)
    finally:
        store.close()
    isolation = evidence_isolation(stored, allow_weak_isolation)
    parent_config = configuration_from_contract(parent)
    gate = GatePolicy.from_contract(parent.spec, method)
    # the price of the heldout attempts the gate may compare (one trajectory read each)
    costs = read_attempt_costs(a for a in stored.attempts if a.split == "heldout" and a.verdict.counts_as_attempt)
    decision = decide_promotion(list(stored.attempts), contract, parent_config.config_hash, gate, routing, costs)
    base = {"decision": decision, "contract": contract, "parent_revision": parent.revision, "isolation": isolation}
    if decision.decision_hash:
        found = find_decision_commit(workspace, contract, decision.decision_hash)
        if found is not None:
            commit, revision = found
            tag, created = (None, False) if dry_run else ensure_tag(workspace, contract, revision, commit)
            note = f"the missing tag {tag} was created" if created else "nothing to do"
            return PromoteOutcome(status="already", revision=revision, commit=commit, tag=tag,
                                  notes=(f"decision {decision.decision_hash} was written as r{revision}; {note}",), **base)
    deferred = (defer_heldout_gate and not decision.promote and decision.candidate is not None
                and decision.selection_split == "train" and decision.lift is None
                and decision.candidate.config_hash != parent_config.config_hash)
    if not decision.promote and not deferred:
        return PromoteOutcome(status="refused", **base)
    assert decision.candidate is not None
    candidate = stored.configurations.get(decision.candidate.config_hash)
    if candidate is None:
        raise RsiError(
            f"the candidate configuration {decision.candidate.config_name} ({decision.candidate.config_hash}) "
            "is not in the store with its resolved settings",
            hint="runs recorded by `rsi run` store every configuration; this run was written by other means",
        )
    sets = promotion_sets(parent.spec, parent.system_prompt, candidate.spec, candidate.system_prompt, parent.reader.read)
    if not sets:
        return PromoteOutcome(status="refused", notes=(
            "the candidate differs from the contract only in bookkeeping (clock versions); nothing to write",), **base)
    if deferred:
        return PromoteOutcome(status="deferred", sets=sets, notes=(
            f"{decision.candidate.config_name} ranks first on train evidence; the heldout gate of this generation's "
            "evaluation decides it",), **base)
    trailers = evidence_trailers(decision, parent.revision)
    trailers["Evidence-Isolation"] = isolation.as_text()
    message = f"promote {decision.candidate.config_name} from run {', '.join(decision.evidence.run_ids)}\n\n" + evidence_body(decision)
    if dry_run:
        return PromoteOutcome(status="dry-run", sets=sets, message=message, trailers=trailers,
                              diff=_dry_run_diff(parent, sets), **base)
    outcome = revise_contract(workspace, contract, sets, message, trailers)
    return PromoteOutcome(status="promoted", revision=outcome.revision, commit=outcome.commit, tag=outcome.tag,
                          sets=sets, message=message, trailers=trailers,
                          notes=("recovered an interrupted promotion",) if outcome.recovered else (), **base)
