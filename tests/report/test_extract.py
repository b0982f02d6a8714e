"""The report's pure parts: rows -> RunReport (matrix cells, portfolio series, job facts, splits) and
trajectories -> packed transcript pages."""

from __future__ import annotations

import base64
import gzip
import json
from datetime import UTC, datetime
from types import SimpleNamespace as NS

from rsi.harness.trajectory import ConfigurationRef, FinalOutcome, ModelRef, TaskRef, Trajectory
from rsi.report.extract import build_run_report
from rsi.report.transcripts import embed_json, pack_pages, transcript_from
from rsi.sandbox.base import Isolation
from rsi.store.rows import JobRow

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _run(tasks):
    return NS(id="r", status="done", portfolio="p", suite="s", split="train", created=NOW, finished=NOW, seed=0,
              budget={"attempts": 9}, args={"tasks": tasks}, scheduler="thompson")


def _job(index, config, planned, reason):
    return JobRow(run_id="r", job_index=index, configuration_hash=config, planned_tasks=planned, attempts_per_task=1,
                  status="done", details={"reason": reason, "scheduler": "thompson"})


def _attempt(job, config, task, verdict, index=0):
    return NS(job_index=job, configuration_hash=config, task_key=task, attempt_index=index, verdict=verdict,
              counted=verdict != "error", passed=verdict == "passed", reason=f"{verdict} because", error_class="",
              tokens=10, wall_s=1.0, started=NOW, error_retries=0, trajectory_path="")


CONFIGS = [NS(config_hash="h1" * 8, name="one", contract_ref="default@r1"),
           NS(config_hash="h2" * 8, name="two", contract_ref="default@r1")]
H1, H2 = CONFIGS[0].config_hash, CONFIGS[1].config_hash
TASKS = [NS(key="s/a", split="train", tags=("str",)), NS(key="s/b", split="train", tags=("math",)),
         NS(key="s/c", split="train", tags=("math",)), NS(key="s/x", split="heldout", tags=())]


def _report(reasons=("thompson: 2 of 3 open tasks rate this configuration best",
                     "thompson: 2 of 2 open tasks rate this configuration best",
                     "thompson: 1 of 1 open tasks rate this configuration best")):
    jobs = [_job(0, H1, ["s/a", "s/b"], reasons[0]), _job(1, H2, ["s/b", "s/c"], reasons[1]),
            _job(2, H1, ["s/c", "s/x"], reasons[2])]
    attempts = [_attempt(0, H1, "s/a", "passed"), _attempt(0, H1, "s/b", "failed"),
                _attempt(1, H2, "s/b", "passed"), _attempt(1, H2, "s/c", "timeout"),
                _attempt(2, H1, "s/c", "error"), _attempt(2, H1, "s/c", "failed", index=1),
                _attempt(2, H1, "s/x", "passed")]
    return build_run_report(_run(["s/a", "s/b", "s/c"]), jobs, attempts, CONFIGS, TASKS)


def test_matrix_cells_count_each_verdict_per_configuration_and_task() -> None:
    r = _report()
    assert [t.key for t in r.tasks] == ["s/a", "s/b", "s/c", "s/x"]  # targets, then tasks attempted off-target
    assert [t.target for t in r.tasks] == [True, True, True, False]
    cells = {(r.configs[c.config].name, r.tasks[c.task].key): c.counts for c in r.cells}
    assert cells == {("one", "s/a"): {"passed": 1}, ("one", "s/b"): {"failed": 1}, ("two", "s/b"): {"passed": 1},
                     ("two", "s/c"): {"timeout": 1}, ("one", "s/c"): {"error": 1, "failed": 1},
                     ("one", "s/x"): {"passed": 1}}
    # every attempt is reachable from exactly one cell, in chronological order
    assert sorted(n for c in r.cells for n in c.attempts) == list(range(7))
    assert r.tags == ["math", "str"]


def test_portfolio_series_is_union_against_each_configuration() -> None:
    p = _report().portfolio
    assert p.jobs == [0, 1, 2] and p.total == 3
    assert p.union == [1, 2, 2]  # s/x is off-target: its pass does not move coverage
    assert p.per_config == {"one": [1, 1, 1], "two": [0, 1, 1]}
    assert (p.best, p.best_covered) == ("one", 1)  # a tie goes to the first configuration


def test_job_facts_say_what_was_open_and_lift_a_repeated_reason_out() -> None:
    r = _report()
    facts = [(j.job_index, j.open_before, j.planned_open, j.attempts, j.passes, j.errors, j.new_covered, j.covered_after)
             for j in r.jobs]
    assert facts == [(0, 3, 2, 2, 1, 0, 1, 1), (1, 2, 2, 2, 1, 0, 1, 2), (2, 1, 1, 2, 1, 1, 0, 2)]
    assert r.common_reason == "thompson: N of N open tasks rate this configuration best"
    assert all(j.reason == "" for j in r.jobs)
    assert r.common_details == {"scheduler": "thompson"} and all(j.details == {} for j in r.jobs)

    different = _report(("round-robin", "probe: not tried yet", "round-robin"))
    assert different.common_reason == "" and [j.reason for j in different.jobs] == [
        "round-robin", "probe: not tried yet", "round-robin"]


