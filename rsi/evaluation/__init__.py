"""Held-out evaluation of a candidate contract against its parent: `rsi eval CANDIDATE --against PARENT`.

Both contracts attempt the same tasks with the same seeds (rsi.run.jobs.task_seed: a (task, attempt)
draws the same seed on every side) and the same attempts per task, in one evaluation run stored like
any other run (`runs/rsi.sqlite`, portfolio `eval:<candidate>-vs-<parent>`, scheduler `eval-paired`),
planned as fixed jobs (job 0 = parent, job 1 = candidate, then the control and the best-of-n side when
asked for, in that order) and
executed and recorded by the orchestrator, the one path `rsi run` takes (rsi/run/planned.py): real
attempt function, executor, sandbox, retries and attempt folders, so every attempt has a trajectory
and a verifier verdict:

- **heldout tasks** of the suite (never trained on: the export refuses them) -> the **lift**, the
  paired difference of solve rates (per task: any attempt passed) with Newcombe's 95% interval,
  exactly `rsi.promotion.decision.paired_lift`;
- the same **heldout tasks** -> the gate's **retention**: of the heldout tasks the parent (and the control)
  solved, the share the candidate still solves ("no tasks" where that side solved none);
- **previously covered train tasks** (tasks the parent's configuration solved in stored runs, or the
  coverage of `covered_runs`) -> the **in-sample retention**, the share of them the candidate still solves:
  the adapter's own training data, so it is shown beside the gate's and never gates;
- **portfolio-covered train tasks** (what any configuration of `transfer_runs` solved: the union
  coverage of the search) -> the **transfer**, the share of them the one deployed configuration now
  solves. Union coverage is what the portfolio reached; transfer is what ships;
- with `control` (the frozen generation-0 contract), a third side on the heldout tasks -> the lift
  **against generation 0**, the number that says whether generations compound;
- with `tasks` (an explicit slice of TRAIN tasks; heldout keys are refused), the lift is measured on that
  slice instead of the heldout split: a validation slice for choosing a training recipe on train data
  only (bench/recipe_sweep.py), so heldout tasks never choose anything;
- with `best_of_n` (needs `transfer_runs`), a fourth side (job 3; job 2 without a control) -> the
  **cost-matched best-of-n**: the transfer runs spent A counted attempts on the T train tasks they
  tried and covered U of them with many configurations (union coverage); the parent's configuration
  gets the same budget on the same T tasks as best-of-n, n = max(1, round(A / T)) attempts per task
  (half rounds up): a sampling parent keeps its own sampling; a greedy parent with n > 1 runs at
  temperature 0.8, top_p 0.95 (n greedy attempts would repeat one answer), and with n = 1 runs greedy,
  as it ships (one sample would only be a worse single answer). B = the tasks with any pass.
  Train tasks only: heldout tasks are never part of it. So union coverage U/T is read beside what one
  configuration reaches with the same attempts (B/T) and beside what ships (transfer), never as what
  ships.
- with `cost_matched_n` (n), a last side on the heldout tasks -> the **cost-matched alternative on heldout**:
  the parent's configuration as best-of-n, n attempts a task (sampled as above when greedy and n > 1), its
  lift against the parent beside the candidate's. n = max(1, round(a x C / P)) half up, C and P the
  candidate's and parent's completion tokens per heldout task over a attempts in a measured evaluation
  (`cost_matched_from`, `rsi eval --cost-matched-from EVAL_ID`), so the parent spends the candidate's tokens.

Every side is served in one number format, the parent's `[evaluation] dtype`, resolved when the evaluation
is planned and stored with the plan (plan.py). The gate is the parent's `[evaluation.gate]` (measure.py:
`decide_adapter` is pure); `apply_decision` writes the outcome (apply.py). A killed evaluation resumes from
its stored plan and repeats no counted attempt (execute.py).

The modules, one job each (none imports rsi.training, lazily or not: tests/test_import_graph.py):

    records.py   EvalSpec and the typed records of eval.json (EvalOutcome and its summaries)
    plan.py      the sides and the tasks each attempts: a new plan, or the stored one to resume
    measure.py   pure: lift, retention, transfer, cost-matched best-of-n, price, the gate's decision
    execute.py   the plan as a planned run of the orchestrator; `evaluate`
    apply.py     the decision applied: promotion into the parent or the rejection; `load_eval_outcome`

What `rsi eval` prints is rsi/cli/render_eval.py's.
"""

from rsi.evaluation.apply import apply_decision, load_eval_outcome
from rsi.evaluation.execute import RETRY_BACKOFF_S, evaluate
from rsi.evaluation.measure import (
    _Solved,
    cost_matched_of,
    decide_adapter,
    heldout_cost_matched_of,
    paired_solved,
    price_problems,
    retention_of,
    side_costs,
    submitted_depth,
    transfer_of,
)
from rsi.evaluation.plan import (
    BEST_OF_N,
    BEST_OF_N_SAMPLING,
    CANDIDATE,
    CONTROL,
    COST_MATCHED,
    PARENT,
    SCHEDULER,
    SIDES,
    BestOfNPlan,
    HeldoutBestOfNPlan,
    _resumed_plan,
    best_of_n_overrides,
    best_of_n_per_task,
    cost_matched_basis,
    cost_matched_from,
    cost_matched_per_task,
    plan_best_of_n,
    plan_heldout_best_of_n,
)
from rsi.evaluation.records import (
    EVAL_FILE,
    AppliedDecision,
    ContractSide,
    CostMatchedSummary,
    EvalDecision,
    EvalOutcome,
    EvalSpec,
    GateSummary,
    HeldoutCostMatchedSummary,
    RetentionEstimate,
    RetentionSummary,
    SideCache,
    SideCost,
    TransferSummary,
    heldout_retention,
    price_text,
)

__all__ = [
    "BEST_OF_N", "BEST_OF_N_SAMPLING", "CANDIDATE", "CONTROL", "EVAL_FILE", "PARENT", "RETRY_BACKOFF_S", "SCHEDULER",
    "SIDES", "AppliedDecision", "BestOfNPlan", "ContractSide", "CostMatchedSummary", "EvalDecision", "EvalOutcome",
    "EvalSpec", "GateSummary", "RetentionEstimate", "RetentionSummary", "SideCache", "SideCost", "TransferSummary", "_Solved",
    "_resumed_plan", "apply_decision", "best_of_n_overrides", "best_of_n_per_task", "cost_matched_of",
    "decide_adapter", "evaluate", "heldout_retention", "load_eval_outcome", "paired_solved", "plan_best_of_n", "price_problems", "price_text",
    "retention_of", "side_costs", "submitted_depth", "transfer_of",
    # the heldout cost-matched side (issue 47, carriers apart)
    "COST_MATCHED", "HeldoutBestOfNPlan", "HeldoutCostMatchedSummary", "cost_matched_basis", "cost_matched_from",
    "cost_matched_per_task", "heldout_cost_matched_of", "plan_heldout_best_of_n",
]
