"""Successor portfolios: keep what the evidence justifies, drop the dominated, mutate the winners. Pure
(the model-driven proposer takes its model as an argument; file I/O lives in rsi.promotion.successor).

**Keep.** A configuration of the run is kept when the evidence gives it a reason to exist:
it solved a task no other configuration solved (marginal coverage), or it is the best configuration
overall (the promotion ranking) or on some task tag (the routing rule's choice: highest Wilson lower
bound of the solve rate on that tag's tasks). A configuration the run never tried (in `configs` but
without a counted attempt: a small budget, or a scheduler that spent it elsewhere) is kept too, marked
untried: no evidence is no reason to drop it, and dropping it silently would lose it from every later
generation. So is one that solved nothing over fewer than `MIN_COUNTED_ATTEMPTS` counted attempts
(`min_attempts`): that few attempts are too little evidence to call it useless (a run cut short, or
attempts lost to infrastructure errors), so it is untried, not "solved nothing". Every other
configuration is dropped, and the reason names who covers it.

**Operators** make new variants of the kept configurations (the "winners"), each recording its parents:

- `feedback` (first: the one operator whose variants can select among candidates by execution): an
  unchecked winner gets `harness.check = "first-pass"` (a greedy text winner also 4 samples at
  temperature 0.4 behind its greedy reply, `greedy_first`); a checked one without repair turns gets one,
  and a checked one swaps its selection rule (first-pass <-> most-passed).
- `exemplars` (only where the winner's contract carries an experience library, `harness.experience`): a
  winner without worked examples gets one; one with N gets none (the search, not a default, decides
  whether retrieval earns its place: on a small base a copied example can cost more than it gives) and,
  below 3, N + 1.
- `sampling`: greedy winners get temperature 0.7 / top_p 0.95 (explore); sampled winners go greedy.
  Text-substrate winners also get best-of-n doubled (`samples`, at most 8; 16 when checked, since a
  checked candidate is only kept when it passes).
- `prompt_style`: the next framing of the task: plain -> stepwise -> example -> plain.
- `substrate`: REPL <-> single completion, with the matching system prompt file when the contract
  folder has one (`prompts/<substrate>.md`).
- `turns`: REPL winners get two more model turns (at most 200).
- `recombine`: two winners that differ in at least two override keys give a child taking the
  differing keys alternately from each (sorted key order, first from the better-ranked parent).
- `reflect` (optional, model-driven, in the spirit of GEPA's reflective mutation): a model reads a
  winner's failed trajectories and writes a revised system prompt (`reflect_prompt`).

New variants are deduplicated by their override set and capped (`max_new`), taken round-robin over the
winners in rank order so that no single winner fills the portfolio.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rsi.config import Configuration
from rsi.contracts.hashing import canonical_json, sha256_text
from rsi.errors import RsiError
from rsi.models.base import ChatMessage, ChatModel, GenerationRequest
from rsi.promotion.decision import choose_candidate, rank_key, route_by_tag
from rsi.promotion.evidence import Evidence

PROMPT_STYLES = ("plain", "stepwise", "example")
MIN_COUNTED_ATTEMPTS = 5  # below this many counted attempts, solving nothing is no evidence (untried)
NAME_LIMIT = 64


@dataclass(frozen=True)
class VariantProposal:
    """One configuration of the successor portfolio: kept from the run, or new from an operator."""

    name: str
    contract_ref: str
    overrides: dict[str, Any]
    parents: tuple[str, ...]
    operator: str
    reason: str
    source_hash: str = ""

    @property
    def override_key(self) -> str:
        return sha256_text(canonical_json({"contract": self.contract_ref, "overrides": self.overrides}))[:16]


@dataclass(frozen=True)
class DroppedConfig:
    name: str
    config_hash: str
    reason: str


@dataclass(frozen=True)
class ProposalOutcome:
    kept: tuple[VariantProposal, ...]
    dropped: tuple[DroppedConfig, ...]
    new: tuple[VariantProposal, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def variants(self) -> tuple[VariantProposal, ...]:
        return self.kept + self.new


@dataclass(frozen=True)
class FailureExample:
    """What the reflective proposer is shown of one failed attempt."""

    task_key: str
    instruction: str
    last_reply: str
    last_observation: str
    reason: str


def justify(
    evidence: Evidence, min_attempts: int = MIN_COUNTED_ATTEMPTS
) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Per configuration hash: reasons to keep it (possibly none) and, if none, why it is dropped.

    A configuration that solved nothing over fewer than `min_attempts` counted attempts is kept as
    untried rather than dropped for having solved nothing."""
    reasons: dict[str, list[str]] = {c.config_hash: [] for c in evidence.configs}
    for config in evidence.configs:
        if config.marginal:
            shown = ", ".join(config.marginal[:5]) + (" ..." if len(config.marginal) > 5 else "")
            reasons[config.config_hash].append(f"marginal coverage: only it solved {shown}")
    best = choose_candidate(evidence)
    if best is not None:
        reasons[best.config_hash].append(
            f"best overall: pass rate {best.pass_rate:.3f} {best.pass_ci.as_text()} over {best.attempts} attempts"
        )
    for route in route_by_tag(evidence):
        reasons[route.config_hash].append(f"best on tag '{route.tag}': {route.solved}/{route.tasks} tasks solved")
    dropped: dict[str, str] = {}
    for config in evidence.configs:
        if reasons[config.config_hash]:
            continue
        if not config.attempts:
            reasons[config.config_hash].append(_untried(config.errors))
            continue
        if not config.tasks_solved and config.attempts < min_attempts:
            reasons[config.config_hash].append(_untried(config.errors, config.attempts, min_attempts))
            continue
        if not config.tasks_solved:
            dropped[config.config_hash] = f"solved nothing ({config.attempts} attempts)"
            continue
        covers = sorted(
            (o for o in evidence.configs if o.config_hash != config.config_hash
             and set(config.tasks_solved) <= set(o.tasks_solved)),
            key=rank_key,
        )
        if covers:
            dropped[config.config_hash] = (
                f"dominated by {covers[0].config_name}: it solved all {len(config.tasks_solved)} of its tasks "
                "and is at least as good on every tag"
            )
        else:
            dropped[config.config_hash] = (
                "dominated: each of its solved tasks was solved by another configuration, and it is best on no tag"
            )
    return reasons, dropped


