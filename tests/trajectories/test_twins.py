"""Twins across suites (rsi/trajectories/twins.py): the rule, pure, and on the shipped suites of a real workspace."""

from __future__ import annotations

from rsi.trajectories.twins import (
    MIN_OVERLAP,
    TaskFace,
    find_twin,
    function_of,
    instruction_words,
    protected_tasks,
)

FACTORIAL_TRAIN = """# Factorial

Write a Python file `solution.py` that defines the function:

    def factorial(n):

Return n! (the product 1 * 2 * ... * n) for an integer `n >= 0`; 0! is 1.

Examples:

    factorial(0) == 1
"""
FACTORIAL_HELDOUT = """# Factorial

Write a Python file `solution.py` that defines the function:

```python
def factorial(n):
```

Return `n!`, the product `1 * 2 * ... * n`, for the non-negative integer `n`; `0!` is 1.

Examples:

    factorial(5) == 120
"""


def test_the_function_comes_from_the_instruction_then_the_reference_solution() -> None:
    assert function_of(FACTORIAL_TRAIN) == "factorial"
    assert function_of("Write report.txt.", "import os\n\n\ndef Count_Errors(path):\n    return 1\n") == "count_errors"
    assert function_of("Write report.txt.", "x = 1\n") == function_of("Write report.txt.", "def (:") == ""


def test_the_normalised_instruction_is_the_prose_without_code_headings_examples_or_stop_words() -> None:
    words = instruction_words(FACTORIAL_TRAIN)
    assert "def" not in words and "factorial" not in words  # the heading and the signature are code, not prose
    assert "0" in words and "product" in words and "the" not in words
    assert words == instruction_words(FACTORIAL_TRAIN.replace("Return n!", "RETURN   n!"))
    fenced = instruction_words(FACTORIAL_HELDOUT)
    assert "120" not in fenced and "def" not in fenced and "factorial" not in fenced  # a fenced signature is code too


def test_same_function_and_overlapping_instruction_is_a_twin_and_names_both_sides() -> None:
    train = TaskFace.of("pyfuncs/factorial", "train", FACTORIAL_TRAIN)
    heldout = TaskFace.of("pyfuncs2/factorial", "heldout", FACTORIAL_HELDOUT)
    twin = find_twin(train, [heldout])
    assert twin is not None and twin.rule == "same function factorial"
    assert twin.reason == "pyfuncs/factorial duplicates pyfuncs2/factorial (heldout)"
    sealed = TaskFace.of("other/fact", "test", FACTORIAL_HELDOUT)  # any split but train is protected
    assert find_twin(train, [sealed]).reason == "pyfuncs/factorial duplicates other/fact (test)"


def test_a_shared_name_alone_or_a_shared_vocabulary_alone_is_no_twin() -> None:
    train = TaskFace.of("a/solve", "train", "Write `def solve(grid):`.\n\nCount the islands of ones in a grid of zeros.")
    other = TaskFace.of("b/solve", "heldout", "Write `def solve(s):`.\n\nReverse the words of a sentence, keep spaces.")
    assert find_twin(train, [other]) is None  # the same generic name, different instructions
    upper = TaskFace.of("a/up", "train", "    def to_upper(s):\n\nReturn the string s in upper case letters.")
    lower = TaskFace.of("b/low", "heldout", "    def to_lower(s):\n\nReturn the string s in lower case letters.")
    assert find_twin(upper, [lower]) is None  # close wording, another function
    assert find_twin(upper, [TaskFace.of("a/up", "heldout", "    def to_upper(s):\n\nUpper.")]) is None  # itself
    assert MIN_OVERLAP == 0.3


def test_an_identical_normalised_instruction_is_a_twin_without_any_function() -> None:
    train = TaskFace.of("a/count", "train", "# Count\n\nCount the ERROR lines of app.log; write the count to report.txt.")
    heldout = TaskFace.of("b/errors", "heldout", "# Errors\n\ncount the error lines of  app.log, write the count to report.txt")
    twin = find_twin(train, [heldout])
    assert twin is not None and twin.rule == "same instruction" and twin.split == "heldout"


def test_the_shipped_suites_have_the_twelve_cross_suite_twins_the_issue_counted(workspace) -> None:
    from rsi.tasks.load import load_suite

    protected = protected_tasks(workspace)
    assert protected.suites == ("pyfuncs", "pyfuncs2", "ui", "workbench") and protected.unreadable == {}
    twins = protected.twins_of(load_suite(workspace, "pyfuncs"))
    assert sorted(twins) == [f"pyfuncs/{t}" for t in (
        "anagram-check", "collatz-steps", "count-vowels", "factorial", "is-blank", "is-palindrome", "is-prime",
        "longest-common-prefix", "second-largest", "snake-to-camel", "sort-by-length", "word-lengths")]
    assert twins["pyfuncs/anagram-check"].twin == "pyfuncs2/is-anagram"
    assert protected.twins_of(load_suite(workspace, "pyfuncs2")) == {}  # its train tasks duplicate no heldout task
