"""The `ui` task kind on the seam (rsi/verifier/ui/kind.py): a ui task loads through the kind's models, its
bad keys and checks are located, `rsi tasks check` passes its reference and fails its stub and blank page
with the real browser, its public checks run through the judge, and a machine without Chromium gets one
line from `rsi attempt` before any model runs.

Browser tests skip without Debian's chromium (and fail in CI, RSI_REQUIRE_SERVICES=1).
"""

from __future__ import annotations

import shutil
import tempfile
import tomllib
from pathlib import Path

import pytest

from rsi.errors import TaskError
from rsi.harness import prompts, replies
from rsi.harness.checks import CandidateChecker
from rsi.harness.task_check import check_task
from rsi.sandbox.local import LocalSandbox
from rsi.tasks.kinds import kind_of
from rsi.tasks.load import load_task
from rsi.verdict import Verdict
from rsi.verifier.ui import NO_BROWSER, find_chromium
from rsi.verifier.ui.kind import UI, UiPublic, UiVerifierOptions, ui_options
from tests.conftest import need
from tests.verifier.ui_task import CHECKS, DEAD_BUTTON, ONE_FILE, TASK_TOML, make_ui_task, register_ui_kind

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def ui(monkeypatch):
    return register_ui_kind(monkeypatch)


