"""`rsi harvest`: distinct passing solutions per train task, as its own run that coverage never counts.

The planning core is tested on values; the command through the real CLI on real runs (scripted
model, real harness, sandbox, verifier and store). The script's code writes the reference solution
plus `_variant = <0..9>` drawn at random inside the sandbox, so repeated attempts yield a few
distinct (by normalized code) passing solutions; two train tasks get a wrong answer (never covered).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest

from rsi.errors import UserInputError
from rsi.harvest import SourceAttempt, TaskNeed, check_train_only, choose_job, harvest_targets
from tests.conftest import GIT_ENV
from tests.run.mini import MINI_PORTFOLIO as PORTFOLIO


def test_targets_use_the_passing_configurations_or_the_best_ones() -> None:
    source = [SourceAttempt("a", "t1", True, "x"), SourceAttempt("b", "t1", True, "y"),
              SourceAttempt("c", "t2", True, "z"), SourceAttempt("a", "t3", False), SourceAttempt("b", "t3", False),
              SourceAttempt("c", "t3", False), SourceAttempt("c", "t4", False)]
    needs = harvest_targets(source, ["t1", "t2", "t3"], ["a", "b", "c"], per_task=2)
    assert set(needs) == {"t2", "t3"}  # t1 already has 2 distinct solutions; t4 is not a train key given
    # Covered: its passer first, then the other (all sampling here) configurations by pass rate.
    assert needs["t2"].configs == ("c", "a", "b") and needs["t2"].codes == {"z"}
    # Uncovered: the two best pass rates (a 1/2, b 1/2; c 1/3 is left out).
    assert needs["t3"].configs == ("a", "b") and needs["t3"].codes == set()


def test_a_task_only_greedy_configurations_solved_is_harvested_by_the_sampling_ones() -> None:
    # g (greedy) solved t1; s1 and s2 sample. g cannot give t1 a second solution, so t1 goes on to the
    # sampling configurations (best pass rate first), never to another greedy one (h).
    source = [SourceAttempt("g", "t1", True, "x"), SourceAttempt("s1", "t2", True, "y"), SourceAttempt("s2", "t2", False),
              SourceAttempt("h", "t3", False)]
    needs = harvest_targets(source, ["t1", "t2", "t3"], ["g", "h", "s1", "s2"], per_task=3, greedy={"g", "h"})
    assert needs["t1"].configs == ("g", "s1", "s2")
    assert needs["t2"].configs == ("s1", "s2")
    job = choose_job(needs, 3, Counter({("g", "t1"): 1}), greedy={"g", "h"}, allowed={"t1", "t2", "t3"}, job_size=8,
                     budget_attempts=None)
    assert job is not None and job.config_hash == "s1" and set(job.task_keys) >= {"t1", "t2"}


def test_covered_tasks_are_harvested_before_uncovered_ones() -> None:
    needs = {"u1": TaskNeed("u1", ("a",)), "u2": TaskNeed("u2", ("a",)), "c1": TaskNeed("c1", ("a",), {"x", "y"}),
             "c2": TaskNeed("c2", ("a",), {"z"})}
    job = choose_job(needs, 4, Counter(), set(), set(needs), job_size=3, budget_attempts=None)
    assert job is not None and job.task_keys == ("c2", "c1", "u1")


def test_choose_job_rotates_skips_greedy_repeats_and_fits_the_budget() -> None:
    needs = {"t1": TaskNeed("t1", ("a", "b"), {"x"}), "t2": TaskNeed("t2", ("a",)), "t3": TaskNeed("t3", ("g",)),
             "t4": TaskNeed("t4", ("a",), {"p", "q"})}
    tries = Counter({("a", "t1"): 1, ("g", "t3"): 1})
    job = choose_job(needs, 2, tries, greedy={"g"}, allowed={"t1", "t2", "t3", "t4"}, job_size=8, budget_attempts=5)
    # t1 goes to b (fewer tries), t2 to a, t3's only configuration is greedy and tried, t4 is full.
    assert job is not None and job.attempts_per_task == 1
    assert (job.config_hash, job.task_keys) in {("a", ("t2",)), ("b", ("t1",))}
    assert choose_job(needs, 2, tries, {"g"}, allowed={"t3", "t4"}, job_size=8, budget_attempts=5) is None
    wide = {f"t{i}": TaskNeed(f"t{i}", ("a",)) for i in range(10)}
    capped = choose_job(wide, 2, Counter(), set(), set(wide), job_size=8, budget_attempts=3)
    assert capped is not None and len(capped.task_keys) == 3


def test_heldout_targets_are_refused() -> None:
    check_train_only(["s/a"], {"s/a": "train"})
    with pytest.raises(UserInputError, match="refusing to harvest 1 non-train task"):
        check_train_only(["s/a", "s/h"], {"s/a": "train", "s/h": "heldout"})


def _rsi(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("rsi") or str(Path(sys.executable).parent / "rsi")
    return subprocess.run([exe, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _write_script(ws, path: Path) -> tuple[list, list]:
    from rsi.tasks.load import load_suite

    tasks = load_suite(ws, "pyfuncs")
    train = sorted((t for t in tasks if t.spec.split == "train"), key=lambda t: t.key)[:4]
    heldout = sorted((t for t in tasks if t.spec.split == "heldout"), key=lambda t: t.key)[:2]
    replies = {}
    for i, task in enumerate(train + heldout):
        good = i % 2 == 0 or task in heldout
        source = (task.solution_dir / task.spec.solution_file).read_text() if good else "x = 1\n"
        code = (f"import random\nopen({task.spec.solution_file!r}, 'w').write({source!r} + "
                f"'\\n_variant = %d\\n' % random.randrange(10))\nsubmit()")
        replies[task.id] = [f"```python\n{code}\n```"]
    path.write_text(json.dumps({"tasks": replies}))
    return train, heldout


def _global_reads(ws) -> dict:
    from rsi.store import open_store

    store = open_store(ws.db_url)
    try:
        return {
            "covered": sorted(store.covered_tasks("pyfuncs", None)),
            "coverage": sorted(store.coverage("pyfuncs", "train").covered),
            "history": store.attempt_history("pyfuncs"),
            "task_stats": store.task_stats("pyfuncs"),
            "config_stats": store.configuration_stats("pyfuncs"),
            "tag_stats": store.tag_stats("pyfuncs"),
        }
    finally:
        store.close()


@pytest.fixture(scope="module")
def harvested():
    from rsi.workspace import init_workspace

    root = Path(tempfile.mkdtemp(prefix="rsi-harvest-test-"))
    root.chmod(0o711)  # the sandbox user must traverse it
    with pytest.MonkeyPatch.context() as patch:
        for key, value in GIT_ENV.items():
            patch.setenv(key, value)
        ws = init_workspace(root / "ws")
    (ws.portfolios_dir / "mini.toml").write_text(PORTFOLIO)
    train, heldout = _write_script(ws, root / "script.json")
    env = {**os.environ, **GIT_ENV, "RSI_MODEL_OVERRIDE": f"scripted:{root / 'script.json'}"}
    for var in ("RSI_DB", "RSI_ATTEMPT_OVERRIDE", "RSI_SANDBOX_MODE"):
        env.pop(var, None)
    common = ("-p", "mini", "--no-report", "--json", "--seed", "3")
    source = _rsi("run", *common, "--limit-tasks", "4", "--budget-attempts", "4", "--job-size", "4", cwd=ws.root, env=env)
    held = _rsi("run", *common, "--split", "heldout", "--limit-tasks", "2", "--budget-attempts", "2", cwd=ws.root, env=env)
    assert source.returncode == 0 and held.returncode == 0, source.stderr + held.stderr
    runs = [json.loads(source.stdout)["run_id"], json.loads(held.stdout)["run_id"]]
    before = _global_reads(ws)
    done = _rsi("harvest", *runs, "--per-task", "2", "--budget-attempts", "20", "--job-size", "4", "--json",
                cwd=ws.root, env=env)
    assert done.returncode == 0, done.stderr
    yield {"ws": ws, "env": env, "runs": runs, "train": train, "heldout": heldout, "before": before,
           "outcome": json.loads(done.stdout), "root": root}
    shutil.rmtree(root, ignore_errors=True)


def test_harvest_is_its_own_run_of_train_tasks_only(harvested) -> None:
    from rsi.store import open_store

    ws, outcome = harvested["ws"], harvested["outcome"]
    store = open_store(ws.db_url)
    try:
        run = store.get_run(outcome["run_id"])
        jobs = store.list_jobs(run.id)
        attempts = store.list_attempts(run.id)
    finally:
        store.close()
    assert run.scheduler == "harvest" and run.args["harvest"]["source_runs"] == harvested["runs"]
    assert jobs and all(job.details["scheduler"] == "harvest" and job.details["reason"].startswith("harvest:")
                        for job in jobs)
    assert 0 < len(attempts) <= 20 and outcome["attempts"] == len([a for a in attempts if a.counted])
    heldout_keys = {t.key for t in harvested["heldout"]}
    assert {a.task_key for a in attempts} <= {t.key for t in harvested["train"]}
    assert not {a.task_key for a in attempts} & heldout_keys and not set(run.args["tasks"]) & heldout_keys


def test_harvest_never_counts_as_coverage_or_scheduler_history(harvested) -> None:
    from rsi.store import open_store

    assert _global_reads(harvested["ws"]) == harvested["before"]
    store = open_store(harvested["ws"].db_url)
    try:  # asked for by id, the harvest is read like any run
        assert store.covered_tasks("pyfuncs", "train", [harvested["outcome"]["run_id"]])
        # ... and it has counted attempts, so the unchanged reads above exclude something real.
        assert len(store.attempt_history("pyfuncs", run_ids=[harvested["outcome"]["run_id"]])) >= 4
    finally:
        store.close()


def test_covered_tasks_reach_distinct_solutions_and_export_pools_them(harvested) -> None:
    ws, env = harvested["ws"], harvested["env"]
    covered = {t.key for i, t in enumerate(harvested["train"]) if i % 2 == 0}
    out = harvested["root"] / "sft"
    exported = _rsi("trajectories", "export", harvested["runs"][0], harvested["outcome"]["run_id"], "--out", str(out),
                    "--max-per-task", "3", "--json", cwd=ws.root, env=env)
    assert exported.returncode == 0, exported.stderr
    per_task = json.loads(exported.stdout)["counts"]["per_task"]
    # Each covered task stopped being sampled once it had 2 distinct solutions: 2, never 3.
    assert {k: per_task.get(k) for k in covered} == dict.fromkeys(covered, 2)
    assert set(per_task) == covered  # the wrong-answer tasks stay uncovered; heldout never exported


def test_deployed_rendering_frames_like_the_real_harness(harvested) -> None:
    """The finders here frame tasks as the default contract does, so the deployed rendering's system
    and user turns must equal what the real harness showed the model (recorded in the trajectories)."""
    ws, env, root = harvested["ws"], harvested["env"], harvested["root"]
    found = _rsi("trajectories", "export", harvested["runs"][0], "--out", str(root / "found"), cwd=ws.root, env=env)
    deployed = _rsi("trajectories", "export", harvested["runs"][0], "--out", str(root / "deployed"),
                    "--render", "deployed", cwd=ws.root, env=env)
    assert found.returncode == 0 and deployed.returncode == 0, found.stderr + deployed.stderr
    as_found = [json.loads(line)["messages"] for line in (root / "found" / "train.jsonl").read_text().splitlines()]
    as_deployed = [json.loads(line)["messages"] for line in (root / "deployed" / "train.jsonl").read_text().splitlines()]
    assert len(as_found) == len(as_deployed) == 2
    for real, rendered in zip(as_found, as_deployed, strict=True):
        assert rendered[:2] == real[:2] and [m["role"] for m in rendered[:2]] == ["system", "user"]
        assert rendered[2]["role"] == "assistant" and rendered[2]["content"].endswith("submit()\n```")


def test_a_harvest_is_resumed_by_rsi_harvest_not_rsi_run(harvested) -> None:
    harvest_id = harvested["outcome"]["run_id"]
    done = _rsi("run", "--resume", harvest_id, cwd=harvested["ws"].root, env=harvested["env"])
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: run {harvest_id} is a harvest") and f"rsi harvest --resume {harvest_id}" in done.stderr
    clash = _rsi("harvest", "--resume", harvest_id, "--per-task", "3", cwd=harvested["ws"].root, env=harvested["env"])
    assert clash.returncode == 2 and "drop --per-task" in clash.stderr and "Traceback" not in clash.stderr
    not_harvest = _rsi("harvest", "--resume", harvested["runs"][0], cwd=harvested["ws"].root, env=harvested["env"])
    assert not_harvest.returncode == 2 and "is not a harvest" in not_harvest.stderr


def _attempt_files(ws, run_id: str) -> dict[str, tuple[int, int, bytes]]:
    """Each counted attempt's trajectory file: (inode, mtime ns, bytes); a re-run attempt would replace it."""
    from rsi.store import open_store

    store = open_store(ws.db_url)
    try:
        rows = [a for a in store.list_attempts(run_id) if a.counted]
    finally:
        store.close()
    files = {}
    for row in rows:
        path = Path(row.trajectory_path) if Path(row.trajectory_path).is_absolute() else ws.runs_dir / row.trajectory_path
        stat = path.stat()
        files[row.idem_key] = (stat.st_ino, stat.st_mtime_ns, path.read_bytes())
    return files


