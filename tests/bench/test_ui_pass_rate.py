"""bench/ui_pass_rate.py renders its RESULTS.md section from a result file alone (the benchmark itself runs
the embedded model on the ui suite and is run by hand): pass rate per split, layer means over the judged
tasks only, errors counted apart and never as passes."""

from __future__ import annotations

import importlib
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def row(task: str, split: str, verdict: str, layers: dict[str, float], verifier_s: float) -> dict:
    return {"task": task, "split": split, "verdict": verdict, "reason": "", "layers": layers,
            "verifier_s": verifier_s, "wall_s": 20.0, "completion_tokens": 400}


def test_render_result_reads_pass_rates_and_layer_means_from_the_rows(monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(BENCH))
    bench = importlib.import_module("ui_pass_rate")
    full = dict.fromkeys(bench.LAYERS, 1.0)
    rows = [
        row("ui/counter", "train", "passed", full, 4.0),
        row("ui/todo", "train", "failed", {**full, "interaction": 0.0, "task": 0.5}, 6.0),
        row("ui/tabs", "train", "error", {}, 0.0),  # no Chromium answer: not judged, not a pass
        row("ui/form", "heldout", "failed", {"viability": 1.0, "task": 0.0, "visual": 0.5}, 5.0),
    ]
    text = bench.render_result({"figures": {"variant": "ui-text-greedy", "rows": rows, "wall_min": 3.0}, "params": {}})
    table = {cells[0]: cells[1:] for line in text.splitlines() if line.startswith("| ") and "---" not in line
             for cells in [[c.strip() for c in line.strip("|").split("|")]]}
    assert table["split"] == ["tasks", "passed", "pass rate", "errors", *bench.LAYERS, "verifier s/task"]
    assert table["train"] == ["3", "1", "33.3%", "1", "1.00", "0.75", "0.50", "1.00", "1.00", "3.33"]
    assert table["heldout"] == ["1", "0", "0.0%", "0", "1.00", "0.00", "-", "-", "0.50", "5.00"]
    assert table["all"][:4] == ["4", "1", "25.0%", "1"]
    assert "`ui:ui-text-greedy`" in text and "4 tasks" in text