def _untried(errors: int = 0, counted: int = 0, min_attempts: int = MIN_COUNTED_ATTEMPTS) -> str:
    if counted:
        lost = f", {errors} more lost to infrastructure errors" if errors else ""
        return (f"untried: solved nothing in only {counted} counted attempt(s){lost}, fewer than the "
                f"{min_attempts} needed to judge it; kept so that the next run examines it")
    why = f" (its {errors} attempt(s) all ended in infrastructure errors)" if errors else ""
    return f"untried: no counted attempt in the run{why}; kept so that the next run examines it"


def propose_successors(
    evidence: Evidence,
    configs: Mapping[str, Configuration],
    max_new: int = 6,
    prompt_files: Mapping[str, str] | None = None,
    extra: Sequence[VariantProposal] = (),
    identify: Callable[[VariantProposal], str] | None = None,
    min_attempts: int = MIN_COUNTED_ATTEMPTS,
    retired: Mapping[str, str] | None = None,
) -> ProposalOutcome:
    """The successor portfolio's variants: kept winners, then up to `max_new` operator variants.

    `configs` maps config hash to its Configuration (from the store); `prompt_files` maps a
    substrate to a prompt file the contract can read; `extra` carries model-proposed variants
    (from `reflect_prompt`), which count toward `max_new` first. `identify` returns a variant's
    configuration hash (raising `RsiError` if it does not validate); without it, variants are told
    apart by their override sets only, which misses two routes to the same settings. A configuration
    that solved nothing in fewer than `min_attempts` counted attempts is kept as untried. `retired` maps a
    configuration hash to why the run's retirement rule stopped planning it (rsi.scheduler.retire: the
    figures); that line joins its reasons, kept or dropped.
    """
    reasons, dropped_reasons = justify(evidence, min_attempts)
    for config_hash, why in (retired or {}).items():
        if config_hash in dropped_reasons:
            dropped_reasons[config_hash] += f"; {why}"
        elif config_hash in reasons:
            reasons[config_hash].append(why)
    notes: list[str] = []
    ranked = sorted(evidence.configs, key=rank_key)
    kept: list[VariantProposal] = []
    winners: list[Configuration] = []
    dropped: list[DroppedConfig] = []
    for config in ranked:
        resolved = configs.get(config.config_hash)
        if config.config_hash in dropped_reasons:
            dropped.append(DroppedConfig(config.config_name, config.config_hash, dropped_reasons[config.config_hash]))
            continue
        if resolved is None:
            notes.append(f"{config.config_name} ({config.config_hash}): kept by the evidence but its "
                         "configuration is not in the store; left out")
            continue
        if config.tasks_solved or config.attempts >= min_attempts:
            winners.append(resolved)  # operators build on evidence; an untried configuration has none
        kept.append(VariantProposal(
            name=resolved.name, contract_ref=resolved.contract_ref, overrides=dict(resolved.overrides),
            parents=tuple(resolved.parents), operator="kept", reason="; ".join(reasons[config.config_hash]),
            source_hash=config.config_hash,
        ))
    # Configurations of the run's portfolio that the evidence never saw: kept as they are, not mutated
    # (there is nothing to build on yet).
    seen_hashes = {c.config_hash for c in evidence.configs}
    for config_hash, resolved in configs.items():
        if config_hash in seen_hashes:
            continue
        kept.append(VariantProposal(
            name=resolved.name, contract_ref=resolved.contract_ref, overrides=dict(resolved.overrides),
            parents=tuple(resolved.parents), operator="kept", reason=_untried(), source_hash=config_hash,
        ))
    seen = {v.source_hash if identify is not None else v.override_key for v in kept}
    identify = identify or (lambda variant: variant.override_key)
    taken_names = {v.name for v in kept}
    queues = [_mutations(w, prompt_files or {}) for w in winners]
    queues.append(_recombinations(winners))
    new: list[VariantProposal] = []
    for proposal in list(extra) + _round_robin(queues):
        if len(new) >= max_new:
            break
        try:
            identity = identify(proposal)
        except RsiError as error:
            notes.append(f"{proposal.name}: dropped, it does not validate: {error.message}")
            continue
        if identity in seen:
            continue
        seen.add(identity)
        proposal = _unique_name(proposal, taken_names)
        taken_names.add(proposal.name)
        new.append(proposal)
    return ProposalOutcome(tuple(kept), tuple(dropped), tuple(new), tuple(notes))


