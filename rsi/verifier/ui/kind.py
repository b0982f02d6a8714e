"""The `ui` task kind: a web page the agent writes, judged in headless Chromium (rsi/verifier/ui/).

What this module adds to the judge is the seam's side (rsi/tasks/kinds.py `TaskKind`):

- `[verifier]` options: `viewport`, `required_layers` and the judge's `entry`, `load_s`, `step_s`
  (`UiVerifierOptions`: the judge's `UiOptions`, as a kind's `VerifierOptions`);
- `[public] checks = [...]`: checks the instruction states in words, validated with the judge's own
  registry, so a bad one is `task.toml:LINE: public.checks[i]: ...`;
- `public_checks`: those checks run through the judge on a candidate, one `ExampleCheck` each (call =
  the check in words, expected = "pass", got = the judge's detail);
- `solution_file` index.html, and a reply of one ```html block (plus ```css -> style.css and ```js ->
  app.js), which the prompts ask for in the kind's words ("a web page in index.html");
- the hidden judge: tests/checks.toml (`[[check]]` tables) through `verify_ui`, its screenshot and
  per-check file written to the verification's kept folder (rsi.verifier.stage.kept_dir), which
  `rsi.verifier.verify` moves into the attempt's evidence;
- `file_problems`: the checks file's located errors; `wrong_solution`: a blank page;
- `unavailable`: the one line a machine without Chromium gets before an attempt starts.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, Field, field_validator, model_validator

from rsi.errors import Problem, SandboxError
from rsi.fences import Fence, ReplyFormat
from rsi.sandbox.base import Limits, Sandbox
from rsi.tasks.kinds import TaskKind
from rsi.tasks.spec import PublicSpec, Task, TaskSpec, VerifierOptions
from rsi.verdict import CheckRecord, ExampleCheck, Verdict, VerifierOutcome
from rsi.verifier.stage import kept_dir
from rsi.verifier.ui.checks import (
    CheckError,
    CheckSpec,
    UiOptions,
    load_checks_file,
    parse_check,
    parse_checks,
)
from rsi.verifier.ui.runner import NO_BROWSER, find_chromium, judge_page

CHECKS_FILE = "checks.toml"
SOLUTION_FILE = "index.html"
BLANK_PAGE = "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title></title></head><body></body></html>\n"
DESCRIPTION_CHARS = 240
VIEWPORT_MIN, VIEWPORT_MAX = 200, 4000

HTML = Fence("HTML", "html", frozenset({"html", "htm"}))
CSS = Fence("CSS", "css", frozenset({"css"}))
JS = Fence("JavaScript", "js", frozenset({"js", "javascript"}))

# The prompts' `example` style: a tiny page of a different task, in the reply's shape.
EXAMPLE = """Example (a different task: "a web page in index.html with a button labelled Hello that shows Hi in
#out when clicked"). A good reply:

```html
<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Hello</title></head>
<body><button id="hello">Hello</button><p id="out"></p>
<script>document.getElementById('hello').addEventListener('click', () => {
  document.getElementById('out').textContent = 'Hi'; });</script></body></html>
```"""

UI_REPLY = ReplyFormat((HTML, CSS, JS), ("style.css", "app.js"), example=EXAMPLE)


class UiVerifierOptions(UiOptions, VerifierOptions):
    """`[verifier]` of a `kind = "ui"` task: the judge's `UiOptions` (viewport, required_layers, entry,
    load_s, step_s), validated as the seam's options so an error is `task.toml:LINE: verifier.KEY`."""

    @field_validator("viewport")
    @classmethod
    def _sides(cls, value: tuple[int, int]) -> tuple[int, int]:
        # the judge's own rule (UiOptions), checked per field so the error is located at verifier.viewport
        if not all(VIEWPORT_MIN <= side <= VIEWPORT_MAX for side in value):
            raise ValueError(f"viewport sides must lie between {VIEWPORT_MIN} and {VIEWPORT_MAX} pixels")
        return value


def _one_check(raw: dict[str, Any]) -> dict[str, Any]:
    """One `[public] checks` item, validated by the judge's registry; its error names the key inside it."""
    try:
        parse_check(raw, 0)
    except CheckError as error:
        inner = error.key.removeprefix("check[0]").lstrip(".")
        raise ValueError(f"{inner}: {error.message}" if inner else error.message) from None
    return raw


