"""The demo's closing comparison: union coverage against each configuration alone."""

from __future__ import annotations

from rsi.demo import portfolio_effect


def config(name: str, solved: int, unique: int, passes: int, attempts: int) -> dict:
    return {"name": name, "tasks_solved": solved, "unique_solves": unique, "passes": passes,
            "attempts": attempts, "errors": 0, "pass_rate": passes / attempts if attempts else 0.0}


def test_the_comparison_names_the_best_single_configuration_and_what_the_union_added() -> None:
    coverage = {"covered": 9, "tasks": 24, "configurations": [
        config("text-greedy", 6, 4, 6, 24), config("text-example", 3, 1, 3, 10),
        config("text-sampled-samples-4", 2, 2, 2, 8), config("never-tried", 0, 0, 0, 0)]}
    lines = portfolio_effect(coverage)
    assert lines[0] == "portfolio effect: union coverage 9/24 tasks"
    assert lines[1].lstrip().startswith("text-greedy") and "alone   6/24" in lines[1] and "25.0%" in lines[1]
    assert not any("never-tried" in line for line in lines)  # only configurations the run tried
    assert lines[-1] == ("  union 9 vs best single 6: the portfolio reached 3 task(s) beyond its best "
                         "single configuration (text-greedy)")


def test_no_effect_is_said_plainly() -> None:
    lines = portfolio_effect({"covered": 2, "tasks": 8, "configurations": [config("a", 2, 2, 2, 8)]})
    assert lines[-1].endswith("no task beyond its best single configuration (a) this time")
