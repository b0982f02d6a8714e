"""rsi.tasks.examples: public examples read from an instruction's "Examples:" lines or from doctests."""

from __future__ import annotations

import pytest

from rsi.tasks.examples import (
    derive_examples,
    examples_from_docstring,
    examples_from_instruction,
    shown_in,
    split_example,
)
from rsi.tasks.spec import PublicExampleSpec


def pairs(examples) -> list[tuple[str, str]]:
    return [(e.call, e.expected) for e in examples]


INSTRUCTION = """\
# All positive

Write a Python file `solution.py` that defines the function:

    def all_positive(xs):

Return `True` if every number in the list `xs` is greater than zero (`True` for an empty list).

Examples:

    all_positive([1, 2, 3]) == True

    all_positive([1, -2]) == False

Floating-point results are compared with a small tolerance.

    not_an_example(1) == 2
"""


def test_instruction_examples_are_the_indented_lines_after_the_heading() -> None:
    assert pairs(examples_from_instruction(INSTRUCTION)) == [
        ("all_positive([1, 2, 3])", "True"),
        ("all_positive([1, -2])", "False"),
    ]
    # The signature line above the heading is indented too, but it is not an example.
    assert examples_from_instruction(INSTRUCTION.replace("Examples:", "Example")) == []


@pytest.mark.parametrize(
    ("line", "call", "expected"),
    [
        ("f('a == b') == 'x == y'", "f('a == b')", "'x == y'"),
        ('f("==", [1 == 1]) == {"k": (2 == 2)}', 'f("==", [1 == 1])', '{"k": (2 == 2)}'),
        ("f(x=1)==(1, 2)", "f(x=1)", "(1, 2)"),
        ("(f(1)) == (3)", "(f(1))", "(3)"),  # verbatim: the source's own parentheses stay
        ("f('''a\\nb''') == 'a\\nb'", "f('''a\\nb''')", "'a\\nb'"),
        ("f([1, 2],\t3) == None", "f([1, 2],\t3)", "None"),
    ],
)
def test_split_is_at_the_top_level_equals(line: str, call: str, expected: str) -> None:
    example = split_example(line)
    assert (example.call, example.expected) == (call, expected)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("f(1)", "not of the form"),
        ("f(1) != 2", "not of the form"),
        ("f(1) == 2 == 2", "not of the form"),
        ("f(1) < 2", "not of the form"),
        ("f(1 == 2", "not a Python expression"),
        ("x = f(1)", "not a Python expression"),
    ],
)
def test_a_line_that_is_not_call_equals_expected_is_refused(line: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        split_example(line)
    with pytest.raises(ValueError, match=r"^line 3: "):
        examples_from_instruction(f"Examples:\n\n    {line}\n")


def test_every_shipped_instruction_format_reads() -> None:
    """The generator's own rendering (repr of arguments and results) round-trips through the splitter."""
    values = ["it's", 'say "hi"', "a\\b", "tab\there", "é ≠ e", [1, [2, (3, 4)]], {"a": None}, 1e-9, -0.5, True]
    for value in values:
        line = f"    f({value!r}, {value!r}) == {value!r}"
        (example,) = examples_from_instruction("Examples:\n\n" + line + "\n")
        assert example.call == f"f({value!r}, {value!r})"
        assert example.expected == repr(value)


DOCSTRING = '''
    Return the sum of xs.

    >>> total([1, 2])
    3
    >>> total([])
    0
    >>> total(["a",
    ...        "b"])
    'ab'
    >>> total([[1],
    ...        [2, 3]])
    [1,
     2, 3]
    >>> total([None])
    Traceback (most recent call last):
      ...
    TypeError: unsupported operand
    >>> print(total([1]))
    1
    >>> total([1.0]) # doctest: +ELLIPSIS
    1.0...
    >>> total(x for x in ())
    >>> total(["x"])
    just text
'''


def test_doctest_examples_and_what_is_skipped() -> None:
    assert pairs(examples_from_docstring(DOCSTRING)) == [
        ("total([1, 2])", "3"),
        ("total([])", "0"),
        ('total(["a",\n       "b"])', "'ab'"),
        ("total([[1],\n       [2, 3]])", "[1,\n 2, 3]"),
    ]
    assert examples_from_docstring("No examples here.") == []


def test_a_doctest_statement_cannot_become_an_example() -> None:
    with pytest.raises(ValueError, match="line 3: 'x = total"):
        examples_from_docstring("Sum.\n\n>>> x = total([1])\n>>> x\n1\n")


def test_doctest_at_the_margin_and_tabbed() -> None:
    text = "Square x.\n\n\t>>> f(2)\n\t4\n\n>>> f(3)\n9\n"
    assert pairs(examples_from_docstring(text)) == [("f(2)", "4"), ("f(3)", "9")]


HUMANEVAL_STYLE = '''\
def below_zero(operations):
    """ Whether the balance ever falls below zero.
    >>> below_zero([1, 2, 3])
    False
    >>> below_zero([1, 2, -4, 5])
    True
    """
'''


def test_the_last_example_before_the_closing_quotes_is_kept() -> None:
    """A docstring that closes right after its last output: the quotes end the output, they are not part of it."""
    assert pairs(examples_from_docstring(HUMANEVAL_STYLE)) == [
        ("below_zero([1, 2, 3])", "False"),
        ("below_zero([1, 2, -4, 5])", "True"),
    ]
    # Closing quotes on the output's own line, a multi-line output, and single-quoted docstrings.
    assert pairs(examples_from_docstring('    >>> f(1)\n    2"""\n')) == [("f(1)", "2")]
    assert pairs(examples_from_docstring("    >>> f(1)\n    [1,\n     2]\n    '''\n")) == [("f(1)", "[1,\n 2]")]
    assert pairs(examples_from_docstring("    >>> f(1)\n    'a'\n    '''\n")) == [("f(1)", "'a'")]
    # Three quotes that belong to the value stay with it.
    assert pairs(examples_from_docstring(">>> f(1)\n\"'''\"\n")) == [("f(1)", "\"'''\"")]


def test_derived_examples_come_in_every_shipped_form() -> None:
    assert pairs(derive_examples(INSTRUCTION)) == [("all_positive([1, 2, 3])", "True"), ("all_positive([1, -2])", "False")]
    assert pairs(derive_examples(HUMANEVAL_STYLE)) == [("below_zero([1, 2, 3])", "False"), ("below_zero([1, 2, -4, 5])", "True")]
    # No heading: indented `call == expected` lines (not comparisons of names) and doctests, in text order.
    text = "Read it:\n\n    f('x.csv') == {'a': 1}\n    a == b\n\n>>> g(2)\n4\n"
    assert pairs(derive_examples(text)) == [("f('x.csv')", "{'a': 1}"), ("g(2)", "4")]


@pytest.mark.parametrize(
    "text",
    [
        "Examples:\n\n    f([1, 2]) == 3\n",
        "    >>> f([1, 2])\n    3\n",
        "    >>> f([1,\n    ...    2])\n    3\n",  # a continued call: the prompt is read as whitespace
        "Calling `f([1, 2])` returns `3`.",
        "`f([1,2])` -> `3`",
        "f( [1, 2] )  # 3",
        "```python\nf([1, 2])\n# => 3\n```",
        "f([1, 2]) ==\n3",
    ],
)
def test_an_example_is_shown_in_every_form_a_reader_takes_for_it(text: str) -> None:
    assert shown_in(text, PublicExampleSpec(call="f([1, 2])", expected="3")) is None


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("Examples:\n\n    f([1, 3]) == 3\n", "call `f([1, 2])` is not shown"),
        ("Examples:\n\n    gf([1, 2]) == 3\n", "call `f([1, 2])` is not shown"),  # another function's name ends in f
        ("Examples:\n\n    f([1, 2]) == 33\n", "but not with the value `3`"),
        ("Examples:\n\n    f([1, 2]) == 3.5\n", "but not with the value `3`"),
        ("Examples:\n\n    f([1, 2]) == -3\n", "but not with the value `3`"),
        ("Examples:\n\n    f([1, 2])[0] == 3\n", "but not with the value `3`"),
        ("`f([1, 2])` is documented.\n\nIt never returns 3.", "but not with the value `3`"),  # two lines away
    ],
)
def test_an_example_not_shown_says_why(text: str, why: str) -> None:
    found = shown_in(text, PublicExampleSpec(call="f([1, 2])", expected="3"))
    assert found is not None and why in found
