"""The weak-isolation gate: `rsi run` says so at start, `rsi trajectories export` and `rsi promote` refuse
evidence from weakly isolated attempts unless --allow-weak-isolation, and the record says when it was allowed.

The real runs below use a scripted model (it writes the reference solution for two of four tasks)
with the real harness, sandbox, verifier and store: once with the sandbox forced to the rlimits-only
mode (RSI_SANDBOX_MODE=bare), once in the strongest mode this machine has.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from rsi.promotion.isolation import AttemptIsolation, WeakIsolationError, check_isolation
from rsi.sandbox.base import Isolation
from tests.conftest import GIT_ENV

MINI_PORTFOLIO = """schema_version = 1
[portfolio]
name = "mini"
base = "default"

[[variants]]
name = "baseline"
[variants.overrides]
"harness.sampling.temperature" = 0.7
"""


def isolation(backend: str, strong: bool, notes: str = "") -> Isolation:
    return Isolation(backend=backend, network_isolated=strong, filesystem_readonly=strong, pid_namespace=strong,
                     unprivileged_user=True, notes=notes)


def test_check_counts_weak_unrecorded_and_backends() -> None:
    records = [AttemptIsolation("a", isolation("local-namespaces", True)),
               AttemptIsolation("b", isolation("local-bare", False, "rlimits only")),
               AttemptIsolation("c", isolation("local-bare", False, "rlimits only")),
               AttemptIsolation("d", None)]
    with pytest.raises(WeakIsolationError) as refused:
        check_isolation(records, what="to export")
    assert refused.value.exit_code == 2
    assert refused.value.message == "refusing to export: 2 of 4 attempts were weakly isolated (local-bare: rlimits only)"
    assert "--allow-weak-isolation" in refused.value.hint
    allowed = check_isolation(records, allow_weak=True)
    assert allowed.summary() == {"attempts": 4, "weak": 2, "unrecorded": 1, "weak_allowed": True,
                                 "backends": {"local-bare": 2, "local-namespaces": 1},
                                 "weak_reasons": {"local-bare: rlimits only": 2}}
    assert allowed.as_text().endswith("(allowed by --allow-weak-isolation)")
    # Strong and unrecorded attempts (no agent code ran: noop attempts) are never refused.
    strong = check_isolation([records[0], records[3]])
    assert strong.weak == 0 and strong.summary()["weak_allowed"] is False
    assert "allowed" not in strong.as_text()


def test_a_partial_isolation_is_weak_and_two_setups_are_both_counted() -> None:
    no_net = Isolation(backend="local-odd", network_isolated=False, filesystem_readonly=True, pid_namespace=True,
                       unprivileged_user=True)
    records = [AttemptIsolation("a", no_net), AttemptIsolation("b", isolation("local-bare", False))]
    with pytest.raises(WeakIsolationError, match=r"2 of 2 attempts .* \(and 1 other sandbox setup\(s\)\)"):
        check_isolation(records)


def _rsi(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("rsi") or str(Path(sys.executable).parent / "rsi")
    return subprocess.run([exe, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def real_runs():
    """A workspace (in a folder the sandbox user can traverse) with one weak and one strong run."""
    from rsi.sandbox.select import make_sandbox
    from rsi.workspace import init_workspace

    root = Path(tempfile.mkdtemp(prefix="rsi-weak-test-"))
    root.chmod(0o711)
    with pytest.MonkeyPatch.context() as patch:
        for key, value in GIT_ENV.items():
            patch.setenv(key, value)
        ws = init_workspace(root / "ws")
    (ws.portfolios_dir / "mini.toml").write_text(MINI_PORTFOLIO)
    spec = importlib.util.spec_from_file_location("scripted", Path(__file__).parents[1] / "run" / "scripted.py")
    scripted = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scripted)
    script = root / "script.json"
    scripted.write_script(ws, script, count=4)
    env = {**os.environ, **GIT_ENV, "RSI_MODEL_OVERRIDE": f"scripted:{script}"}
    for var in ("RSI_DB", "RSI_ATTEMPT_OVERRIDE", "RSI_SANDBOX_MODE"):
        env.pop(var, None)
    run_args = ("run", "-p", "mini", "--limit-tasks", "4", "--budget-attempts", "4", "--job-size", "4", "--no-report")
    weak = _rsi(*run_args, cwd=ws.root, env={**env, "RSI_SANDBOX_MODE": "bare"})  # plain lines: not a TTY
    assert weak.returncode == 0, weak.stderr
    runs = {"weak": (weak, _latest_run(ws))}
    if not make_sandbox("auto").isolation().weak:  # the strongest mode here isolates
        strong = _rsi(*run_args, cwd=ws.root, env=env)
        assert strong.returncode == 0, strong.stderr
        runs["strong"] = (strong, _latest_run(ws))
    yield {"ws": ws, "env": env, "runs": runs, "root": root}
    shutil.rmtree(root, ignore_errors=True)


def _latest_run(ws) -> str:
    from rsi.store import open_store

    store = open_store(ws.db_url)
    try:
        return max(store.list_runs(), key=lambda run: (run.created, run.id)).id
    finally:
        store.close()


def test_weak_run_says_so_at_start_and_records_it_on_every_attempt(real_runs) -> None:
    result, run_id = real_runs["runs"]["weak"]
    lines = result.stderr.splitlines()  # the plain display's event lines
    notes = [i for i, line in enumerate(lines) if "note: sandbox local-bare is WEAK" in line]
    assert len(notes) == 1, result.stderr
    assert "--allow-weak-isolation" in lines[notes[0]]
    assert all("job_started" not in line for line in lines[:notes[0]])  # said at start, before any job
    trajectories = list((real_runs["ws"].run_dir(run_id)).rglob("trajectory.json"))
    assert len(trajectories) == 4
    for path in trajectories:
        assert json.loads(path.read_text())["sandbox"]["backend"] == "local-bare"


def test_export_refuses_a_weak_run_unless_allowed_and_the_manifest_says_so(real_runs) -> None:
    ws, env = real_runs["ws"], real_runs["env"]
    _, run_id = real_runs["runs"]["weak"]
    out = real_runs["root"] / "weak-sft"
    refused = _rsi("trajectories", "export", run_id, "--out", str(out), cwd=ws.root, env=env)
    assert refused.returncode == 2, refused.stderr
    first = refused.stderr.strip().splitlines()[0]
    assert first.startswith("error: refusing to export training data: 2 of 2 attempts were weakly isolated "
                            "(local-bare: WEAK, rlimits only"), refused.stderr
    assert "Traceback" not in refused.stderr and not out.exists()
    allowed = _rsi("trajectories", "export", run_id, "--out", str(out), "--allow-weak-isolation", cwd=ws.root, env=env)
    assert allowed.returncode == 0, allowed.stderr
    assert "2 of 2 examples come from weakly isolated attempts" in allowed.stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["dataset"]["examples"] == 2
    assert manifest["isolation"]["weak_allowed"] is True and manifest["isolation"]["weak"] == 2
    assert manifest["isolation"]["backends"] == {"local-bare": 2}


def test_promote_refuses_a_weak_run_unless_allowed(real_runs) -> None:
    ws, env = real_runs["ws"], real_runs["env"]
    _, run_id = real_runs["runs"]["weak"]
    refused = _rsi("promote", run_id, cwd=ws.root, env=env)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.startswith("error: refusing to promote: 4 of 4 attempts were weakly isolated (local-bare"), \
        refused.stderr
    allowed = _rsi("promote", run_id, "--allow-weak-isolation", "--json", cwd=ws.root, env=env)
    # Past the isolation gate the promotion gate decides: no heldout evidence here, so refused (exit 1).
    assert allowed.returncode == 1, allowed.stderr
    summary = json.loads(allowed.stdout)
    assert summary["status"] == "refused" and "heldout" in summary["decision"]["reason"]
    assert summary["isolation"]["weak"] == 4 and summary["isolation"]["weak_allowed"] is True


def test_a_strongly_isolated_run_needs_no_flag(real_runs) -> None:
    if "strong" not in real_runs["runs"]:
        pytest.skip("no isolating sandbox mode on this machine (rsi doctor says why)")
    ws, env = real_runs["ws"], real_runs["env"]
    result, run_id = real_runs["runs"]["strong"]
    assert "WEAK" not in result.stdout + result.stderr and "run_started" in result.stderr
    out = real_runs["root"] / "strong-sft"
    exported = _rsi("trajectories", "export", run_id, "--out", str(out), cwd=ws.root, env=env)
    assert exported.returncode == 0, exported.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["isolation"]["weak"] == 0 and manifest["isolation"]["weak_allowed"] is False
    assert manifest["isolation"]["attempts"] == 2 and manifest["isolation"]["unrecorded"] == 0
    promoted = _rsi("promote", run_id, "--json", cwd=ws.root, env=env)
    assert promoted.returncode == 1, promoted.stderr  # the heldout gate, not the isolation gate
    assert json.loads(promoted.stdout)["isolation"]["weak"] == 0


def test_a_forced_mode_that_does_not_exist_is_a_one_line_error(real_runs) -> None:
    ws, env = real_runs["ws"], real_runs["env"]
    result = _rsi("run", "-p", "mini", "--limit-tasks", "1", "--budget-attempts", "1", "--no-report",
                  cwd=ws.root, env={**env, "RSI_SANDBOX_MODE": "chroot"})
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: RSI_SANDBOX_MODE='chroot': expected one of bwrap, namespaces, userns, bare")
    assert _latest_run(ws) in {run_id for _, run_id in real_runs["runs"].values()}  # refused before a run row
