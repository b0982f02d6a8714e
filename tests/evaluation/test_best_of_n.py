"""`rsi eval --best-of-n`: the cost-matched baseline beside union coverage (issue 16, item 5).

The planning (n, the tasks, the sampling override) is tested on values; the side itself end to end:
real coverage-search runs as the transfer runs, then an evaluation whose job 3 runs the parent as
best-of-n through the real harness, sandbox and verifier (only the model is scripted, per side), and
the summary's numbers are checked against what the store recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi.cli.render_eval import cost_matched_line, eval_lines
from rsi.errors import RsiError, UserInputError
from rsi.evaluation import (
    BEST_OF_N,
    BEST_OF_N_SAMPLING,
    BestOfNPlan,
    EvalSpec,
    TransferSummary,
    best_of_n_per_task,
    cost_matched_of,
    evaluate,
    plan_best_of_n,
)
from rsi.run.attempt_fn import HarnessAttempt
from rsi.run.jobs import task_seed
from tests.evaluation.test_evaluation import setup, wrong_script

__all__ = ["setup"]  # the fixture, shared from test_evaluation.py


def test_n_is_the_search_attempts_per_tried_task_rounded_half_up_and_at_least_one() -> None:
    assert best_of_n_per_task(5, 3) == 2  # 1.67
    assert best_of_n_per_task(5, 2) == 3  # 2.5 rounds up (Python's round would give 2)
    assert best_of_n_per_task(7, 2) == 4  # 3.5
    assert best_of_n_per_task(4, 3) == 1  # 1.33
    assert best_of_n_per_task(1, 3) == 1  # 0.33: at least one attempt per task
    assert best_of_n_per_task(240, 24) == 10
    assert best_of_n_per_task(0, 0) == 1


def test_plan_takes_the_tried_train_tasks_and_samples_a_greedy_parent_given_more_than_one_attempt() -> None:
    split = {"s/a": "train", "s/b": "train", "s/c": "train", "s/h": "heldout"}
    tried = {"s/b": 4, "s/a": 2, "s/c": 1, "s/z": 0}  # s/z: stored but never attempted (no counted attempt)
    greedy = plan_best_of_n(tried, {"s/a", "s/c", "s/x"}, split, temperature=0.0)
    assert greedy.tasks == ["s/a", "s/b", "s/c"] and greedy.search_attempts == 7
    assert greedy.covered == ["s/a", "s/c"]  # union coverage within the tried tasks only
    assert greedy.per_task == 2  # round(7 / 3) = 2
    assert greedy.overrides == BEST_OF_N_SAMPLING == {"harness.sampling.temperature": 0.8, "harness.sampling.top_p": 0.95}
    sampling = plan_best_of_n(tried, set(), split, temperature=0.7)
    assert sampling.overrides == {} and sampling.per_task == 2 and sampling.covered == []
    # One attempt a task: the greedy parent's own answer is its best single one (a sample would be worse).
    once = plan_best_of_n({"s/a": 1, "s/b": 2, "s/c": 1}, set(), split, temperature=0.0)
    assert once.per_task == 1 and once.overrides == {}


def test_a_heldout_task_in_the_plan_is_refused() -> None:
    split = {"s/a": "train", "s/h": "heldout"}
    with pytest.raises(RsiError, match="s/h are not train tasks"):
        plan_best_of_n({"s/a": 1, "s/h": 1}, set(), split, temperature=0.0)
    with pytest.raises(RsiError, match="s/q are not train tasks"):  # a task the suite no longer has
        plan_best_of_n({"s/q": 1}, set(), split, temperature=0.0)


def test_the_summary_sets_union_coverage_beside_best_of_n_and_what_ships() -> None:
    plan = BestOfNPlan(["s/a", "s/b", "s/c", "s/d"], 10, ["s/a", "s/b", "s/c"], 3, dict(BEST_OF_N_SAMPLING))
    transfer = TransferSummary(portfolio_covered=3, candidate_solved=2, parent_solved=1, transfer=0.6667,
                               parent_transfer=0.3333)
    c = cost_matched_of(plan, {"s/a": True, "s/b": False, "s/d": True, "s/x": True}, 12, transfer, "temperature 0.8",
                        BEST_OF_N)
    assert c.job_index == BEST_OF_N == 3
    assert (c.tasks, c.search_attempts, c.union_covered, c.per_task, c.attempts, c.solved) == (4, 10, 3, 3, 12, 2)
    assert (c.union_rate, c.best_of_n_rate) == (0.75, 0.5)
    assert (c.transfer_tasks, c.parent_solved, c.candidate_solved) == (3, 1, 2)
    line = cost_matched_line(c)
    assert "union coverage 3/4 train tasks with 10 attempts" in line
    assert "best-of-3 of the deployed configuration 2/4 with 12 attempts" in line
    assert "parent 1/3, candidate 2/3" in line


class ThreeSides:
    """The real attempt function with a scripted model per side: the candidate (routes to a specialist), the
    parent as deployed (greedy), and the parent sampled for best-of-n. Records each attempt's side and sampling."""

    def __init__(self, root: Path, scripts: dict[str, Path]) -> None:
        self.root, self.scripts, self.calls = str(root), scripts, []

    def __call__(self, spec):
        sampling = spec.config.spec.harness.sampling
        side = ("candidate" if spec.config.spec.routing.specialist
                else "best-of-n" if sampling.temperature > 0 else "parent")
        self.calls.append((side, spec.task_key, sampling.temperature, sampling.top_p))
        return HarnessAttempt(workspace_root=self.root, model_override=f"scripted:{self.scripts[side]}")(spec)


