"""The compounding ledger: intervals carried from evaluation to `rsi lineage`, and nightly's stop rule."""

from __future__ import annotations

import math

import pytest

from rsi.generation.generation import GenerationSpec, generation_zero_ref, start_or_resume
from rsi.generation.lineage import LEDGER_COLUMNS, build_lineage, ledger_cells, ledger_stop
from rsi.generation.nightly import EXIT_STOPPED, run_nightly
from rsi.generation.state import list_generations, write_state
from rsi.promotion.decision import paired_lift
from tests.generation.records import lift_record, retention_record, transfer_record


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (2 * n * p + z * z) / (2 * (n + z * z))
    half = z * math.sqrt(z * z + 4 * n * p * (1 - p)) / (2 * (n + z * z))
    return centre - half, centre + half


def newcombe10(a: int, b: int, c: int, d: int) -> tuple[float, float]:
    """Newcombe (1998) method 10, written out from the paper's formulas (not from rsi's code)."""
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    (l1, u1), (l2, u2) = wilson(a + b, n), wilson(a + c, n)
    ad_bc = a * d - b * c
    corrected = max(ad_bc - n / 2, 0) if ad_bc > 0 else ad_bc
    phi = corrected / math.sqrt((a + b) * (c + d) * (a + c) * (b + d))
    dl = math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    du = math.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    return p1 - p2 - dl, p1 - p2 + du


def table(a: int, b: int, c: int, d: int) -> tuple[dict[str, bool], dict[str, bool]]:
    """Per-task outcomes with the given 2x2 table (a: both, b: candidate only, c: other only, d: neither)."""
    cand, other = {}, {}
    for i, (x, y) in enumerate([(1, 1)] * a + [(1, 0)] * b + [(0, 1)] * c + [(0, 0)] * d):
        cand[f"s/t{i}"], other[f"s/t{i}"] = bool(x), bool(y)
    return cand, other


@pytest.mark.parametrize("cells", [(12, 9, 2, 21), (30, 6, 1, 43), (5, 3, 4, 8)])
def test_paired_lift_intervals_match_newcombe_method_10_written_out(cells) -> None:
    estimate = paired_lift(*table(*cells))
    low, high = newcombe10(*cells)
    assert estimate.ci.low == pytest.approx(low, abs=1e-9) and estimate.ci.high == pytest.approx(high, abs=1e-9)
    # Worked by hand for (12, 9, 2, 21), n = 44: theta = (9 - 2) / 44 = 0.1591
    if cells == (12, 9, 2, 21):
        assert estimate.lift == pytest.approx(7 / 44)


def generation(workspace, number_lift: tuple[float, float, float] | None, adapter: str = "rejected",
               vs_parent: tuple[float, float, float] = (0.0, -0.1, 0.1), status: str = "done"):
    """A finished generation record with the given lift against generation 0 (value, low, high)."""
    state, _ = start_or_resume(workspace, GenerationSpec(), new=True)
    evaluate = {"eval_id": f"ev{state.number}", "retention": retention_record(0.95), "transfer": transfer_record(0.5),
                "lift": lift_record(*vs_parent), "tokens": 1000}
    if number_lift is not None:
        evaluate["lift_vs_control"] = lift_record(*number_lift)
    outputs = {"run": {"run_id": f"run-{state.number}", "covered": 4, "tasks": 10, "tokens": 500},
               "train": {"adapter_id": ""}, "evaluate": evaluate, "promote_adapter": {"state": adapter}}
    for name, values in outputs.items():
        state.step(name).outputs.update(values)
        state.step(name).status = "done"
    state.status = status  # type: ignore[assignment]
    return write_state(workspace, state)


