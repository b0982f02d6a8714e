"""Validated tools in the generation (issue 36 item 3): helpers saved by passing REPL attempts of stored runs go
through the private validation (real sandbox, real hidden verifier); what passes becomes a tool-library revision
that rides into the candidate contract; a helper that only worked thanks to REPL state, or saved on a heldout task
or on a train task that duplicates another suite's heldout task, never does; a SIGKILL right after the revision is written leaves exactly one; the ledger counts them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from rsi.generation.lineage import LEDGER_COLUMNS, build_lineage, ledger_cells
from rsi.generation.outputs import ExportOutput
from rsi.harness.tools import list_revisions, read_manifest
from rsi.harness.trajectory import SavedToolRecord
from rsi.trajectories.tool_growth import grow_tools, tools_parent_for, tools_root
from tests.experience.conftest import generation_at

PLUS = "def plus(a, b):\n    return a + b\n"
# Worked in its attempt only because the REPL held OFFSET from an earlier cell: the saved source alone fails.
SHIFTED = "def shifted(a, b):\n    return a + b + OFFSET\n"
HONEST_SOLUTION = "def add(a, b):\n    return plus(a, b)\n\n\n" + PLUS
STATEFUL_SOLUTION = "OFFSET = 0\n\n\ndef add(a, b):\n    return shifted(a, b)\n\n\n" + SHIFTED


def saved(name: str, source: str) -> SavedToolRecord:
    return SavedToolRecord(name=name, function=name, source=source, cell=source + f"save_tool({name!r}, {name})", turn=1)


@pytest.fixture
def tool_runs(builder, planned):
    """A train run whose passing attempts saved an honest helper and a REPL-state one, and a heldout attempt that
    saved a third; plus a later run whose attempt was offered r1 and imported it."""
    repl = builder.config("repl-greedy")
    heldout = builder.heldout_ids()[0]
    first = builder.run([
        planned(repl, "add-two", code=HONEST_SOLUTION, tools=(saved("plus", PLUS),)),
        planned(repl, "add-two", code=STATEFUL_SOLUTION, tools=(saved("shifted", SHIFTED),),
                cells=("OFFSET = 0",)),
        planned(repl, heldout, tools=(saved("leaked", "def leaked():\n    return 1\n"),)),
        # a train task of pyfuncs that pyfuncs2 asks for again as heldout: its helper is never offered either
        planned(repl, "factorial", tools=(saved("twin", "def twin():\n    return 1\n"),)),
    ])
    second = builder.run([planned(repl, "add-two", code="from rsi_tools import plus\n\n\ndef add(a, b):\n    return plus(a, b)\n",
                                  tool_library="r1")])
    return builder, first, second


def test_the_validation_keeps_the_honest_helper_and_refuses_the_rest(tool_runs) -> None:
    builder, first, _ = tool_runs
    grown = grow_tools(builder.workspace, [first], sandbox="local")
    assert grown.offered == ["plus", "shifted"]  # the heldout attempt's helper is never offered
    assert grown.refused["heldout task"] == 1
    assert grown.refused["pyfuncs/factorial duplicates pyfuncs2/factorial (heldout)"] == 1
    assert (grown.revision, grown.parent, grown.written, grown.validated) == ("r1", "", True, ["plus"])
    assert "re-verification of pyfuncs/add-two" in grown.rejected["shifted"]
    manifest = read_manifest(tools_root(builder.workspace), "r1")
    assert [h.name for h in manifest.helpers] == ["plus"] and grown.helpers == 1
    assert "OFFSET" not in (tools_root(builder.workspace) / "r1" / "rsi_tools" / "__init__.py").read_text()
    assert grown.sets == {"harness.tool_library": "r1"}
    again = grow_tools(builder.workspace, [first], sandbox="local")  # the step once more (a resume)
    assert (again.revision, again.written) == ("r1", False) and list_revisions(tools_root(builder.workspace)) == ["r1"]


def test_a_growth_killed_after_writing_its_revision_leaves_exactly_one(tool_runs) -> None:
    builder, first, _ = tool_runs
    code = ("import sys\nfrom pathlib import Path\nfrom rsi.workspace import Workspace\nfrom rsi.trajectories.tool_growth import grow_tools\n"
            "print(grow_tools(Workspace(Path(sys.argv[1])), [sys.argv[2]], sandbox='local').model_dump_json())\n")
    env = {**os.environ, "RSI_TEST_CRASH_AT": "tools:written"}
    killed = subprocess.run([sys.executable, "-c", code, str(builder.workspace.root), first], env=env,
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert list_revisions(tools_root(builder.workspace)) == ["r1"]
    env.pop("RSI_TEST_CRASH_AT")
    rerun = subprocess.run([sys.executable, "-c", code, str(builder.workspace.root), first], env=env,
                           capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert (json.loads(rerun.stdout)["revision"], json.loads(rerun.stdout)["written"]) == ("r1", False)
    assert list_revisions(tools_root(builder.workspace)) == ["r1"]


def _generation(workspace, number, run_id, previous=None):
    return generation_at(workspace, number, run_id, previous, tools=True, sandbox="local")


def test_a_generation_carries_the_revision_into_its_candidate_and_the_ledger_counts_it(tool_runs) -> None:
    builder, first, second = tool_runs
    g1 = _generation(builder.workspace, 1, first)
    g1.grow_tools([first])
    assert g1.tools_sets() == {"harness.tool_library": "r1"}
    # the next generation extends what the last one grew, though the contract never took it (adapter rejected)
    assert tools_parent_for(builder.workspace, "default", "r1") == "r1"
    g2 = _generation(builder.workspace, 2, second, previous="g0001")
    g2.grow_tools([second])
    grown = g2.state.outputs(ExportOutput).tools
    assert (grown.revision, grown.parent, grown.offered, grown.used) == ("r1", "r1", [], 1)
    rows = {row.generation: row for row in build_lineage(builder.workspace)}
    cells = dict(zip(LEDGER_COLUMNS, ledger_cells(rows["g0001"]), strict=True))
    assert cells["tools (validated/offered, used)"] == "r1 1 (1/2, used 0)"
    assert (rows["g0002"].tools_used, rows["g0002"].tools_offered) == (1, 0)


def test_a_rejected_helper_never_reaches_the_candidate_contract(builder, planned) -> None:
    repl = builder.config("repl-greedy")
    run = builder.run([planned(repl, "add-two", code=STATEFUL_SOLUTION, tools=(saved("shifted", SHIFTED),))])
    g1 = _generation(builder.workspace, 1, run)
    g1.grow_tools([run])
    grown = g1.state.outputs(ExportOutput).tools
    assert (grown.revision, grown.validated, list(grown.rejected)) == ("", [], ["shifted"])
    assert g1.tools_sets() == {} and list_revisions(tools_root(builder.workspace)) == []
