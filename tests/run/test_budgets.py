"""Budgets mean what the user said (issue 37 item 1): the budgets given are the whole budget, the
contract's attempts budget applies only when none is given, and the start line, `rsi status` and
`rsi run --help` name every active budget and where it came from."""

from __future__ import annotations

import json
import time

from rsi.display import RunEvent
from rsi.executors.noop import NoopAttempt
from rsi.run.orchestrator import run_portfolio
from rsi.run.spec import RunSpec, describe_budgets, resolve_budgets

# The mini portfolio, with a contract attempts budget far below what the time budget allows.
SMALL_CONTRACT_BUDGET = """schema_version = 1
[portfolio]
name = "tight"
base = "default"

[[variants]]
name = "baseline"
[variants.overrides]
"harness.sampling.temperature" = 0.7
"evaluation.attempts_budget" = 4

[[variants]]
name = "short"
[variants.overrides]
"harness.max_turns" = 3
"harness.sampling.temperature" = 0.7
"evaluation.attempts_budget" = 4
"""


class Recorder:
    def __init__(self) -> None:
        self.events: list[RunEvent] = []

    def update(self, progress, event=None) -> None:
        if event is not None:
            self.events.append(event)

    def close(self) -> None: ...


def test_budgets_given_replace_the_contracts() -> None:
    only_minutes = resolve_budgets(RunSpec(budget_minutes=25, budget_sources={"minutes": "--budget-minutes"}),
                                   120, "default r1")
    assert only_minutes["budget_attempts"] is None and only_minutes["budget_minutes"] == 25
    assert only_minutes["budget_sources"]["minutes"] == "--budget-minutes"
    assert "(120) dropped" in only_minutes["budget_sources"]["attempts"]
    nothing = resolve_budgets(RunSpec(), 120, "default r1")
    assert nothing["budget_attempts"] == 120 and nothing["budget_minutes"] is None
    assert nothing["budget_sources"] == {"attempts": "contract default r1 [evaluation] attempts_budget; "
                                                     "a --budget-* flag replaces it"}
    both = resolve_budgets(RunSpec(budget_attempts=7, budget_tokens=900), 120, "default r1")
    assert (both["budget_attempts"], both["budget_tokens"]) == (7, 900)
    assert both["budget_sources"] == {"attempts": "given", "tokens": "given"}


def test_a_run_with_only_minutes_spends_its_minutes(mini_ws) -> None:
    """--budget-minutes alone: the run ends on time, not at the contract's 4 attempts, and its start
    line names the time budget and the attempts budget it dropped."""
    (mini_ws.portfolios_dir / "tight.toml").write_text(SMALL_CONTRACT_BUDGET)
    display = Recorder()
    started = time.monotonic()
    outcome = run_portfolio(
        RunSpec(portfolio="tight", budget_minutes=0.04, limit_tasks=12, job_size=3, workers=2, report=False,
                budget_sources={"minutes": "--budget-minutes"}),
        mini_ws, display, attempt_fn=NoopAttempt(pass_rate=0.0, sleep_s=0.05),
    )
    assert "time budget" in outcome.stop_reason, outcome.stop_reason
    assert outcome.attempts > 4  # the contract's attempts budget did not apply
    assert time.monotonic() - started >= 0.04 * 60 * 0.9
    start = next(e.message for e in display.events if e.kind == "run_started")
    assert "budget 0.04 min (--budget-minutes)" in start, start
    assert "no attempts or tokens limit" in start and "attempts_budget (4) dropped" in start, start


def test_without_a_budget_the_contracts_attempts_apply(mini_ws) -> None:
    (mini_ws.portfolios_dir / "tight.toml").write_text(SMALL_CONTRACT_BUDGET)
    display = Recorder()
    outcome = run_portfolio(RunSpec(portfolio="tight", limit_tasks=12, job_size=2, report=False), mini_ws, display,
                            attempt_fn=NoopAttempt(pass_rate=0.0))
    assert outcome.attempts == 4 and "attempts budget spent" in outcome.stop_reason
    start = next(e.message for e in display.events if e.kind == "run_started")
    assert "budget 4 attempts (contract default r" in start and "no tokens or minutes limit" in start, start