def _variant(parent: Configuration, suffix: str, changes: dict[str, Any], operator: str, reason: str) -> VariantProposal:
    return VariantProposal(
        name=_name(f"{parent.name}.{suffix}"), contract_ref=parent.contract_ref,
        overrides={**parent.overrides, **changes}, parents=(parent.name,), operator=operator, reason=reason,
    )


def _feedback(winner: Configuration) -> list[VariantProposal]:
    """The execution-feedback operator (see the module docstring)."""
    harness, sampling = winner.spec.harness, winner.spec.harness.sampling
    if harness.check == "off":
        changes: dict[str, Any] = {"harness.check": "first-pass"}
        if harness.substrate == "text":
            changes["harness.sampling.greedy_first"] = True
            if sampling.temperature == 0.0:
                changes.update({"harness.sampling.samples": max(4, sampling.samples),
                                "harness.sampling.temperature": 0.4, "harness.sampling.top_p": 0.95})
        return [_variant(winner, "checked", changes, "feedback",
                         "candidates checked against the public checks; the first to pass all is submitted")]
    out = []
    if harness.repair_turns == 0:
        out.append(_variant(winner, "repair1", {"harness.repair_turns": 1}, "feedback",
                            "one repair turn from the failing public check"))
    rule = "most-passed" if harness.check == "first-pass" else "first-pass"
    out.append(_variant(winner, rule, {"harness.check": rule}, "feedback",
                        f"selection rule '{rule}' instead of '{harness.check}'"))
    return out


MAX_EXEMPLARS = 3  # the exemplars operator's ceiling: each example costs prompt tokens on every attempt


