"""Near-duplicate check between the train and heldout splits of a function suite (and its test split).

Heldout tasks measure generalization only if none of them is a train task in disguise, and a sealed test
task only if it is neither a train nor a heldout task in disguise. Two measures compare every (train,
heldout) pair, and every (train or heldout, test) pair:

- **text**: the instruction's rule paragraph (between the signature and `Examples:`; the boilerplate
  every task shares is left out), lower-cased, with the function name, parameter names and numbers
  replaced by placeholders and function words (`the`, `return`, `if`, ...) dropped, compared as word
  sequences with difflib's ratio (0..1). Without dropping them, two short rules such as "Return True
  if the dict d has the key k" and "Return True if the string s ends with t" look 0.76 alike.
- **ast**: the reference solution's syntax tree as a pre-order sequence of node types, identifiers
  and constants dropped (so renaming variables or changing a literal changes nothing), compared with
  difflib's ratio.

Tiny solutions share their shape whatever they do (`return a - b` and `return n ** 3` are both
FunctionDef, Return, BinOp, ...), so the AST measure alone is only evidence for solutions of at least
`AST_MIN_NODES` nodes. A pair is a near-duplicate when

- its text similarity reaches `TEXT_LIMIT` (the same rule, reworded), or
- its AST similarity reaches `AST_LIMIT` and both solutions have at least `AST_MIN_NODES` nodes (the
  same non-trivial algorithm under another story), or
- the mean of the two reaches `MEAN_LIMIT` (siblings: similar wording and similar code, such as
  minutes-to-seconds and seconds-to-minutes, or "differences of neighbours" and "pairs of neighbours").

docs/tasks.md ("Split overlap") shows the distributions these limits were read from.

    .venv/bin/python scripts/split_overlap.py pyfuncs2 [--top 15]   # distribution + nearest pairs
"""

from __future__ import annotations

import argparse
import ast
import difflib
import itertools
import re
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

TEXT_LIMIT = 0.75
AST_LIMIT = 0.90
AST_MIN_NODES = 40
MEAN_LIMIT = 0.70


@dataclass(frozen=True)
class Profile:
    """What the measures compare of one task."""

    id: str
    split: str
    words: tuple[str, ...]
    nodes: tuple[str, ...]


@dataclass(frozen=True)
class Pair:
    train: str
    heldout: str
    text: float
    ast: float
    nodes: int  # the smaller solution's node count

    @property
    def near_duplicate(self) -> bool:
        return (
            self.text >= TEXT_LIMIT
            or (self.ast >= AST_LIMIT and self.nodes >= AST_MIN_NODES)
            or (self.text + self.ast) / 2 >= MEAN_LIMIT
        )


_STOP_TEXT = """
a an the of if is are in into to and or not no return returns true false none else with by for as
it its be that this on at from than then when which who where each every one all any so do does
there their them they was were has have had given may must
"""
STOPWORDS = frozenset(_STOP_TEXT.split())


def rule_words(instruction: str, function: str, params: list[str]) -> tuple[str, ...]:
    """The rule paragraph as normalized words: names and numbers become placeholders."""
    body = instruction.split("Examples:", 1)[0]
    signature_end = body.find(f"def {function}(")
    if signature_end >= 0:
        body = body[body.index("\n", signature_end) :]
    words = re.findall(r"[A-Za-z_][A-Za-z_0-9]*|\d+(?:\.\d+)?|[^\sA-Za-z_0-9`]", body.lower())
    names = {function.lower(), *(p.lower() for p in params)}
    out = []
    for w in words:
        if w in names:
            out.append("<name>")
        elif w[0].isdigit():
            out.append("<num>")
        elif w in STOPWORDS or not (w[0].isalpha() or w[0] == "_"):
            continue
        else:
            out.append(w)
    return tuple(out)


def node_types(source: str) -> tuple[str, ...]:
    """Pre-order node types of the solution; contexts (Load/Store) add nothing and are skipped."""
    out: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.expr_context):
            return
        out.append(type(node).__name__)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return tuple(out[1:])  # drop the Module root every file has


