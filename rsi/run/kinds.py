"""The kinds of runs: each kind's stored plan (a versioned pydantic model), how it resumes, and
whether it counts as coverage search. The one place these names live.

Every run goes through the orchestrator and is recorded by one opener (`record_run` in
rsi/run/setup.py), which stores the run's plan in the run row's `args` column as the JSON of its
plan model (`kind`, `version`, the resolved run, its configurations and tasks, and the kind's own
section). Readers take it back with `read_plan` (`read_core`: the shared part a resume reopens;
`rsi.store.rows.planned_keys`: the planned configurations and tasks, leniently, for summaries and reports), never
by string key. The run row's scheduler names the kind (the stored `kind` repeats it for the reader
of the JSON alone).

| kind | plan | the run row's scheduler | resumed by | coverage search |
|---|---|---|---|---|
| `search` | `SearchPlan` | any registered scheduler | `rsi run --resume` | yes |
| `harvest` | `HarvestPlan` | `harvest` | `rsi harvest --resume` | no |
| `eval` | `EvalPlan` | `eval-paired` | `rsi eval --resume` | no |
| `rollouts` | `RolloutPlan` | `grpo-rollouts` | the same `rsi train --method grpo` | no |
| `selection` | `SelectionPlan` | `select-paired` | the same `rsi generation` | yes (as before) |

A run that is not coverage search samples for another purpose (more solutions of known tasks, a
comparison on fixed tasks, a policy's training groups): the store's reads over all runs leave it
out (coverage, statistics, the scheduler's history; rsi/store/store.py asks `non_search_schedulers`).

Old rows (written before plans were typed: no `kind`, no `version`) hold the same keys: `read_plan`
takes the kind from the run row's scheduler and reads them as version 0 (migration on read).

RUN_KINDS is `rsi.plugins.RUN_KINDS` (entry point group `rsi.run_kinds`), typed here: each kind is a
module-level `RunKind` named by one line of pyproject.toml (`search = "rsi.run.kinds:SEARCH"`), so the
store below asks which kinds count as search without importing this package.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from rsi import plugins
from rsi.errors import StoreError
from rsi.plugins import PluginRegistry
from rsi.plugins import non_search_schedulers as non_search_schedulers  # re-exported: callers import it here
from rsi.run.spec import ResolvedRun

if TYPE_CHECKING:
    from rsi.store.rows import RunRow

PLAN_VERSION = 1  # 0: a row written before plans were typed, read as is


class RunPlan(BaseModel):
    """What every kind of run stores: the resolved run, its configurations (hashes) and tasks (keys)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    kind: str
    version: int = PLAN_VERSION
    resolved: ResolvedRun
    configs: list[str]
    tasks: list[str]


class SearchPlan(RunPlan):
    """`rsi run`: coverage search by a registered scheduler; `spec` is the RunSpec it was asked with."""

    kind: Literal["search"] = "search"
    spec: dict[str, Any] = Field(default_factory=dict)


class HarvestSection(BaseModel):
    source_runs: list[str]
    per_task: int = Field(ge=1)
    known_solutions: dict[str, int] = Field(default_factory=dict)  # task -> distinct solutions when planned


class HarvestPlan(RunPlan):
    """`rsi harvest` (rsi/harvest.py): distinct solutions of the source runs' train tasks."""

    kind: Literal["harvest"] = "harvest"
    harvest: HarvestSection


class EvalSection(BaseModel):
    spec: dict[str, Any]  # rsi.evaluation.EvalSpec as JSON (validated by rsi/evaluation/plan.py)
    heldout: list[str]
    covered: list[str]
    transfer: list[str] = Field(default_factory=list)
    best_of_n: dict[str, Any] | None = None
    heldout_best_of_n: dict[str, Any] | None = None  # rsi.evaluation.plan.HeldoutBestOfNPlan as JSON


class EvalPlan(RunPlan):
    """`rsi eval` (rsi/evaluation/): the sides' jobs on fixed tasks."""

    kind: Literal["eval"] = "eval"
    eval: EvalSection


class RolloutSection(BaseModel):
    step: int
    group_size: int
    reuse_key: str = ""
    groups: list[str] = Field(default_factory=list)