@pytest.fixture
def tasks_root():
    root = Path(tempfile.mkdtemp(prefix="rsi-ui-kind-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def chromium() -> str:
    found = find_chromium()
    need(found is not None, "Debian's chromium is not installed (apt-get install chromium)")
    return str(found)


def test_pyproject_declares_the_kind_by_one_entry_point_line() -> None:
    points = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]["rsi.verifier_kinds"]
    assert points["ui"] == "rsi.verifier.ui.kind:UI"
    module, _, name = points["ui"].partition(":")
    assert getattr(__import__(module, fromlist=[name]), name) is UI


def test_a_ui_task_loads_through_the_kinds_models(ui, tasks_root: Path) -> None:
    task = load_task(make_ui_task(tasks_root))
    assert kind_of(task) is UI and task.spec.solution_file == "index.html"
    options = task.spec.verifier.options
    assert isinstance(options, UiVerifierOptions) and options.viewport == (640, 480) and options.required_layers is None
    assert ui_options(task).entry == "index.html"
    assert isinstance(task.spec.public, UiPublic) and task.spec.public.declared
    assert [c.name for c in task.spec.public.specs()] == ["text"]
    # the text substrate is asked for the kind's fences and files, and reads them back
    message = prompts.task_message(task.instruction, "index.html", substrate="text", style="example", reply=UI.reply)
    assert "Reply with one ```html block: the complete contents of index.html." in message
    assert "one ```css block for style.css, one ```js block for app.js" in message
    assert "a web page in index.html" in message and "```python" not in message
    reply = f"Here it is.\n```html\n{ONE_FILE}```\n```css\nh1 {{ color: #222; }}\n```\n"
    assert replies.solution_code(reply, UI.reply) == ONE_FILE
    assert replies.extra_files(reply, UI.reply) == {"style.css": "h1 { color: #222; }\n"}


@pytest.mark.parametrize(("bad", "good", "key", "line"), [
    ("viewport = [640, 480]", "viewport = [64, 480]", "verifier.viewport", 9),
    ("viewport = [640, 480]", "viewport = [640, 480]\nload_s = -1", "verifier.load_s", 10),
    ("viewport = [640, 480]", "viewport = [640, 480]\nscript = \"test.sh\"", "verifier.script", 10),
    ('check = "text", text = "0"', 'check = "txt", text = "0"', "public.checks[0]", 12),
    ('selector = "#count" }', 'selector = "#count", colour = "red" }', "public.checks[0]", 12),
])
def test_bad_ui_keys_are_located_in_task_toml(ui, tasks_root: Path, bad: str, good: str, key: str, line: int) -> None:
    folder = make_ui_task(tasks_root, toml=TASK_TOML.replace(bad, good))
    with pytest.raises(TaskError) as raised:
        load_task(folder)
    found = [(p.file, p.line, p.key) for p in raised.value.problems]
    assert any(f == folder / "task.toml" and at == line and k.startswith(key) for f, at, k in found), found


def test_a_broken_or_missing_checks_file_is_located(ui, tasks_root: Path) -> None:
    folder = make_ui_task(tasks_root, checks=CHECKS.replace('role = "button"\n', 'role = "button"\nlabel = "x"\n'))
    with pytest.raises(TaskError) as raised:
        load_task(folder)
    [problem] = raised.value.problems
    assert (Path(problem.file).name, problem.line, problem.key) == ("checks.toml", 7, "check[2].label")
    (folder / "tests" / "checks.toml").unlink()
    with pytest.raises(TaskError) as raised:
        load_task(folder)
    assert [(p.line, p.key) for p in raised.value.problems] == [(8, "verifier.kind")]
    assert "tests/checks.toml" in raised.value.problems[0].message


def test_tasks_check_passes_the_reference_and_fails_the_stub_and_a_blank_page(ui, tasks_root: Path, chromium) -> None:
    task = load_task(make_ui_task(tasks_root))
    result = check_task(task, LocalSandbox())
    verdicts = {p.probe: (p.verdict, p.ok) for p in result.probes}
    assert verdicts == {"reference": (Verdict.PASSED, True), "empty": (Verdict.FAILED, True),
                        "wrong": (Verdict.FAILED, True), "public": (Verdict.PASSED, True)}, result.probes


def test_public_checks_run_through_the_judge_and_say_what_failed(ui, tasks_root: Path, chromium) -> None:
    task = load_task(make_ui_task(tasks_root))
    workdir = tasks_root / "work"
    shutil.copytree(task.environment_dir, workdir)
    workdir.chmod(0o777)
    checker = CandidateChecker(task, LocalSandbox(), workdir, tasks_root / "checks")
    good, blank = checker.check(DEAD_BUTTON), checker.check("<!doctype html><body></body>")
    assert (good.passed, good.total, blank.passed, blank.total) == (1, 1, 0, 1)
    [example] = blank.examples
    assert example.call == 'text text="0" selector="#count"' and example.expected == "pass" and example.got
    assert "expected pass" in blank.first_failure, blank.first_failure


def test_without_chromium_rsi_attempt_says_so_in_one_line_before_any_model_runs(ui, workspace, monkeypatch,
                                                                               capsys) -> None:
    from rsi.cli.app import main

    make_ui_task(workspace.tasks_dir)
    empty = workspace.root / "no-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # how the judge finds Chromium: $RSI_CHROMIUM, else PATH
    monkeypatch.delenv("RSI_CHROMIUM", raising=False)
    monkeypatch.setenv("RSI_MODEL_OVERRIDE", "scripted:/nonexistent.json")  # never read: nothing runs a model
    monkeypatch.setattr("sys.argv", ["rsi", "-C", str(workspace.root), "attempt", "default", "pages/counter"])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 1  # ours (the machine), not the user's input
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("error:") == 1
    assert f"error: pages/counter: {NO_BROWSER}" in " ".join(err.split())
    assert not (workspace.runs_dir / "attempts").exists()


# -- hostile pages, through the kind's own verifier path (rsi.verifier.verify: staging, sandbox, judge) ----------

def _verdict_of(task, files: dict[str, str], root: Path):
    from rsi.verifier import verify

    work = root / "final"
    work.mkdir()
    work.chmod(0o777)
    for name, text in files.items():
        path = work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return verify(task, work, LocalSandbox(), evidence_dir=root / "evidence")


def test_a_page_that_navigates_to_a_local_file_fails_and_reads_nothing(ui, tasks_root: Path, chromium) -> None:
    task = load_task(make_ui_task(tasks_root))
    page = ONE_FILE.replace("<script>", "<script>setTimeout(() => { location.href = 'file:///etc/passwd'; }, 10);\n"
                                        "const f = document.createElement('iframe'); f.src = 'file:///etc/passwd';"
                                        " document.body.appendChild(f);\n")
    outcome = _verdict_of(task, {"index.html": page}, tasks_root)
    assert outcome.verdict is Verdict.FAILED, outcome  # the agent's doing: a failure, never an error
    assert outcome.layer_scores["constraints"] < 1.0, outcome.layer_scores  # it reached for a local file
    assert "no-external-requests" in outcome.reason, outcome.reason
    assert "root:x:0:0" not in Path(outcome.artifacts["checks"]).read_text() + outcome.output + outcome.reason


def test_a_submission_that_brings_its_own_checks_is_judged_by_the_tasks(ui, tasks_root: Path, chromium) -> None:
    """The agent's folder holds a lenient tests/checks.toml and a .rsi-verifier/ of its own, and its page tries to
    read and overwrite them: the hidden checks are the task's, and the dead button still fails interaction."""
    task = load_task(make_ui_task(tasks_root))
    lenient = '[[check]]\ncheck = "loads"\n'
    page = DEAD_BUTTON.replace("<script>", "<script>fetch('tests/checks.toml', {method: 'PUT', body: 'x'})"
                                           ".catch(() => {}); fetch('.rsi-verifier/result.json').catch(() => {});\n")
    outcome = _verdict_of(task, {"index.html": page, "tests/checks.toml": lenient,
                                 ".rsi-verifier/result.json": '{"verdict": "passed"}'}, tasks_root)
    assert outcome.verdict is Verdict.FAILED, outcome
    assert outcome.layer_scores["interaction"] < 1.0 and outcome.layer_scores["viability"] == 1.0
    assert tomllib.loads((task.tests_dir / "checks.toml").read_text())["check"]  # the task's own checks, intact
