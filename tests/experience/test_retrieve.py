"""Retrieval: BM25 over instructions, deterministic, never the task itself, never a heldout task."""

from __future__ import annotations

import random

import pytest

from rsi.experience.library import ContaminationError
from rsi.experience.retrieve import Bm25, eligible, exemplar_block, retrieve, tokenize
from tests.experience.conftest import entry

LIBRARY = [
    entry("reverse-string", "Write reverse_string(s) that returns the string s reversed."),
    entry("reverse-words", "Write reverse_words(s) that returns the words of s in reverse order."),
    entry("sum-list", "Write sum_list(xs) that returns the sum of the numbers in xs."),
    entry("is-prime", "Write is_prime(n): True when n is a prime number."),
    entry("celsius", "Convert Celsius to Fahrenheit: write c_to_f(c)."),
]
QUERY = "Write reverse_text(s) that returns the text s reversed."


def test_the_most_similar_instructions_come_first_one_entry_per_task() -> None:
    more = [*LIBRARY, entry("reverse-string", LIBRARY[0].instruction, "def g():\n    pass\n", tokens=5, key="k2")]
    chosen = retrieve(more, QUERY, 2, task_key="s/reverse-list", task_hash="h-rl")
    assert [r.entry.task_key for r in chosen] == ["s/reverse-string", "s/reverse-words"]
    assert chosen[0].entry.tokens == 5  # the task's cheapest solution stands for it
    assert chosen[0].score > chosen[1].score > 0
    assert retrieve(LIBRARY, QUERY, 0, task_key="s/x", task_hash="h") == []
    # nothing in common: no exemplar at all, rather than a useless one
    assert retrieve(LIBRARY, "zebra quokka", 3, task_key="s/x", task_hash="h") == []


def test_retrieval_is_deterministic_whatever_order_the_library_is_read_in() -> None:
    ties = [entry(f"t{i}", "Write f(x) that returns x.") for i in range(6)]
    expected = [r.entry.task_key for r in retrieve(ties, "returns x", 3, task_key="s/q", task_hash="h", seed=1)]
    for shuffle_seed in range(5):
        shuffled = list(ties)
        random.Random(shuffle_seed).shuffle(shuffled)
        got = [r.entry.task_key for r in retrieve(shuffled, "returns x", 3, task_key="s/q", task_hash="h", seed=1)]
        assert got == expected
    # the seed breaks ties, and only ties
    other = [r.entry.task_key for r in retrieve(ties, "returns x", 6, task_key="s/q", task_hash="h", seed=2)]
    assert sorted(other) == sorted(e.task_key for e in ties)


def test_a_task_never_retrieves_itself_by_key_content_hash_or_instruction() -> None:
    me = LIBRARY[0]
    for kwargs in ({"task_key": me.task_key, "task_hash": "other"},  # same key
                   {"task_key": "s/renamed", "task_hash": me.task_hash},  # a renamed copy: same content
                   {"task_key": "s/renamed", "task_hash": "other"}):  # same instruction text
        chosen = retrieve(LIBRARY, me.instruction, 5, **kwargs)
        assert me.task_key not in {r.entry.task_key for r in chosen}
        assert chosen  # the others are still offered


def test_heldout_tasks_are_never_retrieved_and_a_leak_is_refused() -> None:
    chosen = retrieve(LIBRARY, QUERY, 5, task_key="s/q", task_hash="h", heldout_keys={"s/reverse-string"},
                      heldout_hashes={"h-reverse-words"})
    assert {r.entry.task_key for r in chosen}.isdisjoint({"s/reverse-string", "s/reverse-words"})
    assert eligible(LIBRARY, "s/q", "h", QUERY, heldout_keys={"s/sum-list"}) == [
        e for e in sorted(LIBRARY, key=lambda e: e.task_key) if e.task_key != "s/sum-list"]
    # the split-overlap check on what is retrieved refuses an entry that claims another split
    forged = LIBRARY[0].model_construct(**{**LIBRARY[0].model_dump(), "split": "heldout"})
    with pytest.raises(ContaminationError):
        from rsi.experience.library import check_train_only

        check_train_only([forged], (), ())
    assert retrieve([forged], QUERY, 1, task_key="s/q", task_hash="h") == []  # eligible() never offers it


def test_bm25_scores_match_the_okapi_formula_and_rank_bm25_when_installed() -> None:
    import math

    docs = [["a", "b"], ["a", "c", "c"], ["d"]]
    scores = Bm25(docs).scores(["c", "a"])
    average, idf = 2.0, {"a": math.log(1 + (3 - 2 + 0.5) / 2.5), "c": math.log(1 + (3 - 1 + 0.5) / 1.5)}

    def term(tf: int, length: int, word: str) -> float:
        return idf[word] * tf * 2.5 / (tf + 1.5 * (0.25 + 0.75 * length / average))

    assert scores == pytest.approx([term(1, 2, "a"), term(2, 3, "c") + term(1, 3, "a"), 0.0])
    import rank_bm25  # a dev dependency: the reference implementation
    corpus = [tokenize(e.instruction) for e in LIBRARY]
    ours = Bm25(corpus).scores(tokenize(QUERY))
    theirs = rank_bm25.BM25Okapi(corpus).get_scores(tokenize(QUERY))
    assert sorted(range(len(corpus)), key=lambda i: -ours[i])[:2] == sorted(range(len(corpus)), key=lambda i: -theirs[i])[:2]


def test_the_exemplar_block_shows_instruction_and_solution_and_ends_with_the_task_prompt() -> None:
    chosen = retrieve(LIBRARY, QUERY, 1, task_key="s/q", task_hash="h")
    block = exemplar_block(chosen)
    assert LIBRARY[0].instruction in block and LIBRARY[0].code.rstrip() in block
    assert "```python" in block and block.endswith("Your task:")
