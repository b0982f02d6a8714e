"""The `script` kind runs the solution's programs as the attempt's uid and the test script as a
verifier uid (kinds.run_boot, launcher.py, shim.py), on every backend this machine has.

What a script can rely on: `python3`/`python`/`rsi-solution` start the solution with the script's
stdin, stdout, stderr, working directory and environment (minus RSI_*), and return its exit status;
a checker under tests/ runs as the verifier and reads tests/; and, when rsi is root, the solution's
uid differs from the script's and cannot read tests/ or the reward file.
"""

from __future__ import annotations

import os
import time

import pytest

from rsi.verdict import Verdict
from rsi.verifier import verify
from rsi.verifier.shim import python_program

AS_ROOT = os.geteuid() == 0


@pytest.mark.parametrize(
    ("args", "program"),
    [
        (["solution.py"], "solution.py"),
        (["-I", "tests/check.py", "x"], "tests/check.py"),
        (["-Iu", "-W", "ignore", "-X", "dev", "tests/c.py"], "tests/c.py"),
        (["-Wignore", "tests/c.py"], "tests/c.py"),
        (["-c", "import solution"], None),
        (["-Ic", "x"], None),
        (["-m", "pytest", "tests"], None),
        (["-"], None),
        ([], None),
        (["--", "-odd.py"], "-odd.py"),
        (["--check-hash-based-pycs", "never", "tests/c.py"], "tests/c.py"),
    ],
)
def test_shim_finds_the_program_a_python_command_line_runs(args, program):
    assert python_program(args) == program


TRUSTED_CHECKER = {
    "test.sh": (
        "set -eu\n"
        "python3 solution.py < tests/input.txt > out.txt\n"
        "python3 tests/check.py out.txt\n"
    ),
    "input.txt": "21\n",
    "expected.txt": "42\n",
    "check.py": "import sys\nassert open(sys.argv[1]).read() == open('tests/expected.txt').read(), 'wrong'\n",
}


def _script_task(make_script_task, files: dict[str, str]):
    task = make_script_task(files["test.sh"])
    for name, text in files.items():
        (task.root / "tests" / name).write_text(text)
        (task.root / "tests" / name).chmod(0o644)
    return task


def test_solution_fed_by_the_script_and_a_trusted_checker_pass(backend, make_script_task, final_workdir):
    task = _script_task(make_script_task, TRUSTED_CHECKER)
    good = verify(task, final_workdir({"solution.py": "print(int(input()) * 2)\n"}), backend)
    assert good.verdict is Verdict.PASSED, (good.reason, good.output)
    bad = verify(task, final_workdir({"solution.py": "print(int(input()) + 2)\n"}), backend)
    assert bad.verdict is Verdict.FAILED, (bad.reason, bad.output)


def test_exit_status_environment_and_working_directory_reach_the_script(backend, make_script_task, final_workdir):
    script = (
        "set -u\n"
        "python3 -c 'import sys; sys.exit(3)'; [ $? = 3 ] || { echo 'exit status lost'; exit 1; }\n"
        "rsi-solution sh -c 'exit 5'; [ $? = 5 ] || { echo 'rsi-solution status lost'; exit 1; }\n"
        "mkdir -p sub && cd sub\n"
        "export GREETING=hello\n"
        "out=$(python3 -c 'import os; print(os.environ.get(\"GREETING\"), os.path.basename(os.getcwd()), "
        "sorted(k for k in os.environ if k.startswith(\"RSI_\")))')\n"
        "[ \"$out\" = \"hello sub []\" ] || { echo \"got $out\"; exit 1; }\n"
    )
    outcome = verify(make_script_task(script), final_workdir({"solution.py": ""}), backend)
    assert outcome.verdict is Verdict.PASSED, (outcome.reason, outcome.output)


def test_a_timeout_in_the_script_kills_the_solution(backend, make_script_task, final_workdir):
    script = (
        "timeout 1 python3 -c 'import time; time.sleep(60)'\n"
        "[ $? = 124 ] || exit 1\n"
    )
    started = time.monotonic()
    outcome = verify(make_script_task(script, timeout_s=20), final_workdir({"solution.py": ""}), backend)
    assert outcome.verdict is Verdict.PASSED, (outcome.reason, outcome.output)
    assert time.monotonic() - started < 15


@pytest.mark.skipif(not AS_ROOT, reason="a second uid needs rsi to run as root (docs/sandbox.md)")
def test_the_solution_runs_as_another_uid_and_cannot_read_tests(backend, make_script_task, final_workdir):
    script = (
        "set -u\n"
        "python3 -c \"open('made-by-solution', 'w')\"\n"
        "[ -e made-by-solution ] || { echo 'no file'; exit 1; }\n"
        "[ -O made-by-solution ] && { echo 'the solution runs as the script uid'; exit 1; }\n"
        "cat tests/test.sh > /dev/null || { echo 'the script cannot read tests'; exit 1; }\n"
        "echo 0.25 > \"$RSI_REWARD_FILE\"\n"
        "python3 -c \"open('tests/test.sh')\" 2>/dev/null && { echo 'the solution read tests'; exit 1; }\n"
        "python3 -c \"open('$RSI_REWARD_FILE', 'w').write('1.0')\" 2>/dev/null && { echo 'the solution wrote the reward'; exit 1; }\n"
        "python3 -c \"import os; os.rename('tests', 'moved')\" 2>/dev/null && { echo 'the solution moved tests'; exit 1; }\n"
        "echo 1.0 > \"$RSI_REWARD_FILE\"\n"
    )
    outcome = verify(make_script_task(script), final_workdir({"solution.py": ""}), backend)
    assert outcome.verdict is Verdict.PASSED, (outcome.reason, outcome.output)
