"""Plug-ins as entry points (rsi/plugins.py): the registries whose names a lower layer checks.

What is pinned: pyproject.toml's `rsi.*` groups are exactly the registries, each group's names are the
built-ins and each loads as its registry's type (from the installed metadata, as rsi reads it); a
third-party distribution's metadata on sys.path adds a model backend and a training method that a
contract then names; run-time entries (tests' `monkeypatch.setitem`) sit beside the metadata's and undo
cleanly; and missing metadata is an error that says so, never an empty list of known names.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from rsi.contracts.load import load_contract
from rsi.errors import ContractError
from rsi.executors.registry import TRAINING_RUNNERS, TrainingRunner
from rsi.harness.selection import SELECTION_RULES, SelectionRule
from rsi.models.factory import make_model
from rsi.models.registry import MODEL_BACKENDS, model_backend_name
from rsi.plugins import REGISTRIES, PluginError, PluginRegistry
from rsi.run.kinds import RUN_KINDS, RunKind
from rsi.training.methods import TRAINING_METHODS, RecipeBase, training_recipe
from rsi.verifier.registry import VERIFIER_KINDS, VerifierKind

REPO = Path(__file__).resolve().parents[2]

# Each group's names in the order the registry lists them (setuptools writes a group's entry points sorted).
BUILT_INS = {
    "rsi.model_backends": ["embedded", "openai", "vllm"],
    "rsi.selection_rules": ["first-pass", "most-passed"],
    "rsi.training_methods": ["grpo", "sft"],
    "rsi.verifier_kinds": ["cases", "pytest", "script", "ui"],
    "rsi.training_runners": ["local", "slurm"],
    "rsi.run_kinds": ["eval", "harvest", "rollouts", "search", "selection"],
}


def declared_in_pyproject() -> dict[str, dict[str, str]]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return {group: points for group, points in project["entry-points"].items() if group.startswith("rsi.")}


def test_every_group_is_a_registry_and_its_installed_names_are_the_built_ins() -> None:
    declared = declared_in_pyproject()
    assert {registry.group for registry in REGISTRIES} == set(declared) == set(BUILT_INS)
    for registry in REGISTRIES:
        assert list(registry) == BUILT_INS[registry.group], registry.group
        # the installed metadata is pyproject.toml's (a stale install fails here: rerun `make install`)
        assert {name: point.value for name, point in registry.declared().items()} == declared[registry.group]


def test_every_entry_point_loads_as_its_registrys_type() -> None:
    assert all(callable(MODEL_BACKENDS[name]) for name in MODEL_BACKENDS)
    assert MODEL_BACKENDS["embedded"].__module__ == "rsi.models.registry"
    assert all(isinstance(SELECTION_RULES[name], SelectionRule) for name in SELECTION_RULES)
    for name in TRAINING_METHODS:
        recipe = training_recipe(name)
        assert isinstance(recipe, RecipeBase) and recipe.name == name
    assert all(isinstance(VERIFIER_KINDS[name], VerifierKind) for name in VERIFIER_KINDS)
    assert {name: TRAINING_RUNNERS[name].in_process for name in TRAINING_RUNNERS} == {"local": True, "slurm": False}
    assert all(isinstance(TRAINING_RUNNERS[name], TrainingRunner) for name in TRAINING_RUNNERS)
    for name in RUN_KINDS:
        kind = RUN_KINDS[name]
        assert isinstance(kind, RunKind) and kind.name == name
        assert RUN_KINDS[name] is kind  # loaded once: a name maps to one object


def test_run_time_entries_sit_beside_the_metadata_and_undo_cleanly(monkeypatch) -> None:
    openai = MODEL_BACKENDS["openai"]

    def stub(spec, workspace, adapters, shared):
        raise AssertionError("never built")

    with monkeypatch.context() as patch:
        patch.setitem(MODEL_BACKENDS, "openai", stub)  # over a name from the metadata
        patch.setitem(MODEL_BACKENDS, "extra", stub)
        patch.delitem(MODEL_BACKENDS, "vllm")
        assert MODEL_BACKENDS["openai"] is stub and MODEL_BACKENDS["extra"] is stub
        assert list(MODEL_BACKENDS) == ["embedded", "openai", "extra"] and len(MODEL_BACKENDS) == 3
        assert "vllm" not in MODEL_BACKENDS
        with pytest.raises(KeyError):
            MODEL_BACKENDS["vllm"]
        with pytest.raises(ValueError, match="unknown model backend 'vllm'; known: embedded, openai, extra"):
            model_backend_name("vllm")
    assert list(MODEL_BACKENDS) == BUILT_INS["rsi.model_backends"] and "extra" not in MODEL_BACKENDS
    assert MODEL_BACKENDS["openai"] is openai
    with pytest.raises(KeyError):
        del MODEL_BACKENDS["extra"]


def test_a_group_without_entry_points_says_so() -> None:
    registry: PluginRegistry[object] = PluginRegistry("rsi.no_such_group", "widget")
    with pytest.raises(PluginError, match=r"no widget is declared \(entry point group 'rsi.no_such_group'\): the "
                                          "installed rsi .* has metadata older than its plug-in entry points"):
        "anything" in registry  # noqa: B015 - the check itself raises


def test_without_rsis_metadata_a_name_check_says_rsi_is_not_installed(tmp_path: Path) -> None:
    # rsi's source on sys.path (through a link: the checkout may hold an rsi.egg-info) without site-packages
    (tmp_path / "rsi").symlink_to(REPO / "rsi")
    code = ("import sys; sys.path.insert(0, sys.argv[1])\n"
            "from rsi.plugins import PluginError, model_backend_name\n"
            "try:\n    model_backend_name('embedded')\n"
            "except PluginError as error:\n    print(error.message); print(error.hint)\n")
    result = subprocess.run([sys.executable, "-S", "-I", "-c", code, str(tmp_path)], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert "no model backend is declared (entry point group 'rsi.model_backends'): rsi is not installed" in result.stdout
    assert "`make install` (or `pip install -e .`)" in result.stdout


# -- a third-party plug-in ---------------------------------------------------------------------------
DEMO_MODULE = '''
from rsi.models.scripted import ScriptedModel
from rsi.training.methods import RecipeBase


def demo_backend(spec, workspace, adapters, shared):
    return ScriptedModel(["no code here"], name="demo")


class DemoRecipe(RecipeBase):
    name = "demo"
    needs_dataset = False
    in_process_only = False
'''


@pytest.fixture
def demo_distribution(tmp_path: Path) -> Iterator[Path]:
    """`demo-plugin` 0.1 installed the way pip lays one out (a module beside its .dist-info), on sys.path."""
    site = tmp_path / "site"
    info = site / "demo_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (site / "demo_plugin.py").write_text(DEMO_MODULE)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[rsi.model_backends]\ndemo = demo_plugin:demo_backend\n\n"
                                           "[rsi.training_methods]\ndemo = demo_plugin:DemoRecipe\n")
    for registry in REGISTRIES:
        registry.refresh()
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    try:
        yield site
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("demo_plugin", None)
        importlib.invalidate_caches()
        for registry in REGISTRIES:
            registry.refresh()
        assert "demo" not in MODEL_BACKENDS and "demo" not in TRAINING_METHODS


def demo_contract(workspace) -> Path:
    path = workspace.root / "hcp" / "default.toml"
    path.write_text(path.read_text() + '\n[serving]\nbackend = "demo"\n\n[training]\nmethod = "demo"\n')
    return path


def test_an_unknown_third_party_name_is_a_located_error(workspace) -> None:
    path = demo_contract(workspace)
    with pytest.raises(ContractError) as raised:
        load_contract(path)
    assert {problem.key for problem in raised.value.problems} == {"serving.backend", "training.method"}
    assert all(problem.line and Path(problem.file) == path for problem in raised.value.problems)


def test_a_third_party_distribution_adds_a_backend_and_a_method(workspace, demo_distribution) -> None:
    assert set(MODEL_BACKENDS) == {*BUILT_INS["rsi.model_backends"], "demo"}
    assert "demo_plugin" not in sys.modules  # a name is checked from the metadata alone
    contract = load_contract(demo_contract(workspace))
    assert (contract.spec.serving.backend, contract.spec.training.method) == ("demo", "demo")
    assert "demo_plugin" not in sys.modules
    model = make_model(contract.spec, workspace)
    assert model.name == "demo" and MODEL_BACKENDS["demo"] is sys.modules["demo_plugin"].demo_backend
    assert MODEL_BACKENDS.declared()["demo"].dist.name == "demo-plugin"
    assert type(training_recipe("demo")) is sys.modules["demo_plugin"].DemoRecipe


def test_drift_between_pyproject_and_the_installed_metadata_is_named_line_by_line(monkeypatch) -> None:
    """`rsi doctor`'s plug-in check: this install agrees with pyproject.toml; an entry added, remapped or
    dropped in pyproject.toml after `make install` is named, and the doctor says to reinstall."""
    from rsi import doctor
    from rsi.plugins import entry_point_drift

    text = (REPO / "pyproject.toml").read_text()
    assert entry_point_drift(text) == []
    assert doctor.check_plugins().status == "ok"
    added = text.replace('[project.entry-points."rsi.selection_rules"]\n',
                         '[project.entry-points."rsi.selection_rules"]\nfewest-tokens = "lab.rules:FEWEST"\n', 1)
    remapped = added.replace('sft = "rsi.training.train:SftRecipe"', 'sft = "rsi.training.sft:SftRecipe"', 1)
    dropped = remapped.replace('rollouts = "rsi.run.kinds:ROLLOUTS"\n', "", 1)
    assert entry_point_drift(dropped) == [
        "rsi.selection_rules fewest-tokens = 'lab.rules:FEWEST' is not installed",
        "rsi.training_methods sft is installed as 'rsi.training.train:SftRecipe', pyproject.toml says "
        "'rsi.training.sft:SftRecipe'",
        "rsi.run_kinds rollouts is installed but no longer in pyproject.toml",
    ]
    monkeypatch.setattr("rsi.plugins.entry_point_drift", lambda _text: ["rsi.run_kinds x is not installed"])
    stale = doctor.check_plugins()
    assert stale.status == "failed" and stale.required
    assert "rsi.run_kinds x is not installed" in stale.detail and "make install" in stale.detail
