"""Retrieval of worked examples from the experience library: Okapi BM25 over instructions. Pure.

No model and no download: a lexical retriever (Robertson & Zaragoza's BM25, k1 = 1.5, b = 0.75, the
non-negative idf ln(1 + (N - df + 0.5) / (df + 0.5))) over lower-cased alphanumeric tokens of each
entry's instruction (snake_case names split at the underscores). The ranking is deterministic: score,
then a seeded hash of the task key, then the key, so equal scores never depend on the order entries
were read in.

What may be retrieved (`eligible`): never the task itself (same key, same content hash, or the same
instruction text) and never a heldout task (the split-overlap check of rsi.experience.library, with
the heldout keys and hashes the library was checked against, and the caller's). One entry per task
(its cheapest solution): N exemplars are N different tasks. An entry sharing no token with the task
scores 0 and is never offered.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rsi.contracts.hashing import sha256_text
from rsi.experience.library import ExperienceEntry, check_train_only

K1 = 1.5
B = 0.75
_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


@dataclass(frozen=True)
class Retrieved:
    entry: ExperienceEntry
    score: float


class Bm25:
    """An Okapi BM25 index over a fixed list of documents (token lists)."""

    def __init__(self, documents: Sequence[list[str]]) -> None:
        self.counts = [Counter(doc) for doc in documents]
        self.lengths = [len(doc) for doc in documents]
        self.average = (sum(self.lengths) / len(documents)) if documents else 0.0
        frequency: Counter[str] = Counter()
        for counts in self.counts:
            frequency.update(counts.keys())
        total = len(documents)
        self.idf = {term: math.log(1.0 + (total - df + 0.5) / (df + 0.5)) for term, df in frequency.items()}

    def scores(self, query: list[str]) -> list[float]:
        terms = [t for t in query if t in self.idf]  # a repeated query term counts each time (as rank_bm25)
        out = []
        for counts, length in zip(self.counts, self.lengths, strict=True):
            norm = K1 * (1.0 - B + B * length / self.average) if self.average else K1
            out.append(sum(self.idf[t] * counts[t] * (K1 + 1.0) / (counts[t] + norm) for t in terms if counts[t]))
        return out


def eligible(entries: Iterable[ExperienceEntry], task_key: str, task_hash: str, instruction: str,
             heldout_keys: Iterable[str] = (), heldout_hashes: Iterable[str] = ()) -> list[ExperienceEntry]:
    """One entry per task (its cheapest solution, then by entry id), leaving out the task itself and heldout tasks."""
    keys, hashes = set(heldout_keys), set(heldout_hashes)
    text = " ".join(instruction.split())
    best: dict[str, ExperienceEntry] = {}
    for entry in entries:
        if entry.task_key == task_key or entry.task_hash == task_hash or " ".join(entry.instruction.split()) == text:
            continue
        if entry.split != "train" or entry.task_key in keys or entry.task_hash in hashes:
            continue
        held = best.get(entry.task_key)
        if held is None or (entry.tokens, entry.entry_id) < (held.tokens, held.entry_id):
            best[entry.task_key] = entry
    return [best[key] for key in sorted(best)]


def retrieve(entries: Iterable[ExperienceEntry], instruction: str, n: int, *, task_key: str, task_hash: str,
             heldout_keys: Iterable[str] = (), heldout_hashes: Iterable[str] = (), seed: int = 0) -> list[Retrieved]:
    """The `n` library entries most similar to `instruction` (see the module docstring), best first."""
    if n <= 0:
        return []
    heldout_keys, heldout_hashes = set(heldout_keys), set(heldout_hashes)
    pool = eligible(entries, task_key, task_hash, instruction, heldout_keys, heldout_hashes)
    if not pool:
        return []
    scores = Bm25([tokenize(e.instruction) for e in pool]).scores(tokenize(instruction))
    ranked = sorted(zip(pool, scores, strict=True),
                    key=lambda pair: (-pair[1], sha256_text(f"{seed}:{pair[0].task_key}"), pair[0].task_key))
    chosen = [Retrieved(entry, round(score, 6)) for entry, score in ranked[:n] if score > 0.0]
    # The split-overlap check on what is retrieved, whatever built the pool.
    check_train_only([r.entry for r in chosen], heldout_keys, heldout_hashes)
    if any(r.entry.task_key == task_key or r.entry.task_hash == task_hash for r in chosen):
        raise AssertionError("retrieval returned the task itself")  # eligible() makes this unreachable
    return chosen


def exemplar_block(chosen: Sequence[Retrieved]) -> str:
    """The worked examples, as they go before the task message."""
    parts = ["Solved examples of other, similar tasks (your task is different: solve your own):"]
    for index, item in enumerate(chosen, 1):
        entry = item.entry
        parts.append(f"Example {index}: {entry.instruction.strip()}\n"
                     f"Solution ({entry.solution_file}):\n```python\n{entry.code.rstrip()}\n```")
    parts.append("Your task:")
    return "\n\n".join(parts)
