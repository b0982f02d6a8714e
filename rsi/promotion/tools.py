"""Tool-library promotion: helpers saved by passing attempts become a new library revision, but only
after a private validation the agent never sees (the layout and the reading side are in rsi.harness.tools).

1. the candidate library (parent revision + this helper) must import in a fresh sandbox and expose
   the helper as a callable;
2. every task the helper's attempts solved is re-verified by the hidden verifier in a fresh working
   directory holding the candidate library and the attempt's final solution, with
   `from rsi_tools import NAME as FUNCTION` appended to it -- so wherever that solution calls the
   helper it now calls the LIBRARY copy, and a helper that only worked thanks to other REPL state
   fails here.
"""

from __future__ import annotations

import ast
import json
import tempfile
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from rsi.contracts.hashing import canonical_json, sha256_text
from rsi.harness.tools import (
    PACKAGE,
    HelperRecord,
    ToolManifest,
    ValidationRecord,
    list_revisions,
    read_manifest,
    revision_dir,
)
from rsi.harness.trajectory import Trajectory
from rsi.sandbox.base import Limits, Sandbox
from rsi.tasks.spec import Task
from rsi.verdict import Verdict, VerifierOutcome

Verify = Callable[[Task, Path, Sandbox], VerifierOutcome]


class ToolCandidate(BaseModel):
    """One saved helper from one passing attempt."""

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="Name it is imported under.")
    function: str = Field(description="The function's own __name__ (what the solution calls).")
    source: str = Field(description="Its source (a def, from inspect.getsource).")
    task_key: str
    attempt_id: str
    solution_code: str = Field(description="The attempt's final solution file (re-verified with the library).")
    solution_file: str = "solution.py"


class PromotionOutcome(BaseModel):
    revision: str | None = Field(description="The new revision, or None when nothing passed validation.")
    written: bool = Field(default=False, description="False when an identical revision (same parent, same module) "
                          "already existed and was reused: a rerun after a crash writes no second one.")
    accepted: list[str] = Field(default_factory=list)
    rejected: dict[str, str] = Field(default_factory=dict, description="Helper name -> why it was refused.")
    validation: list[ValidationRecord] = Field(default_factory=list)


def candidates_from_trajectory(trajectory: Trajectory) -> list[ToolCandidate]:
    """Helpers of a PASSING attempt (the last save of each name wins); [] for any other attempt."""
    outcome = trajectory.outcome
    if outcome is None or outcome.verdict is not Verdict.PASSED or outcome.final_code is None:
        return []
    latest = {tool.name: tool for tool in trajectory.tools_saved}
    return [
        ToolCandidate(
            name=tool.name,
            function=tool.function,
            source=tool.source,
            task_key=trajectory.task.key,
            attempt_id=trajectory.attempt_id,
            solution_code=outcome.final_code,
            solution_file=trajectory.task.solution_file,
        )
        for tool in latest.values()
    ]


def _module_text(parts: list[tuple[str, str, str]]) -> str:
    """The library module: each helper's source, then `name = function` aliases where they differ."""
    lines = ['"""rsi tool library: helpers promoted from passing attempts (generated; do not edit)."""', ""]
    for name, function, source in parts:
        lines.append(source.rstrip() + "\n")
        if name != function:
            lines.append(f"{name} = {function}\n")
    return "\n".join(lines) + "\n"


def _compose(parent_text: str, parts: list[tuple[str, str, str]]) -> str:
    """The parent revision's module (verbatim) followed by the new helpers."""
    if not parent_text:
        return _module_text(parts)
    body = "\n".join(source.rstrip() + "\n" + (f"{n} = {f}\n" if n != f else "") for n, f, source in parts)
    return parent_text.rstrip() + "\n\n\n" + body


