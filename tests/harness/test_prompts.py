"""Reply parsing and prompt building (pure functions)."""

from __future__ import annotations

from rsi.harness import prompts, replies


def test_code_blocks_accept_python_tags_and_skip_other_languages():
    reply = "Plan.\n```python\nx = 1\n```\ntext\n```bash\nls\n```\n```\ny = 2\n```\n```py\n\n```"
    assert replies.code_blocks(reply) == ["x = 1", "y = 2"]
    assert replies.repl_code(reply) == "x = 1\n\ny = 2"
    assert replies.solution_code(reply) == "x = 1\n"


def test_an_unterminated_last_block_still_counts_and_no_block_is_none():
    assert replies.repl_code("```python\nprint(1)\nprint(2") == "print(1)\nprint(2"
    assert replies.repl_code("I would write print(1).") is None
    assert replies.solution_code("```python\n   \n```") is None


def test_prompt_styles_differ_as_documented():
    kwargs = dict(substrate="repl", end_marker="submit()", end_by_call=True)
    plain = prompts.task_message("Write f.", "solution.py", style="plain", **kwargs)
    stepwise = prompts.task_message("Write f.", "solution.py", style="stepwise", **kwargs)
    example = prompts.task_message("Write f.", "solution.py", style="example", **kwargs)
    assert plain.startswith("Write f.") and "solution.py" in plain and "call submit()" in plain
    assert "plan" in stepwise and "plan" not in plain
    assert example.startswith("Example") and "```python" in example and "Your task:" in example
    text = prompts.task_message("Write f.", "sol.py", substrate="text", style="plain")
    assert "complete contents of sol.py" in text and "submit" not in text


def test_tool_library_names_are_offered_in_the_repl_prompt():
    message = prompts.task_message(
        "Write f.", "solution.py", substrate="repl", style="plain", tool_names=["parse_csv", "is_prime"]
    )
    assert "from rsi_tools import parse_csv, is_prime" in message


def test_observation_keeps_head_and_tail_within_the_limit():
    output = "HEAD" + "m" * 5000 + "TAIL"
    shown = prompts.observation_text(output, None, 300)
    body = shown.split("```\n")[1]
    assert body.startswith("HEAD") and body.rstrip("`\n").endswith("TAIL")
    assert "characters cut" in body and len(body) < 320


def test_observation_of_nothing_and_of_an_error():
    assert "(no output)" in prompts.observation_text("", None, 100)
    shown = prompts.observation_text("partial\n", "ValueError: bad\n", 1000, turns_left=1)
    assert "partial\nValueError: bad" in shown and shown.endswith("(1 turn left)")


def test_code_cut_at_max_tokens_runs_up_to_its_last_complete_statement():
    assert replies.trim_cut_code("x = 1\ny = 2") == ("x = 1\ny = 2", 0)
    assert replies.trim_cut_code("x = 1\ndef f(a):\n    return a\ndef g(") == ("x = 1\ndef f(a):\n    return a", 1)
    assert replies.trim_cut_code("values = [1,\n  2,") == ("values = [1,\n  2,", 0)  # nothing parses: unchanged
    assert prompts.cut_note(2).startswith("(Your reply was cut off; its last 2 unfinished lines did not run.)")
