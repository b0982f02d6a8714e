"""`rsi lineage` shows how many looks the heldout split had when each generation's evaluation read it, from the
look ledger of the workspace's real SQLite store."""

from __future__ import annotations

from rsi.generation.lineage import LEDGER_COLUMNS, build_lineage, ledger_cells
from rsi.store import open_store
from rsi.store.looks import Look, record_look
from tests.generation.test_ledger import generation


def test_each_generation_shows_the_heldout_looks_up_to_its_own(workspace, cli) -> None:
    generation(workspace, (0.02, -0.05, 0.09))  # eval ev1
    generation(workspace, (0.03, -0.04, 0.10))  # eval ev2
    generation(workspace, None)  # eval ev3: never looked (no ledger row, e.g. from before the ledger)
    store = open_store(workspace.db_url)
    try:
        for eval_id, why in (("ev1", "g0001 gate"), ("abl", "an ablation"), ("ev2", "g0002 gate"),
                             ("later", "rsi eval by hand")):
            record_look(store, Look(eval_id=eval_id, suite="pyfuncs", split="heldout", candidate_hash=eval_id,
                                    tasks=22, why=why))
        record_look(store, Look(eval_id="final", suite="pyfuncs", split="test", candidate_hash="x", tasks=250))
    finally:
        store.close()
    rows = build_lineage(workspace)
    assert [r.heldout_looks for r in rows] == [1, 3, None]  # the ablation between them was a look too
    cells = [dict(zip(LEDGER_COLUMNS, ledger_cells(r), strict=True)) for r in rows]
    assert [c["heldout looks"] for c in cells] == ["1", "3", "-"]
    shown = cli("lineage", cwd=workspace.root, env={"RSI_WORKSPACE": str(workspace.root), "COLUMNS": "200"})
    assert shown.returncode == 0, shown.stderr
    assert any(line.split()[:2] == ["heldout", "looks"] and line.split()[2:5] == ["1", "3", "-"]
               for line in shown.stdout.replace("│", " ").splitlines()), shown.stdout


def test_each_generation_shows_its_candidates_looks_at_the_sealed_split(workspace) -> None:
    from rsi.generation.state import read_state, write_state

    generation(workspace, (0.02, -0.05, 0.09))
    second = generation(workspace, (0.03, -0.04, 0.10))
    state = read_state(workspace, second.id)
    state.step("train").outputs.update(candidate_ref="default-candidate@r3")
    write_state(workspace, state)
    store = open_store(workspace.db_url)
    try:
        for eval_id, ref, content in (("fin-other", "other@r2", "h-other"), ("fin-g2", "default-candidate@r3", "h2"),
                                      ("fin-again", "default-candidate@r9", "h2")):  # the same content, a new ref
            record_look(store, Look(eval_id=eval_id, suite="pyfuncs", split="test", candidate_hash=content,
                                    candidate_ref=ref, tasks=250, second_look=eval_id == "fin-again"))
    finally:
        store.close()
    rows = build_lineage(workspace)
    assert [(r.test_looks, r.candidate_test_looks) for r in rows] == [(None, None), (2, 2)]
    cells = [dict(zip(LEDGER_COLUMNS, ledger_cells(r), strict=True)) for r in rows]
    assert [c["test looks (this candidate)"] for c in cells] == ["-", "2 (2)"]
