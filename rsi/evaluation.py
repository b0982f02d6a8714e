"""Held-out evaluation of a candidate contract against its parent: `rsi eval CANDIDATE --against PARENT`.

Both contracts attempt the same tasks with the same seeds and the same attempts per task, in one
evaluation run stored like any other run (`runs/rsi.sqlite`, portfolio `eval:<candidate>-vs-<parent>`,
job 0 = parent, job 1 = candidate), through the real attempt function and the local executor, so
every attempt has a trajectory and a verifier verdict:

- **heldout tasks** of the suite (never trained on: the export refuses them) -> the **lift**, the
  paired difference of solve rates (per task: any attempt passed) with Newcombe's 95% interval,
  exactly `rsi.promotion.decision.paired_lift`;
- **previously covered train tasks** (tasks the parent's configuration solved in stored runs, or the
  coverage of `covered_runs`) -> the **retention**, the share of them the candidate still solves.

The gate is the parent's `[evaluation.gate]`: promote only if the lift's CI lower bound is above
`min_lift` and retention >= `retention_min`. `decide_adapter` is pure; `apply_decision` writes the
outcome: the parent's next revision (rsi.training.candidate.promote_adapter) or a `rejected` status
with the numbers, both recorded in the adapter's status.json.

Resume: the run row stores the plan (configurations, tasks, seeds); `EvalSpec.resume` re-runs only the
planned attempts that have no counted outcome, so a killed evaluation loses and repeats nothing.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rsi.atomic import write_json_atomic
from rsi.errors import ExecutorError, StoreError, UserInputError
from rsi.workspace import Workspace

EVAL_FILE = "eval.json"
SCHEDULER = "eval-paired"


class EvalSpec(BaseModel):
    """One `rsi eval` (flags map onto these fields)."""

    model_config = ConfigDict(extra="forbid")
    candidate: str
    parent: str
    suite: str | None = Field(default=None, description="Default: the parent's evaluation.suite.")
    attempts_per_task: int | None = Field(default=None, ge=1, description="Default: the parent's evaluation.attempts_per_task.")
    seed: int | None = Field(default=None, description="Default: the parent's evaluation.seed.")
    limit_heldout: int | None = Field(default=None, ge=1, description="Only the first N heldout tasks (by key).")
    limit_covered: int | None = Field(default=None, ge=0, description="At most N previously covered train tasks.")
    covered_runs: list[str] = Field(default_factory=list, description="Coverage of these runs instead of the parent's own.")
    workers: int | None = Field(default=None, ge=1)
    sandbox: Literal["auto", "local", "docker"] = "auto"
    max_error_retries: int = Field(default=2, ge=0, le=10)
    resume: str | None = Field(default=None, description="Resume this evaluation run id.")
    ci_method: Literal["newcombe", "bootstrap"] = "newcombe"


class EvalDecision(BaseModel):
    promote: bool
    reason: str
    gate: dict[str, Any]


class EvalOutcome(BaseModel):
    """What an evaluation measured and decided (also written to runs/<eval id>/eval.json)."""

    eval_id: str
    suite: str
    candidate: dict[str, Any]
    parent: dict[str, Any]
    adapter_id: str = ""
    seeds: dict[str, int] = Field(default_factory=dict)
    heldout_tasks: list[str]
    covered_tasks: list[str]
    lift: dict[str, Any]
    retention: dict[str, Any]
    per_task: dict[str, dict[str, bool]] = Field(description="task -> {'candidate': solved, 'parent': solved}.")
    decision: EvalDecision
    errors: int = 0
    attempts: int = 0
    wall_s: float = 0.0
    applied: dict[str, Any] = Field(default_factory=dict, description="What apply_decision wrote.")

    @property
    def promote(self) -> bool:
        return self.decision.promote


@dataclass(frozen=True)
class RetentionEstimate:
    covered: int
    still_solved: int
    parent_resolved: int

    @property
    def retention(self) -> float:
        return self.still_solved / self.covered if self.covered else 1.0

    def summary(self) -> dict[str, Any]:
        return {"covered": self.covered, "still_solved": self.still_solved, "retention": round(self.retention, 4),
                "parent_resolved": self.parent_resolved}


# -- pure parts ---------------------------------------------------------------------------------


def task_seed(seed: int, task_key: str, attempt_index: int) -> int:
    """Same seed for both contracts on a task: the pairing is exact, not just same-task."""
    digest = hashlib.sha256(f"{seed}|{task_key}|{attempt_index}".encode()).hexdigest()
    return int(digest[:8], 16)


def retention_of(covered: list[str], candidate: dict[str, bool], parent: dict[str, bool]) -> RetentionEstimate:
    return RetentionEstimate(
        covered=len(covered),
        still_solved=sum(1 for t in covered if candidate.get(t, False)),
        parent_resolved=sum(1 for t in covered if parent.get(t, False)),
    )


def decide_adapter(lift: Any, retention: RetentionEstimate, gate: Any) -> EvalDecision:
    """Promote only if the lift's CI is above `min_lift` and retention >= `retention_min` (pure)."""
    gate_summary = {"enabled": gate.enabled, "min_lift": gate.min_lift, "retention_min": gate.retention_min}
    if lift.tasks == 0:
        return EvalDecision(promote=False, reason="no heldout task was evaluated by both contracts", gate=gate_summary)
    if not gate.enabled:
        ok = lift.lift > 0
        return EvalDecision(promote=ok, reason=("gate disabled: lift " + f"{lift.lift:+.3f}" +
                                                (" > 0" if ok else " is not positive")), gate=gate_summary)
    problems = []
    if not lift.ci.low > gate.min_lift:
        problems.append(f"lift {lift.lift:+.3f} CI95 [{lift.ci.low:.3f}, {lift.ci.high:.3f}] does not lie above "
                        f"min_lift {gate.min_lift}")
    if retention.retention < gate.retention_min:
        problems.append(f"retention {retention.retention:.3f} ({retention.still_solved}/{retention.covered}) "
                        f"is below retention_min {gate.retention_min}")
    if problems:
        return EvalDecision(promote=False, reason="; ".join(problems), gate=gate_summary)
    return EvalDecision(
        promote=True,
        reason=(f"lift {lift.lift:+.3f} CI95 [{lift.ci.low:.3f}, {lift.ci.high:.3f}] above {gate.min_lift}, "
                f"retention {retention.retention:.3f} >= {gate.retention_min}"),
        gate=gate_summary,
    )