class RolloutPlan(RunPlan):
    """One GRPO step's rollouts (rsi/training/rollouts.py): groups of attempts of the live policy."""

    kind: Literal["rollouts"] = "rollouts"
    rollouts: RolloutSection


class SelectionSection(BaseModel):
    configs: list[str]  # the shortlist, in job order
    tasks: list[str]  # the drawn train tasks


class SelectionPlan(RunPlan):
    """A generation's paired selection (rsi/run/paired_selection.py): the shortlist on the same train tasks."""

    kind: Literal["selection"] = "selection"
    selection: SelectionSection


@dataclass(frozen=True)
class RunKind:
    """One kind of run: its plan model, the scheduler name its rows carry, how it resumes, what it counts as."""

    name: str
    plan: type[RunPlan]
    scheduler: str | None  # the run row's scheduler; None: any registered scheduler (search)
    noun: str  # what the run is called in messages
    described: str  # "run R ..." in a refusal
    command: str  # the command that writes it
    resume: str  # the command that resumes it ({run_id})
    counts_as_search: bool

    def resume_command(self, run_id: str) -> str:
        return self.resume.format(run_id=run_id)


HARVEST_SCHEDULER = "harvest"
EVAL_SCHEDULER = "eval-paired"
ROLLOUT_SCHEDULER = "grpo-rollouts"
SELECTION_SCHEDULER = "select-paired"
SEARCH = RunKind("search", SearchPlan, None, "run", "is a run", "rsi run", "rsi run --resume {run_id}", True)
HARVEST = RunKind("harvest", HarvestPlan, HARVEST_SCHEDULER, "harvest", "is a harvest", "rsi harvest",
                  "rsi harvest --resume {run_id}", False)
EVAL = RunKind("eval", EvalPlan, EVAL_SCHEDULER, "evaluation", "is an evaluation", "rsi eval", "rsi eval --resume {run_id}",
               False)
ROLLOUTS = RunKind("rollouts", RolloutPlan, ROLLOUT_SCHEDULER, "GRPO step's rollouts", "holds a GRPO step's rollouts",
                   "rsi train --method grpo", "the same `rsi train --method grpo` again", False)
# Counted as search as before plans were typed: its passes are the shortlist's own on train tasks.
SELECTION = RunKind("selection", SelectionPlan, SELECTION_SCHEDULER, "paired selection",
                    "is a generation's paired selection", "rsi generation", "the same `rsi generation` again", True)

RUN_KINDS = cast("PluginRegistry[RunKind]", plugins.RUN_KINDS)


def kind_of_scheduler(scheduler: str) -> RunKind:
    """The kind of a run stored under `scheduler` (a registered scheduler's name: search)."""
    for kind in RUN_KINDS.values():
        if kind.scheduler == scheduler:
            return kind
    return RUN_KINDS["search"]


def scheduler_of(plan: RunPlan) -> str:
    """The scheduler a plan's run row is stored under: the kind's own, or the search's registered one."""
    return RUN_KINDS[plan.kind].scheduler or plan.resolved.scheduler


def read_plan(run: RunRow) -> RunPlan:
    """The typed plan of a stored run, of the kind its scheduler names. A row without `version` (written
    before plans were typed) is read as version 0. Raises StoreError naming what the args lack."""
    kind = kind_of_scheduler(run.scheduler)
    return _validate(run, kind, kind.plan)


def read_core(run: RunRow) -> RunPlan:
    """What every kind stores (resolved run, configurations, tasks), without the kind's own section: what a
    resume reopens (rsi/run/setup.py `stored_plan`)."""
    return _validate(run, kind_of_scheduler(run.scheduler), RunPlan)


def _validate(run: RunRow, kind: RunKind, model: type[RunPlan]) -> RunPlan:
    args = dict(run.args or {})
    try:
        return model.model_validate({"version": 0, **args, "kind": kind.name})
    except PydanticValidationError as error:
        missing = [str(e["loc"][0]) for e in error.errors() if e["type"] == "missing" and len(e["loc"]) == 1]
        what = f"lack {missing[0]!r}" if missing else f"are invalid: {error.errors()[0]['msg']}"
        raise StoreError(f"{kind.noun} {run.id} was not written by `{kind.command}` (args {what})") from error
