"""Fixtures for the report tests: a real small run (scripted model, real harness, sandbox, verifier and
store) and headless Chromium driven over the Chrome DevTools Protocol.

Chromium comes from Debian (`apt-get install chromium`, .ci/services/50-chromium.sh); where it is
missing the browser tests skip with a reason naming it (and fail in CI, RSI_REQUIRE_SERVICES=1).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GIT_ENV
from tests.run.mini import MINI_PORTFOLIO


def _need(condition: bool, why: str) -> None:
    if condition:
        return
    if os.environ.get("RSI_REQUIRE_SERVICES") == "1":
        pytest.fail(f"required service missing in CI: {why}")
    pytest.skip(why)


def load_cdp() -> Any:
    """tests/report/cdp.py as a module (test folders are not packages under importlib mode)."""
    spec = importlib.util.spec_from_file_location("rsi_test_cdp", Path(__file__).with_name("cdp.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CDP = load_cdp()


@pytest.fixture(scope="session")
def small_run() -> Any:
    """A finished run of the mini portfolio on 4 pyfuncs train tasks, with a scripted model.

    The script writes the reference solution for tasks 0 and 2 and a wrong one for 1 and 3, so the
    run has passed and failed attempts, each with a real trajectory file. It lives in a folder the
    sandbox user can traverse (pytest's tmp_path sits under a 0700 folder).
    """
    from rsi.workspace import init_workspace

    root = Path(tempfile.mkdtemp(prefix="rsi-report-test-"))
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
    expected = scripted.write_script(ws, script, count=4)
    env = {**os.environ, **GIT_ENV, "RSI_MODEL_OVERRIDE": f"scripted:{script}"}
    for var in ("RSI_DB", "RSI_ATTEMPT_OVERRIDE"):
        env.pop(var, None)
    exe = shutil.which("rsi") or str(Path(os.sys.executable).parent / "rsi")
    result = subprocess.run([exe, "run", "-p", "mini", "--limit-tasks", "4", "--budget-attempts", "8", "--job-size", "2",
                             "--json", "--no-report"], cwd=ws.root, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    yield {"ws": ws, "run_id": outcome["run_id"], "outcome": outcome, "expected": expected, "env": env, "exe": exe}
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def browser() -> Any:
    """One headless Chromium for the session (about 1 s to start)."""
    binary = CDP.chromium_path(os.environ.get("RSI_CHROMIUM"))
    _need(binary is not None, "headless Chromium (Debian package `chromium`, .ci/services/50-chromium.sh)")
    try:
        import websocket  # noqa: F401
    except ImportError:
        _need(False, "websocket-client (the dev extra) to drive chromium over the DevTools protocol")
    chromium = CDP.Browser(binary)
    yield chromium
    chromium.close()


@pytest.fixture
def page(browser: Any) -> Any:
    """A fresh DevTools connection to the browser's tab, its console errors collected."""
    tab = browser.page()
    yield tab
    tab.close()
