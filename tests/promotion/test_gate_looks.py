"""bench/gate_looks.py: the vectorised gate equals rsi's, one look of a zero-lift candidate passes about alpha/2
of the time, and a split gating k candidates promotes one of them far more often (Bonferroni holds it)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from rsi.promotion.decision import newcombe_paired_interval

BENCH = Path(__file__).resolve().parents[2] / "bench" / "gate_looks.py"


@pytest.fixture(scope="module")
def gate_looks():
    if str(BENCH.parent) not in sys.path:  # the bench imports bench/results.py as `results`, as scripts do
        sys.path.insert(0, str(BENCH.parent))
    spec = importlib.util.spec_from_file_location("gate_looks", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["gate_looks"] = module
    spec.loader.exec_module(module)
    return module


def test_the_vectorised_gate_is_rsis_newcombe_interval(gate_looks) -> None:
    rng = np.random.default_rng(7)
    tables = [(12, 9, 2, 184), (30, 6, 1, 170), (0, 0, 0, 207), (32, 0, 0, 175), (20, 13, 0, 174), (5, 3, 4, 8)]
    for _ in range(200):
        a, b, c = rng.integers(0, 40, size=3)
        tables.append((int(a), int(b), int(c), 207 - int(a + b + c)))
    for a, b, c, d in tables:
        got = gate_looks.newcombe_low(np.array([a]), np.array([b]), np.array([c]), np.array([d]))[0]
        assert got == pytest.approx(newcombe_paired_interval(a, b, c, d).low, abs=1e-12), (a, b, c, d)


def test_one_look_passes_about_half_alpha_and_many_looks_promote_often(gate_looks) -> None:
    one = gate_looks.simulate(1, 20000, seed=1)
    assert one["family"] == one["per_look"]
    assert abs(one["per_look"] - 0.025) < 0.01  # Newcombe's lower tail: about alpha/2 on 207 tasks
    assert one["discordant_mean"] == pytest.approx(15.0, abs=0.3)
    ten = gate_looks.simulate(10, 20000, seed=2)
    independent = 1 - (1 - ten["per_look"]) ** 10
    assert ten["family"] > 0.12 and abs(ten["family"] - independent) < 0.03
    held = gate_looks.simulate(10, 20000, seed=2, z=gate_looks.z_of(0.05 / 10))
    assert held["family"] <= 0.025 < ten["family"]
    strong = gate_looks.simulate(1, 5000, seed=3, lift=0.07)
    assert strong["per_look"] > 0.6  # the gate still sees a real lift


def test_the_section_is_rendered_from_the_figures_alone(gate_looks) -> None:
    figures = json.loads(json.dumps(gate_looks.figures(200, 0)))  # what a result file holds
    assert [(r["discordant"], r["k"]) for r in figures["rows"]][:5] == [(15.0, k) for k in gate_looks.KS]
    text = gate_looks.render_result({"figures": figures, "params": {"trials": 200, "seed": 0}})
    assert "| 15 | 50 |" in text and "The rule the gate follows" in text
    assert f"{figures['rows'][4]['family']:.4f}" in text  # k = 50 at D = 15: the figure, not a typed one
