"""`rsi propose`: write the successor portfolio of a run (I/O around the pure rsi.promotion.propose).

Reads the run's evidence from the store, keeps the justified configurations, adds operator variants
(and, with a model, a reflective prompt variant per winner from its failed trajectories), checks every
variant resolves against the base contract, and writes `portfolios/<name>.toml` atomically with
tomlkit: a header naming the source runs, every variant with its `parents` and a description saying
which operator made it and why, and the dropped configurations as comments. The written file is then
loaded back with `rsi.portfolio.resolve_portfolio`, so a successor that does not validate is never
left behind.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsi.config import Configuration
from rsi.errors import RsiError, UserInputError
from rsi.promotion.evidence import ScoredAttempt, collect_evidence
from rsi.promotion.propose import (
    FailureExample,
    ProposalOutcome,
    VariantProposal,
    propose_successors,
    reflect_prompt,
)
from rsi.promotion.stored import load_run_attempts
from rsi.workspace import Workspace

NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


@dataclass(frozen=True)
class SuccessorOutcome:
    path: Path
    name: str
    base: str
    proposal: ProposalOutcome
    configurations: list[Configuration]


def base_ref(workspace: Workspace, config: Configuration) -> str:
    """A portable ref for the contract a configuration was resolved against: NAME@rN when tagged."""
    from rsi.contracts.gitio import open_repo, revision_tags

    ref = config.contract_ref
    name, revision = config.spec.hcp.name, config.spec.hcp.revision
    if "@r" in ref or ":" in ref and not Path(ref).is_absolute():
        return ref
    try:
        if revision in revision_tags(open_repo(workspace), name):
            return f"{name}@r{revision}"
    except RsiError:
        pass
    return name


def failures_of(attempts: list[ScoredAttempt], config_hash: str, limit: int = 3) -> list[FailureExample]:
    """Up to `limit` failed train attempts of a configuration, read from their trajectories."""
    from rsi.harness.trajectory import read_trajectory

    out: list[FailureExample] = []
    for record in attempts:
        if len(out) >= limit:
            break
        if record.config_hash != config_hash or record.passed or not record.verdict.counts_as_attempt:
            continue
        if record.split in ("heldout", "test") or not record.trajectory_path:
            continue  # the proposer must not learn from the tasks that gate promotion (nor the sealed ones)
        try:
            trajectory = read_trajectory(Path(record.trajectory_path))
        except RsiError:
            continue
        users = [s for s in trajectory.steps if s.source == "user"]
        agents = [s for s in trajectory.steps if s.source == "agent"]
        out.append(FailureExample(
            task_key=record.task_key,
            instruction=users[0].message if users else "",
            last_reply=agents[-1].message if agents else "(no reply)",
            last_observation=(agents[-1].observation or "") if agents else "",
            reason=trajectory.outcome.reason if trajectory.outcome else record.verdict.value,
        ))
    return out


def render_portfolio(name: str, base: str, run_ids: list[str], proposal: ProposalOutcome) -> str:
    """The successor portfolio as TOML text (tomlkit, with provenance comments)."""
    import tomlkit

    document = tomlkit.document()
    document.add(tomlkit.comment(f"Successor portfolio proposed by `rsi propose` from run(s) {', '.join(run_ids)}."))
    document.add(tomlkit.comment(
        f"Kept {len(proposal.kept)} configuration(s) the evidence justifies, dropped {len(proposal.dropped)}, "
        f"added {len(proposal.new)} new variant(s)."))
    for dropped in proposal.dropped:
        document.add(tomlkit.comment(f"dropped {dropped.name} ({dropped.config_hash}): {dropped.reason}"))
    for note in proposal.notes:
        document.add(tomlkit.comment(f"note: {note}"))
    document.add("schema_version", 1)
    meta = tomlkit.table()
    meta.add("name", name)
    meta.add("base", base)
    meta.add("description", f"Successor of run(s) {', '.join(run_ids)}: kept winners plus operator variants.")
    document.add("portfolio", meta)
    variants = tomlkit.aot()
    for variant in proposal.variants:
        table = tomlkit.table()
        table.add("name", variant.name)
        how = "kept" if variant.operator == "kept" else f"{variant.operator}"
        table.add("description", f"[{how}] {variant.reason}")
        table.add("parents", list(variant.parents))
        if variant.overrides:
            overrides = tomlkit.table()
            for key, value in sorted(variant.overrides.items()):
                overrides.add(tomlkit.key(key), value)  # dotted keys stay one quoted key
            table.add("overrides", overrides)
        variants.append(table)
    document.add("variants", variants)
    return tomlkit.dumps(document)


def propose_portfolio(
    workspace: Workspace,
    run_ids: list[str],
    out: Path,
    max_new: int = 6,
    reflect_model: Any = None,
    seed: int = 0,
) -> SuccessorOutcome:
    """Write the successor portfolio of `run_ids` to `out` (see the module docstring)."""
    from rsi.atomic import write_bytes_atomic
    from rsi.config import configuration_from_contract
    from rsi.contracts.refs import resolve_ref
    from rsi.portfolio import resolve_portfolio
    from rsi.store import open_store

    name = out.stem
    if not NAME_PATTERN.match(name):
        raise UserInputError(f"{out}: the portfolio name '{name}' must match {NAME_PATTERN.pattern}")
    store = open_store(workspace.db_url)
    try:
        stored = load_run_attempts(store, run_ids, workspace.runs_dir)
        retired = retired_reasons(store, run_ids)
    finally:
        store.close()
    train = [a for a in stored.attempts if a.split not in ("heldout", "test")]
    if not train:
        raise UserInputError(f"runs {', '.join(run_ids)} hold no train attempts to build a successor from")
    evidence = collect_evidence(train, "all")
    ranked_configs = [stored.configurations[c.config_hash] for c in evidence.configs if c.config_hash in stored.configurations]
    if not ranked_configs:
        raise UserInputError("the store holds none of the run's configurations with resolved settings")
    from rsi.promotion.decision import choose_candidate

    best = choose_candidate(evidence)
    anchor = stored.configurations.get(best.config_hash) if best else None
    anchor = anchor or ranked_configs[0]
    base = base_ref(workspace, anchor)
    contract = resolve_ref(workspace, base)
    origin = (anchor.spec.hcp.name, anchor.spec.hcp.revision)  # refs differ in spelling, revisions do not
    same_base = {h: c for h, c in stored.configurations.items() if (c.spec.hcp.name, c.spec.hcp.revision) == origin}
    notes = [f"{c.name}: resolved against another contract revision ({c.spec.hcp.name} r{c.spec.hcp.revision}); left out"
             for h, c in stored.configurations.items() if h not in same_base and h in {e.config_hash for e in evidence.configs}]

    def identify(variant: VariantProposal) -> str:
        return configuration_from_contract(contract, variant.name, variant.overrides, list(variant.parents)).config_hash

    prompt_files = {s: f"prompts/{s}.md" for s in ("repl", "text") if contract.reader.read(f"prompts/{s}.md") is not None}
    extra: list[VariantProposal] = []
    if reflect_model is not None:
        from rsi.promotion.decision import rank_key

        for config in sorted(evidence.configs, key=rank_key):
            winner = same_base.get(config.config_hash)
            if winner is None or not config.passes:
                continue
            variant, note = reflect_prompt(reflect_model, winner, failures_of(train, config.config_hash), seed=seed)
            notes.append(note)
            if variant is not None:
                extra.append(variant)
            break  # one model call per proposal: the best winner's failures
    proposal = propose_successors(evidence, same_base, max_new, prompt_files, extra, identify, retired=retired)
    proposal = ProposalOutcome(proposal.kept, proposal.dropped, proposal.new, tuple(notes) + proposal.notes)
    text = render_portfolio(name, base, list(run_ids), proposal)
    out = Path(out)
    write_bytes_atomic(out, text.encode("utf-8"))
    try:
        resolved = resolve_portfolio(workspace, out)
    except RsiError:
        out.unlink(missing_ok=True)
        raise
    return SuccessorOutcome(out, name, base, proposal, resolved.configurations)


def retired_reasons(store: Any, run_ids: Sequence[str]) -> dict[str, str]:
    """Per configuration hash, why a run of `run_ids` retired it (rsi.scheduler.retire), with the run named."""
    from rsi.scheduler.retire import recorded

    out: dict[str, str] = {}
    for run_id in run_ids:
        jobs = sorted(store.list_jobs(run_id), key=lambda j: j.job_index)
        for config_hash, retirement in recorded(j.details or {} for j in jobs).items():
            out.setdefault(config_hash, f"{retirement.describe()} (run {run_id})")
    return out