def _exemplars(winner: Configuration) -> list[VariantProposal]:
    """The exemplars operator (see the module docstring): [] without an experience library in the contract."""
    harness = winner.spec.harness
    if not harness.experience:
        return []
    if harness.exemplars == 0:
        return [_variant(winner, "ex1", {"harness.exemplars": 1}, "exemplars",
                         f"one worked example retrieved from experience library {harness.experience}")]
    out = [_variant(winner, "ex0", {"harness.exemplars": 0}, "exemplars",
                    f"no worked examples instead of {harness.exemplars}")]
    if harness.exemplars < MAX_EXEMPLARS:
        more = harness.exemplars + 1
        out.append(_variant(winner, f"ex{more}", {"harness.exemplars": more}, "exemplars",
                            f"{more} worked examples instead of {harness.exemplars}"))
    return out


def _mutations(winner: Configuration, prompt_files: Mapping[str, str]) -> list[VariantProposal]:
    harness = winner.spec.harness
    sampling = harness.sampling
    out: list[VariantProposal] = _feedback(winner) + _exemplars(winner)
    if sampling.temperature == 0.0:
        out.append(_variant(winner, "t07", {"harness.sampling.temperature": 0.7, "harness.sampling.top_p": 0.95},
                            "sampling", "explore: greedy winner sampled at temperature 0.7, top_p 0.95"))
    else:
        out.append(_variant(winner, "greedy", {"harness.sampling.temperature": 0.0, "harness.sampling.top_p": 1.0},
                            "sampling", f"exploit: sampled winner (temperature {sampling.temperature}) made greedy"))
    most = 16 if harness.check != "off" else 8
    if harness.substrate == "text" and sampling.samples < most:
        samples = min(most, sampling.samples * 2)
        out.append(_variant(winner, f"n{samples}", {"harness.sampling.samples": samples},
                            "sampling", f"best of {samples} instead of {sampling.samples}"))
    style = PROMPT_STYLES[(PROMPT_STYLES.index(harness.prompt_style) + 1) % len(PROMPT_STYLES)]
    out.append(_variant(winner, style, {"harness.prompt_style": style}, "prompt_style",
                        f"task framed '{style}' instead of '{harness.prompt_style}'"))
    target = "text" if harness.substrate == "repl" else "repl"
    changes: dict[str, Any] = {"harness.substrate": target}
    if target in prompt_files:
        changes["harness.system_prompt_file"] = prompt_files[target]
        changes["harness.system_prompt"] = ""
    out.append(_variant(winner, target, changes, "substrate", f"substrate '{target}' instead of '{harness.substrate}'"))
    if harness.substrate == "repl" and harness.max_turns < 200:
        turns = min(200, harness.max_turns + 2)
        out.append(_variant(winner, f"turns{turns}", {"harness.max_turns": turns}, "turns",
                            f"{turns} model turns instead of {harness.max_turns}"))
    return out


def _recombinations(winners: Sequence[Configuration]) -> list[VariantProposal]:
    out = []
    for i, first in enumerate(winners):
        for second in winners[i + 1:]:
            if (first.spec.hcp.name, first.spec.hcp.revision) != (second.spec.hcp.name, second.spec.hcp.revision):
                continue  # settings of different contracts do not mix key by key
            keys = sorted(set(first.overrides) | set(second.overrides))
            differing = [k for k in keys if first.overrides.get(k, _MISSING) != second.overrides.get(k, _MISSING)]
            if len(differing) < 2:
                continue
            child = dict(first.overrides)
            for index, key in enumerate(differing):
                if index % 2 == 1:
                    if key in second.overrides:
                        child[key] = second.overrides[key]
                    else:
                        child.pop(key, None)
            out.append(VariantProposal(
                name=_name(f"{first.name}.x.{second.name}"), contract_ref=first.contract_ref, overrides=child,
                parents=(first.name, second.name), operator="recombine",
                reason=f"recombination: {', '.join(differing[1::2])} from {second.name}, the rest from {first.name}",
            ))
    return out


_MISSING = object()


