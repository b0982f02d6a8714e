"""A golden trajectory: the schema and the transcript format others build on cannot drift unseen.

Exporters and renderers read trajectories (observation prefixes, step order, field names). This test
runs one scripted REPL attempt and compares its trajectory, with the volatile fields (times, wall
clocks, the sandbox in use) masked, against tests/harness/golden/repl_add_two.json.
Regenerate after an intended change with:

    RSI_REGEN_GOLDEN=1 .venv/bin/pytest tests/harness/test_golden.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from rsi.harness.attempt import run_attempt
from rsi.models.scripted import ScriptedModel

GOLDEN = Path(__file__).parent / "golden" / "repl_add_two.json"
VOLATILE = {"timestamp", "started_at", "finished_at", "wall_s", "latency_s", "verifier_wall_s", "model_wait_s", "sandbox"}

REPLIES = [
    "I will write the file.\n```python\ncode = 'def add(a, b):\\n    return a - b\\n'\nopen('solution.py', 'w').write(code)\n```",
    "Test it.\n```python\nfrom solution import add\nassert add(2, 3) == 5, add(2, 3)\n```",
    "No code this time.",
    "```python\nopen('solution.py', 'w').write('def add(a, b):\\n    return a + b\\n')\nprint('fixed')\nsubmit()\n```",
]


def masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ("<masked>" if k in VOLATILE else masked(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value


def test_the_trajectory_of_a_scripted_attempt_matches_the_golden_file(config_factory, pyfuncs, sandbox, open_tmp):
    config = config_factory(
        specialists=["fixer"],
        routing={"policy": "rules", "rules": [{"turn": "after_error", "pattern": "Error", "specialist": "fixer"}]},
        harness={"max_turns": 5},
    )
    outcome = run_attempt(config, pyfuncs["add-two"], ScriptedModel(REPLIES), sandbox, open_tmp / "a", seed=11,
                          attempt_id="golden-1")
    produced = masked(json.loads(outcome.trajectory_path.read_text()))
    if os.environ.get("RSI_REGEN_GOLDEN") == "1":
        GOLDEN.write_text(json.dumps(produced, indent=2, sort_keys=True) + "\n")
    assert produced == json.loads(GOLDEN.read_text())
