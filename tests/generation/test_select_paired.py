"""`Generation.select_paired` (the promote step's paired selection): from a real stored search run, the parent's
own configuration and the `select_top` configurations the run's train evidence ranks first (never a weaker one)
each attempt the SAME seeded draw of `select_tasks` train tasks, through the real orchestrator, sandbox and
verifier (scripted model replies); the run id is recorded, and a second call resumes it instead of starting
another."""

from __future__ import annotations

import json

from rsi.generation.outputs import PromoteOutput
from rsi.run.paired_selection import SELECTION_SCHEDULER, draw_train_tasks
from rsi.store import open_store
from tests.experience.conftest import builder, generation_at, planned  # noqa: F401 - the fixtures
from tests.harness.conftest import open_tmp, pyfuncs, sandbox  # noqa: F401 - what builder's conftest needs


def _script(path, tasks) -> None:
    """Every drawn task answered with its reference solution, one reply per attempt."""
    replies = {}
    for task in tasks:
        source = (task.solution_dir / task.spec.solution_file).read_text()
        replies[task.id] = [f"```python\nopen({task.spec.solution_file!r}, 'w').write({source!r})\nsubmit()\n```"]
    path.write_text(json.dumps({"tasks": replies, "delay_s": 0.0}))


def test_select_paired_runs_the_parent_and_the_ranking_head_on_the_same_drawn_train_tasks(
        builder, planned, tmp_path, monkeypatch) -> None:  # noqa: F811 - the imported fixtures
    from rsi.tasks.load import load_suite

    parent = builder.parent_config()
    strong = builder.config("strong", **{"harness.sampling.temperature": 0.7})
    middle = builder.config("middle", **{"harness.sampling.temperature": 0.5})
    weak = builder.config("weak", **{"harness.sampling.temperature": 0.3})
    train = builder.train_ids()
    plan = []  # solved on the run's train tasks: strong 6/8, middle 4/8, parent 2/8, weak 1/8
    for config, solved in ((strong, 6), (middle, 4), (parent, 2), (weak, 1)):
        plan += [planned(config, t, verdict="passed" if i < solved else "failed") for i, t in enumerate(train[:8])]
    run_id = builder.run(plan)
    seed, draw = 7, 3
    drawn = draw_train_tasks(load_suite(builder.workspace, "pyfuncs"), draw, seed)
    script = tmp_path / "script.json"
    _script(script, drawn)
    monkeypatch.setenv("RSI_MODEL_OVERRIDE", f"scripted:{script}")
    generation = generation_at(builder.workspace, 1, run_id, select_tasks=draw, select_top=2, seed=seed,
                               sandbox="local", workers=1)

    selection = generation.select_paired()

    assert generation.state.outputs(PromoteOutput).selection_run_id == selection
    store = open_store(builder.workspace.db_url)
    try:
        run, jobs, rows = store.get_run(selection), store.list_jobs(selection), store.list_attempts(selection)
        selections = [r.id for r in store.list_runs() if r.scheduler == SELECTION_SCHEDULER]
    finally:
        store.close()
    assert run.scheduler == SELECTION_SCHEDULER and run.split == "train"
    # the parent first, then the ranking's head: strong before middle; weak, ranked third, is left out (top 2)
    assert [j.configuration_hash for j in sorted(jobs, key=lambda j: j.job_index)] == [
        parent.config_hash, strong.config_hash, middle.config_hash]
    keys = [t.key for t in drawn]
    assert len(keys) == draw and all(t.spec.split == "train" for t in drawn)
    assert all(j.planned_tasks == keys for j in jobs)  # the same tasks for every configuration
    by_job = {j.job_index: {r.task_key: r.seed for r in rows if r.job_index == j.job_index} for j in jobs}
    assert by_job[0] == by_job[1] == by_job[2] and set(by_job[0]) == set(keys)  # paired seeds
    assert all(r.verdict == "passed" for r in rows)  # the scripted reference solutions, judged by the verifier
    # resumed, never started twice: the recorded run is the one a second call returns
    assert generation.select_paired() == selection and selections == [selection]
