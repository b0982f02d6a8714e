"""`rsi ablate` (issue 36 item 5): a generation's candidate against itself without each carrier of experience it
carries, one paired heldout evaluation each, through the real harness, sandbox and verifier (only the model is
scripted: the full candidate replays solutions, every ablated side submits nothing), resumable, shown by
`rsi lineage`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi.contracts.refs import resolve_ref
from rsi.generation.ablation import AblationSpec, ablate_generation, carriers_of, read_ablation
from rsi.generation.outputs import TrainOutput
from rsi.generation.state import GenerationState, now_utc, write_state
from rsi.run.attempt_fn import HarnessAttempt
from tests.evaluation.test_evaluation import setup, wrong_script  # noqa: F401 - the evaluation tests' fixture

TOOLS = {"harness.tool_library": "r1"}


class FullOrAblated:
    """The real attempt function; the scripted model that solves serves only the full candidate."""

    def __init__(self, root: Path, solves: Path, fails: Path) -> None:
        self.root, self.solves, self.fails, self.sides = str(root), solves, fails, []

    def __call__(self, spec):
        full = bool(spec.config.spec.routing.specialist) and bool(spec.config.spec.harness.tool_library)
        self.sides.append(full)
        return HarnessAttempt(workspace_root=self.root, model_override=f"scripted:{self.solves if full else self.fails}")(spec)


def _tool_library(workspace) -> None:
    from rsi.harness.tools import ToolManifest, library_root
    from rsi.promotion.tools import _write_revision  # a revision on disk, as promote_tools writes it

    manifest = ToolManifest(revision="r1", created=now_utc(), content_sha256="0" * 64, helpers=[
        {"name": "plus", "function": "plus", "source_sha256": "1" * 64, "tasks": [], "attempts": [], "revision": "r1"}])
    _write_revision(library_root(workspace.runs_dir), "r1", "def plus(a, b):\n    return a + b\n", manifest)


@pytest.fixture
def generation(workspace, setup, tmp_path):  # noqa: F811 - the fixture imported above
    """A generation whose candidate carries an adapter (a second one: the first has its candidate) and a tool library."""
    from rsi.adapters.registry import register_adapter
    from rsi.training.candidate import write_candidate

    _tool_library(workspace)
    folder = tmp_path / "peft2"
    folder.mkdir()
    (folder / "adapter_config.json").write_text("{}")
    (folder / "adapter_model.safetensors").write_bytes(b"other weights")
    record = register_adapter(workspace, folder, {
        "name": "sft", "base": {}, "dataset": {}, "source_runs": [setup["run_id"]],
        "parent_contract": {"ref": "default@r2"}, "hyperparameters": {}, "metrics": {}, "code": {"rsi_version": "0.1.0"}})
    candidate = write_candidate(workspace, "default", record.id, record.relative_adapter_dir(workspace), 8,
                                ["q_proj", "v_proj"], parent_ref="default@r2", harness_sets=TOOLS)
    stamp = now_utc()
    state = GenerationState(id="g0001", number=1, created=stamp, updated=stamp, spec={"contract": "default"},
                            inputs={"contract": "default", "revision": 2})
    state.step("train").outputs = TrainOutput(adapter_id=record.id, parent_ref="default@r2",
                                              candidate_ref=candidate.ref).model_dump(mode="json")
    return write_state(workspace, state), candidate.ref


@pytest.mark.slow
def test_each_carrier_is_measured_against_the_candidate_without_it(workspace, setup, generation, tmp_path, cli,  # noqa: F811
                                                                   scripted_env) -> None:
    state, candidate_ref = generation
    assert carriers_of(resolve_ref(workspace, candidate_ref).spec) == ["tools", "adapter"]
    # against its parent, the tool library is a change of harness too (tests/evaluation/test_carriers_apart.py)
    assert carriers_of(resolve_ref(workspace, candidate_ref), resolve_ref(workspace, "default@r2")) == [
        "tools", "adapter", "harness"]
    fn = FullOrAblated(workspace.root, setup["solutions"], wrong_script(tmp_path / "w.json", [t.id for t in setup["tasks"]]))
    record = ablate_generation(workspace, AblationSpec(limit_heldout=2, workers=2, carriers=["tools", "adapter", "exemplars"]),
                               attempt_fn=fn)
    assert record.generation == "g0001" and record.carried == ["tools", "adapter", "harness"]
    assert [row.carrier for row in record.rows] == ["tools", "adapter"]  # exemplars asked for, but not carried
    for row in record.rows:
        assert row.lift is not None and row.lift.table.candidate_only == 2 and row.lift.table.both == 0
        assert set(row.costs) == {"candidate", "parent"} and row.eval_id
    tools_off = resolve_ref(workspace, record.rows[0].ablated_ref).spec
    adapter_off = resolve_ref(workspace, record.rows[1].ablated_ref).spec
    assert tools_off.harness.tool_library == "" and tools_off.routing.specialist == "sft"
    assert adapter_off.harness.tool_library == "r1" and not adapter_off.specialists and not adapter_off.routing.specialist
    assert fn.sides.count(True) == 4 and fn.sides.count(False) == 4  # 2 heldout tasks x 2 sides x 2 carriers

    again = ablate_generation(workspace, AblationSpec(carriers=["tools", "adapter"]), attempt_fn=fn)  # measured: nothing
    # runs, nothing is written
    assert len(fn.sides) == 8 and again == read_ablation(workspace, "g0001") == record
    shown = cli("lineage", cwd=workspace.root, env=scripted_env)
    assert shown.returncode == 0, shown.stderr
    assert "ablation of g0001" in shown.stdout and "tools adds +1.000" in shown.stdout
    assert json.loads(cli("lineage", "--json", cwd=workspace.root, env=scripted_env).stdout)["ablation"]["rows"][1][
        "carrier"] == "adapter"


def test_unknown_carriers_and_missing_candidates_are_clear_errors(workspace, cli, scripted_env) -> None:
    done = cli("ablate", cwd=workspace.root, env=scripted_env)
    assert done.returncode == 2 and "no generation has a candidate contract" in done.stderr
    stamp = now_utc()
    state = GenerationState(id="g0001", number=1, created=stamp, updated=stamp, spec={}, inputs={})
    state.step("train").outputs = {"candidate_ref": "default@r1", "parent_ref": "default@r1"}
    write_state(workspace, state)
    bad = cli("ablate", "--carriers", "adapter,luck", cwd=workspace.root, env=scripted_env)
    assert bad.returncode == 2 and "unknown carrier(s) luck" in bad.stderr and "Traceback" not in bad.stderr