def _partial_script(path: Path, solutions: Path, solve: list[str], all_ids: list[str]) -> Path:
    replies = json.loads(solutions.read_text())["tasks"]
    path.write_text(json.dumps({"tasks": {t: replies[t] if t in solve else ["```python\nsubmit()\n```"]
                                          for t in all_ids}}))
    return path


def _store_rows(workspace, run_ids):
    from rsi.store import open_store

    store = open_store(workspace.db_url)
    try:
        return [row for run_id in run_ids for row in store.list_attempts(run_id)]
    finally:
        store.close()


@pytest.mark.slow
def test_best_of_n_side_matches_the_transfer_runs_budget_and_is_counted_from_the_store(
        workspace, setup, cli, scripted_env, tmp_path) -> None:
    tasks = setup["tasks"]
    ids = [t.id for t in tasks]
    train = sorted((t for t in tasks if t.spec.split == "train"), key=lambda t: t.key)
    # A second coverage search on the first 3 train tasks that solves only the first 2 (the third stays uncovered).
    search = _partial_script(tmp_path / "search.json", setup["solutions"], [t.id for t in train[:2]], ids)
    done = cli("run", "--portfolio", "solo", "--split", "train", "--limit-tasks", "3", "--budget-attempts", "6",
               "--workers", "2", "--no-report", "--json", cwd=workspace.root,
               env={**scripted_env, "RSI_MODEL_OVERRIDE": f"scripted:{search}"})
    assert done.returncode == 0, done.stderr + done.stdout
    runs = [setup["run_id"], json.loads(done.stdout)["run_id"]]

    # What the transfer runs spent, read straight off their attempts.
    counted = [r for r in _store_rows(workspace, runs) if r.counted]
    tried = sorted({r.task_key for r in counted})
    covered = sorted({r.task_key for r in counted if r.passed})
    split_of = {t.key: t.spec.split for t in tasks}
    assert tried and all(split_of[k] == "train" for k in tried)
    a, t = len(counted), len(tried)

    # Best-of-n (the parent sampled) solves only the first train task; the greedy parent none; the candidate all.
    scripts = {"candidate": setup["solutions"], "parent": wrong_script(tmp_path / "wrong.json", ids),
               "best-of-n": _partial_script(tmp_path / "bon.json", setup["solutions"], [train[0].id], ids)}
    fn = ThreeSides(workspace.root, scripts)
    spec = EvalSpec(candidate=setup["candidate"], parent="default@r2", limit_heldout=1, workers=3,
                    transfer_runs=runs, best_of_n=True)
    outcome = evaluate(workspace, spec, attempt_fn=fn)
    c = outcome.cost_matched
    assert c is not None
    n = max(1, int(a / t + 0.5))  # round half up, computed independently
    assert (c.tasks, c.search_attempts, c.union_covered, c.per_task) == (t, a, len(covered), n)

    # Job 3, read from the store: n attempts on each tried task, the parent's configuration sampled, paired seeds.
    assert c.job_index == 2  # no control: the best-of-n side is the run's third job
    job3 = [r for r in _store_rows(workspace, [outcome.eval_id]) if r.job_index == c.job_index]
    assert sorted(r.task_key for r in job3) == sorted(k for k in tried for _ in range(n))
    assert not {r.task_key for r in job3} & set(outcome.heldout_tasks)  # never a heldout task
    assert all(r.seed == task_seed(outcome.seeds["seed"], r.task_key, r.attempt_index) for r in job3)
    assert c.attempts == sum(1 for r in job3 if r.counted) == n * t
    assert c.solved == len({r.task_key for r in job3 if r.passed}) == 1
    assert c.best_of_n_rate == round(1 / t, 4) and c.union_rate == round(len(covered) / t, 4)
    bon_calls = [call for call in fn.calls if call[0] == "best-of-n"]
    assert len(bon_calls) == n * t and all(call[2:] == (0.8, 0.95) for call in bon_calls)
    assert all(call[2] == 0.0 for call in fn.calls if call[0] == "parent")  # what ships stays greedy
    assert c.sampling == "temperature 0.8, top_p 0.95: the greedy parent, sampled"

    # What ships on the covered tasks: the transfer summary's numbers, the same tasks.
    assert outcome.transfer is not None
    assert (c.transfer_tasks, c.parent_solved, c.candidate_solved) == (len(covered), 0, len(covered))
    assert outcome.attempts == len(fn.calls)
    assert cost_matched_line(c) in eval_lines(outcome)
    assert all("best-of-n" not in sides for sides in outcome.per_task.values())
    stored = json.loads((workspace.run_dir(outcome.eval_id) / "eval.json").read_text())
    assert stored["cost_matched"] == c.model_dump(mode="json")

    # Resuming a finished evaluation runs nothing again and keeps the plan (the store has grown since).
    again = evaluate(workspace, EvalSpec(candidate="-", parent="-", resume=outcome.eval_id), attempt_fn=fn)
    assert len(fn.calls) == outcome.attempts and again.cost_matched == c


