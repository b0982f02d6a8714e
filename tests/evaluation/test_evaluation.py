"""`rsi eval`: paired heldout lift, heldout retention (in-sample beside it), the price, the gate, promotion or
rejection, resume.

Attempts run through the real harness, sandbox and verifier; only the model is scripted, chosen per side
(the candidate routes every turn to its `sft` specialist, the parent to the bare base), so the verdicts
that decide are real verifier verdicts. The real-model evaluation is in test_train_real.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi.evaluation import (
    EvalSpec,
    RetentionEstimate,
    RetentionSummary,
    TransferSummary,
    apply_decision,
    decide_adapter,
    evaluate,
    retention_of,
    transfer_of,
)
from rsi.progress import Tracker
from rsi.promotion.decision import GatePolicy, PairTable, paired_lift
from rsi.run.attempt_fn import HarnessAttempt


def _helpers():
    from tests.training import conftest

    return conftest


class BySide:
    """The real attempt function, with a scripted model file per side (candidate = routes to a specialist)."""

    def __init__(self, root: Path, candidate: Path, parent: Path) -> None:
        self.root, self.files, self.calls = str(root), {"candidate": candidate, "parent": parent}, []

    def __call__(self, spec):
        side = "candidate" if spec.config.spec.routing.specialist else "parent"
        self.calls.append((side, spec.task_key))
        return HarnessAttempt(workspace_root=self.root, model_override=f"scripted:{self.files[side]}")(spec)


WRONG = "```python\nsubmit()\n```"


def padded(reply: str, length: int) -> str:
    """`reply` grown to exactly `length` characters by a comment line in its code block (the scripted model counts
    a token per 4 characters: equal lengths, equal completion tokens)."""
    pad = length - len(reply) - 3
    assert pad >= 0, (len(reply), length)
    return reply.replace("```python\n", "```python\n# " + "." * pad + "\n", 1)


def wrong_script(path: Path, task_ids, length: int = 0) -> Path:
    """Replies that submit nothing (padded to `length` characters, to price like a written solution)."""
    reply = padded(WRONG, length) if length else WRONG
    path.write_text(json.dumps({"tasks": {t: [reply] for t in task_ids}}))
    return path


@pytest.fixture
def setup(workspace, cli, scripted_env, tmp_path, monkeypatch):
    """A parent run that covered the first 2 train tasks, and a candidate revision with a registered adapter."""
    from rsi.adapters.registry import register_adapter
    from rsi.tasks.load import load_suite
    from rsi.training.candidate import ensure_revision_tagged, write_candidate

    helpers = _helpers()
    monkeypatch.setenv("RSI_WORKSPACE", str(workspace.root))
    helpers.make_small_contract(cli, workspace, scripted_env)
    run_id, _ = helpers.run_and_export(cli, workspace, scripted_env, tmp_path / "sft", tasks=2)
    ensure_revision_tagged(workspace, "default")
    folder = tmp_path / "peft"
    folder.mkdir()
    (folder / "adapter_config.json").write_text("{}")
    (folder / "adapter_model.safetensors").write_bytes(b"weights")
    record = register_adapter(workspace, folder, {
        "name": "sft", "base": {}, "dataset": {}, "source_runs": [run_id], "parent_contract": {"ref": "default@r2"},
        "hyperparameters": {}, "metrics": {}, "code": {"rsi_version": "0.1.0"}})
    candidate = write_candidate(workspace, "default", record.id, record.relative_adapter_dir(workspace), 8,
                                ["q_proj", "v_proj"], parent_ref="default@r2")
    tasks = load_suite(workspace, "pyfuncs")
    return {"run_id": run_id, "record": record, "candidate": candidate.ref, "tasks": tasks,
            "solutions": Path(scripted_env["RSI_MODEL_OVERRIDE"].partition(":")[2])}


def test_gate_decisions_are_pure_and_explain_themselves() -> None:
    gate = GatePolicy(min_lift=0.0, retention_min=0.9)
    strong = paired_lift({f"t{i}": True for i in range(8)}, {f"t{i}": False for i in range(8)})
    assert decide_adapter(strong, RetentionEstimate(4, 4, 4, 4), gate).promote
    low_retention = decide_adapter(strong, RetentionEstimate(4, 3, 4, 3, split="heldout"), gate)
    assert not low_retention.promote
    assert "heldout retention vs the parent 0.750 (3/4) is below retention_min 0.9" in low_retention.reason
    # against generation 0 too, when there is a control
    lost_gen0 = decide_adapter(strong, RetentionEstimate(8, 8, 8, 8, "heldout"), gate,
                               retention_vs_control=RetentionEstimate(8, 5, 6, 4, "heldout", "control"))
    assert not lost_gen0.promote and "heldout retention vs generation 0 0.667 (4/6) is below" in lost_gen0.reason
    flat = paired_lift({"a": True, "b": False}, {"a": True, "b": False})
    assert not decide_adapter(flat, RetentionEstimate(0, 0, 0, 0), gate).promote
    assert "does not lie above min_lift" in decide_adapter(flat, RetentionEstimate(0, 0, 0, 0), gate).reason
    disabled = GatePolicy(enabled=False)
    assert decide_adapter(paired_lift({"a": True}, {"a": False}), RetentionEstimate(1, 0, 1, 0), disabled).promote
    assert not decide_adapter(paired_lift({}, {}), RetentionEstimate(0, 0, 0, 0), gate).promote


@pytest.mark.slow
def test_lifting_candidate_is_promoted_into_the_parent(workspace, setup, tmp_path) -> None:
    heldout = sorted(t.id for t in setup["tasks"] if t.spec.split == "heldout")[:3]
    # wrong answers as long as the longest solution: the price stays within the default 10x
    parent_script = wrong_script(tmp_path / "wrong.json", [t.id for t in setup["tasks"]], length=longest(setup))
    fn = BySide(workspace.root, setup["solutions"], parent_script)
    # default@r1 (before the small-contract revision) is generation 0: a third, frozen side on heldout
    spec = EvalSpec(candidate=setup["candidate"], parent="default@r2", limit_heldout=3, workers=3,
                    control="default@r1", transfer_runs=[setup["run_id"]])
    seen: list = []

    class Recording:  # a ProgressDisplay that keeps the snapshots (rsi.progress)
        def update(self, progress, message=None):
            seen.append(progress)

        def close(self):
            pass

    outcome = evaluate(workspace, spec, attempt_fn=fn, tracker=Tracker("eval", Recording()))
    assert [k.rpartition("/")[2] for k in outcome.heldout_tasks] == heldout
    # progress: one stage of 13 attempts, advanced to the end, with the passes counted
    assert seen[-1].stage == "attempts" and (seen[-1].done, seen[-1].total) == (13, 13)
    assert seen[-1].fields["passed"] == 3 + 2
    assert len(outcome.covered_tasks) == 2  # what the parent's configuration solved in the stored run
    assert outcome.lift.table == PairTable(both=0, candidate_only=3, parent_only=0, neither=0)
    # the parent solved no heldout task: no retention (vacuous in the gate, and said so), not 1.0
    assert outcome.lift.lift_ci95[0] > 0 and outcome.retention.retention is None
    assert outcome.retention.split == "heldout" and "no tasks" in outcome.decision.reason
    assert outcome.retention_in_sample is not None and outcome.retention_in_sample.split == "train"
    assert outcome.control is not None and outcome.control.ref == "default@r1"
    assert outcome.lift_vs_control is not None and outcome.lift_vs_control.table.candidate_only == 3
    # transfer: the run's union coverage (2 train tasks), solved by the candidate, not by the parent
    assert outcome.transfer == TransferSummary(portfolio_covered=2, candidate_solved=2, parent_solved=0,
                                               transfer=1.0, parent_transfer=0.0)
    assert outcome.promote and outcome.attempts == 13  # 5 tasks x (parent, candidate) + 3 heldout x control
    assert all(set(sides) == {"parent", "candidate", "control"} for k, sides in outcome.per_task.items()
               if k in outcome.heldout_tasks)
    # same seed for both sides on each task
    from rsi.store import open_store

    store = open_store(workspace.db_url)
    try:
        rows = store.list_attempts(outcome.eval_id)
    finally:
        store.close()
    seeds = {}
    for row in rows:
        seeds.setdefault(row.task_key, set()).add(row.seed)
    assert all(len(s) == 1 for s in seeds.values()) and len(seeds) == 5  # control included

    applied = apply_decision(workspace, outcome)
    assert applied.applied is not None and applied.applied.state == "promoted"
    assert applied.applied.revision is not None and applied.applied.revision.ref == "default@r3"
    from rsi.contracts.refs import resolve_ref

    promoted = resolve_ref(workspace, "default")
    assert promoted.revision == 3 and promoted.spec.routing.specialist == "sft"
    assert promoted.spec.specialists[0].sha256 == setup["record"].id
    status = json.loads((setup["record"].folder / "status.json").read_text())
    assert status["state"] == "promoted" and status["promotion"]["ref"] == "default@r3"
    assert json.loads((workspace.run_dir(outcome.eval_id) / "eval.json").read_text())["applied"]["state"] == "promoted"
    again = apply_decision(workspace, outcome)  # idempotent: finds its Adapter-Eval commit
    assert again.applied is not None and again.applied.revision is not None
    assert again.applied.revision.written is False and resolve_ref(workspace, "default").revision == 3


def test_retention_counts_only_what_the_parent_solves() -> None:
    """A covered task the parent fails in this evaluation (a sampled configuration covered it) is not one the
    candidate can lose: it counts in transfer, not in retention."""
    covered = ["s/a", "s/b", "s/c", "s/d"]
    parent = {"s/a": True, "s/b": True, "s/c": False, "s/d": False}
    same = retention_of(covered, dict(parent), parent)
    assert (same.still_solved, same.parent_resolved, same.kept, same.retention) == (2, 2, 2, 1.0)
    forgot = retention_of(covered, {"s/a": True, "s/c": True, "s/d": True}, parent)
    assert (forgot.still_solved, forgot.kept, forgot.retention) == (3, 1, 0.5)
    # nothing the parent solved: no retention over zero tasks, not 1.0
    assert retention_of(covered, {}, {}).retention is None and retention_of(covered, {}, {}).as_text() == "no tasks"


def test_no_retention_over_zero_tasks_and_the_gate_says_its_condition_was_vacuous() -> None:
    nothing = RetentionEstimate(3, 3, 0, 0, split="heldout")
    assert nothing.retention is None and nothing.summary().retention is None and nothing.as_text() == "no tasks"
    strong = paired_lift({f"t{i}": True for i in range(8)}, {f"t{i}": False for i in range(8)})
    decision = decide_adapter(strong, nothing, GatePolicy())
    assert decision.promote and "retention vs the parent: no tasks (it solved no heldout task; vacuous)" in decision.reason
    # a record written when zero tasks read 1.0 reads back as what it measured: nothing
    old = RetentionSummary.model_validate({"covered": 0, "still_solved": 0, "retention": 1.0, "parent_resolved": 0,
                                           "kept": 0})
    assert old.retention is None and old.as_text() == "no tasks"


def test_an_eval_json_written_when_retention_was_in_sample_reads_with_its_meaning() -> None:
    from rsi.evaluation import EvalOutcome

    side = {"name": "default", "revision": 2, "ref": "default@r2", "content_hash": "c", "config_hash": "h"}
    lift = paired_lift({"a": True, "b": False, "c": True}, {"a": True, "b": True, "c": False}).summary()
    old = {"eval_id": "e", "suite": "s", "candidate": side, "parent": side, "heldout_tasks": ["a", "b", "c"],
           "covered_tasks": ["x"], "lift": lift.model_dump(mode="json"), "per_task": {},
           "retention": {"covered": 20, "still_solved": 20, "retention": 1.0, "parent_resolved": 20, "kept": 20},
           "decision": {"promote": False, "reason": "r", "gate": {"enabled": True, "min_lift": 0.0, "retention_min": 0.9}}}
    outcome = EvalOutcome.model_validate(old)
    assert outcome.retention_in_sample is not None and outcome.retention_in_sample.as_text() == "1.000 (20/20)"
    assert outcome.retention_in_sample.split == "train"
    # the heldout figure, from the lift's own paired table: the parent solved a and b, the candidate kept a
    assert outcome.retention.split == "heldout" and outcome.retention.as_text() == "0.500 (1/2)"


def test_transfer_is_the_share_of_the_portfolio_covered_tasks_the_deployed_configuration_solves() -> None:
    covered = ["s/a", "s/b", "s/c", "s/d"]
    t = transfer_of(covered, {"s/a": True, "s/b": True, "s/c": False, "s/x": True}, {"s/a": True})
    assert (t.portfolio_covered, t.candidate_solved, t.parent_solved) == (4, 2, 1)
    assert (t.transfer, t.parent_transfer) == (0.5, 0.25)
    assert transfer_of([], {}, {}).transfer == 0.0


def longest(setup) -> int:
    """Characters of the longest reference-solution reply (so padded replies price alike)."""
    return max(len(r[0]) for r in json.loads(setup["solutions"].read_text())["tasks"].values())


@pytest.mark.slow
def test_a_candidate_that_loses_heldout_tasks_its_parent_solved_fails_retention(workspace, setup, tmp_path) -> None:
    """Heldout retention gates, in-sample does not: the candidate keeps every covered train task (in-sample 1.0)
    but loses the two heldout tasks the parent solved."""
    heldout_ids = sorted(t.id for t in setup["tasks"] if t.spec.split == "heldout")[:4]
    train_ids = [t.id for t in setup["tasks"] if t.spec.split == "train"]
    solutions = json.loads(setup["solutions"].read_text())["tasks"]
    n = longest(setup)
    wrong = [padded(WRONG, n)]
    forgetful = tmp_path / "forgetful.json"  # solves heldout 2 and 3 and the train tasks; loses heldout 0 and 1
    forgetful.write_text(json.dumps({"tasks": {**{t: solutions[t] for t in train_ids},
                                               **{t: (solutions[t] if i >= 2 else wrong) for i, t in enumerate(heldout_ids)}}}))
    parent = tmp_path / "parent.json"  # solves heldout 0 and 1 and the train tasks
    parent.write_text(json.dumps({"tasks": {**{t: solutions[t] for t in train_ids},
                                            **{t: (solutions[t] if i < 2 else wrong) for i, t in enumerate(heldout_ids)}}}))
    fn = BySide(workspace.root, forgetful, parent)
    outcome = evaluate(workspace, EvalSpec(candidate=setup["candidate"], parent="default@r2", limit_heldout=4), attempt_fn=fn)
    assert outcome.retention == RetentionSummary(covered=4, still_solved=2, retention=0.0, parent_resolved=2, kept=0,
                                                 split="heldout", against="parent")
    assert outcome.retention_in_sample == RetentionSummary(covered=2, still_solved=2, retention=1.0, parent_resolved=2,
                                                           kept=2, split="train")
    assert not outcome.promote
    assert "heldout retention vs the parent 0.000 (0/2) is below retention_min 0.9" in outcome.decision.reason
    assert "price" not in outcome.decision.reason  # equal lengths: about 1x the parent's tokens
    from rsi.cli.render_eval import eval_lines

    text = "\n".join(eval_lines(outcome))
    assert "retention (heldout, gated): 0.000 (0/2)" in text
    assert "retention in-sample (covered train tasks, the adapter's training data; not gated): 1.000 (2/2)" in text
    applied = apply_decision(workspace, outcome)
    assert applied.applied is not None and applied.applied.state == "rejected"
    assert applied.applied.reason == outcome.decision.reason
    status = json.loads((setup["record"].folder / "status.json").read_text())
    assert status["state"] == "rejected" and status["evaluation"]["retention"]["retention"] == 0.0
    assert status["evaluation"]["retention_in_sample"]["retention"] == 1.0
    from rsi.contracts.refs import resolve_ref

    assert resolve_ref(workspace, "default").revision == 2


@pytest.mark.slow
def test_a_12x_candidate_is_rejected_by_default_with_its_price(workspace, setup, tmp_path) -> None:
    """The shipped gate (max_token_ratio 10): a candidate that lifts, keeps everything, and spends 12x the
    parent's completion tokens per heldout task is rejected, and the reason and the first line say the price."""
    heldout_ids = sorted(t.id for t in setup["tasks"] if t.spec.split == "heldout")[:4]
    solutions = json.loads(setup["solutions"].read_text())["tasks"]
    short = -(-longest(setup) // 48) * 4  # a multiple of 4, 12 of which hold the longest solution
    dear = tmp_path / "dear.json"
    dear.write_text(json.dumps({"tasks": {t: [padded(solutions[t][0], 12 * short)] for t in heldout_ids}}))
    parent = wrong_script(tmp_path / "cheap.json", heldout_ids, length=short)
    outcome = evaluate(workspace, EvalSpec(candidate=setup["candidate"], parent="default@r2", limit_heldout=4,
                                           limit_covered=0), attempt_fn=BySide(workspace.root, dear, parent))
    assert outcome.lift.table == PairTable(both=0, candidate_only=4, parent_only=0, neither=0)
    assert outcome.lift.lift_ci95[0] > 0  # the lift alone would pass
    assert outcome.costs["candidate"].completion_tokens_per_task == 12 * outcome.costs["parent"].completion_tokens_per_task
    assert outcome.costs["candidate"].prompt_tokens_per_task > 0  # the prompt is priced too (the same on both sides)
    assert not outcome.promote and outcome.decision.gate.max_token_ratio == 10.0
    assert (f"price 12.00x the parent's completion tokens per heldout task ({12 * short // 4} vs {short // 4}) is above "
            "max_token_ratio 10") in outcome.decision.reason
    from rsi.cli.render_eval import eval_lines

    first = eval_lines(outcome)[0]
    assert "at 12.0x the parent's completion tokens" in first and "its prompt tokens" in first
    assert "check seconds per heldout task" in first
    assert any("retention in-sample" in line and "no tasks" in line for line in eval_lines(outcome))  # --limit-covered 0


@pytest.mark.slow
def test_interrupted_evaluation_resumes_without_repeating(workspace, setup) -> None:
    fn = BySide(workspace.root, setup["solutions"], setup["solutions"])
    spec = EvalSpec(candidate=setup["candidate"], parent="default@r2", limit_heldout=2, limit_covered=1)
    created = []

    def crash(eval_id: str) -> None:
        created.append(eval_id)
        raise KeyboardInterrupt  # killed right after planning, before any attempt

    with pytest.raises(KeyboardInterrupt):
        evaluate(workspace, spec, on_created=crash, attempt_fn=fn)
    assert fn.calls == []
    resumed = evaluate(workspace, EvalSpec(candidate="-", parent="-", resume=created[0]), attempt_fn=fn)
    assert resumed.eval_id == created[0] and len(fn.calls) == 6 and resumed.attempts == 6
    again = evaluate(workspace, EvalSpec(candidate="-", parent="-", resume=created[0]), attempt_fn=fn)
    assert len(fn.calls) == 6 and again.lift == resumed.lift  # nothing left to run, same numbers


@pytest.mark.slow
def test_eval_cli_exit_codes(workspace, setup, shim, scripted_env) -> None:
    done = shim("eval", setup["candidate"], "--against", "default@r2", "--limit-heldout", "2", "--limit-covered", "0",
                cwd=workspace.root, env=scripted_env)
    # the same scripted model on both sides: no lift, so the gate rejects (exit 1) and says why
    assert done.returncode == 1, done.stderr + done.stdout
    assert "decision: REJECT: lift +0.000" in done.stdout and "applied: rejected" in done.stdout
    # --limit-covered 0: no in-sample retention over zero tasks
    assert "retention in-sample (covered train tasks, the adapter's training data; not gated): no tasks" in done.stdout
    bad = shim("eval", "nosuch@r1", "--against", "default@r2", cwd=workspace.root, env=scripted_env)
    assert bad.returncode == 2 and "nosuch@r1" in bad.stderr and "Traceback" not in bad.stderr


def test_the_outcomes_records_are_typed_and_stored_as_before() -> None:
    from rsi.evaluation import AppliedDecision, EvalOutcome

    rejected = AppliedDecision(state="rejected", reason="retention 0.500 is below retention_min 0.9")
    assert rejected.model_dump(mode="json", exclude_defaults=True) == {"state": "rejected", "reason": rejected.reason}
    promoted = AppliedDecision.model_validate({"state": "promoted", "revision": {
        "name": "default", "revision": 3, "ref": "default@r3", "tag": "default/r3", "commit": "c", "content_hash": "h",
        "written": True}})
    assert promoted.revision is not None and promoted.revision.ref == "default@r3"
    lift = paired_lift({"a": True}, {"a": False}).summary()
    side = {"name": "default", "revision": 2, "ref": "default@r2", "content_hash": "c", "config_hash": "h"}
    outcome = EvalOutcome(eval_id="e", suite="s", candidate=side, parent=side, heldout_tasks=["a"], covered_tasks=[],
                          lift=lift, retention=RetentionEstimate(0, 0, 0, 0, split="heldout").summary(),
                          per_task={}, decision=decide_adapter(paired_lift({}, {}), RetentionEstimate(0, 0, 0, 0),
                                                               GatePolicy()))
    assert outcome.applied is None and outcome.model_dump(mode="json")["applied"] == {}  # eval.json as before
    assert outcome.model_dump(mode="json")["candidate"] == side and outcome.candidate.ref == "default@r2"
    assert outcome.model_dump(mode="json")["decision"]["gate"] == {"enabled": True, "min_lift": 0.0, "retention_min": 0.9,
                                                                   "max_token_ratio": 10.0, "min_lift_per_1k_tokens": None}
    stored = outcome.model_copy(update={"applied": promoted}).model_dump(mode="json")
    assert stored["applied"] == {"state": "promoted", "revision": promoted.revision.model_dump(mode="json")}
    assert EvalOutcome.model_validate(stored).applied == promoted
    with pytest.raises(ValueError):
        AppliedDecision.model_validate({"state": "maybe"})


def test_eval_comparisons_count_equal_attempts_per_task() -> None:
    """Attempt i of a task counts only where both sides have a counted outcome for it (an error on one side
    never leaves the other side an extra try)."""
    from rsi.evaluation import paired_solved

    candidate = {"s/a": {0: False, 1: True}, "s/b": {0: True}, "s/c": {0: True}}
    parent = {"s/a": {0: False}, "s/b": {0: False, 1: True}}
    cand, base, left_out = paired_solved(candidate, parent, ["s/a", "s/b", "s/c"])
    # s/a: the candidate's pass came on attempt 1, which the parent has no counted outcome for
    assert cand == {"s/a": False, "s/b": True} and base == {"s/a": False, "s/b": False}
    assert left_out == 3  # s/a attempt 1, s/b's parent attempt 1, s/c (no parent attempt at all)