def test_splits_and_configuration_columns() -> None:
    r = _report()
    splits = {s.split: (s.tasks, s.covered, s.attempts, s.passes, s.solved_by_config) for s in r.splits}
    assert splits == {"train": (3, 2, 5, 2, {"one": 1, "two": 1}), "heldout": (1, 1, 1, 1, {"one": 1, "two": 0})}
    one = r.configs[0]
    assert (one.name, one.attempts, one.passes, one.errors, one.tasks_solved, one.unique_solves) == ("one", 4, 2, 1, 1, 1)
    assert r.summary.covered == 2 and r.summary.errors == 1


def _trajectory(steps: int = 2) -> Trajectory:
    t = Trajectory(attempt_id="a-1", task=TaskRef(key="s/a", suite="s", id="a", content_hash="c", solution_file="solution.py"),
                   configuration=ConfigurationRef(name="one", contract_ref="default@r1", config_hash="h", substrate="repl",
                                                  prompt_style="plain"),
                   model=ModelRef(name="scripted"), sandbox=Isolation(backend="local-bare", network_isolated=False,
                                                                      filesystem_readonly=False, pid_namespace=False,
                                                                      unprivileged_user=True))
    t.add_step("system", message="You are careful. " * 20)
    for turn in range(1, steps + 1):
        t.add_step("agent", turn=turn, message=f"reply {turn} </script>", code="print(1)", observation="1\n")
    t.outcome = FinalOutcome(verdict="failed", reason="2/6 cases passed", ended_by="submit", final_code="x = 1\n")
    return t


def test_transcripts_read_tolerantly_and_pack_into_pages() -> None:
    raw = json.loads(_trajectory().model_dump_json())
    raw["a_field_from_a_later_schema"] = {"ignored": True}
    t = transcript_from(raw, n=5)
    assert (t.n, t.verdict, t.reason, t.final_code, t.sandbox["backend"]) == (5, "failed", "2/6 cases passed", "x = 1\n",
                                                                              "local-bare")
    assert [s.source for s in t.steps] == ["system", "agent", "agent"] and t.steps[1].code == "print(1)"

    many = [transcript_from(raw, n) for n in range(5)]
    plain = pack_pages(many, page_size=2)
    assert len(plain.pages) == 3 and plain.page_of == {0: 0, 1: 0, 2: 1, 3: 1, 4: 2} and not plain.compressed
    assert plain.strings == ["You are careful. " * 20]  # the repeated system prompt is stored once
    page = json.loads(plain.pages[0])
    assert page["0"]["steps"][0]["message"] == 0 and "</script>" not in plain.pages[0]

    packed = pack_pages(many, page_size=2, compress_over_bytes=0)
    assert packed.compressed and json.loads(gzip.decompress(base64.b64decode(packed.pages[0]))) == page


def test_embedded_json_cannot_close_its_script_or_read_as_a_link() -> None:
    text = embed_json({"a": "</script><script>alert(1)</script>", "u": "see https://example.org & more"})
    assert "</" not in text and "://" not in text and "&" not in text
    assert json.loads(text) == {"a": "</script><script>alert(1)</script>", "u": "see https://example.org & more"}


def test_unreadable_trajectory_files_become_transcripts_that_say_why(tmp_path) -> None:
    from rsi.report.records import AttemptLine
    from rsi.report.transcripts import read_transcripts

    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "good.json").write_text(_trajectory(1).model_dump_json())
    lines = [AttemptLine(n=0, job=0, config=0, task=0, verdict="failed", trajectory_path=str(tmp_path / "gone.json")),
             AttemptLine(n=1, job=0, config=0, task=0, verdict="failed", trajectory_path="bad.json"),
             AttemptLine(n=2, job=0, config=0, task=0, verdict="passed", trajectory_path="good.json"),
             AttemptLine(n=3, job=0, config=0, task=0, verdict="error")]  # no file: nothing to read
    got = {t.n: t for t in read_transcripts(lines, root=tmp_path)}
    assert set(got) == {0, 1, 2}
    assert "gone.json" in got[0].problem and "FileNotFoundError" in got[0].problem
    assert "bad.json" in got[1].problem and "JSONDecodeError" in got[1].problem
    assert got[2].problem == "" and got[2].verdict == "failed" and len(got[2].steps) == 2


def test_a_run_without_attempts_still_renders() -> None:
    from rsi.report.page import render_run_page
    from rsi.report.transcripts import pack_pages

    report = build_run_report(_run(["s/a"]), [], [], CONFIGS, TASKS)
    assert report.portfolio.jobs == [] and report.cells == [] and report.summary.covered == 0
    html = render_run_page(report, pack_pages([]), png=None)
    assert "no jobs yet" in html and 'id="rsi-index"' in html


def test_the_viewer_shows_each_candidates_public_checks() -> None:
    from rsi.harness.trajectory import CheckRecord, ExampleCheck

    t = _trajectory(steps=2)
    t.steps[1].check = CheckRecord(candidate=1, passed=0, total=1, examples=[
        ExampleCheck(call="f(2)", expected="4", passed=False, got="5")])
    t.steps[2].check = CheckRecord(candidate=2, passed=1, total=1, selected=True, examples=[
        ExampleCheck(call="f(2)", expected="4", passed=True, got="4")])
    steps = transcript_from(json.loads(t.model_dump_json()), n=0).steps
    assert steps[1].check == "0/1 passed\nFAIL f(2) returned 5, expected 4"
    assert steps[2].check == "submitted · 1/1 passed\nok   f(2) returned 4, expected 4"
    assert steps[0].check == ""
