"""The demo's closing comparison: union coverage against each configuration alone, counted honestly."""

from __future__ import annotations

from rsi.demo import portfolio_effect


def config(name: str, solved: int, unique: int, passes: int, attempts: int) -> dict:
    return {"name": name, "tasks_solved": solved, "unique_solves": unique, "passes": passes,
            "attempts": attempts, "errors": 0, "pass_rate": passes / attempts if attempts else 0.0}


def task(key: str, tried: list[str], solved: list[str]) -> dict:
    return {"task_key": key, "tried_by": tried, "solved_by": solved}


def test_the_effect_counts_only_tasks_the_best_configuration_tried_and_failed() -> None:
    coverage = {"covered": 4, "tasks": 6,
                "configurations": [config("greedy", 2, 2, 2, 4), config("sampled", 2, 2, 2, 5),
                                   config("never-tried", 0, 0, 0, 0)],
                "tasks_detail": [task("s/a", ["greedy"], ["greedy"]), task("s/b", ["greedy"], ["greedy"]),
                                 task("s/c", ["greedy", "sampled"], ["sampled"]),  # rescued
                                 task("s/d", ["greedy", "sampled"], []),
                                 task("s/e", ["sampled"], ["sampled"]),  # never tried by greedy
                                 task("s/f", [], [])]}
    lines = portfolio_effect(coverage)
    assert lines[0] == "portfolio effect: union coverage 4/6 tasks"
    assert lines[1].lstrip().startswith("greedy") and "alone   2 of   4 tried" in lines[1] and "50.0%" in lines[1]
    assert not any("never-tried" in line for line in lines)  # only configurations the run tried
    assert lines[-2] == ("  best single configuration: greedy. Of the 2 task(s) it tried and failed, other "
                         "configurations solved 1 (s/c);")
    assert lines[-1] == "  1 more covered task(s) were solved by others before greedy was tried on them."


def test_no_effect_is_said_plainly() -> None:
    lines = portfolio_effect({"covered": 1, "tasks": 2, "configurations": [config("a", 1, 1, 1, 2)],
                              "tasks_detail": [task("s/a", ["a"], ["a"]), task("s/b", ["a"], [])]})
    assert lines[-2].endswith("Of the 1 task(s) it tried and failed, other configurations solved 0;")