def test_cli_names_each_budget_and_its_source(mini_ws, cli) -> None:
    (mini_ws.portfolios_dir / "tight.toml").write_text(SMALL_CONTRACT_BUDGET)
    helped = cli("run", "--help", cwd=mini_ws.root, env={"COLUMNS": "200"})
    assert "only when no budget is given" in " ".join(helped.stdout.split()), helped.stdout
    spec = mini_ws.root / "run.toml"
    spec.write_text("budget_tokens = 100000000\n")
    env = {"RSI_ATTEMPT_OVERRIDE": "noop:0.0:0.02"}
    result = cli("run", "-p", "tight", "--spec", str(spec), "--budget-attempts", "6", "--limit-tasks", "12",
                 "--job-size", "2", "--no-report", "--json", cwd=mini_ws.root, env=env)
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    expected = f"budget 6 attempts (--budget-attempts), 100000000 tokens ({spec}: budget_tokens); no minutes limit"
    assert outcome["attempts"] == 6 and outcome["budget"] == expected
    shown = cli("run", "-p", "tight", "--budget-attempts", "2", "--limit-tasks", "4", "--no-report",
                cwd=mini_ws.root, env=env)  # piped: plain lines on stderr, the start line first
    assert shown.returncode == 0, shown.stderr
    assert "budget 2 attempts (--budget-attempts); no tokens or minutes limit" in shown.stderr, shown.stderr
    status = cli("status", outcome["run_id"], cwd=mini_ws.root, env={"COLUMNS": "200"})
    assert "budget       6 attempts (--budget-attempts), 100000000 tokens" in status.stdout, status.stdout
    assert "attempts     6/6 (100% of budget)" in status.stdout


def test_describe_budgets_without_any() -> None:
    from rsi.run.spec import ResolvedRun

    r = ResolvedRun(portfolio="p", suite="s", split="train", budget_attempts=None, budget_tokens=None,
                    budget_minutes=None, attempts_per_task=1, job_size=4, seed=0, limit_tasks=None,
                    max_error_retries=2, retry_backoff_s=1.0, target_coverage=0.9)
    assert describe_budgets(r) == "budget none; no attempts or tokens or minutes limit; stops at 90% coverage"


class SlowsDownMidway:
    """A machine that slows down midway: attempts take `fast_s` until `after_s` past the first one, then `slow_s`."""

    def __init__(self, log: str, fast_s: float = 0.05, slow_s: float = 0.8, after_s: float = 0.8) -> None:
        self.first: float | None = None
        self.log, self.fast_s, self.slow_s, self.after_s = log, fast_s, slow_s, after_s

    def __call__(self, spec):
        now = time.monotonic()
        self.first = self.first if self.first is not None else now
        sleep_s = self.fast_s if now - self.first < self.after_s else self.slow_s
        return NoopAttempt(pass_rate=0.0, sleep_s=sleep_s, log_path=self.log)(spec)


def test_the_time_budget_ends_planned_work_too_and_resume_runs_the_rest(mini_ws, tmp_path) -> None:
    """Attempts planned before the deadline do not all run past it (a 25-minute run on a machine that slowed
    midway took 28 and more): at the deadline queued attempts are dropped and started ones get `stop_grace_s`,
    their keys stay planned, and a resume runs exactly those, none twice."""
    (mini_ws.portfolios_dir / "tight.toml").write_text(SMALL_CONTRACT_BUDGET)
    log = tmp_path / "executed.log"
    spec = RunSpec(portfolio="tight", budget_minutes=0.03, limit_tasks=12, job_size=8, workers=1, report=False,
                   stop_grace_s=0.2, budget_sources={"minutes": "--budget-minutes"})
    started = time.monotonic()
    outcome = run_portfolio(spec, mini_ws, Recorder(), attempt_fn=SlowsDownMidway(str(log)))
    wall = time.monotonic() - started
    # Jobs planned while attempts took 0.05 s are sized for that pace; at 0.8 s an attempt the queued rest of
    # one job alone would run seconds past the 1.8 s budget.
    assert outcome.status == "stopped" and "stopped by the time budget (0.03 min)" in outcome.stop_reason, outcome
    assert wall < 0.03 * 60 + 0.2 + 0.8 + 1.0, (wall, outcome.stop_reason)  # budget + grace + one attempt + slack
    left = int(outcome.stop_reason.split("; ")[1].split(" planned")[0])
    assert left >= 1
    resumed = run_portfolio(spec.model_copy(update={"resume": outcome.run_id}), mini_ws, Recorder(),
                            attempt_fn=NoopAttempt(pass_rate=0.0, log_path=str(log)))
    assert resumed.status == "done" and resumed.attempts == outcome.attempts + left, (resumed, outcome)
    executed = log.read_text().split()
    # A key cancelled mid-attempt at the deadline runs again on resume (its first try was never recorded);
    # every other key runs once.
    assert len({key for key in executed if executed.count(key) > 1}) <= 1, executed