def test_best_of_n_without_transfer_runs_is_refused(workspace, setup) -> None:
    with pytest.raises(UserInputError, match="best-of-n needs the transfer runs"):
        evaluate(workspace, EvalSpec(candidate=setup["candidate"], parent="default@r2", best_of_n=True))


@pytest.mark.slow
def test_eval_cli_best_of_n_prints_the_cost_matched_line(workspace, setup, shim, scripted_env) -> None:
    done = shim("eval", setup["candidate"], "--against", "default@r2", "--limit-heldout", "1", "--limit-covered", "1",
                "--transfer-run", setup["run_id"], "--best-of-n", "--dry-run", "--json", cwd=workspace.root,
                env=scripted_env)
    assert done.returncode in (0, 1), done.stderr + done.stdout
    outcome = json.loads(done.stdout)
    c = outcome["cost_matched"]
    rows = [r for r in _store_rows(workspace, [setup["run_id"]]) if r.counted]
    assert (c["tasks"], c["search_attempts"]) == (len({r.task_key for r in rows}), len(rows))
    job3 = [r for r in _store_rows(workspace, [outcome["eval_id"]]) if r.job_index == c["job_index"] and r.counted]
    assert c["attempts"] == len(job3) == c["per_task"] * c["tasks"]
    assert c["solved"] == len({r.task_key for r in job3 if r.passed})
    plain = shim("eval", "--resume", outcome["eval_id"], "--dry-run", cwd=workspace.root, env=scripted_env)
    assert f"cost-matched: union coverage {c['union_covered']}/{c['tasks']} train tasks" in plain.stdout, plain.stdout