# -- the evaluation run -------------------------------------------------------------------------


def _contract_info(loaded: Any, config: Any) -> dict[str, Any]:
    return {"name": loaded.name, "revision": loaded.revision, "ref": loaded.ref, "content_hash": loaded.content_hash,
            "config_hash": config.config_hash}


def _parent_covered(store: Any, suite: str, parent_hash: str, runs: list[str]) -> set[str]:
    if runs:
        return set(store.covered_tasks(suite, "train", runs))
    return {fact[1] for fact in store.attempt_history(suite, "train") if fact[0] == parent_hash and fact[2]}


def evaluate(
    workspace: Workspace,
    spec: EvalSpec,
    on_note: Callable[[str], None] | None = None,
    on_created: Callable[[str], None] | None = None,
    attempt_fn: Any = None,
) -> EvalOutcome:
    """Run (or resume) the paired evaluation and decide; writes nothing to git (see apply_decision)."""
    from rsi.contracts.load import configuration_from_contract
    from rsi.contracts.refs import resolve_ref
    from rsi.promotion.decision import GatePolicy, paired_lift
    from rsi.store import open_store
    from rsi.tasks.load import load_suite

    note = on_note or (lambda _m: None)
    started = time.monotonic()
    store = open_store(workspace.db_url)
    plan: dict[str, Any] = {}
    try:
        if spec.resume:
            run = store.get_run(spec.resume)
            plan = dict(run.args.get("eval") or {})
            if not plan:
                raise UserInputError(f"run {spec.resume} is not an evaluation run")
            spec = EvalSpec.model_validate({**plan["spec"], "resume": spec.resume, "workers": spec.workers or plan["spec"].get("workers")})
        candidate = resolve_ref(workspace, spec.candidate)
        parent = resolve_ref(workspace, spec.parent)
        cand_config = configuration_from_contract(candidate)
        parent_config = configuration_from_contract(parent)
        if cand_config.config_hash == parent_config.config_hash:
            raise UserInputError(f"{spec.candidate} and {spec.parent} are the same configuration; nothing to compare")
        if spec.resume and list(run.args.get("configs", [])) != [parent_config.config_hash, cand_config.config_hash]:
            # an unpinned ref (a bare NAME) may resolve to a newer revision than the one evaluated so far
            raise UserInputError(
                f"evaluation {spec.resume}: {spec.candidate} / {spec.parent} no longer resolve to the configurations "
                "it started with", hint="evaluate pinned revisions (NAME@rN), or start a new evaluation")
        evaluation = parent.spec.evaluation
        suite = spec.suite or evaluation.suite
        per_task = spec.attempts_per_task or evaluation.attempts_per_task
        seed = spec.seed if spec.seed is not None else evaluation.seed
        by_key = {t.key: t for t in load_suite(workspace, suite)}
        if spec.resume:
            run_id = spec.resume
            heldout = list(plan["heldout"])
            covered = list(plan["covered"])
            missing = [k for k in heldout + covered if k not in by_key]
            if missing:
                raise UserInputError(f"evaluation {run_id}: tasks {', '.join(missing[:5])} left suite {suite!r}")
            store.reopen_run(run_id)
            note(f"resuming evaluation {run_id}")
        else:
            heldout = sorted(k for k, t in by_key.items() if t.spec.split == "heldout")[: spec.limit_heldout]
            if not heldout:
                raise UserInputError(f"suite {suite!r} has no heldout tasks to evaluate on")
            covered_all = sorted(_parent_covered(store, suite, parent_config.config_hash, spec.covered_runs) & set(by_key))
            covered = covered_all if spec.limit_covered is None else covered_all[: spec.limit_covered]
            store.record_configurations([parent_config, cand_config])
            store.record_tasks([by_key[k] for k in heldout + covered])
            from rsi.store import new_run_id

            run_id = new_run_id()
            store.create_run(
                run_id=run_id, portfolio=f"eval:{candidate.name}@r{candidate.revision}-vs-{parent.name}@r{parent.revision}",
                suite=suite, split="all", budget={"attempts": 2 * per_task * (len(heldout) + len(covered))},
                seed=seed, scheduler=SCHEDULER,
                args={"eval": {"spec": spec.model_dump(mode="json"), "heldout": heldout, "covered": covered},
                      "configs": [parent_config.config_hash, cand_config.config_hash], "tasks": heldout + covered},
            )
            keys = heldout + covered
            store.start_job(run_id, parent_config.config_hash, keys, per_task, job_index=0, details={"side": "parent"})
            store.start_job(run_id, cand_config.config_hash, keys, per_task, job_index=1, details={"side": "candidate"})
            note(f"evaluation {run_id}: {candidate.ref} vs {parent.ref} on {len(heldout)} heldout + "
                 f"{len(covered)} covered train tasks of {suite}, {per_task} attempt(s) each, seed {seed}")
        if on_created is not None:
            on_created(run_id)
        configs = {0: parent_config, 1: cand_config}
        errors = _run_missing(workspace, store, run_id, configs, by_key, seed, spec, note, attempt_fn)
        store.finish_job(run_id, 0)
        store.finish_job(run_id, 1)
        store.finish_run(run_id, "done")
        solved: dict[int, dict[str, bool]] = {0: {}, 1: {}}
        attempts = 0
        for row in store.list_attempts(run_id):
            if not row.counted:
                continue
            attempts += 1
            side = solved[row.job_index]
            side[row.task_key] = side.get(row.task_key, False) or bool(row.passed)
    finally:
        store.close()
    gate = GatePolicy.from_contract(parent.spec, spec.ci_method)
    lift = paired_lift({k: solved[1][k] for k in heldout if k in solved[1]},
                       {k: solved[0][k] for k in heldout if k in solved[0]}, spec.ci_method, gate.resamples, gate.seed)
    retention = retention_of(covered, solved[1], solved[0])
    decision = decide_adapter(lift, retention, gate)
    adapter = next((s.sha256 for s in candidate.spec.specialists if s.name == candidate.spec.routing.specialist), "")
    outcome = EvalOutcome(
        eval_id=run_id, suite=suite,
        candidate=_contract_info(candidate, cand_config), parent=_contract_info(parent, parent_config),
        adapter_id=adapter, seeds={"seed": seed, "attempts_per_task": per_task},
        heldout_tasks=heldout, covered_tasks=covered, lift=lift.summary(), retention=retention.summary(),
        per_task={k: {"candidate": solved[1].get(k, False), "parent": solved[0].get(k, False)} for k in heldout + covered},
        decision=decision, errors=errors, attempts=attempts, wall_s=time.monotonic() - started,
    )
    write_json_atomic(workspace.run_dir(run_id) / EVAL_FILE, outcome.model_dump(mode="json"))
    return outcome