PER_TASK, BUDGET = 3, 12


def test_a_sigkilled_harvest_resumes_without_losing_or_repeating_work(harvested) -> None:
    """SIGKILL a real harvest after its 5th recorded attempt (RSI_TEST_CRASH_AT), then `rsi harvest --resume`:
    every attempt recorded before the kill stays as it was (never run again), the budget counts them (the
    two sessions together spend exactly BUDGET), and no task is planned again once the solutions found so
    far (source runs, then this harvest's earlier jobs, both sessions) reach PER_TASK distinct ones."""
    from rsi.harvest import code_key_of
    from rsi.store import open_store

    ws, env = harvested["ws"], harvested["env"]
    args = ("--per-task", str(PER_TASK), "--budget-attempts", str(BUDGET), "--job-size", "2", "--workers", "2", "--json")
    killed = _rsi("harvest", *harvested["runs"], *args, cwd=ws.root, env={**env, "RSI_TEST_CRASH_AT": "attempt_recorded:5"})
    assert killed.returncode == -9, killed.stderr[-2000:]
    store = open_store(ws.db_url)
    try:
        [harvest_id] = [r.id for r in store.list_runs("pyfuncs") if r.scheduler == "harvest"
                        and r.id != harvested["outcome"]["run_id"]]
    finally:
        store.close()
    before = _attempt_files(ws, harvest_id)
    assert len(before) >= 5

    resumed = _rsi("harvest", "--resume", harvest_id, "--json", cwd=ws.root, env=env)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    outcome = json.loads(resumed.stdout)
    after = _attempt_files(ws, harvest_id)
    assert {k: after[k] for k in before} == before, "an attempt recorded before the kill ran again"
    assert outcome["run_id"] == harvest_id and outcome["attempts"] == len(after) == BUDGET, outcome

    store = open_store(ws.db_url)
    try:
        run, jobs, rows = store.get_run(harvest_id), store.list_jobs(harvest_id), store.list_attempts(harvest_id)
        source = [a for r in harvested["runs"] for a in store.list_attempts(r) if a.passed]
    finally:
        store.close()
    assert run.status == "done" and all(job.status == "done" for job in jobs)
    planned = Counter(f"{harvest_id}|{j.job_index}|{t}|0" for j in jobs for t in j.planned_tasks)
    assert Counter(a.idem_key for a in rows) == planned, "each planned attempt has exactly one row"
    found: dict[str, set[str]] = {}
    for a in source:
        found.setdefault(a.task_key, set()).add(code_key_of(a.trajectory_path, ws.runs_dir))
    for job in sorted(jobs, key=lambda j: j.job_index):
        for key in job.planned_tasks:
            assert len(found.get(key, set())) < PER_TASK, f"job {job.job_index} asked {key} again after {PER_TASK}"
        for a in rows:
            if a.job_index == job.job_index and a.passed:
                found.setdefault(a.task_key, set()).add(code_key_of(a.trajectory_path, ws.runs_dir))
    assert any(len(codes) == PER_TASK for codes in found.values())  # the rule above was reached, so it was tested
