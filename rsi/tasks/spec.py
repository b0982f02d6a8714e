"""The task format (data only). See docs/tasks.md for the on-disk layout:

    tasks/<suite>/suite.toml                 optional defaults for every task of the suite
    tasks/<suite>/<task-id>/task.toml         `TaskSpec`
    tasks/<suite>/<task-id>/instruction.md    what the agent is told
    tasks/<suite>/<task-id>/environment/      copied into the attempt's working directory
    tasks/<suite>/<task-id>/tests/            the hidden verifier (its kind: `[verifier] kind`)
    tasks/<suite>/<task-id>/solution/         optional reference solution (used by `rsi tasks check`)

Task kinds (`TaskSpec.verifier.kind`): each a plug-in (rsi/tasks/kinds.py `TaskKind`, registered as an
entry point of `rsi.verifier_kinds`) that owns the rest of `[verifier]` (its `options` model), `[public]`
(its `public` model), the default `solution_file` and what the harness reads from a reply. Nothing here
names a kind: the spec asks the registry for the kind's models when a task is read, so an error in a
kind's keys is still located as `task.toml:LINE: verifier.KEY`. The shipped kinds share
`PythonVerifierOptions` and `PublicChecksSpec` below:

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

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializationInfo,
    SerializeAsAny,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from rsi import plugins
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


DEFAULT_KIND = "script"


def kind_entry(name: str) -> Any | None:
    """The registered kind called `name` (a `rsi.tasks.kinds.TaskKind`, untyped here: that module is
    typed against this one), or None for a name the registry does not know (its own located error)."""
    return plugins.VERIFIER_KINDS.get(name)


class VerifierOptions(BaseModel):
    """The base of a kind's own `[verifier]` keys (everything but `kind`): a kind's `options` model."""

    model_config = ConfigDict(extra="forbid")


class PythonVerifierOptions(VerifierOptions):
    """`[verifier]` keys of the shipped kinds. One model for the three: a suite's defaults may name either
    file for a mix of kinds, and every shipped task's content hash holds both keys (load.content_hash)."""

    cases_file: str = Field(default="cases.json", description="kind='cases': the cases file inside tests/.")
    script: str = Field(default="test.sh", description="kind='script': the script inside tests/ (run with bash).")

    _inside = field_validator("cases_file", "script")(inside_folder)


class VerifierSpec(BaseModel):
    """`[verifier]` in task.toml (or suite.toml): how the hidden tests/ folder judges an attempt.

    Only `kind` is the spec's; every other key is validated by the kind's `options` model, so an error
    there is located at `verifier.KEY` as before, and the validated options (`.options`) dump beside
    `kind` as one flat table."""

    model_config = ConfigDict(extra="allow")
    kind: VerifierKindName = Field(
        default=DEFAULT_KIND,
        description="'cases' (tests/cases.json), 'script' (tests/test.sh), 'pytest' (tests/test_*.py), or another "
                    "registered task kind (rsi/tasks/kinds.py).",
    )
    _options: VerifierOptions = PrivateAttr(default_factory=VerifierOptions)

    @model_validator(mode="after")
    def _kind_options(self) -> VerifierSpec:
        entry = kind_entry(self.kind)
        model: type[VerifierOptions] = entry.options if entry is not None else VerifierOptions
        # A ValidationError raised here keeps its locations under this table's (`verifier.cases_file`).
        self._options = model.model_validate(dict(self.model_extra or {}))
        # The extras become the validated values, so two specs with the same options are equal (and read so).
        self.__pydantic_extra__ = self._options.model_dump()
        return self

    @model_serializer(mode="plain")
    def _flat(self, info: SerializationInfo) -> dict[str, Any]:
        return {"kind": self.kind, **self._options.model_dump(mode=info.mode)}

    @property
    def options(self) -> VerifierOptions:
        """The kind's own keys, validated by its `options` model (narrow with the kind's type)."""
        return self._options


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


class PublicSpec(BaseModel):
    """The base of a kind's `[public]` model: checks the agent (and the harness) may run, never drawn from
    tests/. A kind without public checks keeps this empty one."""

    model_config = ConfigDict(extra="forbid")

    @property
    def declared(self) -> bool:
        """Whether the task declares any public check at all."""
        return False


class PublicChecksSpec(PublicSpec):
    """`[public]` in task.toml: checks the agent (and the harness, for `harness.check`) may run.

    They are public by declaration: examples the instruction already shows, or a script in the
    task's `public/` folder (copied into the working directory as `public/`), run with python from the
    working directory; exit 0 means the check passed. Never drawn from `tests/`, which stays hidden.
    """

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
    solution_file: str = Field(default="solution.py", description="File the agent must write (what the verifier "
                               "reads); by default the kind's own (`TaskKind.solution_file`).")
    agent_timeout_s: float = Field(default=300.0, gt=0)
    verifier_timeout_s: float = Field(default=60.0, gt=0)
    limits: Limits = Field(default_factory=Limits)
    verifier: VerifierSpec = Field(default_factory=VerifierSpec, description="`[verifier]`: how tests/ judges.")
    # SerializeAsAny: dumped as the kind's model, not as the base (the content hash reads the dump).
    public: SerializeAsAny[PublicSpec] = Field(
        default_factory=PublicSpec, validate_default=True, description="`[public]`: checks the agent may run (never from tests/), in the "
        "kind's `public` model."
    )

    _inside = field_validator("solution_file")(inside_folder)

    @model_validator(mode="before")
    @classmethod
    def _kind_solution_file(cls, data: Any) -> Any:
        """An absent `solution_file` is the kind's own default (an unknown kind fails at `verifier.kind`)."""
        if isinstance(data, dict) and "solution_file" not in data:
            verifier = data.get("verifier")
            name = verifier.get("kind", DEFAULT_KIND) if isinstance(verifier, dict) else getattr(verifier, "kind", DEFAULT_KIND)
            entry = kind_entry(name) if isinstance(name, str) else None
            if entry is not None:
                data = {**data, "solution_file": entry.solution_file}
        return data

    @field_validator("public", mode="before")
    @classmethod
    def _kind_public(cls, value: Any, info: ValidationInfo) -> Any:
        """`[public]` through the kind's `public` model (errors located at `public.KEY`); left to the base
        model when the kind itself did not validate (its error is the one to show)."""
        verifier = info.data.get("verifier")
        entry = kind_entry(verifier.kind) if isinstance(verifier, VerifierSpec) else None
        if entry is None:
            return value if isinstance(value, PublicSpec) else PublicSpec()
        model: type[PublicSpec] = entry.public
        if isinstance(value, model):
            return value
        return model.model_validate(value.model_dump() if isinstance(value, PublicSpec) else value)


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
        return self.tests_dir / python_options(self.spec).cases_file

    @property
    def script_path(self) -> Path:
        """kind='script': the hidden verifier script."""
        return self.tests_dir / python_options(self.spec).script


def python_options(spec: TaskSpec) -> PythonVerifierOptions:
    """A shipped kind's `[verifier]` options (the defaults for a kind with other options)."""
    options = spec.verifier.options
    return options if isinstance(options, PythonVerifierOptions) else PythonVerifierOptions()