def _source_problem(candidate: ToolCandidate) -> str:
    """Why a helper's source cannot become library code ('' when it can)."""
    if not candidate.source.strip():
        return "its source could not be recovered (define it with def in a cell)"
    try:
        tree = ast.parse(candidate.source)
    except SyntaxError as error:
        return f"its source does not parse: {error.msg}"
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
    if candidate.function not in defined:
        return f"its source does not define {candidate.function!r} at top level"
    return ""


def _check_imports(module_text: str, name: str, sandbox: Sandbox, limits: Limits) -> str:
    with tempfile.TemporaryDirectory(prefix="rsi-tools-check-") as scratch:
        folder = Path(scratch)
        folder.chmod(0o755)  # the sandbox user must be able to reach it
        (folder / PACKAGE).mkdir()
        (folder / PACKAGE / "__init__.py").write_text(module_text, encoding="utf-8")
        probe = f"import {PACKAGE}; assert callable({PACKAGE}.{name}), 'not callable'; print('ok')"
        result = sandbox.run([sandbox.python, "-c", probe], folder, limits)
    if result.exit_code == 0 and "ok" in result.stdout:
        return ""
    detail = (result.stderr or result.stdout).strip().splitlines()
    return "the library does not import in a fresh sandbox: " + (detail[-1] if detail else f"exit {result.exit_code}")


def _reverify(
    module_text: str, candidate: ToolCandidate, task: Task, sandbox: Sandbox, verify: Verify
) -> VerifierOutcome:
    from rsi.tasks.load import prepare_workdir

    with tempfile.TemporaryDirectory(prefix="rsi-tools-validate-") as scratch:
        Path(scratch).chmod(0o755)  # the sandbox user must be able to reach the working directory
        workdir = prepare_workdir(task, Path(scratch) / "workdir")
        (workdir / PACKAGE).mkdir(exist_ok=True)
        (workdir / PACKAGE / "__init__.py").write_text(module_text, encoding="utf-8")
        rebound = f"\n\nfrom {PACKAGE} import {candidate.name} as {candidate.function}  # rsi: validate the library copy\n"
        (workdir / candidate.solution_file).write_text(candidate.solution_code + rebound, encoding="utf-8")
        return verify(task, workdir, sandbox)


def promote_tools(
    tools_root: Path,
    candidates: list[ToolCandidate],
    tasks: Mapping[str, Task],
    sandbox: Sandbox,
    parent: str = "",
    verify: Verify | None = None,
    limits: Limits | None = None,
) -> PromotionOutcome:
    """Validate candidates privately and write the ones that pass as a new library revision.

    `tasks` maps task keys to loaded tasks (the hidden verifier runs on them). `parent` is the
    revision the new one extends ('' for none; its helpers are kept and cannot be redefined).
    """
    if verify is None:
        from rsi.verifier import verify as verify_task

        verify = verify_task
    limits = limits or Limits(wall_s=30, cpu_s=30)
    parent_text = ""  # kept verbatim: the parent revision was validated as a whole
    inherited: list[HelperRecord] = []
    if parent:
        inherited = list(read_manifest(tools_root, parent).helpers)
        parent_text = (revision_dir(tools_root, parent) / PACKAGE / "__init__.py").read_text(encoding="utf-8")
    taken = {helper.name for helper in inherited}

    outcome = PromotionOutcome(revision=None)
    by_name: dict[str, list[ToolCandidate]] = {}
    for candidate in candidates:
        by_name.setdefault(candidate.name, []).append(candidate)
    accepted_parts: list[tuple[str, str, str]] = []
    accepted_records: list[HelperRecord] = []
    for name, group in sorted(by_name.items()):
        first = group[0]
        problem = _group_problem(name, group, taken, parent, tasks)
        module_text = _compose(parent_text, accepted_parts + [(name, first.function, first.source)])
        if not problem:
            problem = _check_imports(module_text, name, sandbox, limits)
        if not problem:
            problem = _reverify_group(module_text, group, tasks, sandbox, verify, outcome)
        if problem:
            outcome.rejected[name] = problem
            continue
        accepted_parts.append((name, first.function, first.source))
        accepted_records.append(_helper_record(group))
        outcome.accepted.append(name)

    if accepted_parts:
        module_text = _compose(parent_text, accepted_parts)
        outcome.revision = _existing(tools_root, parent, module_text)
        if outcome.revision is None:
            outcome.revision = _commit(tools_root, parent, module_text, inherited, accepted_records, outcome)
            outcome.written = True
    return outcome


