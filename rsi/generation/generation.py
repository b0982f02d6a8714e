"""One generation, resumable step by step: run -> promote -> propose -> harvest -> export -> train -> evaluate -> promote_adapter.

    run_generation(workspace, GenerationSpec(contract="default"), on_note=print)

| step            | does                                                                  | resumes by                          |
|-----------------|-----------------------------------------------------------------------|-------------------------------------|
| run             | `run_portfolio` of this generation's portfolio on the train split     | the run id, recorded as it starts   |
| promote         | `promote_run`: the best configuration, if it passes the gate          | the Decision-Hash trailer           |
| propose         | `propose_portfolio` -> portfolios/<contract>-g<N+1>.toml, committed    | rewrite of the same file            |
| harvest         | `run_harvest` (with `harvest_per_task` > 0): more distinct solutions  | the harvest run id, recorded as it  |
|                 | of the run's train tasks, as its own run (never coverage search)      | is created (`rsi harvest --resume`) |
| export          | `export_trajectories` of the run (+ harvest, + earlier generations'   | the manifest (written last)         |
|                 | runs with `accumulate`) -> runs/generations/<id>/dataset/             |                                     |
| train           | `train_stage`: LoRA on the contract's base, registered, candidate rev | the registry / Adapter-Id trailer   |
| evaluate        | `evaluate`: candidate vs parent, heldout lift + retention, transfer   | the evaluation run id, recorded     |
|                 | (on the run's covered tasks; with `accumulate`, the pooled runs')     |                                     |
| promote_adapter | `apply_decision`: parent revision if the gate passes, else rejected   | the Adapter-Eval trailer            |

Expert iteration (issue 16): with `harvest_per_task=N`, `render="deployed"` and `accumulate=True` a
generation samples up to N distinct passing solutions per train task, renders each into the deployed
contract's own conversation, and trains a fresh LoRA on the base from every generation's pooled data so
far (STaR's choice: restarting from the base each round keeps one generation's overfitting from being
the next one's starting point; the data, not the weights, is what compounds).

The record (rsi.generation.state) is rewritten atomically before and after every step, so a SIGKILL
anywhere leaves a state from which a rerun continues: finished steps are skipped (their outputs are
read back), an interrupted step is started again and finds whatever of its work is already durable.
The next generation runs the successor portfolio this one proposed, rebased onto the contract's
name (so it runs on the contract's newest revision, adapter included, not the revision it was
proposed from).

Testing hook: `RSI_TEST_CRASH_AT=<point>` SIGKILLs this process at `gen:<step>:started`,
`gen:<step>:done` or `gen:train:step<N>` (after the N-th optimizer step), for crash tests.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rsi.crashpoint import crash_point
from rsi.errors import RsiError, UserInputError
from rsi.generation.outputs import (
    EvaluateOutput,
    ExportOutput,
    GenerationSummary,
    HarvestOutput,
    LibraryGrowth,
    PromoteAdapterOutput,
    PromoteOutput,
    ProposeOutput,
    RunOutput,
    StepOutput,
    TrainOutput,
)
from rsi.generation.state import (
    STEPS,
    GenerationState,
    generations_dir,
    list_generations,
    new_generation_id,
    now_utc,
    read_state,
    write_state,
)
from rsi.sandbox.select import SandboxName
from rsi.training.methods import TrainingMethodName, TrainingProgress, training_recipe
from rsi.trajectories.export import Rendering
from rsi.workspace import Workspace

Note = Callable[[str], None]


class GenerationSpec(BaseModel):
    """Inputs of one generation (`rsi generation` / `rsi nightly` flags map onto these fields)."""

    model_config = ConfigDict(extra="forbid")
    contract: str = Field(default="default", description="Contract name the generation improves.")
    portfolio: str | None = Field(default=None, description="Portfolio to run; default: the previous generation's successor, else 'default'.")
    budget_attempts: int | None = Field(default=None, ge=1, description="Run budget; default: the contract's.")
    limit_tasks: int | None = Field(default=None, ge=1, description="Only the first N train tasks (small slices).")
    workers: int | None = Field(default=None, ge=1)
    sandbox: SandboxName = "auto"
    allow_weak_isolation: bool = Field(default=False, description="Promote and export evidence of weakly isolated "
                                       "attempts (the rlimits-only sandbox mode); refused otherwise.")
    seed: int | None = None
    max_new: int = Field(default=4, ge=0, description="New variants in the successor portfolio.")
    max_steps: int | None = Field(default=None, ge=1, description="Training step cap.")
    train_method: TrainingMethodName | None = Field(
        default=None, description="A name in rsi.training.methods (None: the contract's [training] method).")
    train_options: dict[str, Any] = Field(default_factory=dict, description="The training method's own options "
                                          "(TrainStageSpec.method_options; `--train-option KEY=VALUE`).")
    epochs: int | None = Field(default=None, ge=1)
    learning_rate: float | None = Field(default=None, gt=0)
    max_length: int | None = Field(default=None, ge=16)
    threads: int | None = Field(default=None, ge=1, description="torch threads for training.")
    limit_heldout: int | None = Field(default=None, ge=1, description="Only the first N heldout tasks in evaluation.")
    limit_covered: int | None = Field(default=None, ge=0, description="At most N covered train tasks in evaluation.")
    harvest_per_task: int = Field(default=0, ge=0, description="Harvest up to N distinct passing solutions per "
                                  "train task after the run (0: no harvest step).")
    harvest_budget: int | None = Field(default=None, ge=1, description="Harvest attempt budget; default: the run's.")
    max_per_task: int = Field(default=2, ge=1, description="Exported examples per task at most.")
    render: Rendering = Field(default="found", description="Export each solution in the "
                                                 "conversation that found it, or in the deployed contract's own.")
    accumulate: bool = Field(default=False, description="Harvest from and export the runs and harvests of every "
                             "earlier generation of the contract too (train on the pooled data).")
    best_of_n: bool = Field(default=False, description="The evaluation also runs the parent as cost-matched best-of-n.")
    continue_adapter: bool = Field(default=False, description="Train from the previous generation's adapter "
                                   "(continue it on this generation's data) instead of a fresh LoRA.")
    select_tasks: int = Field(default=0, ge=0, description="Paired selection (rsi/run/paired_selection.py): the "
                              "run's top configurations and the contract's own each attempt the same N train tasks, "
                              "and the harness is chosen on those attempts alone (0: on the run's evidence).")
    experience: bool = Field(default=False, description="Grow the experience library from the exported runs (the "
                             "run, its harvest, with `accumulate` earlier ones) and carry it into the candidate contract.")
    select_top: int = Field(default=3, ge=1, description="Configurations a paired selection compares beside the "
                            "contract's own.")
    tools: bool = Field(default=False, description="Validate the helpers that passing REPL attempts of the exported "
                        "runs saved (rsi/trajectories/tool_growth.py) and carry the new tool-library revision into the "
                        "candidate contract.")
    specialists_by: Literal["none", "tag", "cluster"] | None = Field(
        default=None, description="Train a specialist per part of the train evidence (by task tag or instruction "
        "cluster) instead of one adapter (None: the contract's [training] specialists_by).")


class _RunIdRecorder:
    """A run Display that hands the run id over as soon as the run exists (so a resume can find it)."""

    def __init__(self, on_id: Callable[[str], None], note: Note) -> None:
        self.on_id, self.note, self.seen = on_id, note, False

    def update(self, progress: Any, event: Any = None) -> None:
        if not self.seen and progress.run_id:
            self.seen = True
            self.on_id(progress.run_id)
        if event is not None and event.kind in ("run_started", "run_resumed", "job_finished", "run_finished"):
            self.note(f"run: {event.message}")

    def close(self) -> None:
        return None


class Generation:
    """Runs the steps of one generation against its state file (see the module docstring)."""

    def __init__(self, workspace: Workspace, state: GenerationState, note: Note) -> None:
        self.workspace = workspace
        self.state = state
        self.note = note
        self.spec = GenerationSpec.model_validate(state.spec)

    # -- bookkeeping ------------------------------------------------------------------------------

    def save(self) -> None:
        self.state = write_state(self.workspace, self.state)

    def record(self, output: StepOutput) -> None:
        """Merge a step's (partial) typed outputs into its record and save at once (ids a resume needs are
        durable immediately)."""
        self.state.step(output.STEP).outputs.update(output.model_dump(mode="json", exclude_unset=True))
        self.save()

    @property
    def folder(self) -> Path:
        return generations_dir(self.workspace) / self.state.id

    # -- driving --------------------------------------------------------------------------------

    def run(self) -> GenerationState:
        for name in STEPS:
            record = self.state.step(name)
            if record.finished_ok:
                continue
            skip = self._skip_reason(name)
            if skip:
                record.status, record.reason, record.finished = "skipped", skip, now_utc()
                self.save()
                self.note(f"{self.state.id} {name}: skipped ({skip})")
                continue
            record.status, record.tries, record.started, record.reason = "running", record.tries + 1, now_utc(), ""
            self.save()
            self.note(f"{self.state.id} {name}: started{' (try ' + str(record.tries) + ')' if record.tries > 1 else ''}")
            crash_point(f"gen:{name}:started")
            try:
                skipped = getattr(self, f"step_{name}")()
            except Exception as error:
                record = self.state.step(name)
                record.status, record.finished = "failed", now_utc()
                record.reason = f"{type(error).__name__}: {getattr(error, 'message', str(error))}"
                self.state.status = "failed"
                self.save()
                raise
            record = self.state.step(name)
            record.status = "skipped" if skipped else "done"
            record.reason = skipped or ""
            record.finished = now_utc()
            self.save()
            self.note(f"{self.state.id} {name}: {record.status}{' (' + record.reason + ')' if skipped else ''}"
                      f"{self._brief(name)}")
            crash_point(f"gen:{name}:done")
        self.state.status = "done"
        self.state.summary = self.summarize()
        self.save()
        return self.state

    def _skip_reason(self, name: str) -> str:
        steps = self.state.steps
        method = self.spec.train_method  # a method that samples its own data (GRPO) trains without an export
        own_data = method is not None and not training_recipe(method).needs_dataset
        if name == "harvest" and self.spec.harvest_per_task == 0:
            return "harvest off (harvest_per_task = 0)"
        if name in ("train",) and steps["export"].status == "skipped" and not own_data:
            return "no dataset: " + steps["export"].reason
        if name == "evaluate" and steps["train"].status == "skipped":
            return "no adapter was trained"
        if name == "promote_adapter" and steps["evaluate"].status == "skipped":
            return "nothing was evaluated"
        return ""

    def _brief(self, name: str) -> str:
        """The step's headline numbers, for its `done` line."""
        s = self.state
        if name == "run" and (run := s.outputs(RunOutput)).covered is not None:
            return f": run {run.run_id} covered {run.covered}/{run.tasks} train tasks in {run.attempts} attempts"
        if name == "promote":
            promote = s.outputs(PromoteOutput)
            return f": {promote.status}{' r' + str(promote.revision) if promote.revision else ''}"
        if name == "harvest" and (harvest := s.outputs(HarvestOutput)).attempts is not None:
            return f": run {harvest.run_id}, {harvest.passes} passes in {harvest.attempts} attempts"
        if name == "export" and (export := s.outputs(ExportOutput)).examples is not None:
            return f": {export.examples} examples, sha256 {export.dataset_sha256[:12]}"
        if name == "train" and (train := s.outputs(TrainOutput)).specialists:  # several: no one loss to show
            parts = ", ".join(f"{part} {adapter[:12]}" for part, adapter in sorted(train.specialists.items()))
            return f": {len(train.specialists)} specialists by {train.specialists_by} ({parts}), candidate {train.candidate_ref}"
        if name == "train" and train.adapter_id:
            losses = f", loss {train.first_loss:.3f} -> {train.final_loss:.3f}" if train.final_loss is not None else ""
            return f": adapter {train.adapter_id[:12]}{losses}, candidate {train.candidate_ref}"
        if name == "evaluate" and (measured := s.outputs(EvaluateOutput)).lift and measured.retention:
            return f": lift {measured.lift.as_text()}, heldout retention {measured.retention.as_text()}"
        if name == "promote_adapter" and (applied := s.outputs(PromoteAdapterOutput)).state:
            return f": adapter {applied.state}"
        return ""

    # -- steps ------------------------------------------------------------------------------------

    @property
    def run_id(self) -> str:
        return self.state.outputs(RunOutput).run_id

    def step_run(self) -> str | None:
        from rsi.run.orchestrator import run_portfolio
        from rsi.run.spec import RunSpec
        from rsi.store import open_store

        spec = self.spec
        run_id = self.state.outputs(RunOutput).run_id or None
        run_spec = RunSpec(
            portfolio=self.state.inputs["portfolio"], split="train", budget_attempts=spec.budget_attempts,
            limit_tasks=spec.limit_tasks, workers=spec.workers, sandbox=spec.sandbox, seed=spec.seed,
            report=False, resume=run_id,
        )
        display = _RunIdRecorder(lambda rid: self.record(RunOutput(run_id=rid)), self.note)
        outcome = run_portfolio(run_spec, self.workspace, display)
        store = open_store(self.workspace.db_url)
        try:
            run = store.get_run(outcome.run_id)
            cumulative = store.coverage(run.suite, "train")
        finally:
            store.close()
        self.record(RunOutput(run_id=outcome.run_id, suite=run.suite, covered=outcome.covered, tasks=outcome.tasks,
                              attempts=outcome.attempts, passes=outcome.passes, errors=outcome.errors,
                              tokens=outcome.tokens, stop_reason=outcome.stop_reason,
                              cumulative_covered=len(cumulative.covered), cumulative_tasks=len(cumulative.task_keys)))
        return None

    def step_promote(self) -> str | None:
        from rsi.promotion.promote import promote_run

        # Train evidence chooses; the heldout gate is this generation's evaluation (the chosen harness rides in
        # the adapter's candidate contract), so heldout tasks never choose and one evaluation prices both.
        evidence = [self.select_paired()] if self.spec.select_tasks else [self.run_id]
        outcome = promote_run(self.workspace, evidence, self.spec.contract,
                              allow_weak_isolation=self.spec.allow_weak_isolation, defer_heldout_gate=True)
        decision = outcome.decision
        deferred = outcome.status == "deferred"
        self.record(PromoteOutput(status=outcome.status, revision=outcome.revision, tag=outcome.tag,
                                  reason=outcome.notes[0] if deferred else decision.reason, hint=decision.hint or "",
                                  candidate=decision.candidate.config_name if decision.candidate else "",
                                  harness_sets=dict(outcome.sets) if deferred else {},
                                  selection_run_id=self.state.outputs(PromoteOutput).selection_run_id))
        return None

    def select_paired(self) -> str:
        """The paired selection's run (rsi/run/paired_selection.py): the run's shortlist and the contract's own
        configuration on the same drawn train tasks; resumed where a crash left it."""
        from rsi.config import configuration_from_contract
        from rsi.promotion.decision import shortlist
        from rsi.promotion.evidence import collect_evidence
        from rsi.promotion.promote import load_head_contract
        from rsi.promotion.stored import load_run_attempts
        from rsi.run.paired_selection import draw_train_tasks, run_paired_selection
        from rsi.store import open_store
        from rsi.tasks.load import load_suite

        parent = configuration_from_contract(load_head_contract(self.workspace, self.spec.contract))
        store = open_store(self.workspace.db_url)
        try:
            stored = load_run_attempts(store, [self.run_id], self.workspace.runs_dir)
        finally:
            store.close()
        evidence = collect_evidence(stored.attempts, "train")  # the search run's train evidence, as promote reads it
        hashes = shortlist(evidence, parent.config_hash, self.spec.select_top)
        configs = [parent, *(stored.configurations[h] for h in hashes[1:] if h in stored.configurations)]
        tasks = draw_train_tasks(load_suite(self.workspace, stored.suite), self.spec.select_tasks, self.spec.seed or 0)
        self.note(f"promote: paired selection of {', '.join(c.name for c in configs)} on {len(tasks)} train tasks")
        recorded = self.state.outputs(PromoteOutput).selection_run_id
        return run_paired_selection(
            self.workspace, configs, tasks, seed=self.spec.seed or 0, workers=self.spec.workers,
            sandbox=self.spec.sandbox, resume_id=recorded or None,
            on_created=lambda rid: self.record(PromoteOutput(selection_run_id=rid)))

    def step_propose(self) -> str | None:
        from rsi.promotion.successor import propose_portfolio

        name = f"{self.spec.contract}-g{self.state.number + 1:04d}"
        path = self.workspace.portfolio_path(name)
        try:
            outcome = propose_portfolio(self.workspace, [self.run_id], path,
                                        max_new=self.spec.max_new, seed=self.spec.seed or 0)
        except UserInputError as error:
            return f"no successor: {error.message}"
        rebased = _rebase_portfolio(self.workspace, path, self.spec.contract)
        commit = _commit_file(self.workspace, path, f"portfolio {name}: successor proposed by generation {self.state.id}")
        self.record(ProposeOutput(
            portfolio=name, path=str(path.relative_to(self.workspace.root)), base=outcome.base,
            rebased_onto=self.spec.contract if rebased else "", commit=commit,
            kept=[k.name for k in outcome.proposal.kept], dropped=[d.name for d in outcome.proposal.dropped],
            new=[v.name for v in outcome.proposal.new]))
        return None

    def step_harvest(self) -> str | None:
        from rsi.harvest import HarvestSpec, resolve_harvest_spec, run_harvest

        spec, recorded = self.spec, self.state.outputs(HarvestOutput)
        # With `accumulate`, every earlier generation's runs and harvests are sources too: a task covered two
        # generations ago still gets its missing distinct solutions, sampled by today's model. A harvest this
        # step started before a crash is resumed from its stored plan (its sources, budget and solutions so far).
        harvest = resolve_harvest_spec(self.workspace, HarvestSpec(
            source_runs=tuple(self.export_runs()) if spec.accumulate else (self.run_id,), per_task=spec.harvest_per_task,
            budget_attempts=spec.harvest_budget or spec.budget_attempts or 100, workers=spec.workers,
            seed=spec.seed or 0, sandbox=spec.sandbox, resume=recorded.run_id or None))
        sources = harvest.source_runs
        display = _RunIdRecorder(lambda rid: None, self.note)
        try:
            outcome = run_harvest(self.workspace, harvest, display,
                                  on_created=lambda rid: self.record(HarvestOutput(run_id=rid, source_runs=list(sources))))
        except UserInputError as error:
            if harvest.resume:
                raise  # a harvest that exists is never silently replaced by "nothing to harvest"
            return error.message  # nothing to harvest
        self.record(HarvestOutput(run_id=outcome.run_id, source_runs=list(sources), attempts=outcome.attempts,
                                  passes=outcome.passes, errors=outcome.errors, tokens=outcome.tokens))
        return None

    def export_runs(self) -> list[str]:
        """This generation's run and harvest, and with `accumulate` every earlier generation's of the contract."""
        earlier = [g for g in list_generations(self.workspace) if g.number < self.state.number
                   and g.inputs.get("contract") == self.spec.contract] if self.spec.accumulate else []
        runs: list[str] = []
        for state in [*earlier, self.state]:
            for step, run_id in (("run", state.outputs(RunOutput).run_id), ("harvest", state.outputs(HarvestOutput).run_id)):
                if run_id and state.step(step).status == "done" and run_id not in runs:
                    runs.append(run_id)
        return runs

    def evaluation_runs(self) -> list[str]:
        """The runs whose covered train tasks the evaluation's retention and transfer are measured on: this
        generation's run, or with `accumulate` the runs the export pools (`export_runs`), so the two measures
        cover the tasks the pooled training data came from, not only the last run's handful."""
        return self.export_runs() if self.spec.accumulate else [self.run_id]

    def step_export(self) -> str | None:
        from rsi.trajectories.export import export_trajectories
        from rsi.trajectories.select import SelectionPolicy

        out = self.folder / "dataset"
        runs = self.export_runs()
        if self.spec.experience:
            self.grow_experience(runs)
        if self.spec.tools:
            self.grow_tools(runs)
        try:
            outcome = export_trajectories(self.workspace, runs, out, SelectionPolicy(max_per_task=self.spec.max_per_task),
                                          contract=self.spec.contract, render=self.spec.render,
                                          allow_weak_isolation=self.spec.allow_weak_isolation)
        except UserInputError as error:
            return error.message
        self.record(ExportOutput(dataset=str(out), dataset_sha256=outcome.dataset_sha256, examples=outcome.examples,
                                 source_runs=runs, rendering=self.spec.render))
        return None

    def grow_experience(self, runs: list[str]) -> None:
        """A new library revision over the contract's (or the previous generation's, when it descends from it);
        a rerun after a crash finds the revision already written (rsi/experience/library.py `write_revision`)."""
        from rsi.trajectories.experience import build_experience, parent_for

        previous = self.state.inputs.get("previous")
        grown_before = read_state(self.workspace, previous).outputs(ExportOutput).experience if previous else None
        parent = parent_for(self.workspace, self.spec.contract, grown_before.revision if grown_before else "")
        outcome = build_experience(self.workspace, runs, parent=parent)
        self.note(f"experience: {outcome.as_text()}")
        self.record(ExportOutput(experience=LibraryGrowth(
            revision=outcome.revision, parent=outcome.parent, written=outcome.written, entries=outcome.entries,
            tasks=outcome.tasks, added_entries=outcome.added_entries, tasks_new=outcome.tasks_new,
            content_sha256=outcome.content_sha256, sources=list(outcome.sources), refused=outcome.refused)))

    def grow_tools(self, runs: list[str]) -> None:
        """Helpers saved by the runs' passing train attempts, validated privately; what passes is the next tool
        library revision over the contract's (or over the previous generation's, when it descends from it). A
        rerun after a crash finds an identical revision and reuses it (rsi/promotion/tools.py)."""
        from rsi.trajectories.tool_growth import grow_tools, tools_parent_for

        previous = self.state.inputs.get("previous")
        grown_before = read_state(self.workspace, previous).outputs(ExportOutput).tools if previous else None
        parent = tools_parent_for(self.workspace, self.spec.contract, grown_before.revision if grown_before else "")
        grown = grow_tools(self.workspace, runs, parent=parent, sandbox=self.spec.sandbox)
        self.note(f"tools: {grown.as_text()}")
        self.record(ExportOutput(tools=grown))

    def step_train(self) -> str | None:
        from rsi.contracts.refs import resolve_ref
        from rsi.training.candidate import ensure_revision_tagged
        from rsi.training.stage import TrainStageSpec, train_stage

        spec = self.spec
        ensure_revision_tagged(self.workspace, spec.contract)
        parent = resolve_ref(self.workspace, spec.contract)
        if "@r" not in parent.ref:
            raise UserInputError(f"{spec.contract}: has uncommitted edits; a generation trains only committed revisions",
                                 hint=f"commit or discard the edits of hcp/{spec.contract}.toml, then resume")

        def progress(p: TrainingProgress) -> None:
            figures = " ".join(f"{name} {value}" for name, value in p.figures().items())
            self.note(f"train: step {p.step}/{p.total_steps} {figures} ETA {p.eta_s:.0f}s")
            crash_point(f"gen:train:step{p.step}")

        exported = self.state.outputs(ExportOutput).dataset
        rule = spec.specialists_by or parent.spec.training.specialists_by
        init_adapter = self.previous_adapter() if spec.continue_adapter and rule == "none" else ""
        stage = TrainStageSpec(
            dataset=Path(exported) if exported else None, contract=parent.ref, method=spec.train_method,
            method_options=spec.train_options,
            max_steps=spec.max_steps, sandbox=spec.sandbox,  # where a method's own attempts run (GRPO's rollouts)
            epochs=spec.epochs, learning_rate=spec.learning_rate, max_length=spec.max_length, threads=spec.threads,
            init_adapter=init_adapter or None, harness_sets={**self.state.outputs(PromoteOutput).harness_sets,
                                                             **self.experience_sets(), **self.tools_sets()},
        )
        if rule != "none":
            return self.train_specialists(stage, parent, rule, progress)
        outcome = train_stage(self.workspace, stage, progress=progress, on_note=lambda m: self.note(f"train: {m}"))
        metrics = outcome.metrics
        self.record(TrainOutput(adapter_id=outcome.adapter_id, parent_ref=parent.ref, init_adapter=init_adapter,
                                candidate_ref=outcome.candidate.ref if outcome.candidate else "", steps=metrics.steps,
                                first_loss=metrics.first_loss, final_loss=metrics.final_loss,
                                tokens_per_s=metrics.tokens_per_s, wall_s=metrics.wall_s,
                                resumed_from_step=metrics.resumed_from_step))
        return None

    def train_specialists(self, stage: Any, parent: Any, rule: str, progress: Callable[[Any], None]) -> str | None:
        """One adapter per part of the exported train evidence, each registered with its part in its lineage, then
        one candidate revision listing them all, routing the parent's (rsi/training/specialists.py)."""
        from rsi.training.specialists import train_specialists

        training = parent.spec.training.model_copy(update={"specialists_by": rule})
        outcome = train_specialists(self.workspace, stage, Path(stage.dataset), self.folder / "partitions", training,
                                    parent, note=lambda m: self.note(f"train: {m}"), progress=progress)
        if outcome is None:
            return f"no train-split example of {stage.dataset} to partition by {rule}"
        trained, candidate_ref = outcome
        self.record(TrainOutput(specialists={t.name: t.adapter_id for t in trained}, specialists_by=rule,
                                parent_ref=parent.ref, candidate_ref=candidate_ref, adapter_id=trained[0].adapter_id,
                                steps=sum(int(t.metrics.get("steps", 0)) for t in trained)))
        return None

    def experience_sets(self) -> dict[str, str]:
        """The library this generation grew (or carried on), as the candidate contract's sets ({} when none)."""
        grown = self.state.outputs(ExportOutput).experience
        if grown is None or not grown.revision:
            return {}
        return {"harness.experience": grown.revision, "harness.experience_sha256": grown.content_sha256}

    def tools_sets(self) -> dict[str, str]:
        """The tool library this generation grew (or carried on), as the candidate contract's sets ({} when none)."""
        grown = self.state.outputs(ExportOutput).tools
        return grown.sets if grown is not None else {}

    def previous_adapter(self) -> str:
        """The adapter the previous generation trained (promoted or not: continuing means building on the last
        training, as the data pools build on the last harvest), or "" when there is none to continue."""
        previous = self.state.inputs.get("previous")
        if not previous:
            self.note("train: no previous generation: a fresh adapter")
            return ""
        adapter = read_state(self.workspace, previous).outputs(TrainOutput).adapter_id
        self.note(f"train: continuing {previous}'s adapter {adapter[:12]}" if adapter else
                  f"train: {previous} trained no adapter: a fresh one")
        return adapter

    def step_evaluate(self) -> str | None:
        from rsi.evaluation import EvalSpec, evaluate

        spec = self.spec
        trained, scope = self.state.outputs(TrainOutput), self.evaluation_runs()
        eval_spec = EvalSpec(
            candidate=trained.candidate_ref, parent=trained.parent_ref,
            covered_runs=scope, transfer_runs=scope, control=generation_zero_ref(self.workspace, self.spec.contract),
            limit_heldout=spec.limit_heldout, limit_covered=spec.limit_covered, workers=spec.workers, sandbox=spec.sandbox,
            resume=self.state.outputs(EvaluateOutput).eval_id or None, best_of_n=spec.best_of_n,
            why=f"generation {self.state.id}: the adapter's gate",
        )
        outcome = evaluate(self.workspace, eval_spec, on_note=lambda m: self.note(f"eval: {m}"),
                           on_created=lambda eid: self.record(EvaluateOutput(eval_id=eid)))
        self.record(EvaluateOutput(eval_id=outcome.eval_id, lift=outcome.lift, lift_vs_control=outcome.lift_vs_control,
                                   retention=outcome.retention, retention_vs_control=outcome.retention_vs_control,
                                   retention_in_sample=outcome.retention_in_sample, transfer=outcome.transfer,
                                   decision=outcome.decision,
                                   costs=outcome.costs, cache=outcome.cache, attempts=outcome.attempts, tokens=outcome.tokens, wall_s=outcome.wall_s))
        return None

    def step_promote_adapter(self) -> str | None:
        from rsi.evaluation import apply_decision, load_eval_outcome

        outcome = apply_decision(self.workspace, load_eval_outcome(self.workspace, self.state.outputs(EvaluateOutput).eval_id))
        applied = outcome.applied
        self.record(PromoteAdapterOutput(state=applied.state if applied else "", reason=applied.reason if applied else "",
                                         revision=applied.revision if applied else None))
        return None

    # -- summary ----------------------------------------------------------------------------------

    def summarize(self) -> GenerationSummary:
        from rsi.promotion.promote import load_head_contract

        s = self.state
        run, export, train, measured = (s.outputs(RunOutput), s.outputs(ExportOutput), s.outputs(TrainOutput),
                                        s.outputs(EvaluateOutput))
        head = load_head_contract(self.workspace, self.spec.contract)
        return GenerationSummary(
            contract=self.spec.contract,
            revision_start=s.inputs.get("revision"),
            revision_end=head.revision,
            portfolio=s.inputs.get("portfolio"),
            run_id=run.run_id or None,
            coverage=[run.covered, run.tasks],
            cumulative_coverage=[run.cumulative_covered, run.cumulative_tasks],
            harness=s.outputs(PromoteOutput).status or None,
            successor=s.outputs(ProposeOutput).portfolio or None,
            dataset_sha256=export.dataset_sha256 or None,
            examples=export.examples,
            harvest_run_id=s.outputs(HarvestOutput).run_id or None,
            adapter_id=train.adapter_id or None,
            candidate_ref=train.candidate_ref or None,
            eval_id=measured.eval_id or None,
            lift=measured.lift,
            lift_vs_control=measured.lift_vs_control,
            retention=measured.retention,
            retention_vs_control=measured.retention_vs_control,
            retention_in_sample=measured.retention_in_sample,
            transfer=measured.transfer,
            costs=dict(measured.costs),
            adapter=s.outputs(PromoteAdapterOutput).state or "none",
        )


