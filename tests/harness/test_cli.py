"""`rsi show` and `rsi attempt` through the real console script."""

from __future__ import annotations

import json

import pytest

from rsi.harness.attempt import run_attempt
from rsi.harness.trajectory import read_trajectory
from rsi.models.scripted import ScriptedModel

REPLIES = [
    "Let me write it.\n```python\nopen('solution.py', 'w').write('def add(a, b):\\n    return a + b\\n')\n1 / 0\n```",
    "```python\nsubmit()\n```",
]


@pytest.fixture
def finished(config_factory, pyfuncs, sandbox, open_tmp):
    config = config_factory(specialists=["fixer"], routing={"policy": "rules", "rules": [
        {"turn": "after_error", "specialist": "fixer"}]})
    outcome = run_attempt(config, pyfuncs["add-two"], ScriptedModel(REPLIES), sandbox, open_tmp / "a", seed=3)
    return outcome


def test_show_renders_steps_code_observations_routing_and_verdict(cli, finished):
    done = cli("show", str(finished.trajectory_path.parent))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "pyfuncs/add-two" in out and "Let me write it." in out
    assert "open('solution.py', 'w')" in out and "ZeroDivisionError" in out
    assert "fixer (rule 1, after_error)" in out and "base (no rule matched, first)" in out
    assert "PASSED" in out and "ended by submit" in out
    assert f"{finished.prompt_tokens} prompt + {finished.completion_tokens} completion" in out


def test_show_json_is_the_trajectory(cli, finished):
    done = cli("show", str(finished.trajectory_path), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(read_trajectory(finished.trajectory_path).model_dump_json())


def test_show_refuses_missing_and_foreign_files_with_one_line(cli, open_tmp):
    missing = cli("show", str(open_tmp / "nope.json"))
    assert missing.returncode == 2 and "no such trajectory file" in missing.stderr
    other = open_tmp / "other.json"
    other.write_text('{"schema_version": "ATIF-v1.4"}')
    foreign = cli("show", str(other))
    assert foreign.returncode == 2 and "schema_version" in foreign.stderr
    assert "Traceback" not in missing.stderr + foreign.stderr


def test_attempt_rejects_unknown_references_with_exit_2(cli, workspace):
    bad_task = cli("attempt", "default", "pyfuncs/no-such-task", cwd=workspace.root)
    assert bad_task.returncode == 2 and "no-such-task" in bad_task.stderr
    bad_form = cli("attempt", "default", "add-two", cwd=workspace.root)
    assert bad_form.returncode == 2 and "SUITE/TASK-ID" in bad_form.stderr
    bad_variant = cli("attempt", "default:nope", "pyfuncs/add-two", cwd=workspace.root)
    assert bad_variant.returncode == 2
    assert "Traceback" not in bad_task.stderr + bad_form.stderr + bad_variant.stderr


def test_the_trajectory_records_the_format_the_model_was_served_in(config_factory, pyfuncs, sandbox, open_tmp):
    class Float32Replies(ScriptedModel):
        def number_format(self) -> str:
            return "float32"

    plain = run_attempt(config_factory(), pyfuncs["add-two"], ScriptedModel(REPLIES), sandbox, open_tmp / "p", seed=3)
    loaded = run_attempt(config_factory(), pyfuncs["add-two"], Float32Replies(REPLIES), sandbox, open_tmp / "f", seed=3)
    assert read_trajectory(plain.trajectory_path).model.dtype == ""
    assert read_trajectory(loaded.trajectory_path).model.dtype == "float32"
