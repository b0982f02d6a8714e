"""The verifier's parts: staging the fresh directory, value comparison, error verdicts, script and pytest kinds."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from rsi.sandbox.select import make_sandbox
from rsi.verdict import Verdict
from rsi.verifier import verify
from rsi.verifier.compare import matches
from rsi.verifier.kinds import pytest_verdict, script_verdict
from rsi.verifier.stage import MAX_FILE_BYTES, stage_submission

# -- staging -------------------------------------------------------------------------------------------


def test_stage_copies_only_regular_files_and_refuses_hijacks(tmp_path: Path):
    src, dest = tmp_path / "final", tmp_path / "fresh"
    src.mkdir()
    dest.mkdir()
    (src / "solution.py").write_text("def f(): return 1\n")
    (src / "helper").mkdir()
    (src / "helper" / "util.py").write_text("X = 1\n")
    for name in ("conftest.py", "sitecustomize.py", "usercustomize.py", "pytest.ini", "setup.cfg", "evil.pth"):
        (src / name).write_text("import os; os._exit(0)\n")
    (src / "__pycache__").mkdir()
    (src / "__pycache__" / "solution.cpython-311.pyc").write_bytes(b"\x00")
    (src / "link.py").symlink_to("/etc/passwd")
    (src / "dirlink").symlink_to("/etc")
    os.mkfifo(src / "pipe")  # opening it naively would block the verifier forever
    (src / "big.bin").write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    (src / "tests").mkdir()
    (src / "tests" / "test_fake.py").write_text("def test_ok(): pass\n")
    (src / "hard.py").write_text("h")
    os.link(src / "hard.py", tmp_path / "hard-elsewhere.py")

    started = time.monotonic()
    staged = stage_submission(src, dest, exclude_top={"tests"})
    assert time.monotonic() - started < 5
    assert sorted(staged.copied) == ["helper/util.py", "solution.py"]
    copied = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file() or p.is_symlink())
    assert copied == ["helper/util.py", "solution.py"]
    refused = " ".join(staged.refused)
    for name in ("conftest.py", "sitecustomize.py", "pytest.ini", "evil.pth", "__pycache__", "link.py", "pipe", "big.bin", "tests", "hard.py"):
        assert name in refused, name


def test_stage_only_takes_the_named_files(tmp_path: Path):
    src, dest = tmp_path / "final", tmp_path / "fresh"
    src.mkdir()
    dest.mkdir()
    (src / "solution.py").write_text("A = 1\n")
    (src / "other.py").write_text("B = 1\n")
    staged = stage_submission(src, dest, only={"solution.py"})
    assert staged.copied == ["solution.py"]
    assert not (dest / "other.py").exists()


# -- comparison ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("got", "expected", "mode", "equal"),
    [
        (2, 2.0, "exact", True),
        (True, 1, "exact", False),
        (1, True, "exact", False),
        (False, 0.0, "float", False),
        ([1, [2, "a"]], [1, [2, "a"]], "exact", True),
        ([1, 2], [2, 1], "exact", False),
        ([1, 2, 2], [2, 1, 2], "unordered", True),
        ([1, 2, 2], [2, 1, 1], "unordered", False),
        ({"a": 1}, {"a": 1, "b": 2}, "exact", False),
        (0.1 + 0.2, 0.3, "exact", False),
        (0.1 + 0.2, 0.3, "float", True),
        ([0.3001], [0.3], "float", False),
        (float("nan"), float("nan"), "float", True),
        (None, 0, "exact", False),
        ("1", 1, "exact", False),
    ],
)
def test_compare_modes(got, expected, mode, equal):
    assert matches(got, expected, mode) is equal


# -- error verdicts: only what the agent cannot cause --------------------------------------------------


def test_broken_cases_file_is_an_error_not_a_failure(make_cases_task, final_workdir):
    task = make_cases_task(raw="{not json")
    outcome = verify(task, final_workdir({"solution.py": "def double(x):\n    return 2 * x\n"}), make_sandbox("local"))
    assert outcome.verdict is Verdict.ERROR
    assert "cases file" in outcome.reason


def test_sandbox_that_cannot_start_is_an_error(make_cases_task, final_workdir):
    from tests.conftest import need
    from tests.sandbox.conftest import docker_url

    need(docker_url() is not None, "a Docker-API engine")
    broken = make_sandbox("docker", base_url=docker_url(), image="rsi-no-such-image:never")
    outcome = verify(make_cases_task(), final_workdir({"solution.py": "def double(x):\n    return 2 * x\n"}), broken)
    assert outcome.verdict is Verdict.ERROR
    assert "sandbox failed to start" in outcome.reason


def test_missing_solution_is_a_failure(make_cases_task, final_workdir):
    outcome = verify(make_cases_task(), final_workdir({"notes.txt": "gave up"}), make_sandbox("local"))
    assert outcome.verdict is Verdict.FAILED
    assert "missing" in outcome.reason


def test_bare_backend_judges_correctly_too(make_cases_task, final_workdir):
    sandbox = make_sandbox("local", use_bwrap=False)
    task = make_cases_task(compare="unordered", cases=[{"args": [[3, 1, 2]], "expected": [1, 2, 3, 3, 1, 2]}])
    good = verify(task, final_workdir({"solution.py": "def double(xs):\n    return xs + sorted(xs)\n"}), sandbox)
    bad = verify(task, final_workdir({"solution.py": "def double(xs):\n    return xs\n"}), sandbox)
    assert (good.verdict, bad.verdict) == (Verdict.PASSED, Verdict.FAILED)


# -- script kind ----------------------------------------------------------------------------------------

CHECK_DOUBLE = (
    "set -e\n"
    "python3 -I -c \"import sys; sys.path.insert(0, '.'); from solution import double; assert double(4) == 8\"\n"
)


def test_script_kind_passes_and_fails(backend, make_script_task, final_workdir):
    task = make_script_task(CHECK_DOUBLE)
    good = verify(task, final_workdir({"solution.py": "def double(x):\n    return 2 * x\n"}), backend)
    assert good.verdict is Verdict.PASSED, (good.reason, good.output)
    assert good.reward == 1.0
    bad = verify(task, final_workdir({"solution.py": "def double(x):\n    return x\n"}), backend)
    assert bad.verdict is Verdict.FAILED


def test_script_kind_reward_file_below_threshold_fails(backend, make_script_task, final_workdir):
    task = make_script_task('echo 0.5 > "$RSI_REWARD_FILE"\nexit 0\n')
    outcome = verify(task, final_workdir({"solution.py": ""}), backend)
    assert outcome.verdict is Verdict.FAILED
    assert outcome.reward == 0.5


def test_script_kind_agent_cannot_replace_the_tests(backend, make_script_task, final_workdir):
    task = make_script_task(CHECK_DOUBLE)
    fake = {"solution.py": "def double(x):\n    return 0\n", "tests/test.sh": "exit 0\n"}
    outcome = verify(task, final_workdir(fake), backend)
    assert outcome.verdict is Verdict.FAILED


def test_script_kind_timeout(backend, make_script_task, final_workdir):
    outcome = verify(make_script_task("sleep 60\n", timeout_s=3), final_workdir({"solution.py": ""}), backend)
    assert outcome.verdict is Verdict.TIMEOUT


def test_script_kind_missing_script_is_an_error(make_script_task, final_workdir):
    task = make_script_task("exit 0\n")
    (task.root / "tests" / "test.sh").unlink()
    outcome = verify(task, final_workdir({"solution.py": ""}), make_sandbox("local"))
    assert outcome.verdict is Verdict.ERROR


# -- pytest kind ----------------------------------------------------------------------------------------


def test_pytest_kind_passes_and_fails(backend_with_pytest, make_pytest_task, final_workdir):
    task = make_pytest_task()
    good = verify(task, final_workdir({"solution.py": "def double(x):\n    return 2 * x\n"}), backend_with_pytest)
    assert good.verdict is Verdict.PASSED, (good.reason, good.output)
    assert good.reward == 1.0
    half = verify(task, final_workdir({"solution.py": "def double(x):\n    return 4 if x == 2 else 0\n"}), backend_with_pytest)
    assert half.verdict is Verdict.FAILED
    assert half.reward == 0.5


@pytest.mark.parametrize(
    "files",
    [
        {
            "solution.py": "def double(x):\n    return 0\n",
            "conftest.py": (
                "import pytest\n"
                "@pytest.hookimpl(hookwrapper=True)\n"
                "def pytest_runtest_makereport(item, call):\n"
                "    outcome = yield\n"
                "    outcome.get_result().outcome = 'passed'\n"
            ),
        },
        {"solution.py": "def double(x):\n    return 0\n", "pytest.ini": "[pytest]\naddopts = -p no:python\n"},
        {"solution.py": "import os\nos._exit(0)\n"},
        {"solution.py": "import sys\nprint('2 passed')\nsys.exit(0)\n"},
        {"solution.py": "def double(x):\n    return 0\n", "sitecustomize.py": "import os\nos._exit(0)\n"},
    ],
    ids=["conftest_hijack", "pytest_ini_hijack", "os_exit0_at_import", "exit0_at_import", "sitecustomize"],
)
def test_pytest_kind_hijacks_fail(files, backend_with_pytest, make_pytest_task, final_workdir):
    outcome = verify(make_pytest_task(), final_workdir(files), backend_with_pytest)
    assert outcome.verdict is Verdict.FAILED, (outcome.reason, outcome.output)


@pytest.mark.parametrize(
    "source",
    [
        "from solution import double\n\nasync def test_async():\n    assert double(2) == 5\n",
        "from solution import double\n\nclass TestAsync:\n    async def test_method(self):\n        assert double(2) == 5\n",
    ],
    ids=["async", "async_method"],
)
def test_pytest_kind_never_passes_a_test_it_did_not_run(source, backend_with_pytest, make_pytest_task, final_workdir):
    task = make_pytest_task(source=source)
    outcome = verify(task, final_workdir({"solution.py": "def double(x):\n    return 2 * x\n"}), backend_with_pytest)
    assert outcome.verdict is Verdict.FAILED, (outcome.reason, outcome.output)


def test_pytest_kind_honest_solution_with_common_code_passes(backend_with_pytest, make_pytest_task, final_workdir):
    """What the audit hook allows: dataclasses, namedtuples, logging, files, math; returned dataclasses."""
    source = (
        "from solution import Point, double, stats\n\n"
        "def test_values(tmp_path):\n"
        "    assert double(2) == 4\n"
        "    assert stats([1, 2, 3]) == {'mean': 2.0, 'n': 3}\n"
        "    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(2, 1)\n"
    )
    solution = (
        "import collections, dataclasses, json, logging, math, statistics\n"
        "Pair = collections.namedtuple('Pair', 'a b')\n"
        "@dataclasses.dataclass(frozen=True)\n"
        "class Point:\n    x: int\n    y: int\n"
        "def double(x):\n    logging.getLogger('s').info('double %s', x)\n    return Pair(x, x).a + Pair(x, x).b\n"
        "def stats(xs):\n    return json.loads(json.dumps({'mean': statistics.mean(xs) * 1.0, 'n': len(xs)}))\n"
    )
    outcome = verify(make_pytest_task(source=source), final_workdir({"solution.py": solution}), backend_with_pytest)
    assert outcome.verdict is Verdict.PASSED, (outcome.reason, outcome.output)



def test_pytest_kind_honest_recursion_caches_and_class_methods_pass(backend_with_pytest, make_pytest_task, final_workdir):
    """Every callable of the solution module goes through the recorder's checks: recursion, caches,
    static and class methods, typing names used at run time must still work, also where typing_extensions is
    loaded (pytest's anyio plugin loads it in the project's interpreter; it patches `typing._check_generic`
    with a function that reads a frame, so `List[int]` in the solution called sys._getframe from it)."""
    source = (
        "try:\n    import typing_extensions  # noqa: F401\nexcept ImportError:\n    pass\n"
        "from solution import Shapes, fact, fib, total\n\n"
        "def test_values():\n"
        "    assert fact(10) == 3628800 and fib(30) == 832040\n"
        "    assert Shapes.square(3) == 9 and Shapes.unit().side == 1 and Shapes(2).area() == 4\n"
        "    assert total([1, 2, 3]) == 6\n"
    )
    solution = (
        "import functools\nfrom typing import List, cast\n"
        "def fact(n):\n    return 1 if n == 0 else n * fact(n - 1)\n"
        "@functools.lru_cache(maxsize=None)\ndef fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
        "def total(xs):\n    return sum(cast(List[int], xs))\n"
        "class Shapes:\n    def __init__(self, side):\n        self.side = side\n"
        "    def area(self):\n        return self.side * self.side\n"
        "    @staticmethod\n    def square(x):\n        return x * x\n"
        "    @classmethod\n    def unit(cls):\n        return cls(1)\n"
    )
    outcome = verify(make_pytest_task(source=source), final_workdir({"solution.py": solution}), backend_with_pytest)
    assert outcome.verdict is Verdict.PASSED, (outcome.reason, outcome.output)

COLLECTED = {"exit": 0, "tests": [
    {"id": "tests/test_a.py::test_one", "file": "/w/tests/test_a.py", "name": "test_one", "line": 3},
    {"id": "tests/test_a.py::test_two", "file": "/w/tests/test_a.py", "name": "test_two", "line": 6},
]}
ONE = ["tests/test_a.py::test_one", "passed", "/w/tests/test_a.py", "test_one", 3]
TWO = ["tests/test_a.py::test_two", "passed", "/w/tests/test_a.py", "test_two", 6]
DONE = ["<session>", "finished", "0", "undumpable", 0]


@pytest.mark.parametrize(
    ("records", "verdict", "why"),
    [
        ([ONE, TWO, DONE], Verdict.PASSED, "2 tests passed"),
        ([ONE, DONE], Verdict.FAILED, "1 never reported"),  # a test removed from the run
        ([ONE, TWO], Verdict.FAILED, "did not finish"),  # os._exit after the last test
        ([ONE, TWO, TWO, DONE], Verdict.FAILED, "two outcomes"),
        ([ONE, [*TWO[:2], "/w/solution.py", "test_two", 1], DONE], Verdict.FAILED, "other than the task's"),
        ([ONE, TWO, ["tests/test_b.py::test_x", "passed", "", "", 0], DONE], Verdict.FAILED, "not collected"),
        ([ONE, [*TWO[:1], "failed", *TWO[2:]], DONE], Verdict.FAILED, "1/2 tests passed"),
        ([], Verdict.FAILED, "0/2"),
    ],
    ids=["all", "count_changed", "early_exit", "twice", "swapped_function", "extra_test", "one_failed", "nothing"],
)
def test_pytest_verdict_needs_every_collected_test_passed_once(records, verdict, why):
    outcome = pytest_verdict({"collect": COLLECTED, "records": records, "exit": 0}, "", 0.0)
    assert outcome.verdict is verdict, outcome.reason
    assert why in outcome.reason


def test_pytest_verdict_uncollectable_tests_are_the_tasks_error():
    outcome = pytest_verdict({"collect": {"exit": 2, "tests": None}, "records": [], "exit": None}, "", 0.0)
    assert outcome.verdict is Verdict.ERROR


@pytest.mark.parametrize(
    ("report", "verdict"),
    [
        ({"exit": 0, "reward": None}, Verdict.PASSED),
        ({"exit": 1, "reward": "1.0"}, Verdict.FAILED),  # a forged reward cannot pass a failing script
        ({"exit": 0, "reward": "0.5"}, Verdict.FAILED),
        ({"exit": 0, "reward": "nan?"}, Verdict.FAILED),
        ({"exit": -9, "reward": None}, Verdict.FAILED),
    ],
)
def test_script_verdict(report, verdict):
    assert script_verdict(report, "", 0.0).verdict is verdict


def test_verify_never_raises_on_its_own_crash(make_cases_task, final_workdir):
    class Exploding:
        name = "exploding"
        python = "python3"

        def start(self, *args, **kwargs):
            raise RuntimeError("boom")

    outcome = verify(make_cases_task(), final_workdir({"solution.py": "def double(x): return 2*x\n"}), Exploding())  # type: ignore[arg-type]
    assert outcome.verdict is Verdict.ERROR
    assert "boom" in outcome.reason
    assert json.loads(outcome.model_dump_json())["verdict"] == "error"


def test_fresh_roots_left_by_a_killed_verifier_are_swept(make_cases_task, final_workdir):
    from rsi.verifier.stage import STALE_AFTER_S, make_fresh_root, remove_fresh_root

    first = make_fresh_root()
    old = time.time() - STALE_AFTER_S - 60
    os.utime(first, (old, old))
    second = make_fresh_root()
    try:
        assert not first.exists()
        assert second.exists() and (second / "work").is_dir()
        assert oct(second.stat().st_mode & 0o777) == oct(0o711)
    finally:
        remove_fresh_root(second)


def test_pytest_kind_ignores_ini_and_conftest_planted_above_the_fresh_dir(
    make_pytest_task, final_workdir, open_tmp, monkeypatch
):
    """In the bare mode an attempt can write to the host's /tmp; pytest must not search upward."""
    import tempfile

    planted = open_tmp / "shared-tmp"
    planted.mkdir()
    planted.chmod(0o755)
    (planted / "pytest.ini").write_text("[pytest]\n")
    (planted / "conftest.py").write_text(
        "import pytest\n"
        "@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n"
        "    outcome.get_result().outcome = 'passed'\n"
    )
    monkeypatch.setattr(tempfile, "tempdir", str(planted))
    outcome = verify(make_pytest_task(), final_workdir({"solution.py": "def double(x):\n    return 0\n"}), make_sandbox("local", use_bwrap=False))
    assert outcome.verdict is Verdict.FAILED, (outcome.reason, outcome.output)
    assert outcome.reason == "0/2 tests passed"
