"""The pyfuncs hidden cases have teeth: plausible but careless solutions fail them, while correct
solutions written differently from the reference pass. Judged by the real verifier in the real
local sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsi.tasks.load import load_suite, prepare_workdir
from rsi.verdict import Verdict

REPO = Path(__file__).resolve().parents[2]

CARELESS = {
    "count-vowels": "def count_vowels(s):\n    return sum(c in 'aeiou' for c in s)\n",
    "is-palindrome": "def is_palindrome(s):\n    return s == s[::-1]\n",
    "is-even": "def is_even(n):\n    return 1 - n % 2\n",
    "last-element": "def last_element(items):\n    return items[-1]\n",
    "max-of-list": "def max_of_list(nums):\n    return max(nums)\n",
    "second-largest": "def second_largest(nums):\n    return sorted(nums)[-2] if len(nums) > 1 else None\n",
    "is-prime": "def is_prime(n):\n    return all(n % d for d in range(2, n))\n",
    "rle-decode": "def rle_decode(s):\n    return ''.join(s[i + 1] * int(s[i]) for i in range(0, len(s), 2))\n",
    "title-words": "def title_words(text):\n    return text.title()\n",
    "valid-ipv4": "def is_valid_ipv4(s):\n    p = s.split('.')\n    return len(p) == 4 and all(x.isdigit() and int(x) < 256 for x in p)\n",
    "roman-to-int": "def roman_to_int(s):\n    v = {'I': 1, 'V': 5, 'X': 10, 'L': 50, 'C': 100, 'D': 500, 'M': 1000}\n    return sum(v[c] for c in s)\n",
    "count-words": "def count_words(text):\n    return len(text.split(' '))\n",
    "digit-sum": "def digit_sum(n):\n    return sum(int(d) for d in str(n) if d.isdigit()) if n >= 0 else -1\n",
    "balanced-brackets": "def is_balanced(s):\n    return s.count('(') == s.count(')') and s.count('[') == s.count(']')\n",
}

DIFFERENT_BUT_RIGHT = {
    "subsets": "from itertools import combinations\n\n\ndef subsets(items):\n"
    "    return [list(c) for r in range(len(items), -1, -1) for c in combinations(items, r)]\n",
    "is-even": "def is_even(n):\n    return not n % 2\n",
    "celsius-to-fahrenheit": "def c_to_f(celsius):\n    return celsius * 1.8 + 32\n",
    "merge-intervals": "def merge_intervals(intervals):\n    out = []\n    for s, e in sorted(intervals):\n"
    "        if out and s <= out[-1][1]:\n            out[-1] = (out[-1][0], max(out[-1][1], e))\n"
    "        else:\n            out.append((s, e))\n    return out\n",
    "gcd": "import math\n\n\ndef gcd(a, b):\n    return math.gcd(a, b)\n",
}


@pytest.fixture(scope="module")
def judged():
    from rsi.sandbox.select import make_sandbox
    from rsi.verifier import verify

    tasks = {t.id: t for t in load_suite(None, REPO / "tasks" / "pyfuncs")}
    sandbox = make_sandbox("local")

    def run(task_id: str, code: str, tmp: Path):
        task = tasks[task_id]
        work = prepare_workdir(task, tmp / task_id)
        (work / "solution.py").write_text(code)
        return verify(task, work, sandbox)

    return run


@pytest.mark.parametrize("task_id", sorted(CARELESS))
def test_careless_solution_fails(judged, task_id: str, tmp_path: Path) -> None:
    outcome = judged(task_id, CARELESS[task_id], tmp_path)
    assert outcome.verdict is Verdict.FAILED, outcome.reason
    assert outcome.reward < 1.0


@pytest.mark.parametrize("task_id", sorted(DIFFERENT_BUT_RIGHT))
def test_correct_variant_passes(judged, task_id: str, tmp_path: Path) -> None:
    outcome = judged(task_id, DIFFERENT_BUT_RIGHT[task_id], tmp_path)
    assert outcome.verdict is Verdict.PASSED, outcome.reason
    assert outcome.reward == 1.0
