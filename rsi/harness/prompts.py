"""What the agent is told: the first user message, observations and corrections (pure functions).

Prompts are short and concrete on purpose: the default model has 135M parameters, and every extra
sentence is context it may copy instead of follow. Three framings (`harness.prompt_style`):

- plain:    the instruction, then one line naming the file to write and how to finish;
- stepwise: the same, asking first for a one-sentence restatement and a 2-3 line plan;
- example:  the same, preceded by a tiny worked example of a well-formed reply.

What a text-substrate reply is asked to carry is the task kind's (`reply`, an rsi.fences.ReplyFormat from
`TaskKind.reply`): the fence of its solution file (```python for the shipped kinds), the other files it
may add, and its worked example. Nothing here names a kind; the REPL substrate's replies are Python
whatever the kind, since the REPL runs Python that writes the files.
"""

from __future__ import annotations

from typing import Literal

from rsi.fences import PYTHON_REPLY, ReplyFormat
from rsi.models.base import ChatMessage

Substrate = Literal["repl", "text"]
PromptStyle = Literal["plain", "stepwise", "example"]

_EXAMPLE_REPL = """Example (a different task: "write add(a, b) in solution.py"). A good reply:
```python
code = "def add(a, b):\\n    return a + b\\n"
open("solution.py", "w").write(code)
from solution import add
print(add(2, 3))
```
Then, when the output is right:
```python
submit()
```"""

_EXAMPLE_TEXT = """Example (a different task: "write add(a, b)"). A good reply:
```python
def add(a, b):
    return a + b
```"""


def finish_hint(substrate: Substrate, end_marker: str, end_by_call: bool) -> str:
    if substrate == "text":
        return ""
    if end_by_call:
        return f" When it is correct, call {end_marker}."
    return f" When it is correct, write {end_marker}."


def reply_ask(reply: ReplyFormat, solution_file: str) -> str:
    """What a text-substrate reply must hold, in the kind's fences: "Reply with one ```python block: the
    complete contents of solution.py." (plus "You may add one ```css block for style.css ..." per extra file)."""
    ask = f"Reply with one ```{reply.main.tag} block: the complete contents of {solution_file}."
    extras = [f"one ```{fence.tag} block for {file}" for fence, file in zip(reply.fences[1:], reply.files, strict=False)]
    if extras:
        ask += f" You may add {', '.join(extras)}."
    return ask


def task_message(
    instruction: str,
    solution_file: str,
    *,
    substrate: Substrate,
    style: PromptStyle,
    end_marker: str = "submit()",
    end_by_call: bool = True,
    tool_names: list[str] | None = None,
    reply: ReplyFormat = PYTHON_REPLY,
) -> str:
    """The first user message of an attempt (`reply`: the task kind's reply format)."""
    instruction = instruction.strip()
    if substrate == "repl":
        ask = f"Write the solution into the file {solution_file} and test it.{finish_hint(substrate, end_marker, end_by_call)}"
        if tool_names:
            ask += f" You can import helpers: from rsi_tools import {', '.join(tool_names)}."
    else:
        ask = reply_ask(reply, solution_file)
    parts = []
    if style == "example":
        parts.append(_EXAMPLE_REPL if substrate == "repl" else reply.example or _EXAMPLE_TEXT)
        parts.append("Your task:")
    parts.append(instruction)
    parts.append(ask)
    if style == "stepwise":
        parts.append("First restate the task in one sentence and write a short plan (2-3 lines), then the code block.")
    return "\n\n".join(parts)


def first_messages(system_prompt: str, user_message: str) -> list[ChatMessage]:
    """System (when there is one) and the first user turn."""
    messages = [ChatMessage(role="system", content=system_prompt.strip())] if system_prompt.strip() else []
    messages.append(ChatMessage(role="user", content=user_message))
    return messages


def truncate_middle(text: str, limit_chars: int) -> str:
    """Keep the head and the tail of `text` within `limit_chars`, saying how much was cut."""
    if len(text) <= limit_chars:
        return text
    note = f"\n... [{len(text) - limit_chars} characters cut] ...\n"
    keep = max(limit_chars - len(note), 2)
    head = keep * 2 // 3
    return text[:head] + note + text[len(text) - (keep - head) :]


def observation_text(output: str, error: str | None, limit_chars: int, *, turns_left: int | None = None) -> str:
    """What the agent sees after a cell: its output and error, head and tail kept within the limit."""
    body = output
    if error:
        body = (body + ("\n" if body and not body.endswith("\n") else "") + error) if body else error
    body = truncate_middle(body.rstrip("\n"), limit_chars) if body.strip() else "(no output)"
    text = f"Output:\n```\n{body}\n```"
    if turns_left is not None:
        text += f"\n({turns_left} turn{'s' if turns_left != 1 else ''} left)"
    return text


def no_code_correction(end_marker: str, end_by_call: bool) -> str:
    """The corrective observation for a reply without a runnable code block."""
    finish = f" Call {end_marker} in a code block when done." if end_by_call else f" Write {end_marker} when done."
    return "Your reply had no ```python code block, so nothing ran. Reply with one ```python block." + finish


def cut_note(dropped_lines: int) -> str:
    """Prefix for the observation of a reply cut at max_tokens whose unfinished tail was not run."""
    plural = "s" if dropped_lines != 1 else ""
    return f"(Your reply was cut off; its last {dropped_lines} unfinished line{plural} did not run.)\n"


def repair_message(failure: str, solution_file: str, substrate: Substrate, reply: ReplyFormat = PYTHON_REPLY) -> str:
    """The repair turn's message: the failing public check, in public values only (call, expected, result)."""
    ask = (f"Reply with the corrected, complete {solution_file} in one ```{reply.main.tag} block."
           if substrate == "text" else f"Fix {solution_file}, check it, and submit again.")
    return f"A public check of your solution failed:\n    {failure}\n{ask}"
