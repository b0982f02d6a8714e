"""save_tool -> private validation -> versioned tool library -> imported by later attempts."""

from __future__ import annotations

import json
from pathlib import Path

from rsi.harness.attempt import run_attempt
from rsi.harness.tools import list_revisions, read_manifest
from rsi.harness.trajectory import read_trajectory
from rsi.models.scripted import ScriptedModel
from rsi.promotion.tools import ToolCandidate, candidates_from_trajectory, promote_tools
from rsi.verdict import Verdict

SAVE_AND_SOLVE = """```python
def plus(a, b):
    return a + b
save_tool('plus', plus)
open('solution.py', 'w').write('def add(a, b):\\n    return plus(a, b)\\n\\n\\ndef plus(a, b):\\n    return a + b\\n')
submit()
```"""

SAVE_WRONG_HELPER = """```python
def plus(a, b):
    return a - b
save_tool('minus_as_plus', plus)
open('solution.py', 'w').write('def add(a, b):\\n    return plus(a, b)\\n\\n\\ndef plus(a, b):\\n    return a + b\\n')
submit()
```"""


def _attempt(config, task, replies, sandbox, out: Path, **kwargs):
    return run_attempt(config, task, ScriptedModel(replies), sandbox, out, seed=0, **kwargs)


def test_promotion_validates_privately_and_later_attempts_import_the_library(
    config_factory, pyfuncs, sandbox, open_tmp
):
    task = pyfuncs["add-two"]
    tools_root = open_tmp / "tools"
    good = _attempt(config_factory(), task, [SAVE_AND_SOLVE], sandbox, open_tmp / "a1")
    bad = _attempt(config_factory(), task, [SAVE_WRONG_HELPER], sandbox, open_tmp / "a2")
    assert good.verdict is Verdict.PASSED and bad.verdict is Verdict.PASSED, (good.reason, bad.reason)
    saved = json.loads((open_tmp / "a1" / "tools.json").read_text())
    assert saved[0]["name"] == "plus" and saved[0]["source"].startswith("def plus(a, b):")

    candidates = candidates_from_trajectory(read_trajectory(good.trajectory_path))
    candidates += candidates_from_trajectory(read_trajectory(bad.trajectory_path))
    assert {c.name for c in candidates} == {"plus", "minus_as_plus"}
    outcome = promote_tools(tools_root, candidates, {task.key: task}, sandbox)

    # The wrong helper passed its own attempt (the solution inlined a correct copy), but the
    # private re-verification runs the solution against the LIBRARY copy, so it is refused.
    assert outcome.revision == "r1" and outcome.accepted == ["plus"]
    assert "re-verification of pyfuncs/add-two" in outcome.rejected["minus_as_plus"]
    assert {(v.name, v.verdict) for v in outcome.validation} == {
        ("plus", Verdict.PASSED),
        ("minus_as_plus", Verdict.FAILED),
    }
    manifest = read_manifest(tools_root, "r1")
    assert [h.name for h in manifest.helpers] == ["plus"] and manifest.helpers[0].tasks == [task.key]
    assert "def plus(a, b):" in (tools_root / "r1" / "rsi_tools" / "__init__.py").read_text()

    # A contract naming r1 gets the library in its working directory and is told about it.
    config = config_factory(harness={"tool_library": "r1", "max_turns": 2})
    uses = "```python\nfrom rsi_tools import plus\nopen('solution.py', 'w').write('from rsi_tools import plus as add\\n')\nplus(2, 3)\n```"
    later = _attempt(config, task, [uses, "```python\nsubmit()\n```"], sandbox, open_tmp / "a3", tools_root=tools_root)
    assert later.verdict is Verdict.PASSED, later.reason
    steps = read_trajectory(later.trajectory_path).steps
    assert "from rsi_tools import plus" in steps[1].message and steps[2].observation.startswith("Output:\n```\n5\n")
    assert read_trajectory(later.trajectory_path).configuration.tool_library == "r1"


def test_a_revision_extends_its_parent_and_refuses_redefinitions(config_factory, pyfuncs, sandbox, open_tmp):
    task = pyfuncs["add-two"]
    tools_root = open_tmp / "tools"
    solution = "def add(a, b):\n    return a + b\n"

    def candidate(name: str, source: str) -> ToolCandidate:
        function = source.split("(")[0].removeprefix("def ").strip()
        return ToolCandidate(name=name, function=function, source=source, task_key=task.key, attempt_id=f"x-{name}",
                             solution_code=solution)

    first = promote_tools(tools_root, [candidate("double", "def double(x):\n    return 2 * x\n")], {task.key: task}, sandbox)
    assert first.revision == "r1"
    second = promote_tools(
        tools_root,
        [
            candidate("double", "def double(x):\n    return x + x\n"),
            candidate("triple", "def triple(x):\n    return 3 * x\n"),
            candidate("broken", "def broken(x):\n    return undefined_name(\n"),
            candidate("lost", ""),
        ],
        {task.key: task},
        sandbox,
        parent="r1",
    )
    assert second.revision == "r2" and second.accepted == ["triple"]
    assert "already has a helper named 'double'" in second.rejected["double"]
    assert "does not parse" in second.rejected["broken"]
    assert "could not be recovered" in second.rejected["lost"]
    assert [h.name for h in read_manifest(tools_root, "r2").helpers] == ["double", "triple"]
    assert read_manifest(tools_root, "r2").parent == "r1"
    assert list_revisions(tools_root) == ["r1", "r2"]
    nothing = promote_tools(tools_root, [candidate("lost", "")], {task.key: task}, sandbox, parent="r2")
    assert nothing.revision is None and list_revisions(tools_root) == ["r1", "r2"]


def test_a_missing_library_revision_is_an_error_not_a_failure(config_factory, pyfuncs, sandbox, open_tmp):
    config = config_factory(harness={"tool_library": "r9"})
    outcome = _attempt(config, pyfuncs["add-two"], ["```python\nsubmit()\n```"], sandbox, open_tmp / "a",
                       tools_root=open_tmp / "tools")
    assert outcome.verdict is Verdict.ERROR and outcome.error_class == "UserInputError"
    assert "r9" in outcome.reason