def generation_zero_ref(workspace: Workspace, contract: str) -> str | None:
    """The frozen control every generation of `contract` is compared with: the revision its first
    generation started from (None before any generation exists)."""
    from rsi.generation.state import list_generations

    first = next((g for g in list_generations(workspace) if g.inputs.get("contract") == contract
                  and g.inputs.get("revision") is not None), None)
    return f"{contract}@r{first.inputs['revision']}" if first else None


def _rebase_portfolio(workspace: Workspace, path: Path, contract: str) -> bool:
    """Point the successor at the contract's name (its newest revision at run time); keep the pinned base if
    the variants do not resolve against it."""
    import tomlkit

    from rsi.atomic import write_bytes_atomic
    from rsi.portfolio import resolve_portfolio

    original = path.read_text(encoding="utf-8")
    document = tomlkit.parse(original)
    if document.get("portfolio", {}).get("base") == contract:
        return False
    document["portfolio"]["base"] = contract
    write_bytes_atomic(path, tomlkit.dumps(document).encode("utf-8"))
    try:
        resolve_portfolio(workspace, path)
    except RsiError:
        write_bytes_atomic(path, original.encode("utf-8"))
        return False
    return True


def _commit_file(workspace: Workspace, path: Path, message: str) -> str:
    """Commit exactly `path` (when new or changed); returns the commit holding it."""
    from rsi.contracts.gitio import open_repo, repo_path

    repo = open_repo(workspace)
    try:
        relative = repo_path(repo, path)
        if repo.git.status("--porcelain", "--", relative).strip():
            repo.git.add("--", relative)
            repo.git.commit("--only", "--no-verify", "-m", message, "--", relative)
        return repo.head.commit.hexsha
    finally:
        repo.close()