def _run_missing(workspace: Workspace, store: Any, run_id: str, configs: dict[int, Any], by_key: dict[str, Any],
                 seed: int, spec: EvalSpec, note: Callable[[str], None], attempt_fn: Any) -> int:
    """Execute every planned attempt without a counted outcome; infrastructure errors retried. Returns errors seen."""
    from rsi.executors import AttemptSpec, make_executor
    from rsi.run.attempt_fn import close_shared, make_attempt_fn
    from rsi.store import AttemptRecord
    from rsi.verdict import Verdict

    run_dir = workspace.run_dir(run_id)
    queue: list[AttemptSpec] = []
    for job_index, config in configs.items():
        rows = store.list_attempts(run_id, job_index)
        tries = {(r.task_key, r.attempt_index): r.error_retries + 1 for r in rows if not r.counted}
        for m in store.missing_attempts(run_id, job_index, retry_errors=True):
            task = by_key[m.task_key]
            try_index = tries.get((m.task_key, m.attempt_index), 0)
            if try_index > spec.max_error_retries:
                continue
            out_dir = run_dir / "attempts" / f"j{job_index:04d}" / m.task_key.replace("/", "__") / f"a{m.attempt_index}"
            queue.append(AttemptSpec(
                key=f"{run_id}|{job_index}|{m.task_key}|{m.attempt_index}", run_id=run_id, job_index=job_index,
                task_key=m.task_key, task_dir=str(task.root), attempt_index=m.attempt_index,
                seed=task_seed(seed, m.task_key, m.attempt_index), config=config, out_dir=str(out_dir),
                timeout_s=float(min(task.spec.agent_timeout_s, config.spec.harness.timeouts.agent_s))
                + task.spec.verifier_timeout_s + 60.0,
                try_index=try_index,
            ))
    for stale in run_dir.glob("attempts/*/*/.tmp-*"):
        import shutil

        shutil.rmtree(stale, ignore_errors=True)
    if queue:
        note(f"{len(queue)} attempts to run")
    fn = attempt_fn or make_attempt_fn(workspace.root, spec.sandbox)
    executor = make_executor("local", fn, run_dir / "slurm", workers=spec.workers)
    errors = 0
    try:
        while queue:
            retries = []
            by_key_spec = {s.key: s for s in queue}
            for batch in executor.submit_batches(queue):
                per_job: dict[int, list[AttemptRecord]] = {}
                for result in batch:
                    s = by_key_spec[result.key]
                    per_job.setdefault(s.job_index, []).append(AttemptRecord(
                        task_key=s.task_key, attempt_index=s.attempt_index, verdict=result.verdict, seed=s.seed,
                        reason=result.reason, error_class=result.error_class, tokens=result.tokens,
                        wall_s=result.wall_s, trajectory_path=result.trajectory_path,
                        final_code_hash=result.final_code_hash, started=result.started, finished=result.finished,
                    ))
                    side = "candidate" if s.job_index == 1 else "parent"
                    note(f"{side} {s.task_key}#{s.attempt_index} {result.verdict.value} ({result.wall_s:.1f}s)")
                    if result.verdict is Verdict.ERROR:
                        errors += 1
                        if s.try_index < spec.max_error_retries:
                            retries.append(s.model_copy(update={"try_index": s.try_index + 1}))
                for job_index, records in per_job.items():
                    store.record_attempts(run_id, job_index, records)
            queue = retries
            if retries:
                time.sleep(1.0)
    except StoreError:
        raise
    except Exception as error:
        raise ExecutorError(f"evaluation {run_id} failed: {error}",
                            hint=f"resume with `rsi eval --resume {run_id}`") from error
    finally:
        executor.close()
        if attempt_fn is None:
            close_shared()
    return errors


