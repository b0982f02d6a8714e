"""Add public examples to a suite from its own instructions: `rsi tasks examples SUITE [--write]`.

A suite a user brings (converted from elsewhere) often shows examples in its instructions but declares
no `[public]` table, so `harness.check` and repair turns have nothing to run. `propose` reads each
task's instruction (rsi.tasks.examples.derive_examples: an "Examples:" block, doctests, or indented
`call == expected` lines) and lists the examples it shows that task.toml does not declare yet;
`write` appends them to `[public] examples` with tomlkit, so the file keeps its comments, order and
layout, and then loads the task again: a write the loader would refuse is undone. Whether the values
are right is `rsi tasks check`'s question: it runs them on the reference solution.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from rsi.errors import TaskError
from rsi.tasks.examples import derive_examples, shown_in
from rsi.tasks.load import TASK_FILE, load_task
from rsi.tasks.spec import PublicChecksSpec, PublicExampleSpec, Task

if TYPE_CHECKING:
    from tomlkit.items import String


class Proposal(BaseModel):
    """What one task's instruction shows that its `[public]` table does not declare."""

    key: str
    task_toml: Path
    declared: int = Field(description="Examples task.toml declares already.")
    new: list[PublicExampleSpec] = Field(default_factory=list, description="Shown, not yet declared, in order.")
    skipped: str = Field(default="", description="Why the instruction's examples could not be read ('' when they were).")


def _same(a: PublicExampleSpec, b: PublicExampleSpec) -> bool:
    """The same example up to layout (whitespace, the source's own line breaks)."""
    def tree(source: str) -> str:
        return ast.dump(ast.parse(source, mode="eval"))

    return tree(a.call) == tree(b.call) and tree(a.expected) == tree(b.expected)


def propose(task: Task) -> Proposal:
    """The examples `task`'s instruction shows beyond those it declares (none is ever a hidden case:
    each is read from the instruction, and kept only if the loader's own rule finds it there)."""
    public = task.spec.public
    proposal = Proposal(key=task.key, task_toml=task.root / TASK_FILE,
                        declared=len(public.examples) if isinstance(public, PublicChecksSpec) else 0)
    if not isinstance(public, PublicChecksSpec):
        proposal.skipped = "its kind's [public] holds no examples"
        return proposal
    try:
        shown = derive_examples(task.instruction)
    except ValueError as error:
        proposal.skipped = f"instruction.md {error}"
        return proposal
    declared = list(public.examples)
    for example in shown:
        if shown_in(task.instruction, example) is None and not any(_same(example, d) for d in declared):
            proposal.new.append(example)
            declared.append(example)
    return proposal


def _string(value: str) -> String:
    """A TOML string as a person would write it: literal ('...') when that needs no escape."""
    import tomlkit

    literal = "'" not in value and "\n" not in value and '"' in value
    return tomlkit.string(value, literal=literal)


def write(proposal: Proposal) -> Task:
    """Append `proposal.new` to the task's `[public] examples` (creating the table or the key), keeping
    the rest of task.toml as it was; returns the task loaded again. TaskError (file restored) when the
    loader refuses the result."""
    import tomlkit
    from tomlkit.items import AoT, Array

    from rsi.atomic import write_text_atomic

    path = proposal.task_toml
    original = path.read_text(encoding="utf-8")
    document = tomlkit.parse(original)
    if "public" not in document:
        document.add(tomlkit.nl())
        document.add("public", tomlkit.table())
    public = document["public"]
    examples = public.get("examples")
    if examples is None:
        examples = tomlkit.array()
        public["examples"] = examples
        examples = public["examples"]
    for example in proposal.new:
        if isinstance(examples, AoT):  # [[public.examples]] tables: one more table each
            table = tomlkit.table()
            table.add("call", _string(example.call))
            table.add("expected", _string(example.expected))
            examples.append(table)
        else:
            item = tomlkit.inline_table()
            item.add("call", _string(example.call))
            item.add("expected", _string(example.expected))
            examples.append(item)
    if isinstance(examples, Array):
        examples.multiline(True)  # one example a line, as the shipped suites write them
    write_text_atomic(path, tomlkit.dumps(document))
    try:
        return load_task(path.parent)
    except TaskError:
        write_text_atomic(path, original)
        raise