def ratio(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def make_profile(task_id: str, split: str, instruction: str, function: str, source: str) -> Profile:
    tree = ast.parse(source)
    params = [
        a.arg
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name == function
        for a in node.args.args + node.args.kwonlyargs
    ]
    return Profile(task_id, split, rule_words(instruction, function, params), node_types(source))


def profile_suite(suite_dir: Path) -> list[Profile]:
    from rsi.tasks.load import load_cases, load_suite

    return [
        make_profile(
            task.id,
            task.spec.split,
            task.instruction,
            load_cases(task).function,
            (task.solution_dir / "solution.py").read_text(encoding="utf-8"),
        )
        for task in load_suite(None, suite_dir)
    ]


def compare(a: Profile, b: Profile) -> Pair:
    """`a` in the train position, `b` in the heldout position (whatever their splits)."""
    return Pair(a.id, b.id, ratio(a.words, b.words), ratio(a.nodes, b.nodes), min(len(a.nodes), len(b.nodes)))


def cross_pairs(profiles: list[Profile]) -> list[Pair]:
    train = [p for p in profiles if p.split == "train"]
    heldout = [p for p in profiles if p.split == "heldout"]
    return [compare(t, h) for h in heldout for t in train]


def sealed_pairs(profiles: list[Profile]) -> list[Pair]:
    """Every (train or heldout, test) pair: the sealed test split may copy neither (`heldout` is the test task)."""
    earlier = [p for p in profiles if p.split in ("train", "heldout")]
    test = [p for p in profiles if p.split == "test"]
    return [compare(e, t) for t in test for e in earlier]


def nearest_per_heldout(pairs: list[Pair], key: str) -> dict[str, Pair]:
    best: dict[str, Pair] = {}
    for pair in pairs:
        if pair.heldout not in best or getattr(pair, key) > getattr(best[pair.heldout], key):
            best[pair.heldout] = pair
    return best


def histogram(values: list[float]) -> str:
    edges = [0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9, 1.01]
    cells = []
    for lo, hi in itertools.pairwise(edges):
        n = sum(1 for v in values if lo <= v < hi)
        cells.append(f"[{lo:.2f},{min(hi, 1.0):.2f}{']' if hi > 1 else ')'}: {n}")
    return ", ".join(cells)


def report(suite_dir: Path, top: int) -> str:
    pairs = cross_pairs(profile_suite(suite_dir))
    lines = [f"{suite_dir.name}: {len(pairs)} train x heldout pairs"]
    for key in ("text", "ast"):
        best = nearest_per_heldout(pairs, key)
        lines.append(
            f"max {key} similarity per heldout task ({len(best)}): {histogram([getattr(p, key) for p in best.values()])}"
        )
    big = [p for p in pairs if p.nodes >= AST_MIN_NODES]
    lines.append(
        f"ast similarity of pairs whose solutions both have >= {AST_MIN_NODES} nodes ({len(big)}): "
        f"{histogram([p.ast for p in big])}"
    )
    for key in ("text", "ast"):
        lines.append(f"nearest pairs by {key}:")
        for p in sorted(pairs, key=lambda p: getattr(p, key), reverse=True)[:top]:
            lines.append(f"  {p.text:.3f} text  {p.ast:.3f} ast  {p.nodes:3d} nodes  {p.train} ~ {p.heldout}")
    flagged = [p for p in pairs if p.near_duplicate]
    lines.append(
        f"near-duplicates (text >= {TEXT_LIMIT}, or ast >= {AST_LIMIT} with >= {AST_MIN_NODES} nodes, "
        f"or mean >= {MEAN_LIMIT}): {len(flagged)}"
    )
    lines += [f"  {p.text:.3f} text  {p.ast:.3f} ast  {p.train} ~ {p.heldout}" for p in flagged]
    sealed = sealed_pairs(profile_suite(suite_dir))
    if sealed:
        near = [p for p in sealed if p.near_duplicate]
        lines.append(f"(train or heldout) x test pairs: {len(sealed)}, near-duplicates: {len(near)}")
        lines += [f"  {p.text:.3f} text  {p.ast:.3f} ast  {p.train} ~ {p.heldout}" for p in near]
    lines.append(f"nearest pairs by mean below {MEAN_LIMIT}:")
    below = [p for p in pairs if not p.near_duplicate]
    for p in sorted(below, key=lambda p: p.text + p.ast, reverse=True)[:top]:
        lines.append(
            f"  {(p.text + p.ast) / 2:.3f} mean  {p.text:.3f} text  {p.ast:.3f} ast  {p.nodes:3d} nodes  "
            f"{p.train} ~ {p.heldout}"
        )
    return "\n".join(lines)


def main() -> int:
    sys.path.insert(0, str(REPO))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", help="Suite name under tasks/, or a path.")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    suite_dir = Path(args.suite) if "/" in args.suite else REPO / "tasks" / args.suite
    print(report(suite_dir, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