def _existing(tools_root: Path, parent: str, module_text: str) -> str | None:
    """A revision with this parent and exactly this module, if one exists (content-addressed reuse)."""
    digest = sha256_text(module_text)
    for revision in list_revisions(tools_root):
        manifest = read_manifest(tools_root, revision)
        if manifest.parent == parent and manifest.content_sha256 == digest:
            return revision
    return None


def _group_problem(
    name: str, group: list[ToolCandidate], taken: set[str], parent: str, tasks: Mapping[str, Task]
) -> str:
    """Why the helpers saved under `name` cannot be promoted as they are ('' when they can be tried)."""
    if name in taken:
        return f"the parent revision {parent} already has a helper named {name!r}"
    if len({c.source for c in group}) > 1:
        return "attempts saved different sources under this name"
    missing = sorted({c.task_key for c in group if c.task_key not in tasks})
    if missing:
        return f"unknown task(s) for re-verification: {', '.join(missing)}"
    return _source_problem(group[0])


def _reverify_group(
    module_text: str, group: list[ToolCandidate], tasks: Mapping[str, Task], sandbox: Sandbox, verify: Verify,
    outcome: PromotionOutcome,
) -> str:
    """Re-verify every task the helper's attempts solved, with the library copy; the first miss, or ''."""
    for candidate in group:
        result = _reverify(module_text, candidate, tasks[candidate.task_key], sandbox, verify)
        outcome.validation.append(
            ValidationRecord(
                name=candidate.name,
                task_key=candidate.task_key,
                attempt_id=candidate.attempt_id,
                verdict=result.verdict,
                reason=result.reason,
            )
        )
        if result.verdict is not Verdict.PASSED:
            return f"re-verification of {candidate.task_key} ({candidate.attempt_id}) ended {result.verdict.value}"
    return ""


def _helper_record(group: list[ToolCandidate]) -> HelperRecord:
    first = group[0]
    return HelperRecord(
        name=first.name,
        function=first.function,
        source_sha256=sha256_text(first.source),
        tasks=sorted({c.task_key for c in group}),
        attempts=sorted({c.attempt_id for c in group}),
        revision="",
    )


def _commit(
    tools_root: Path, parent: str, module_text: str, inherited: list[HelperRecord],
    records: list[HelperRecord], outcome: PromotionOutcome,
) -> str:
    """Write the accepted helpers (`module_text`: the parent's module and theirs) as the next revision; its name."""
    existing = list_revisions(tools_root)
    revision = f"r{int(existing[-1][1:]) + 1 if existing else 1}"
    for record in records:
        record.revision = revision
    manifest = ToolManifest(
        revision=revision,
        parent=parent,
        created=datetime.now(UTC),
        helpers=inherited + records,
        validation=outcome.validation,
        content_sha256=sha256_text(module_text),
    )
    _write_revision(tools_root, revision, module_text, manifest)
    return revision


def _write_revision(tools_root: Path, revision: str, module_text: str, manifest: ToolManifest) -> None:
    """Write into a temp folder, then rename: a revision exists completely or not at all."""
    tools_root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{revision}.", dir=tools_root))
    (staging / PACKAGE).mkdir()
    (staging / PACKAGE / "__init__.py").write_text(module_text, encoding="utf-8")
    (staging / "manifest.json").write_text(
        json.dumps(json.loads(canonical_json(manifest.model_dump(mode="json"))), indent=2), encoding="utf-8"
    )
    staging.rename(tools_root / revision)  # fails if the revision appeared meanwhile: never overwrite