class UiPublic(PublicSpec):
    """`[public] checks = [...]`: checks whose behaviour the instruction states in words (same tables as
    tests/checks.toml); the harness may run them on a candidate before submitting."""

    checks: list[Annotated[dict[str, Any], AfterValidator(_one_check)]] = Field(
        default_factory=list, description="Check tables of the ui registry (docs/tasks.md, `kind = \"ui\"`).")

    @model_validator(mode="after")
    def _unique_ids(self) -> UiPublic:
        try:
            parse_checks(self.checks, "checks")
        except CheckError as error:
            raise ValueError(f"{error.key}: {error.message}") from None
        return self

    @property
    def declared(self) -> bool:
        return bool(self.checks)

    def specs(self) -> list[CheckSpec]:
        return parse_checks(self.checks, "checks")


def ui_options(task: Task | TaskSpec) -> UiOptions:
    """The judge's options for a task: its `[verifier]` keys, the entry page its solution file unless set."""
    spec = task.spec if isinstance(task, Task) else task
    options = spec.verifier.options
    plain = options.model_dump() if isinstance(options, UiOptions) else {}
    if "entry" not in getattr(options, "model_fields_set", set()):
        plain["entry"] = spec.solution_file
    return UiOptions.model_validate(plain)


def describe(check: CheckSpec) -> str:
    """A check in words for the model and the report: `text text="0" selector="#count"`."""
    params = " ".join(f"{key}={json.dumps(value, separators=(',', ':'))}" for key, value in check.params.items()
                      if key != "check")
    words = f"{check.name} {params}".strip()
    return words if len(words) <= DESCRIPTION_CHARS else words[: DESCRIPTION_CHARS - 3] + "..."


# -- the hidden verifier ------------------------------------------------------------------------------
def judge_ui(task: Task, work: Path, sandbox: Sandbox, limits: Limits) -> VerifierOutcome:
    """tests/checks.toml on the staged page, in `sandbox`; screenshot and checks kept for the evidence."""
    checks, problems = load_checks_file(task.tests_dir / CHECKS_FILE)
    if problems:
        return VerifierOutcome(verdict=Verdict.ERROR, reason=f"the task's checks file is broken: {problems[0]}")
    from rsi.verifier.ui import verify_ui

    return verify_ui(ui_options(task), checks, work, sandbox=sandbox, limits=limits, out_dir=kept_dir(work))


def ui_file_problems(tests: Path, spec: TaskSpec, toml_file: Path, text: str) -> list[Problem]:
    """tests/checks.toml's problems, located (`checks.toml:LINE: check[2].steps.0.click: ...`)."""
    path = tests / CHECKS_FILE
    if not path.is_file():
        from rsi.tasks.locate import toml_line

        return [Problem(toml_file, toml_line(text, ("verifier", "kind")), "verifier.kind",
                        f"kind 'ui' needs tests/{CHECKS_FILE}")]
    return load_checks_file(path)[1]


def blank_page(task: Task) -> str:
    """The `wrong` probe of `rsi tasks check`: a valid page with nothing on it."""
    return BLANK_PAGE


# -- the public checks --------------------------------------------------------------------------------
def ui_public_checks(task: Task, workdir: Path, sandbox: Sandbox, candidate: int) -> CheckRecord:
    """The task's `[public] checks` on the candidate page in `workdir`, through the judge (every layer they
    touch counts; `required_layers` is the hidden verdict's). What the page does costs it the checks; a
    sandbox that cannot start is ours (SandboxError)."""
    public = task.spec.public
    if not isinstance(public, UiPublic) or not public.checks:
        return CheckRecord(candidate=candidate, passed=0, total=0)
    started = time.monotonic()
    specs = public.specs()
    options = ui_options(task).model_copy(update={"required_layers": None})
    limits = task.spec.limits.model_copy(update={"wall_s": task.spec.verifier_timeout_s})
    result = judge_page(options, specs, workdir, sandbox=sandbox, limits=limits)
    if result.verdict is Verdict.ERROR and result.reason.startswith("sandbox failed to start"):
        raise SandboxError(result.reason)
    answered = {check.id: check for check in result.checks}
    examples = []
    for spec in specs:
        got = answered.get(spec.id)
        examples.append(ExampleCheck(call=describe(spec), expected="pass", passed=bool(got and got.passed),
                                     got=(got.detail if got else result.reason)[:600]))
    note = "" if result.checks else result.reason
    return CheckRecord(candidate=candidate, passed=sum(e.passed for e in examples), total=len(examples),
                       examples=examples, note=note, wall_s=round(time.monotonic() - started, 4))


def chromium_missing() -> str:
    """'' where Chromium is found; else the judge's one line saying it is not."""
    return "" if find_chromium() else NO_BROWSER


UI = TaskKind(judge_ui, ui_file_problems, wrong_solution=blank_page, options=UiVerifierOptions, public=UiPublic,
              public_checks=ui_public_checks, solution_file=SOLUTION_FILE, reply=UI_REPLY, unavailable=chromium_missing,
              name="ui")
