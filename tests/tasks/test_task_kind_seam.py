"""A new task kind is its own module and a registry entry: nothing in tasks/spec.py, harness/prompts.py or
fences.py names it.

The kind here is made in this test only (never shipped) and shaped like the `ui` format of
/work/notes/ui_format.md: `[verifier]` options `viewport` and `required_layers`, `[public] checks`, a
default solution file index.html, and a reply of ```html (+ ```css, ```js) blocks. It is registered the way
a lab's package would be seen at run time (`VERIFIER_KINDS[name] = kind`, here through monkeypatch), and
then a task of it loads, is located when wrong, is prompted for, read from a reply, checked and judged.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from rsi import plugins
from rsi.errors import TaskError
from rsi.fences import Fence, ReplyFormat
from rsi.harness import prompts, replies
from rsi.harness.checks import CandidateChecker
from rsi.sandbox.base import Limits, Sandbox
from rsi.sandbox.select import make_sandbox
from rsi.tasks.kinds import TaskKind, kind_of
from rsi.tasks.load import load_task
from rsi.tasks.spec import PublicSpec, Task, VerifierOptions
from rsi.verdict import CheckRecord, ExampleCheck, Verdict, VerifierOutcome
from rsi.verifier import verify

# -- the kind's own module ---------------------------------------------------------------------------
Layer = Literal["viability", "task", "interaction", "constraints", "visual"]


class PageOptions(VerifierOptions):
    viewport: tuple[int, int] = (800, 600)
    required_layers: list[Layer] | None = None


class PageCheck(BaseModel):
    model_config = ConfigDict(extra="forbid")
    check: Literal["text"]
    text: str
    selector: str = ""


class PagePublic(PublicSpec):
    checks: list[PageCheck] = Field(default_factory=list)

    @property
    def declared(self) -> bool:
        return bool(self.checks)


HTML = Fence("HTML", "html", frozenset({"html", "htm"}))
CSS = Fence("CSS", "css", frozenset({"css"}))
JS = Fence("JavaScript", "js", frozenset({"js", "javascript"}))


def _page_text(workdir: Path, task: Task) -> str:
    page = workdir / task.spec.solution_file
    return page.read_text(encoding="utf-8") if page.is_file() else ""


def judge_page(task: Task, work: Path, sandbox: Sandbox, limits: Limits) -> VerifierOutcome:
    """A stand-in judge (the real one drives a browser): the hidden tests/needle.txt must be in the page."""
    needle = (task.tests_dir / "needle.txt").read_text(encoding="utf-8").strip()
    found = needle in _page_text(work, task)
    return VerifierOutcome(verdict=Verdict.PASSED if found else Verdict.FAILED, reward=1.0 if found else 0.0,
                           reason="needle found" if found else "needle missing")


def page_public_checks(task: Task, workdir: Path, sandbox: Sandbox, candidate: int) -> CheckRecord:
    public = task.spec.public
    assert isinstance(public, PagePublic)
    page = _page_text(workdir, task)
    results = [ExampleCheck(call=f"text {c.text!r}", expected="present", passed=c.text in page) for c in public.checks]
    return CheckRecord(candidate=candidate, passed=sum(r.passed for r in results), total=len(results), examples=results)


PAGE = TaskKind(judge_page, options=PageOptions, public=PagePublic, public_checks=page_public_checks,
                solution_file="index.html", reply=ReplyFormat((HTML, CSS, JS), ("style.css", "app.js")), name="page")


# -- the tests ---------------------------------------------------------------------------------------
@pytest.fixture
def page_kind(monkeypatch):
    monkeypatch.setitem(plugins.VERIFIER_KINDS, "page", PAGE)
    return PAGE


TASK_TOML = """id = "counter"
title = "A counter"
split = "train"

[verifier]
kind = "page"
viewport = [640, 480]
required_layers = ["viability", "task"]

