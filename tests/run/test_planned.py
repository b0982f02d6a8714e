"""The pieces every run shares: the crash-point hook, the attempt-folder layout, the planned-job scheduler."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from rsi.crashpoint import ENV_CRASH, parse_crash_at
from rsi.run.layout import RunLayout, staging_dir
from rsi.run.planned import PlannedJob, PlannedScheduler
from rsi.scheduler import Budget, ScheduleRequest, TaskOption


def test_crash_at_reads_a_trailing_count_and_keeps_colons_in_the_point() -> None:
    assert parse_crash_at("attempt_recorded:6") == ("attempt_recorded", 6)
    assert parse_crash_at("run_created") == ("run_created", 1)
    assert parse_crash_at("job_planned:") == ("job_planned", 1)
    assert parse_crash_at("gen:train:step1") == ("gen:train:step1", 1)  # the generation's points
    assert parse_crash_at("gen:evaluate:done:2") == ("gen:evaluate:done", 2)
    assert parse_crash_at("") is None and parse_crash_at("  ") is None


def test_crash_point_kills_the_process_the_nth_time_it_is_passed(tmp_path: Path) -> None:
    code = ("from rsi.crashpoint import crash_point\n"
            "for i in range(3):\n"
            "    crash_point('other'); crash_point('here'); print('passed', i, flush=True)\n")
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, ENV_CRASH: "here:2"},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == -signal.SIGKILL and done.stdout.split("\n")[:-1] == ["passed 0"]
    unset = subprocess.run([sys.executable, "-c", code], env={**os.environ, ENV_CRASH: ""},
                           capture_output=True, text=True, timeout=60)
    assert unset.returncode == 0 and unset.stdout.count("passed") == 3


def test_one_layout_names_every_attempt_folder_and_finds_half_written_ones(tmp_path: Path) -> None:
    layout = RunLayout(tmp_path / "r1")
    folder = layout.attempt_dir(3, "pyfuncs/add", 1)
    assert folder == tmp_path / "r1" / "attempts" / "j0003" / "pyfuncs__add" / "a1"
    staging = staging_dir(folder, "42-7")
    staging.mkdir(parents=True)
    layout.attempt_dir(3, "pyfuncs/mul", 0).mkdir(parents=True)  # a finished one: not stale
    assert staging.parent == folder.parent and layout.stale_staging(3) == [staging]
    assert layout.stale_staging(4) == []


def _request(job_index: int, tasks: list[str]) -> ScheduleRequest:
    return ScheduleRequest(configs=[], tasks=[TaskOption(t, "heldout", ()) for t in tasks], history=[],
                           budget=Budget(attempts=100), seed=0, job_index=job_index, job_size=8, attempts_per_task=1)


def test_planned_scheduler_proposes_job_i_as_the_runs_job_i_then_nothing() -> None:
    class Config:  # the scheduler reads only the configuration's hash
        def __init__(self, h: str) -> None:
            self.config_hash = h

    jobs = [PlannedJob("parent", Config("p"), ("s/a", "s/b"), 2),  # type: ignore[arg-type]
            PlannedJob("candidate", Config("c"), ("s/a", "s/b", "s/c"), 2)]  # type: ignore[arg-type]
    scheduler = PlannedScheduler("eval-paired", jobs)
    first = scheduler.propose(_request(0, ["s/a", "s/b", "s/c"]))
    assert first is not None and (first.config_hash, first.task_keys, first.attempts_per_task) == ("p", ("s/a", "s/b"), 2)
    # the candidate's tasks are planned even while the parent's are in flight (left out of the request)
    second = scheduler.propose(_request(1, ["s/c"]))
    assert second is not None and second.config_hash == "c" and second.task_keys == ("s/a", "s/b", "s/c")
    assert second.reason == "planned: candidate" and jobs[1].attempts == 6
    assert scheduler.propose(_request(2, ["s/a"])) is None


def test_a_stopped_run_names_the_command_that_resumes_its_kind() -> None:
    from rsi.run.kinds import EVAL_SCHEDULER, HARVEST_SCHEDULER, ROLLOUT_SCHEDULER
    from rsi.run.setup import resume_command

    assert resume_command("thompson", "R1") == "rsi run --resume R1"
    assert resume_command(HARVEST_SCHEDULER, "R2") == "rsi harvest --resume R2"
    assert resume_command(EVAL_SCHEDULER, "R3") == "rsi eval --resume R3"
    assert "rsi train --method grpo" in resume_command(ROLLOUT_SCHEDULER, "R4")
