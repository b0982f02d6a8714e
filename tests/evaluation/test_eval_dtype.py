"""The evaluation's number format (`[evaluation] dtype`, `rsi eval --dtype`): every side is served in it, the
sides keep their configuration identity (so their stored coverage still counts), and the stored plan keeps it.

Why it exists: greedy decoding in bfloat16 depends on the other rows of a batch (bench/RESULTS.md "## greedy
invariance"), so a gate decision could depend on timing; the shipped contract evaluates in float32.
Same real harness, sandbox and verifier as test_evaluation.py; only the model is scripted per side.
"""

from __future__ import annotations

import json

from rsi.cli.render_eval import eval_lines
from rsi.config import configuration_from_contract
from rsi.contracts.refs import resolve_ref
from rsi.evaluation import EVAL_FILE, EvalSpec, evaluate
from rsi.models.scripted import ScriptedModel
from rsi.store import open_store
from tests.evaluation.test_evaluation import BySide, setup

__all__ = ["setup"]  # the fixture, shared from test_evaluation.py


class Recording(BySide):
    """BySide that also keeps the number format and configuration hash each attempt was served with."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.served: set[tuple[str, str]] = set()

    def __call__(self, spec):
        self.served.add((spec.config.spec.serving.dtype, spec.config.config_hash))
        return super().__call__(spec)


def _run(workspace, setup, dtype):
    fn = Recording(workspace.root, setup["solutions"], setup["solutions"])
    outcome = evaluate(workspace, EvalSpec(candidate=setup["candidate"], parent="default@r2", limit_heldout=2,
                                           dtype=dtype), attempt_fn=fn)
    return fn, outcome


def test_the_shipped_contract_evaluates_every_side_in_float32_under_its_own_identity(workspace, setup) -> None:
    parent = resolve_ref(workspace, "default@r2")
    assert parent.spec.evaluation.dtype == "float32" and parent.spec.serving.dtype == "bfloat16"
    fn, outcome = _run(workspace, setup, None)  # None: the parent's [evaluation] dtype
    hashes = {configuration_from_contract(resolve_ref(workspace, ref)).config_hash
              for ref in ("default@r2", setup["candidate"])}
    assert fn.served == {("float32", h) for h in hashes}
    # the parent's covered train tasks were found by its unchanged hash: retention was measured on them
    assert outcome.retention_in_sample is not None and outcome.retention_in_sample.covered == 2
    assert outcome.dtype == "float32"
    stored = json.loads((workspace.run_dir(outcome.eval_id) / EVAL_FILE).read_text())
    assert stored["dtype"] == "float32"
    store = open_store(workspace.db_url)
    try:
        assert store.get_run(outcome.eval_id).args["eval"]["spec"]["dtype"] == "float32"  # what a resume serves in
    finally:
        store.close()


def test_serving_keeps_each_contracts_own_format(workspace, setup) -> None:
    fn, outcome = _run(workspace, setup, "serving")
    assert {dtype for dtype, _ in fn.served} == {"bfloat16"}
    assert outcome.dtype == "serving"


def test_the_format_each_attempt_was_served_in_is_counted_and_a_mismatch_is_said(workspace, setup, monkeypatch) -> None:
    """The trajectories say what the model was loaded in; an evaluation that asked for float32 and got another
    format (RSI_DTYPE overrides the contract) says so instead of claiming float32."""
    _, scripted = _run(workspace, setup, None)
    assert scripted.served == {"": scripted.attempts}  # a scripted model has no weights to speak of
    assert "(served in float32)" in eval_lines(scripted)[0]
    monkeypatch.setattr(ScriptedModel, "number_format", lambda self: "bfloat16")
    _, overridden = _run(workspace, setup, None)
    assert overridden.served == {"bfloat16": overridden.attempts} and overridden.attempts > 0
    first = eval_lines(overridden)[0]
    assert f"asked for float32, but {overridden.attempts} attempts in bfloat16" in first


def test_rsi_eval_refuses_an_unknown_format(cli, tmp_path) -> None:
    result = cli("eval", "default-candidate@r2", "--against", "default@r2", "--dtype", "float64", cwd=tmp_path)
    assert result.returncode == 2
    assert "--dtype 'float64'" in result.stderr and "float32" in result.stderr and "Traceback" not in result.stderr
