"""The task format (data only). See docs/tasks.md for the on-disk layout:

    tasks/<suite>/suite.toml                 optional defaults for every task of the suite
    tasks/<suite>/<task-id>/task.toml         `TaskSpec`
    tasks/<suite>/<task-id>/instruction.md    what the agent is told
    tasks/<suite>/<task-id>/environment/      copied into the attempt's working directory
    tasks/<suite>/<task-id>/tests/            the hidden verifier (its kind: `[verifier] kind`)
    tasks/<suite>/<task-id>/solution/         optional reference solution (used by `rsi tasks check`)

Verifier kinds (`TaskSpec.verifier.kind`, registered in rsi/verifier/registry.py):

- ``"cases"``  -- tests/<cases_file> (default ``cases.json``) holds a `CasesSpec`: a function name and
  hidden input/output cases. The trusted judge runs outside the sandbox; only a sandboxed child
  imports the agent's `solution_file` and reports what the function returned (as JSON) for each
  case. Passed iff every case matches; reward = fraction of cases that matched.
- ``"script"`` -- tests/<script> (default ``test.sh``) runs with the final working directory as its
  cwd. Exit 0 = passed. It may write a reward in [0, 1] to the file named by $RSI_REWARD_FILE;
  without one the reward is 1.0 on exit 0 and 0.0 otherwise.
- ``"pytest"`` -- ``pytest`` runs the tests/test_*.py files against the final working directory.
  Passed iff pytest exits 0; reward = fraction of tests that passed when known.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from rsi.plugins import verifier_kind_name
from rsi.sandbox.base import Limits

VerifierKindName = Annotated[str, AfterValidator(verifier_kind_name)]
"""A name in rsi.verifier.registry.VERIFIER_KINDS (checked when a task is read)."""
CompareMode = Literal["exact", "float", "unordered"]


def inside_folder(value: str, folder: str = "the task's folder") -> str:
    """A relative POSIX path that stays inside the folder it is relative to (no '..', not absolute)."""
    path = PurePosixPath(value)
    if not value.strip() or path.is_absolute() or ".." in path.parts or "\\" in value:
        raise ValueError(f"{value!r} must be a relative path inside {folder} (no '..', not absolute)")
    return value


class VerifierSpec(BaseModel):
    """`[verifier]` in task.toml (or suite.toml): how the hidden tests/ folder judges an attempt."""

    model_config = ConfigDict(extra="forbid")
    kind: VerifierKindName = Field(
        default="script",
        description="'cases' (tests/cases.json), 'script' (tests/test.sh), 'pytest' (tests/test_*.py), or another "
                    "kind in rsi.verifier.registry.",
    )
    cases_file: str = Field(default="cases.json", description="kind='cases': the cases file inside tests/.")
    script: str = Field(default="test.sh", description="kind='script': the script inside tests/ (run with bash).")

    _inside = field_validator("cases_file", "script")(inside_folder)


class CaseSpec(BaseModel):
    """One hidden case: call `function(*args, **kwargs)` and compare the result with `expected`.

    Values are JSON values: tuples are written as lists (the comparison layer converts returned
    tuples to lists before comparing), and dict keys are strings.
    """

    model_config = ConfigDict(extra="forbid")
    args: list[Any] = Field(default_factory=list, description="Positional arguments (JSON values).")
    kwargs: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments (JSON values).")
    expected: Any = Field(description="The expected return value (JSON value; tuples as lists).")


class CasesSpec(BaseModel):
    """tests/cases.json of a `kind = "cases"` task.

    `compare` says how a returned value (first converted to JSON values: tuples -> lists) is matched
    with `expected`:

    - ``"exact"``: equal as JSON values; booleans are not numbers (True != 1), 2 == 2.0.
    - ``"float"``: like exact, but numbers match within `rel_tol`/`abs_tol` (math.isclose), recursively.
    - ``"unordered"``: the result and `expected` are lists equal as multisets (order ignored at the
      top level only).
    """

    model_config = ConfigDict(extra="forbid")
    kind: Literal["cases"] = "cases"
    function: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="Function the solution file defines.")
    compare: CompareMode = "exact"
    rel_tol: float = Field(default=1e-6, ge=0)
    abs_tol: float = Field(default=1e-9, ge=0)
    cases: list[CaseSpec] = Field(min_length=1)


def python_expression(value: str) -> str:
    """A single Python expression (what a public example's `call` and `expected` hold)."""
    import ast

    try:
        ast.parse(value, mode="eval")
    except SyntaxError as error:
        raise ValueError(f"{value!r} is not a Python expression: {error.msg}") from None
    return value


class PublicExampleSpec(BaseModel):
    """One public example: evaluating `call` in the solution module's namespace must give `expected`.

    Both are Python expressions as the instruction shows them (`all_positive([1, 2, 3])`, `True`);
    the check compares with `==` (numbers within 1e-9 relative). An example states what the agent is
    already told, never a hidden case.
    """

    model_config = ConfigDict(extra="forbid")
    call: str = Field(min_length=1, description="A Python expression calling the solution, e.g. 'f([1, 2])'.")
    expected: str = Field(min_length=1, description="A Python expression for the value `call` must equal.")

    _expressions = field_validator("call", "expected")(python_expression)


class PublicChecksSpec(BaseModel):
    """`[public]` in task.toml: checks the agent (and the harness, for `harness.check`) may run.

    They are public by declaration: examples the instruction already shows, or a script in the
    task's `public/` folder (copied into the working directory as `public/`), run with python from the
    working directory; exit 0 means the check passed. Never drawn from `tests/`, which stays hidden.
    """

    model_config = ConfigDict(extra="forbid")
    examples: list[PublicExampleSpec] = Field(default_factory=list, description="Calls and expected values.")
    script: str = Field(default="", description="A python script inside the task's public/ folder ('' for none).")
    compare: Literal["exact", "unordered"] = Field(
        default="exact", description="How an example's value is matched: 'exact' (==, numbers within 1e-9, tuples as "
        "lists) or 'unordered' (a returned list equal to `expected` as a multiset, as the instruction allows).")

    @field_validator("script")
    @classmethod
    def _script_inside(cls, value: str) -> str:
        return inside_folder(value, "the task's public/ folder") if value else value

    @property
    def declared(self) -> bool:
        """Whether the task declares any public check at all."""
        return bool(self.examples or self.script)


class TaskSpec(BaseModel):
    """`task.toml` (after suite defaults are applied)."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    title: str = Field(min_length=1)
    # "test": a sealed split, read only by a final evaluation, once per candidate (docs/tasks.md): never a run's
    # target, never trained on, never part of the heldout gate.
    split: Literal["train", "heldout", "test"] = "train"
    tags: list[str] = Field(default_factory=list)
    difficulty: Literal["trivial", "easy", "medium", "hard"] = "easy"
    solution_file: str = Field(default="solution.py", description="File the agent must write (what the verifier reads).")
    agent_timeout_s: float = Field(default=300.0, gt=0)
    verifier_timeout_s: float = Field(default=60.0, gt=0)
    limits: Limits = Field(default_factory=Limits)
    verifier: VerifierSpec = Field(default_factory=VerifierSpec, description="`[verifier]`: how tests/ judges.")
    public: PublicChecksSpec = Field(
        default_factory=PublicChecksSpec, description="`[public]`: checks the agent may run (never from tests/)."
    )

    _inside = field_validator("solution_file")(inside_folder)


class SuiteSpec(BaseModel):
    """`tasks/<suite>/suite.toml` (optional): a description and defaults for every task of the suite.

    `[defaults]` holds any `TaskSpec` key except `id` and `title`. A task's own value wins; tables
    (`[defaults.limits]`, `[defaults.verifier]`) merge key by key; lists (`tags`) are replaced, not joined.
    """

    model_config = ConfigDict(extra="forbid")
    description: str = ""
    defaults: dict[str, Any] = Field(default_factory=dict)


class Task(BaseModel):
    """A loaded task: its spec, where it lives, its instruction and its content hash."""

    model_config = ConfigDict(frozen=True)
    suite: str
    spec: TaskSpec
    root: Path
    instruction: str
    content_hash: str = Field(description="Hash of instruction, environment, tests and spec (decontamination key).")

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def key(self) -> str:
        return f"{self.suite}/{self.spec.id}"

    @property
    def environment_dir(self) -> Path:
        return self.root / "environment"

    @property
    def tests_dir(self) -> Path:
        return self.root / "tests"

    @property
    def solution_dir(self) -> Path:
        return self.root / "solution"

    @property
    def public_dir(self) -> Path:
        """The task's public/ folder (a public check script and its data), copied into the workdir."""
        return self.root / "public"

    @property
    def cases_path(self) -> Path:
        """kind='cases': the hidden cases file (parse it with rsi.tasks.load.load_cases)."""
        return self.tests_dir / self.spec.verifier.cases_file

    @property
    def script_path(self) -> Path:
        """kind='script': the hidden verifier script."""
        return self.tests_dir / self.spec.verifier.script