def start_or_resume(workspace: Workspace, spec: GenerationSpec, resume: str | None = None,
                    new: bool = False) -> tuple[GenerationState, bool]:
    """The generation to work on: `resume` (an id), else the latest unfinished one (unless `new`), else a new one.

    Returns (state, resumed). A new generation records its inputs: the contract's committed revision,
    the portfolio (the previous generation's successor when none is given) and the previous generation.
    """
    from rsi.promotion.promote import load_head_contract

    existing = list_generations(workspace)
    if resume:
        return read_state(workspace, resume), True
    unfinished = [g for g in existing if g.status != "done"]
    if unfinished and not new:
        return unfinished[-1], True
    head = load_head_contract(workspace, spec.contract)
    if spec.train_options:  # a bad option is refused now, not after the run and harvest it would follow
        from rsi.training.methods import training_recipe

        training_recipe(spec.train_method or head.spec.training.method).apply_options(head.spec.training,
                                                                                       spec.train_options)
    previous = existing[-1] if existing else None
    portfolio = spec.portfolio
    if portfolio is None:
        successor = previous.outputs(ProposeOutput).portfolio if previous else None
        portfolio = successor if successor and workspace.portfolio_path(successor).is_file() else "default"
    if not workspace.portfolio_path(portfolio).is_file():
        raise UserInputError(f"portfolio {portfolio!r}: {workspace.portfolio_path(portfolio)} does not exist")
    generation_id, number = new_generation_id(existing)
    stamp = now_utc()
    state = GenerationState(
        id=generation_id, number=number, created=stamp, updated=stamp, spec=spec.model_dump(mode="json"),
        inputs={"contract": spec.contract, "revision": head.revision, "content_hash": head.content_hash,
                "portfolio": portfolio, "previous": previous.id if previous else None},
    )
    return write_state(workspace, state), False


def run_generation(workspace: Workspace, spec: GenerationSpec, on_note: Note | None = None,
                   resume: str | None = None, new: bool = False) -> GenerationState:
    """Run one generation to the end (resuming an unfinished one first); see the module docstring."""
    note = on_note or (lambda _m: None)
    state, resumed = start_or_resume(workspace, spec, resume, new)
    if resumed:
        done = [n for n in STEPS if state.step(n).finished_ok]
        note(f"{state.id}: resuming ({', '.join(done) or 'no step'} finished)")
        if state.status == "done":
            return state
        state.status = "running"
    else:
        note(f"{state.id}: new generation of {spec.contract} r{state.inputs['revision']} with portfolio "
             f"{state.inputs['portfolio']}")
    return Generation(workspace, state, note).run()