def _round_robin(queues: list[list[VariantProposal]]) -> list[VariantProposal]:
    out: list[VariantProposal] = []
    depth = max((len(q) for q in queues), default=0)
    for index in range(depth):
        out.extend(q[index] for q in queues if index < len(q))
    return out


def _name(raw: str) -> str:
    name = re.sub(r"[^a-z0-9_.-]+", "-", raw.lower()).strip("-.") or "variant"
    if not name[0].isalnum():
        name = f"v{name}"
    if len(name) > NAME_LIMIT:  # long lineages stay readable at the front, unique by the hash
        name = f"{name[: NAME_LIMIT - 9]}-{sha256_text(raw)[:8]}"
    return name


def _unique_name(proposal: VariantProposal, taken: set[str]) -> VariantProposal:
    if proposal.name not in taken:
        return proposal
    index = 2
    while f"{proposal.name}-{index}" in taken:
        index += 1
    return VariantProposal(f"{proposal.name}-{index}", proposal.contract_ref, proposal.overrides, proposal.parents,
                           proposal.operator, proposal.reason, proposal.source_hash)


REFLECT_SYSTEM = (
    "You improve the system prompt of a Python coding agent. You are shown its current system prompt "
    "and attempts that failed under it. Write an improved, complete system prompt that would avoid these "
    "failures. Keep every instruction about the reply format. Answer with the new prompt between "
    "<prompt> and </prompt> and nothing else."
)


def reflection_messages(current_prompt: str, failures: Sequence[FailureExample], chars_per_failure: int = 600) -> list[ChatMessage]:
    """The request the reflective proposer sends (a pure function, so it can be inspected and tested)."""
    parts = [f"Current system prompt:\n<prompt>\n{current_prompt.strip()}\n</prompt>", "Failed attempts:"]
    for number, failure in enumerate(failures, start=1):
        parts.append(
            f"{number}. Task {failure.task_key}: {failure.instruction.strip()[:chars_per_failure]}\n"
            f"   Last reply: {failure.last_reply.strip()[:chars_per_failure]}\n"
            f"   What it saw: {failure.last_observation.strip()[:chars_per_failure]}\n"
            f"   Verdict: {failure.reason.strip()[:200]}"
        )
    return [ChatMessage(role="system", content=REFLECT_SYSTEM), ChatMessage(role="user", content="\n".join(parts))]


def parse_reflection(reply: str, current_prompt: str, max_chars: int = 4000) -> tuple[str | None, str]:
    """The revised prompt from a model reply, or (None, why it is unusable)."""
    match = re.search(r"<prompt>\s*(.*?)\s*(?:</prompt>|$)", reply, flags=re.S)
    text = (match.group(1) if match else "").strip()
    if not text:
        return None, "the reply holds no <prompt>...</prompt> block"
    if len(text) < 40:
        return None, f"the revised prompt is too short ({len(text)} characters)"
    if len(text) > max_chars:
        return None, f"the revised prompt is too long ({len(text)} > {max_chars} characters)"
    if text == current_prompt.strip():
        return None, "the revised prompt equals the current one"
    return text, "ok"


def reflect_prompt(
    model: ChatModel,
    winner: Configuration,
    failures: Sequence[FailureExample],
    seed: int = 0,
    max_tokens: int = 512,
) -> tuple[VariantProposal | None, str]:
    """Ask `model` for a revised system prompt from `winner`'s failures: (variant, note) or (None, why not)."""
    if not failures:
        return None, f"{winner.name}: no failed attempts to reflect on"
    request = GenerationRequest(
        messages=reflection_messages(winner.system_prompt, failures), max_tokens=max_tokens, temperature=0.0, seed=seed
    )
    result = model.generate(request)
    reply = result.completions[0].text if result.completions else ""
    prompt, why = parse_reflection(reply, winner.system_prompt)
    if prompt is None:
        return None, f"{winner.name}: reflective proposer gave no usable prompt ({why})"
    variant = _variant(
        winner, "reflect", {"harness.system_prompt": prompt, "harness.system_prompt_file": ""}, "reflect",
        f"reflective mutation: {model.name} revised the system prompt from {len(failures)} failed attempt(s)",
    )
    return variant, f"{winner.name}: reflective proposer wrote a {len(prompt)}-character prompt"
