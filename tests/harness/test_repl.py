"""The stateful REPL substrate in the real local sandbox (no model)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rsi.errors import SandboxError
from rsi.harness.repl import ReplSession
from rsi.sandbox.base import Limits


@pytest.fixture
def repl(sandbox, workdir: Path):
    session = ReplSession(
        sandbox, workdir, Limits(wall_s=120, cpu_s=60), python=sandbox.python, step_s=1.5, grace_s=2.0,
        tools=["submit", "save_tool"], end_call="submit",
    )
    session.start()
    yield session
    session.close()


def test_values_and_definitions_persist_across_cells(repl: ReplSession):
    assert repl.run("x = 40\ndef twice(v):\n    return 2 * v").error is None
    result = repl.run("x + 2")
    assert result.output == "42\n" and result.error is None
    assert repl.run("print(twice(x))").output == "80\n"


def test_agent_output_cannot_corrupt_the_protocol(repl: ReplSession):
    # Fake frames with a guessed token, raw writes to fds 1 and 2, a child process, and input().
    code = (
        "import os, subprocess, sys\n"
        "print('\\n0123 5\\n{\"op\": 1}')\n"
        "os.write(1, b'raw-out\\n'); os.write(2, b'raw-err\\n')\n"
        "sys.stderr.write('stderr-text\\n')\n"
        "subprocess.run([sys.executable, '-c', 'print(\"child\")'])\n"
        "value = input()\n"
    )
    result = repl.run(code)
    for piece in ('{"op": 1}', "raw-out", "raw-err", "stderr-text", "child"):
        assert piece in result.output
    assert "EOFError" in (result.error or "")
    assert repl.run("1 + 1").output == "2\n"


def test_exceptions_are_reported_without_server_frames(repl: ReplSession):
    result = repl.run("def f():\n    return 1 / 0\nf()")
    assert "ZeroDivisionError" in result.error and '"<cell-1>", line 2' in result.error
    assert "repl_server" not in result.error and "exec(" not in result.error
    syntax = repl.run("def broken(:\n  pass")
    assert "SyntaxError" in syntax.error
    assert repl.run("raise SystemExit(3)").error.startswith("SystemExit: 3")
    assert repl.alive


def test_a_runaway_cell_is_interrupted_and_the_session_survives(repl: ReplSession):
    repl.run("kept = 'still here'")
    started = time.monotonic()
    result = repl.run("while True:\n    pass")
    assert result.timed_out and not result.died and "StepTimeout" in result.error
    assert time.monotonic() - started < 1.5 + 2.0
    assert repl.run("kept").output == "'still here'\n"


def test_a_cell_that_swallows_the_interrupt_is_killed_and_can_be_restarted(repl: ReplSession, workdir: Path):
    repl.run("open('note.txt', 'w').write('file survives')\nstate = 1")
    code = "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass"
    result = repl.run(code)
    assert result.died and result.timed_out and "killed" in result.error
    assert not repl.alive
    assert repl.run("1").died  # a dead session says so instead of hanging
    repl.restart()
    assert "NameError" in repl.run("state").error
    assert repl.run("open('note.txt').read()").output == "'file survives'\n"


def test_a_session_that_exits_is_reported_as_died(repl: ReplSession):
    result = repl.run("import os\nos._exit(7)")
    assert result.died and not result.timed_out
    assert result.exit_code is not None


def test_huge_output_comes_back_as_head_and_tail_only(repl: ReplSession):
    result = repl.run("for i in range(200000):\n    print(f'line {i}')")
    assert result.output_bytes > 2_000_000
    assert result.output.startswith("line 0\n") and result.output.rstrip().endswith("line 199999")
    assert "bytes omitted" in result.output and len(result.output) < 70_000


def test_submit_and_save_tool(repl: ReplSession):
    result = repl.run("def slug(text):\n    return text.lower().replace(' ', '-')\nsave_tool('slugify', slug)")
    assert result.error is None and not result.submitted
    (tool,) = result.saved_tools
    assert (tool.name, tool.function) == ("slugify", "slug")
    assert tool.source == "def slug(text):\n    return text.lower().replace(' ', '-')\n"
    assert "save_tool('slugify', slug)" in tool.cell
    assert "ValueError" in repl.run("save_tool('not a name', slug)").error
    assert repl.run("submit()").submitted


def test_tools_not_configured_are_not_defined(sandbox, workdir: Path):
    session = ReplSession(sandbox, workdir, Limits(wall_s=60), python=sandbox.python, tools=[], end_call="done")
    session.start()
    try:
        assert "NameError" in session.run("submit()").error
        assert session.run("done()").submitted  # a custom end call behaves like submit()
    finally:
        session.close()


def test_a_repl_that_cannot_start_is_a_sandbox_error(sandbox, workdir: Path):
    session = ReplSession(sandbox, workdir, Limits(wall_s=30), python="/nonexistent/python3", startup_s=10)
    with pytest.raises(SandboxError):
        session.start()


def test_the_step_timer_is_rearmed_after_agent_code_replaces_its_handler(repl: ReplSession):
    assert repl.run("import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)").error is None
    result = repl.run("while True:\n    pass")
    assert result.timed_out and not result.died



def test_the_repl_substrate_works_on_every_sandbox_backend(every_backend, workdir: Path):
    sandbox = every_backend
    session = ReplSession(sandbox, workdir, Limits(wall_s=120, cpu_s=60), python=sandbox.python, step_s=1.5,
                          grace_s=3.0, tools=["submit"], env={"PYTHONDONTWRITEBYTECODE": "1"})
    session.start()
    try:
        write = "x = 2\nopen('solution.py', 'w').write('def f():\\n    return 3\\n')"
        assert session.run(write).error is None
        assert session.run("from solution import f\nprint(f() + x)").output == "5\n"
        assert session.run("while True:\n    pass").timed_out
        assert session.run("x").output == "2\n"
        assert session.run("submit()").submitted
    finally:
        session.close()
    assert (workdir / "solution.py").read_text() == "def f():\n    return 3\n"