def load_eval_outcome(workspace: Workspace, eval_id: str) -> EvalOutcome:
    path = workspace.run_dir(eval_id) / EVAL_FILE
    if not path.is_file():
        raise UserInputError(f"no evaluation {eval_id} ({path} is missing)")
    return EvalOutcome.model_validate(json.loads(path.read_text(encoding="utf-8")))


def apply_decision(workspace: Workspace, outcome: EvalOutcome) -> EvalOutcome:
    """Promote the adapter into the parent (gate passed) or record it as rejected; idempotent."""
    from rsi.training.candidate import promote_adapter
    from rsi.training.registry import find_adapter, update_status

    record = None
    if outcome.adapter_id:
        try:
            record = find_adapter(workspace, outcome.adapter_id)
        except UserInputError:
            record = None
    numbers = {"eval_id": outcome.eval_id, "lift": outcome.lift, "retention": outcome.retention,
               "decision": outcome.decision.model_dump(mode="json"), "candidate": outcome.candidate,
               "parent": outcome.parent, "at": datetime.now(UTC).isoformat(timespec="seconds")}
    applied: dict[str, Any]
    if outcome.promote:
        lift, retention = outcome.lift, outcome.retention
        trailers = {
            "Eval-Lift": f"{lift['lift']:+.4f} CI95 [{lift['lift_ci95'][0]:.3f}, {lift['lift_ci95'][1]:.3f}] "
                         f"{lift['method']} on {lift['tasks']} heldout tasks",
            "Eval-Retention": f"{retention['retention']:.4f} ({retention['still_solved']}/{retention['covered']} covered train tasks)",
            "Eval-Gate": f"min_lift={outcome.decision.gate['min_lift']} retention_min={outcome.decision.gate['retention_min']}",
        }
        body = f"gate passed: {outcome.decision.reason}"
        written = promote_adapter(workspace, outcome.parent["name"], outcome.candidate["ref"], outcome.eval_id,
                                  trailers, body)
        applied = {"state": "promoted", "revision": written.summary()}
        if record is not None:
            update_status(record, state="promoted", evaluation=numbers, promotion=written.summary())
    else:
        applied = {"state": "rejected", "reason": outcome.decision.reason}
        if record is not None:
            update_status(record, state="rejected", evaluation=numbers)
    updated = outcome.model_copy(update={"applied": applied})
    write_json_atomic(workspace.run_dir(outcome.eval_id) / EVAL_FILE, updated.model_dump(mode="json"))
    return updated
