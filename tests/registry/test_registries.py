"""One registry per plug-in axis: a throwaway implementation registered through the registry alone is
selectable by name from a contract, a task, a run spec or a flag; an unknown name is a located error.

Registrations go through `monkeypatch.setitem`, so each test leaves its registry as it found it.
The runs, attempts and checks below are the real ones (real sandbox, real verifier, real store); only
the registered implementations are the tests' own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rsi.cli.app import app
from rsi.contracts.load import load_contract
from rsi.errors import ContractError, TaskError, UserInputError, ValidationError
from rsi.executors import EXECUTORS, make_executor
from rsi.executors.local import LocalExecutor
from rsi.executors.noop import NoopAttempt
from rsi.models.factory import make_model
from rsi.models.registry import MODEL_BACKENDS
from rsi.models.scripted import ScriptedModel
from rsi.run.orchestrator import run_portfolio
from rsi.run.spec import load_run_spec
from rsi.sandbox.local import LocalSandbox
from rsi.sandbox.select import SANDBOXES, make_sandbox
from rsi.tasks.load import load_suite, load_task
from rsi.verdict import Verdict, VerifierOutcome
from rsi.verifier import verify
from rsi.verifier.registry import VERIFIER_KINDS, VerifierKind
from tests.run.mini import MINI_PORTFOLIO


def invoke(*args: str):
    """`rsi ARGS` in this process (a subprocess would not see the test's registration)."""
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def problem_of(error: ValidationError | ContractError | TaskError):
    assert len(error.problems) == 1, error.problems
    return error.problems[0]


def run_spec_problem(tmp_path: Path, text: str):
    """The one problem `load_run_spec` reports for a run spec file holding `text`, and the file."""
    spec_file = tmp_path / "run.toml"
    spec_file.write_text(text)
    with pytest.raises(ValidationError) as raised:
        load_run_spec(spec_file)
    return problem_of(raised.value), spec_file


# -- sandbox backends -------------------------------------------------------------------------------
class CountingSandbox(LocalSandbox):
    """The real local sandbox, counting the processes it starts."""

    name = "counting"
    started = 0

    def run(self, *args, **kwargs):
        CountingSandbox.started += 1
        return super().run(*args, **kwargs)

    def start(self, *args, **kwargs):
        CountingSandbox.started += 1
        return super().start(*args, **kwargs)


@pytest.fixture
def counting_sandbox(monkeypatch):
    CountingSandbox.started = 0
    monkeypatch.setitem(SANDBOXES, "counting", lambda **opts: CountingSandbox(**opts))
    return CountingSandbox


def test_a_registered_sandbox_backend_is_chosen_by_flag_and_by_run_spec(workspace, counting_sandbox, tmp_path) -> None:
    assert isinstance(make_sandbox("counting"), CountingSandbox)
    result = invoke("-C", str(workspace.root), "tasks", "check", "pyfuncs", "--task", "add-two", "--sandbox", "counting")
    assert result.exit_code == 0, result.output
    assert "counting" in result.output and counting_sandbox.started >= 3  # reference, empty and wrong probes
    spec_file = tmp_path / "run.toml"
    spec_file.write_text('portfolio = "default"\nsandbox = "counting"\n')
    assert load_run_spec(spec_file).sandbox == "counting"


def test_an_unknown_sandbox_backend_is_a_located_error(tmp_path, cli) -> None:
    problem, spec_file = run_spec_problem(tmp_path, 'portfolio = "default"\n\nsandbox = "counting"\n')
    assert (Path(problem.file), problem.line, problem.key) == (spec_file, 3, "sandbox")
    assert "unknown sandbox backend 'counting'" in problem.message
    with pytest.raises(UserInputError, match="unknown sandbox backend"):
        make_sandbox("counting")
    result = cli("tasks", "check", "pyfuncs", "--sandbox", "counting", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "--sandbox: unknown sandbox backend 'counting'; known: auto, local, docker" in result.stderr


# -- executors ---------------------------------------------------------------------------------------
class CountingExecutor(LocalExecutor):
    """The real thread executor under another name, counting the attempts it was given."""

    name = "counting"
    given = 0

    def start(self, specs):
        CountingExecutor.given += len(specs)
        super().start(specs)


def test_a_registered_executor_runs_a_run_named_in_its_spec(workspace, monkeypatch, tmp_path) -> None:
    CountingExecutor.given = 0
    monkeypatch.setitem(EXECUTORS, "counting", lambda fn, folder, workers, slurm: CountingExecutor(fn, workers))
    monkeypatch.delenv("RSI_DB", raising=False)
    (workspace.portfolios_dir / "mini.toml").write_text(MINI_PORTFOLIO)
    spec_file = tmp_path / "run.toml"
    spec_file.write_text('portfolio = "mini"\nexecutor = "counting"\nbudget_attempts = 6\nlimit_tasks = 3\n'
                         'report = false\n')
    outcome = run_portfolio(load_run_spec(spec_file), workspace, attempt_fn=NoopAttempt(pass_rate=0.0))
    assert outcome.status == "done" and outcome.attempts == 6 == CountingExecutor.given


def test_an_unknown_executor_is_a_located_error(tmp_path) -> None:
    problem, spec_file = run_spec_problem(tmp_path, 'executor = "counting"\n')
    assert (Path(problem.file), problem.line, problem.key) == (spec_file, 1, "executor")
    assert "unknown executor 'counting'; known: local, slurm" in problem.message
    with pytest.raises(UserInputError, match="unknown executor"):
        make_executor("counting", NoopAttempt(), tmp_path)


# -- model backends ----------------------------------------------------------------------------------
def canned_contract(workspace, backend: str) -> Path:
    text = (workspace.root / "hcp" / "default.toml").read_text().replace('name = "default"', 'name = "canned"')
    path = workspace.root / "hcp" / "canned.toml"
    path.write_text(text + f'\n[serving]\nbackend = "{backend}"\n')
    return path


def test_a_registered_model_backend_serves_the_contract_that_names_it(workspace, monkeypatch, tmp_path) -> None:
    solve = "```python\nopen('solution.py', 'w').write('def add(a, b):\\n    return a + b\\n')\nsubmit()\n```"
    built: list[ScriptedModel] = []

    def canned(spec, ws, adapters, shared):
        built.append(ScriptedModel([solve], name="canned"))
        return built[-1]

    monkeypatch.setitem(MODEL_BACKENDS, "canned", canned)
    contract = load_contract(canned_contract(workspace, "canned"))
    assert contract.spec.serving.backend == "canned" and make_model(contract.spec, workspace) is built[-1]
    result = invoke("-C", str(workspace.root), "attempt", "canned", "pyfuncs/add-two", "--out", str(tmp_path / "a"),
                    "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["verdict"] == "passed"
    assert built[-1].requests and built[-1].closed


def test_an_unknown_model_backend_is_a_located_error(workspace) -> None:
    path = canned_contract(workspace, "canned")
    with pytest.raises(ContractError) as raised:
        load_contract(path)
    problem = problem_of(raised.value)
    assert (Path(problem.file), problem.line, problem.key) == (path, len(path.read_text().splitlines()), "serving.backend")
    assert "unknown model backend 'canned'; known: embedded, openai, vllm" in problem.message


# -- verifier kinds ----------------------------------------------------------------------------------
def _answer_judge(task, work: Path, sandbox, limits) -> VerifierOutcome:
    """Passes iff ANSWER.txt holds what tests/expected.txt holds (a trusted host-side judge)."""
    answer = work / task.spec.solution_file
    expected = (task.tests_dir / "expected.txt").read_text().strip()
    passed = answer.is_file() and answer.read_text().strip() == expected
    return VerifierOutcome(verdict=Verdict.PASSED if passed else Verdict.FAILED, reward=1.0 if passed else 0.0)


def _answer_files(tests: Path, spec, toml_file: Path, text: str):
    from rsi.errors import Problem

    return [] if (tests / "expected.txt").is_file() else [Problem(toml_file, None, "verifier", "tests/expected.txt is missing")]


def answer_task(root: Path, kind: str) -> Path:
    folder = root / "tasks" / "answers" / "forty-two"
    (folder / "tests").mkdir(parents=True)
    (folder / "solution").mkdir()
    (folder / "task.toml").write_text(f'id = "forty-two"\ntitle = "The answer"\nsolution_file = "ANSWER.txt"\n\n'
                                      f'[verifier]\nkind = "{kind}"\n')
    (folder / "instruction.md").write_text("Write the answer to ANSWER.txt.\n")
    (folder / "tests" / "expected.txt").write_text("42\n")
    (folder / "solution" / "ANSWER.txt").write_text("42\n")
    return folder


def test_a_registered_verifier_kind_judges_the_tasks_that_name_it(workspace, monkeypatch, tmp_path) -> None:
    monkeypatch.setitem(VERIFIER_KINDS, "answer", VerifierKind(_answer_judge, _answer_files))
    folder = answer_task(workspace.root, "answer")
    task = load_task(folder)
    assert task.spec.verifier.kind == "answer"
    work = tmp_path / "work"
    work.mkdir()
    (work / "ANSWER.txt").write_text("41\n")
    assert verify(task, work, make_sandbox("auto")).verdict is Verdict.FAILED
    (work / "ANSWER.txt").write_text("42\n")
    assert verify(task, work, make_sandbox("auto")).verdict is Verdict.PASSED
    result = invoke("-C", str(workspace.root), "tasks", "check", "answers")
    assert result.exit_code == 0, result.output  # reference passes, empty and wrong fail
    (folder / "tests" / "expected.txt").unlink()
    with pytest.raises(TaskError, match="tests/expected.txt is missing"):
        load_suite(workspace, "answers")


def test_an_unknown_verifier_kind_is_a_located_error(workspace) -> None:
    folder = answer_task(workspace.root, "answer")
    with pytest.raises(TaskError) as raised:
        load_task(folder)
    problem = problem_of(raised.value)
    assert (Path(problem.file), problem.line, problem.key) == (folder / "task.toml", 6, "verifier.kind")
    assert "unknown verifier kind 'answer'; known: cases, pytest, script" in problem.message


# -- check selection rules ---------------------------------------------------------------------------
def test_a_registered_selection_rule_picks_the_candidate_of_contracts_that_name_it(workspace, monkeypatch) -> None:
    from rsi.config import Configuration
    from rsi.harness.attempt import run_attempt
    from rsi.harness.selection import SELECTION_RULES, SelectionRule

    # "last-pass": the latest candidate that passes every public check (a rule the project does not ship)
    def last_pass(records):
        passing = [i for i, r in enumerate(records) if r is not None and r.all_passed]
        return passing[-1] if passing else None

    monkeypatch.setitem(SELECTION_RULES, "last-pass", SelectionRule(last_pass, False, "the latest passing candidate"))
    path = workspace.root / "hcp" / "default.toml"
    text = path.read_text().replace('max_turns = 4', 'max_turns = 1\ncheck = "last-pass"').replace(
        'substrate = "repl"', 'substrate = "text"').replace("samples = 1", "samples = 2")
    path.write_text(text)
    contract = load_contract(path)
    assert contract.spec.harness.check == "last-pass"
    config = Configuration(name="c", contract_ref="default", spec=contract.spec, system_prompt="")
    task = {t.id: t for t in load_suite(workspace, "pyfuncs")}["add-two"]
    first, second = ("```python\ndef add(a, b):\n    return a + b  # " + tag + "\n```" for tag in ("first", "second"))
    outcome = run_attempt(config, task, ScriptedModel([first, second]), LocalSandbox(), workspace.runs_dir / "a", seed=1)
    assert outcome.verdict is Verdict.PASSED and outcome.final_code.rstrip().endswith("# second")


def test_an_unknown_selection_rule_is_a_located_error(workspace) -> None:
    path = workspace.root / "hcp" / "default.toml"
    path.write_text(path.read_text().replace('max_turns = 4', 'max_turns = 4\ncheck = "last-pass"'))
    with pytest.raises(ContractError) as raised:
        load_contract(path)
    problem = problem_of(raised.value)
    line = path.read_text().splitlines().index('check = "last-pass"') + 1
    assert (Path(problem.file), problem.line, problem.key) == (path, line, "harness.check")
    assert "unknown check selection rule 'last-pass'; known: off, first-pass, most-passed" in problem.message