[public]
checks = [ { check = "text", text = "Count", selector = "#count" } ]
"""


def make_task(root: Path, toml: str = TASK_TOML) -> Path:
    folder = root / "pages" / "counter"
    (folder / "environment").mkdir(parents=True)
    (folder / "tests").mkdir()
    (folder / "solution").mkdir()
    (folder / "task.toml").write_text(toml)
    (folder / "instruction.md").write_text("Make a page that shows Count and a button.\n")
    (folder / "environment" / "index.html").write_text("<!doctype html><p>stub</p>\n")
    (folder / "tests" / "needle.txt").write_text("<button\n")
    (folder / "solution" / "index.html").write_text('<!doctype html><p id="count">Count 0</p><button>+</button>\n')
    return folder


def test_a_task_of_a_new_kind_loads_through_the_kinds_own_models(page_kind, tmp_path: Path) -> None:
    task = load_task(make_task(tmp_path))
    assert kind_of(task) is PAGE
    assert task.spec.solution_file == "index.html"  # the kind's default: task.toml names none
    options = task.spec.verifier.options
    assert isinstance(options, PageOptions)
    assert options.viewport == (640, 480) and options.required_layers == ["viability", "task"]
    assert isinstance(task.spec.public, PagePublic) and task.spec.public.checks[0].selector == "#count"
    # The options and the public checks are part of the task's content hash.
    changed = make_task(tmp_path / "other", TASK_TOML.replace("[640, 480]", "[800, 600]"))
    assert load_task(changed).content_hash != task.content_hash


@pytest.mark.parametrize(("bad", "good", "key", "line"), [
    ("viewport = [640, 480]", 'viewport = [640, "wide"]', "verifier.viewport[1]", 7),
    ('required_layers = ["viability", "task"]', 'required_layers = ["viability", "smell"]', "verifier.required_layers[1]", 8),
    ("required_layers", "blocked_layers", "verifier.blocked_layers", 8),
    ('check = "text", text', 'check = "text", txt', "public.checks[0]", 11),
])
def test_a_new_kinds_bad_keys_are_located_in_task_toml(page_kind, tmp_path: Path, bad: str, good: str, key: str,
                                                        line: int) -> None:
    folder = make_task(tmp_path, TASK_TOML.replace(bad, good))
    with pytest.raises(TaskError) as raised:
        load_task(folder)
    problems = [(p.file, p.line, p.key) for p in raised.value.problems]
    assert any(file == folder / "task.toml" and at == line and where.startswith(key) for file, at, where in problems), problems


def test_a_shipped_kinds_keys_are_not_a_new_kinds(page_kind, tmp_path: Path) -> None:
    folder = make_task(tmp_path, TASK_TOML.replace('kind = "page"', 'kind = "page"\ncases_file = "cases.json"'))
    with pytest.raises(TaskError) as raised:
        load_task(folder)
    assert [(p.line, p.key) for p in raised.value.problems] == [(7, "verifier.cases_file")]


def test_the_prompts_and_the_reply_reader_use_the_kinds_fences(page_kind, tmp_path: Path) -> None:
    task = load_task(make_task(tmp_path))
    reply_format = kind_of(task).reply
    message = prompts.task_message(task.instruction, task.spec.solution_file, substrate="text", style="plain",
                                   reply=reply_format)
    assert "Reply with one ```html block: the complete contents of index.html." in message
    assert "one ```css block for style.css, one ```js block for app.js" in message
    assert "```python" not in message
    assert "```html block" in prompts.repair_message("text 'Count' absent", "index.html", "text", reply_format)
    reply = ("Here:\n```python\nprint('not a page')\n```\n```html\n<button>+</button>\n```\n"
             "```css\nbutton { color: red; }\n```\n```javascript\nlet n = 0;\n```\n")
    assert replies.solution_code(reply, reply_format) == "<button>+</button>\n"
    assert replies.extra_files(reply, reply_format) == {"style.css": "button { color: red; }\n", "app.js": "let n = 0;\n"}
    # The shipped kinds still read their Python block, and are asked for it in the same words as before.
    assert replies.solution_code(reply) == "print('not a page')\n"
    python = prompts.task_message("Write f.", "solution.py", substrate="text", style="plain")
    assert python.endswith("Reply with one ```python block: the complete contents of solution.py.")


def test_the_kinds_public_checks_and_judge_run_through_the_harness_and_verifier(page_kind, tmp_path: Path) -> None:
    task = load_task(make_task(tmp_path))
    workdir = tmp_path / "work"
    shutil.copytree(task.environment_dir, workdir)
    sandbox = make_sandbox("local")
    checker = CandidateChecker(task, sandbox, workdir, tmp_path / "checks")
    assert checker.declared
    failing, passing = checker.check("<p>nothing</p>\n"), checker.check('<p id="count">Count 0</p>\n')
    assert (failing.passed, failing.total, passing.passed, passing.total) == (0, 1, 1, 1)
    assert verify(task, workdir, sandbox).verdict == Verdict.FAILED  # the stub
    shutil.copytree(task.solution_dir, workdir, dirs_exist_ok=True)
    assert verify(task, workdir, sandbox).verdict == Verdict.PASSED  # the reference


def test_an_unregistered_kind_is_a_located_error_not_a_fallback(tmp_path: Path) -> None:
    folder = make_task(tmp_path)
    with pytest.raises(TaskError) as raised:
        load_task(folder)
    assert [(p.line, p.key) for p in raised.value.problems] == [(6, "verifier.kind")]
    assert "unknown verifier kind 'page'" in raised.value.problems[0].message


