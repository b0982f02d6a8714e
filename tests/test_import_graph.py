"""The import graph keeps the layers of docs/architecture.md: no arrow runs back up, no circle spans packages.

Every `import` in rsi/ is an arrow, wherever it stands: at the top, inside a function (a lazy import is
still a dependency) or under `if TYPE_CHECKING:`. A module belongs to its package (`rsi/<pkg>/...`), or
is a package of its own when it sits at the top (`rsi/config.py` is `config`; `rsi/__init__.py` is `rsi`).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "rsi"

# Bottom to top: a package imports only from its own layer or the layers below it (docs/architecture.md).
LAYERS: list[set[str]] = [
    # plugins: the registries whose names the layers below their plug-ins check, as entry points (names
    # read from the installed metadata, objects loaded when used), so no arrow runs back up to them
    {"rsi", "errors", "verdict", "atomic", "crashpoint", "workspace", "registry", "plugins", "fences", "model_waits"},
    {"display", "progress"},  # what long commands report to (the run's events live beside the display)
    {"contracts"},
    {"config"},
    {"portfolio"},
    {"scheduler", "simulate"},
    {"store"},
    {"executors", "sandbox"},
    {"models"},
    {"adapters"},  # the adapter registry: its ids are the models' digests; training registers, evaluation records
    {"tasks"},
    {"verifier"},
    {"experience"},  # the library and its retrieval (the harness's worked examples); built in trajectories/
    {"harness"},
    {"promotion"},
    {"trajectories"},
    {"run"},
    {"harvest"},  # expert-iteration data: runs through the orchestrator, reads promotion's stored runs
    {"training"},
    {"evaluation"},
    {"generation"},
    {"report"},
    {"doctor", "demo"},
    {"cli"},
]

def layer_of(package: str) -> int:
    for index, layer in enumerate(LAYERS):
        if package in layer:
            return index
    raise AssertionError(f"package {package!r} has no layer in tests/test_import_graph.py LAYERS")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _targets(node: ast.Import | ast.ImportFrom, module: str, path: Path, modules: set[str]) -> list[str]:
    """The modules an import statement names: `from a import b` is `a.b` when that is a module, else `a`."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    prefix = node.module or ""
    if node.level:
        base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        prefix = ".".join([*base[: len(base) - (node.level - 1)], *([node.module] if node.module else [])])
    submodules = [f"{prefix}.{alias.name}" for alias in node.names if f"{prefix}.{alias.name}" in modules]
    return submodules or [prefix]


@cache
def import_graph(root: Path = PACKAGE) -> dict[str, dict[str, int]]:
    """module -> {module of rsi it imports: the first line that does}, every import at any depth."""
    paths = {module_name(path, root): path for path in sorted(root.rglob("*.py"))}
    modules = set(paths)
    graph: dict[str, dict[str, int]] = {}
    for module, path in paths.items():
        arrows: dict[str, int] = {}
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for name in _targets(node, module, path, modules):
                while name and name not in modules:  # `import rsi.a.b` reaches the deepest module that exists
                    name = name.rpartition(".")[0]
                if name and name != module:
                    arrows[name] = min(node.lineno, arrows.get(name, node.lineno))
        graph[module] = arrows
    return graph


def back_arrows(graph: dict[str, dict[str, int]]) -> list[str]:
    """`module:line -> module (layer a < layer b)` for every arrow up the layers."""
    found = []
    for module, arrows in graph.items():
        for target, line in arrows.items():
            low, high = layer_of(package_of(module)), layer_of(package_of(target))
            if high > low:
                found.append(f"{module}:{line} -> {target} (layer {low} imports layer {high})")
    return sorted(found)


def package_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one package (Tarjan)."""
    edges: dict[str, set[str]] = defaultdict(set)
    for module, arrows in graph.items():
        for target in arrows:
            a, b = package_of(module), package_of(target)
            if a != b:
                edges[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for succ in sorted(edges[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            components.append(sorted(component))

    for node in sorted({package_of(m) for m in graph}):
        if node not in index:
            visit(node)
    return sorted(c for c in components if len(c) > 1)


def test_the_graph_sees_lazy_relative_and_type_checking_imports(tmp_path: Path) -> None:
    root = tmp_path / "rsi"
    (root / "low").mkdir(parents=True)
    (root / "high").mkdir()
    for name in ("__init__.py", "low/__init__.py", "low/a.py", "high/__init__.py", "high/b.py", "top.py"):
        (root / name).write_text("")
    (root / "low" / "a.py").write_text("def f():\n    from rsi.high import b\n")
    (root / "high" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import __init__\n"
                                        "from ..low.a import f\nimport rsi.top\n")
    graph = import_graph(root)
    assert graph["rsi.low.a"] == {"rsi.high.b": 2}
    assert graph["rsi.high.b"] == {"rsi.high": 3, "rsi.low.a": 4, "rsi.top": 5}
    assert package_cycles(graph) == [["high", "low"]]


def test_every_package_has_a_layer() -> None:
    packages = {package_of(module) for module in import_graph()}
    named = set().union(*LAYERS)
    assert packages - named == set(), "give each new package a layer in LAYERS (docs/architecture.md)"
    assert named - packages == set(), "a package in LAYERS no longer exists"


def test_no_arrow_runs_back_up_the_layers() -> None:
    assert back_arrows(import_graph()) == []


def test_no_circle_spans_packages() -> None:
    assert package_cycles(import_graph()) == []


def imports_of_package(graph: dict[str, dict[str, int]], package: str, forbidden: str) -> list[str]:
    """`module:line -> target` for every import (lazy and `TYPE_CHECKING` ones too) from `package` into `forbidden`."""
    return sorted(f"{module}:{line} -> {target}" for module, arrows in graph.items() if package_of(module) == package
                  for target, line in arrows.items() if package_of(target) == forbidden)


def test_the_package_check_sees_a_lazy_import(tmp_path: Path) -> None:
    root = tmp_path / "rsi"
    for name in ("evaluation", "training"):
        (root / name).mkdir(parents=True)
        (root / name / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "training" / "stage.py").write_text("")
    (root / "evaluation" / "apply.py").write_text("import json\n\ndef f():\n    from rsi.training.stage import x\n")
    graph = import_graph(root)
    assert imports_of_package(graph, "evaluation", "training") == ["rsi.evaluation.apply:4 -> rsi.training.stage"]


def test_evaluation_never_imports_training() -> None:
    """Issue 39: evaluation judges what training produced through records below both (rsi/contracts/records.py,
    rsi/adapters/, rsi/promotion/adapter.py), so it sits beside training, not on top of it."""
    assert imports_of_package(import_graph(), "evaluation", "training") == []