def test_the_ledger_row_carries_both_lifts_with_their_intervals(workspace) -> None:
    cand, other = table(12, 9, 2, 21)
    lift = paired_lift(cand, other).summary()
    generation(workspace, (lift.lift, *lift.lift_ci95), vs_parent=(0.05, -0.02, 0.12))
    [row] = build_lineage(workspace)
    assert row.lift_vs_control == pytest.approx(7 / 44, abs=1e-4)
    assert row.lift_vs_control_ci95 == pytest.approx(list(newcombe10(12, 9, 2, 21)), abs=1e-4)
    assert (row.lift, row.lift_ci95, row.heldout_rate, row.transfer, row.tokens) == (0.05, [-0.02, 0.12], 0.3, 0.5, 1500)
    cells = dict(zip(LEDGER_COLUMNS, ledger_cells(row), strict=True))
    low, high = newcombe10(12, 9, 2, 21)
    assert cells["lift vs gen 0 (95% CI)"] == f"+0.159 [{low:+.3f}, {high:+.3f}]"
    assert cells["lift vs parent (95% CI)"] == "+0.050 [-0.020, +0.120]" and cells["transfer"] == "0.500"


def test_stop_rule_regression_plateau_and_progress(workspace) -> None:
    generation(workspace, (0.02, -0.05, 0.09))
    rows = build_lineage(workspace)
    assert ledger_stop(rows, True, 3) is None  # one generation: nothing to judge
    generation(workspace, (-0.2, -0.31, -0.04))  # worse than generation 0 beyond doubt
    rows = build_lineage(workspace)
    assert ledger_stop(rows, True, 3).startswith("regression: g0002")
    assert ledger_stop(rows, False, 3) is None  # the rule can be switched off
    generation(workspace, (0.01, -0.06, 0.08))
    generation(workspace, (0.0, -0.07, 0.07))
    rows = build_lineage(workspace)
    # g0002..g0004 promoted nothing and none raised the best lower bound before them (-0.05)
    assert ledger_stop(rows, True, 3).startswith("plateau: the last 3 generations (g0002..g0004)")
    assert ledger_stop(rows, True, 0) is None
    generation(workspace, (0.12, 0.01, 0.23))  # a real gain: the lower bound rose above -0.05
    assert ledger_stop(build_lineage(workspace), True, 3) is None
    generation(workspace, (0.0, -0.1, 0.1), adapter="promoted")  # a promoted adapter is progress too
    generation(workspace, (0.0, -0.1, 0.1))
    assert ledger_stop(build_lineage(workspace), True, 3) is None


def test_nightly_stops_with_its_own_exit_code_before_starting_a_generation(workspace) -> None:
    for _ in range(3):
        generation(workspace, (0.0, -0.1, 0.1))
    before = len(list_generations(workspace))
    logged: list[str] = []
    outcome = run_nightly(workspace, GenerationSpec(), logged.append)
    assert outcome.exit_code == EXIT_STOPPED == 3 and outcome.status == "stopped"
    assert outcome.message.startswith("plateau: the last 3 generations")
    assert len(list_generations(workspace)) == before  # nothing was started
    assert any("nightly: stopped: plateau" in line for line in logged)


def test_an_unfinished_generation_is_resumed_whatever_the_ledger_says(workspace) -> None:
    from rsi.generation.nightly import stop_reason

    for _ in range(3):
        generation(workspace, (0.0, -0.1, 0.1))
    assert stop_reason(workspace, "default") is not None
    generation(workspace, None, status="failed")
    assert stop_reason(workspace, "default") is None


def test_generation_zero_is_the_revision_the_first_generation_started_from(workspace) -> None:
    assert generation_zero_ref(workspace, "default") is None
    first = generation(workspace, None)
    assert generation_zero_ref(workspace, "default") == f"default@r{first.inputs['revision']}"
    generation(workspace, None)
    assert generation_zero_ref(workspace, "default") == f"default@r{first.inputs['revision']}"


def test_the_ledger_prices_the_lift_in_completion_tokens_per_task(workspace) -> None:
    state = generation(workspace, (0.1, 0.05, 0.15))
    state.step("evaluate").outputs["costs"] = {
        "parent": {"tasks": 20, "pass_rate": 0.1, "completion_tokens_per_task": 80.0, "seconds_per_task": 2.0},
        "candidate": {"tasks": 20, "pass_rate": 0.2, "completion_tokens_per_task": 612.0, "seconds_per_task": 9.0}}
    write_state(workspace, state)
    [row] = build_lineage(workspace)
    assert (row.tokens_per_task, row.token_ratio) == (612.0, 7.65)
    cells = dict(zip(LEDGER_COLUMNS, ledger_cells(row), strict=True))
    assert cells["tokens/task (x parent)"] == "612 (7.7x)"
