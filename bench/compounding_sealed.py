"""Compounding, measured (issue 49): three generations on the sealed test split, every carrier's share, the cost.

One resumable benchmark. From a fresh workspace and the shipped contract on pyfuncs2 (the workspace
bench/feedback_generation.py's `prepare` makes: generation 0 is the shipped contract deployed on the text
substrate, the default portfolio's variants searched over the shipped contract), stage by stage:

  gen N       generation N (`rsi.generation.run_generation`, the code behind `rsi generation`): a coverage
              search of the train split (generation 1 the default portfolio, later ones their predecessor's
              successor), paired selection of the harness on `--select-tasks` train tasks (`--select-tasks`),
              harvest, the experience library and validated tools grown and carried (`--experience --tools`),
              the export pooled over every generation so far, a fresh LoRA, then the heldout evaluation against
              the parent and generation 0 and the contract's default gate (`[evaluation.gate]`, untouched)
  final N     the final evaluation of generation N's candidate on the sealed test split (`EvalSpec(split="test")`,
              once per candidate: the look ledger refuses a second one) against its parent, with generation 0
              as the control side (one evaluation, both references; generation 1's parent IS generation 0, so
              the control side is dropped and its lift vs parent is its lift vs generation 0), plus the
              cost-matched alternative: the parent as best-of-n spending the candidate's completion tokens per
              task, n from the generation's own heldout evaluation (`cost_matched_from`)
  ablate N    the carriers ablated (`rsi.generation.ablation`: exemplars, tools, adapter, harness both arms and
              the spend), on heldout, so the lift splits into harness, weights, interaction and spend
  seed S      (`--search-seeds 0,1,2`) generation 1 repeated with search seed S (a different train draw,
              selection draw and sampling seed) in its own fresh workspace, then its final evaluation: the
              spread of generation 1's lift. Seed 0 is the main line's own generation 1.

Nothing is hand-picked: the harness of every generation is the one paired selection on train tasks ranks first,
the adapter is promoted only by the default gate on heldout, and the sealed split is read once per candidate
and promotes nothing. Generation N's search seed is N-1 (seed S for a repeat).

Where it lives, and how it resumes. `--folder DIR` holds everything: DIR/main (the workspace of the three
generations), DIR/seed-S (a repeat's workspace), DIR/progress.json (each stage's status, eval ids and figures,
rewritten atomically as each stage starts and ends) and DIR/record/ (a copy of the result file). A stage that
finished is never rerun; an interrupted one resumes through its own records (the generation's state.json, the
ablation's ablation.json, the final evaluation's run id recorded the moment it exists). The folder must outlive
the checkout: put it OUTSIDE the repository (e.g. /work/compounding; runs/ inside the checkout is ignored by git
and a new session's checkout does not have it). Resume = the same command, typed the same way, from the same
directory of any checkout of the repository: the result file is restored from DIR/record/ into bench/results/
when the checkout lacks it, and `results.start` reopens it (its resume rule: same command, same directory, same
clean/dirty state) and appends to its `resumes`. The command is in DIR/RESUME.txt.

    nice -n 0 .venv/bin/python bench/compounding_sealed.py --folder /work/compounding --search-seeds 0,1,2

`python bench/render.py` renders the section "compounding, sealed split" from the result file (`render_result`):
per generation the lifts against generation 0 and the parent on the sealed split with intervals, heldout retention,
each carrier's share, completion and prompt tokens and seconds per task, k needed, the cache's share, the looks
each split has had; the spread over search seeds; and the issue's goals, met or not, computed from the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import shutil
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import results  # bench/results.py (a benchmark runs as a script: bench/ is on its path)

NAME = "compounding_sealed"
SECTION = "compounding, sealed split"
PROGRESS = "progress.json"
RECORD_DIR = "record"
RESUME_FILE = "RESUME.txt"

# The goals (issue 49, "What it must reach"): thresholds, never results.
GEN1_MIN_LIFT = 0.10  # generation 1's sealed lift against generation 0, its 95% interval above zero
RETENTION_MIN = 0.9  # generation 1's heldout retention
GEN1_MAX_TOKEN_RATIO = 10.0  # generation 1's tokens per task over generation 0's (completion and prompt, each)
GEN3_MIN_STEP = 0.03  # generation 3 over generation 1, paired interval above zero
GEN3_MARGIN = 0.03  # "matching" generation 1: the paired interval of gen 3 - gen 1 does not go below -0.03
GEN3_MAX_TOKEN_RATIO = 0.7  # ... at no more than 0.7x generation 1's tokens per task (completion and prompt, each)


# -- stages and progress (the orchestration: pure but for the progress file) --------------------------------


def stage_keys(generations: int, search_seeds: list[int]) -> list[str]:
    """The stages in the order they run (pure): the main line's generations, each with its final evaluation and
    ablation, then generation 1 again for every search seed but 0 (the main line's own generation 1)."""
    keys = [f"{kind} {n}" for n in range(1, generations + 1) for kind in ("gen", "final", "ablate")]
    return keys + [f"seed {s}" for s in search_seeds if s != 0]


def parse_seeds(text: str) -> list[int]:
    """'0,1,2' -> [0, 1, 2]; a bad value is a one-line error (exit 2)."""
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        results._refuse(f"--search-seeds {text!r}: give comma-separated integers, e.g. 0,1,2")
        raise  # unreachable
    if len(set(seeds)) != len(seeds) or any(s < 0 for s in seeds):
        results._refuse(f"--search-seeds {text!r}: distinct seeds >= 0")
    return seeds


class Progress:
    """DIR/progress.json: per stage its status ('running', 'done', 'skipped'), the ids a resume needs and its
    figures, rewritten atomically at every change (a kill leaves the last whole state)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, Any] = (json.loads(path.read_text(encoding="utf-8")) if path.is_file()
                                     else {"stages": {}})

    def stage(self, key: str) -> dict[str, Any]:
        return self.data["stages"].setdefault(key, {"status": "pending"})

    def finished(self, key: str) -> bool:
        return self.stage(key).get("status") in ("done", "skipped")

    def update(self, key: str, **values: Any) -> None:
        self.stage(key).update(values)
        self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.data, indent=1, default=str) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)

    def figures(self, key: str) -> dict[str, Any] | None:
        return self.stage(key).get("figures") if self.data["stages"].get(key) else None


class Skip(Exception):
    """A stage with nothing to measure (generation N trained no candidate): recorded as skipped, with why."""


def run_stages(progress: Progress, keys: list[str], runner: Callable[[str, Progress], dict[str, Any]],
               note: Callable[[str], None]) -> None:
    """Run every stage not finished yet, in order; each one's figures go into the progress file as it ends. A
    stage that raises stays 'running' with its error: the next run resumes it (its own records hold its work)."""
    for key in keys:
        if progress.finished(key):
            continue
        tries = int(progress.stage(key).get("tries", 0)) + 1
        progress.update(key, status="running", tries=tries, started=_now(), error="")
        note(f"stage {key}: started{f' (try {tries})' if tries > 1 else ''}")
        started = time.monotonic()
        try:
            figures = runner(key, progress)
        except Skip as why:
            progress.update(key, status="skipped", reason=str(why), finished=_now())
            note(f"stage {key}: skipped ({why})")
            continue
        except BaseException as error:  # a kill (KeyboardInterrupt) too: the time spent so far is kept
            spent = float(progress.stage(key).get("seconds") or 0) + time.monotonic() - started
            progress.update(key, error=f"{type(error).__name__}: {error}", seconds=round(spent, 1))
            raise
        spent = float(progress.stage(key).get("seconds") or 0) + time.monotonic() - started
        progress.update(key, status="done", figures=figures, finished=_now(), seconds=round(spent, 1))
        note(f"stage {key}: done")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# -- the record in the folder (it outlives a checkout) -----------------------------------------------------


def restore_record(folder: Path, repo: Path) -> Path | None:
    """Put the folder's copy of a still-running result file back into bench/results/ when this checkout lacks it
    (a new checkout), so `results.start` reopens it instead of starting a second record."""
    copies = sorted((folder / RECORD_DIR).glob(f"{NAME}-*.json")) if (folder / RECORD_DIR).is_dir() else []
    for copy in copies:
        data = results.read(copy)
        target = repo / results.RESULT_DIR / copy.name
        if data is not None and data.get("status") == "running" and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(copy, target)
            return target
    return None


def keep_record(run: results.Result, folder: Path) -> None:
    """A copy of the result file in the folder (after start, and after finish)."""
    (folder / RECORD_DIR).mkdir(parents=True, exist_ok=True)
    shutil.copy2(run.path, folder / RECORD_DIR / run.path.name)


# -- figures from the records (pure: records in, JSON out) -------------------------------------------------


def _dump(model: Any) -> Any:
    return None if model is None else json.loads(model.model_dump_json())


def lift_vs_gen0(figures: dict[str, Any]) -> dict[str, Any] | None:
    """A measurement's lift against generation 0: the control side's, or (no control side: the parent is
    generation 0 itself) the lift against the parent."""
    return figures.get("lift_vs_control") or (figures.get("lift") if figures.get("parent_is_gen0") else None)


def gen0_side(figures: dict[str, Any]) -> str:
    """Which side of an evaluation generation 0 ran as: the control, or the parent when it is generation 0."""
    return "parent" if figures.get("parent_is_gen0") else "control"


def eval_figures(outcome: Any) -> dict[str, Any]:
    """What the report needs of one evaluation (heldout or sealed): lifts, retentions, price, cache, looks."""
    return {
        "eval_id": outcome.eval_id, "split": outcome.split, "tasks": len(outcome.heldout_tasks),
        "candidate_ref": outcome.candidate.ref, "parent_ref": outcome.parent.ref,
        "control_ref": outcome.control.ref if outcome.control else None, "parent_is_gen0": outcome.control is None,
        "lift": _dump(outcome.lift), "lift_vs_control": _dump(outcome.lift_vs_control),
        "retention": _dump(outcome.retention), "retention_vs_control": _dump(outcome.retention_vs_control),
        "costs": {side: _dump(cost) for side, cost in outcome.costs.items()},
        "cache": {side: {**_dump(c), "share": c.share} for side, c in getattr(outcome, "cache", {}).items()},
        "cost_matched": _dump(outcome.cost_matched_heldout),
        "looks": outcome.looks, "candidate_looks": outcome.candidate_looks, "second_look": outcome.second_look,
        "decision": outcome.decision.reason, "attempts": outcome.attempts, "wall_s": round(outcome.wall_s, 1),
    }


def generation_figures(state: Any, heldout: Any | None) -> dict[str, Any]:
    """A finished generation: what chose its harness, what it carried, its gate, and its heldout evaluation."""
    from rsi.generation.outputs import (
        ExportOutput,
        PromoteAdapterOutput,
        PromoteOutput,
        RunOutput,
        TrainOutput,
    )
    from rsi.generation.state import STEPS

    promote, train, export = state.outputs(PromoteOutput), state.outputs(TrainOutput), state.outputs(ExportOutput)
    steps = {}
    for name in STEPS:
        step = state.step(name)
        seconds = (step.finished - step.started).total_seconds() if step.started and step.finished else None
        steps[name] = [step.status, None if seconds is None else round(seconds, 1)]
    run = state.outputs(RunOutput)
    return {
        "generation": state.id, "number": state.number, "seed": state.spec.get("seed"),
        "harness": {"status": promote.status, "candidate": promote.candidate, "sets": promote.harness_sets,
                    "selection_run_id": promote.selection_run_id},
        "run": {"run_id": run.run_id, "covered": run.covered, "tasks": run.tasks, "attempts": run.attempts},
        "library": export.experience.revision if export.experience else "",
        "library_entries": export.experience.entries if export.experience else None,
        "tools": export.tools.revision if export.tools else "",
        "tools_validated": len(export.tools.validated) if export.tools else None,
        "examples": export.examples, "candidate_ref": train.candidate_ref, "parent_ref": train.parent_ref,
        "adapter": state.outputs(PromoteAdapterOutput).state or "none",
        "heldout": eval_figures(heldout) if heldout is not None else None, "steps": steps,
    }


def paired_versus(later: Any, earlier: Any) -> dict[str, Any]:
    """Generation b's candidate against generation a's on the sealed split, paired by task, from their two final
    evaluations (the same test tasks, seeds and attempts: greedy float32 answers do not depend on the run)."""
    from rsi.promotion.decision import paired_lift

    a = {k: v["candidate"] for k, v in later.per_task.items() if "candidate" in v}
    b = {k: v["candidate"] for k, v in earlier.per_task.items() if "candidate" in v}
    return _dump(paired_lift(a, b).summary())


# -- the goals (pure: the result file's figures in, verdicts out) ------------------------------------------


def _ratio(costs: dict[str, Any], side: str, against: str, key: str) -> float | None:
    mine, theirs = (costs.get(side) or {}).get(key), (costs.get(against) or {}).get(key)
    if mine is None or not theirs:
        return None
    return mine / theirs


def _check(name: str, shown: str, met: bool | None) -> dict[str, Any]:
    return {"check": name, "value": shown, "met": met}


def _ci_text(lift: dict[str, Any] | None) -> str:
    if not lift:
        return "not measured"
    low, high = lift["lift_ci95"]
    return f"{lift['lift']:+.3f} [{low:+.3f}, {high:+.3f}]"


def heldout_retention_floor(heldout: dict[str, Any] | None) -> tuple[float | None, str]:
    """The lowest heldout retention (against the parent, and generation 0) and its text; None over no tasks."""
    if not heldout:
        return None, "not measured"
    found = [r for r in (heldout.get("retention"), heldout.get("retention_vs_control")) if r]
    values = [r["retention"] for r in found if r.get("retention") is not None]
    if not values:
        return None, "no tasks (the other side solved none: vacuous, as the gate reads it)"
    texts = [f"{r['retention']:.3f} ({r.get('kept')}/{r.get('parent_resolved')} vs {r.get('against', 'parent')})"
             for r in found if r.get("retention") is not None]
    return min(values), "; ".join(texts)


def goals(figures: dict[str, Any]) -> dict[str, Any]:
    """The issue's goals, evaluated from the figures alone: each check with its value and met (None: not measured).
    Generation 1: sealed lift vs gen 0 >= +0.10 with its interval above zero, heldout retention >= 0.9, tokens per
    task <= 10x gen 0's (completion and prompt, each). Generation 3: above generation 1 by >= +0.03 with the paired
    interval above zero, or matching it (paired interval's low end >= -0.03) at <= 0.7x its tokens (each). Neither:
    a plateau, explained by each generation's carrier shares."""
    gens = {g["number"]: g for g in figures.get("generations", [])}
    first, third = gens.get(1), gens.get(3)
    checks1: list[dict[str, Any]] = []
    sealed1 = (first or {}).get("sealed")
    lift1 = lift_vs_gen0(sealed1) if sealed1 else None
    checks1.append(_check(f"sealed lift vs gen 0 >= {GEN1_MIN_LIFT:+.2f}", _ci_text(lift1),
                          None if lift1 is None else lift1["lift"] >= GEN1_MIN_LIFT))
    checks1.append(_check("its 95% interval above zero", _ci_text(lift1),
                          None if lift1 is None else lift1["lift_ci95"][0] > 0))
    floor, text = heldout_retention_floor((first or {}).get("heldout"))
    measured = bool(first and first.get("heldout"))
    checks1.append(_check(f"heldout retention >= {RETENTION_MIN}", text,
                          None if not measured else (floor is None or floor >= RETENTION_MIN)))
    for key, label in (("completion_tokens_per_task", "completion"), ("prompt_tokens_per_task", "prompt")):
        costs = (sealed1 or {}).get("costs") or {}
        ratio = _ratio(costs, "candidate", gen0_side(sealed1 or {}), key) if sealed1 else None
        checks1.append(_check(f"{label} tokens per task <= {GEN1_MAX_TOKEN_RATIO:g}x gen 0's",
                              "not measured" if ratio is None else f"{ratio:.2f}x", None if ratio is None
                              else ratio <= GEN1_MAX_TOKEN_RATIO))
    step = (third or {}).get("sealed", {}).get("vs_first") if third and third.get("sealed") else None
    above = _check(f"gen 3 - gen 1 >= {GEN3_MIN_STEP:+.2f} with the paired interval above zero", _ci_text(step),
                   None if step is None else step["lift"] >= GEN3_MIN_STEP and step["lift_ci95"][0] > 0)
    ratios = []
    if third and third.get("sealed") and sealed1:
        for key in ("completion_tokens_per_task", "prompt_tokens_per_task"):
            mine, theirs = third["sealed"]["costs"].get("candidate", {}).get(key), sealed1["costs"].get("candidate", {}).get(key)
            ratios.append(None if mine is None or not theirs else mine / theirs)
    cheap = None if step is None or not ratios or None in ratios else (
        step["lift_ci95"][0] >= -GEN3_MARGIN and all(r <= GEN3_MAX_TOKEN_RATIO for r in ratios))
    shown = ("not measured" if step is None or not ratios or None in ratios else
             f"paired low end {step['lift_ci95'][0]:+.3f}; tokens {ratios[0]:.2f}x completion, {ratios[1]:.2f}x prompt")
    matching = _check(f"gen 3 matches gen 1 (paired low end >= {-GEN3_MARGIN:+.2f}) at <= {GEN3_MAX_TOKEN_RATIO}x "
                      "its tokens (each)", shown, cheap)
    met1 = None if any(c["met"] is None for c in checks1) else all(c["met"] for c in checks1)
    met3 = (True if above["met"] or matching["met"] else
            None if above["met"] is None or matching["met"] is None else False)
    plateau = [{"generation": g["number"], "shares": (g.get("ablation") or {}).get("shares"),
                "rows": [{"carrier": r["carrier"], "arm": r["arm"], "lift": (r.get("lift") or {}).get("lift"),
                          "ci": (r.get("lift") or {}).get("lift_ci95")} for r in (g.get("ablation") or {}).get("rows", [])]}
               for g in figures.get("generations", [])] if met3 is False else []
    return {"generation_1": {"met": met1, "checks": checks1},
            "generation_3": {"met": met3, "checks": [above, matching],
                             "verdict": "compounding" if met3 else "plateau" if met3 is False else "not measured"},
            "plateau": plateau}


def spread(values: list[float]) -> dict[str, float] | None:
    """min, max, mean and sample standard deviation of the seeds' lifts (pure; None without two values)."""
    if len(values) < 2:
        return None
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    return {"n": len(values), "min": min(values), "max": max(values), "mean": round(mean, 4), "sd": round(sd, 4)}


# -- rendering --------------------------------------------------------------------------------------------


MET = {True: "met", False: "not met", None: "not measured"}


def _num(value: Any, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _x(value: float | None, base: float | None) -> str:
    return "" if value is None or not base else f" ({value / base:.2f}x)"


def _generation_row(g: dict[str, Any]) -> str:
    sealed, heldout = g.get("sealed") or {}, g.get("heldout") or {}
    costs, zero = sealed.get("costs") or {}, gen0_side(sealed)
    cand, base = costs.get("candidate") or {}, costs.get(zero) or {}
    _floor, retention = heldout_retention_floor(heldout)
    cache = (sealed.get("cache") or {}).get("candidate") or {}
    share = cache.get("share")
    looks = (f"heldout {_num(heldout.get('looks'), 'd')}; test {_num(sealed.get('looks'), 'd')} "
             f"(this candidate {_num(sealed.get('candidate_looks'), 'd')}"
             f"{', SECOND LOOK' if sealed.get('second_look') else ''})")
    return "| " + " | ".join([
        f"{g['number']} ({g['generation']}, seed {g.get('seed')})",
        f"{g.get('adapter')}",
        _ci_text(lift_vs_gen0(sealed)) if sealed else "not measured",
        _ci_text(sealed.get("lift")) if sealed else "not measured",
        _ci_text(heldout.get("lift")) if heldout else "not measured",
        retention,
        _num(cand.get("completion_tokens_per_task"), ".1f") + _x(cand.get("completion_tokens_per_task"),
                                                                 base.get("completion_tokens_per_task")),
        _num(cand.get("prompt_tokens_per_task"), ".0f") + _x(cand.get("prompt_tokens_per_task"),
                                                             base.get("prompt_tokens_per_task")),
        _num(cand.get("seconds_per_task"), ".1f"),
        _num(cand.get("k_needed"), ".2f"),
        "not cacheable" if share is None and cache else "-" if share is None
        else f"{share:.0%} ({cache.get('tokens_not_spent')} tok)",
        looks,
    ]) + " |"


def _carrier_row(g: dict[str, Any]) -> str:
    ablation = g.get("ablation") or {}
    by = {(r["carrier"], r["arm"]): r for r in ablation.get("rows", [])}

    def cell(carrier: str, arm: str = "without") -> str:
        row = by.get((carrier, arm))
        if row is None:
            return "not carried" if carrier not in ablation.get("carried", []) else "-"
        return _ci_text(row.get("lift")) if row.get("lift") else "not measured"

    s = ablation.get("shares") or {}
    shares = (f"harness {s['harness']:+.3f}, weights {s['weights']:+.3f}, interaction {s['interaction']:+.3f}, "
              f"spend {_num(s.get('spend'), '+.3f')}" if s else "-")
    return (f"| {g['number']} | {cell('exemplars')} | {cell('tools')} | {cell('adapter')} | {cell('harness')} | "
            f"{cell('harness', 'alone')} | {shares} |")


def _cost_matched_row(g: dict[str, Any]) -> str:
    sealed = g.get("sealed") or {}
    m = sealed.get("cost_matched")
    if not m:
        return f"| {g['number']} | not measured | - | - | - |"
    return (f"| {g['number']} | {m['per_task']} ({m['sampling']}) | {m['pass_rate']:.3f} | {_ci_text(m['lift'])} | "
            f"{_ci_text(sealed.get('lift'))} |")


def _chosen(g: dict[str, Any]) -> str:
    harness = g.get("harness") or {}
    how = (f"paired selection on train tasks (run {harness['selection_run_id']})" if harness.get("selection_run_id")
           else "the coverage search's train evidence")
    return (f"generation {g['number']}: harness {harness.get('candidate') or 'unchanged'} ({harness.get('status') or '-'}) "
            f"chosen by {how}; adapter {g.get('adapter')} by the default gate on heldout "
            f"({(g.get('heldout') or {}).get('decision') or 'no evaluation'})")


def render_result(result: dict[str, Any]) -> str:
    """bench/RESULTS.md's section from one result file of this benchmark (bench/render.py calls it)."""
    f, params = result["figures"], result["params"]
    gens = f.get("generations", [])
    verdicts = goals(f)
    lines = [
        "`bench/compounding_sealed.py` (its docstring says every stage): generations 1 to "
        f"{params.get('generations')} on {params.get('suite')} from a fresh workspace, each measured once on the sealed "
        f"test split ({f.get('test_tasks')} tasks) against generation 0 and its parent, its carriers ablated on heldout "
        f"and the cost-matched alternative beside it. Wall time {f.get('wall_min')} min of stages.",
        "",
        "| generation | adapter (gate) | sealed lift vs gen 0 (95% CI) | sealed lift vs parent (95% CI) | heldout lift vs "
        "parent (95% CI) | heldout retention | completion tokens / task (x gen 0) | prompt tokens / task (x gen 0) | "
        "s / task | k needed | eval cache served | looks (heldout; test) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
        *[_generation_row(g) for g in gens],
        "",
        "Each carrier's share (heldout; arm 'without': the candidate against itself without the carrier; 'alone': the "
        "parent with the candidate's harness against the parent; shares of the lift over the parent):",
        "",
        "| generation | exemplars | tools | adapter | harness (without) | harness alone | shares |",
        "|---|---|---|---|---|---|---|",
        *[_carrier_row(g) for g in gens],
        "",
        "The cost-matched alternative on the sealed split (the parent as best-of-n at the candidate's completion tokens "
        "per task, n from the generation's heldout evaluation):",
        "",
        "| generation | n (sampling) | best-of-n pass rate | its lift vs parent | candidate's lift vs parent |",
        "|---|---|---|---|---|",
        *[_cost_matched_row(g) for g in gens],
    ]
    seeds = f.get("seeds") or []
    if seeds:
        lines += ["", "Generation 1 by search seed (a different train draw, selection draw and sampling seed; seed 0 "
                  "is the main line's):", "",
                  "| seed | sealed lift vs gen 0 (95% CI) | heldout lift vs gen 0 (95% CI) | adapter |",
                  "|---|---|---|---|"]
        for s in seeds:
            lines.append(f"| {s['seed']} | {_ci_text(lift_vs_gen0(s['sealed'])) if s.get('sealed') else 'not measured'} | "
                         f"{_ci_text(lift_vs_gen0(s['heldout'])) if s.get('heldout') else 'not measured'} | "
                         f"{s.get('adapter')} |")
        sealed = [lift_vs_gen0(s["sealed"])["lift"] for s in seeds if s.get("sealed") and lift_vs_gen0(s["sealed"])]
        found = spread(sealed)
        lines += ["", ("Spread of generation 1's sealed lift over seeds: " + (
            f"{found['min']:+.3f} to {found['max']:+.3f} (mean {found['mean']:+.3f}, sd {found['sd']:.3f}, "
            f"{found['n']} seeds)." if found else "fewer than two seeds measured."))]
    lines += ["", "Goals (issue 49), computed from the figures above:", ""]
    for name, label in (("generation_1", "Generation 1"), ("generation_3", "Generation 3")):
        goal = verdicts[name]
        met = MET[goal["met"]] if goal["met"] is None else f"**{MET[goal['met']]}**"
        extra = f" ({goal['verdict']})" if name == "generation_3" else ""
        lines.append(f"- {label}: {met}{extra}")
        for c in goal["checks"]:
            lines.append(f"  - {c['check']}: {c['value']}: {MET[c['met']]}")
    if verdicts["plateau"]:
        lines += ["", "Plateau: each carrier's measured share, per generation:"]
        for p in verdicts["plateau"]:
            parts = ", ".join(f"{r['carrier']} ({r['arm']}) {_num(r['lift'], '+.3f')}" for r in p["rows"]) or "no ablation"
            lines.append(f"- generation {p['generation']}: {parts}")
    lines += ["", "Nothing hand-picked:", "", *[f"- {_chosen(g)}" for g in gens]]
    return "\n".join(lines)


# -- the stages, for real ---------------------------------------------------------------------------------


class Bench:
    """The stages against the folder's workspaces (see the module docstring)."""

    def __init__(self, args: argparse.Namespace, folder: Path, note: Callable[[str], None]) -> None:
        self.args, self.folder, self.note = args, folder, note

    def workspace(self, name: str) -> Any:
        import feedback_generation

        from rsi.workspace import Workspace

        target = self.folder / name
        if (target / "hcp").is_dir():
            return Workspace(target)
        return feedback_generation.prepare(target, self.args.suite, self.args.max_tokens)

    def spec(self, seed: int, first: bool) -> Any:
        from rsi.generation.generation import GenerationSpec

        a = self.args
        return GenerationSpec(portfolio="default" if first else None, budget_attempts=a.budget_attempts,
                              workers=a.workers, harvest_per_task=a.harvest_per_task, harvest_budget=a.harvest_budget,
                              max_per_task=a.max_per_task, render="deployed", accumulate=True, seed=seed,
                              limit_covered=a.limit_covered, limit_heldout=a.limit_heldout, select_tasks=a.select_tasks,
                              select_top=a.select_top, experience=True, tools=True, threads=a.threads,
                              max_steps=a.max_steps)

    def generation(self, workspace: Any, number: int, seed: int) -> Any:
        """Generation `number` of the workspace: run (or resume) until it is done."""
        from rsi.generation.generation import run_generation
        from rsi.generation.state import list_generations

        while True:
            states = list_generations(workspace)
            if len(states) >= number and states[number - 1].status == "done":
                return states[number - 1]
            if len(states) > number:
                raise RuntimeError(f"{workspace.root}: generation {number} is not done but later ones exist")
            run_generation(workspace, self.spec(seed, first=number == 1 and not states), on_note=self.note)

    def heldout(self, workspace: Any, state: Any) -> Any:
        from rsi.evaluation import load_eval_outcome
        from rsi.generation.outputs import EvaluateOutput

        eval_id = state.outputs(EvaluateOutput).eval_id
        return load_eval_outcome(workspace, eval_id) if eval_id and (workspace.run_dir(eval_id) / "eval.json").is_file() \
            else None

    def final(self, workspace: Any, state: Any, key: str, progress: Progress) -> Any:
        """The sealed split's final evaluation of the generation's candidate (resumed by its recorded run id)."""
        from rsi.evaluation import EvalSpec, cost_matched_from, evaluate, load_eval_outcome
        from rsi.generation.generation import generation_zero_ref
        from rsi.generation.outputs import TrainOutput

        train = state.outputs(TrainOutput)
        if not train.candidate_ref:
            raise Skip(f"{state.id} trained no candidate")
        eval_id = progress.stage(key).get("eval_id")
        if eval_id and (workspace.run_dir(eval_id) / "eval.json").is_file():
            return load_eval_outcome(workspace, eval_id)
        held = self.heldout(workspace, state)
        n, basis = cost_matched_from(held) if held is not None else (None, "")
        spec = EvalSpec(candidate=train.candidate_ref, parent=train.parent_ref, split="test",
                        control=generation_zero_ref(workspace, state.inputs.get("contract", "default")),
                        limit_heldout=self.args.limit_test, limit_covered=0, workers=self.args.workers,
                        cost_matched_n=n, cost_matched_basis=basis,
                        why=f"bench/compounding_sealed.py: {state.id}'s final evaluation (issue 49)",
                        command=shlex.join(["python", *sys.argv]))
        if eval_id:  # created, then killed: resume it (its stored plan keeps the split, sides and seeds)
            spec = EvalSpec(candidate="-", parent="-", resume=eval_id, workers=self.args.workers)
        return evaluate(workspace, spec, on_note=lambda m: self.note(f"final: {m}"),
                        on_created=lambda eid: progress.update(key, eval_id=eid))

    def __call__(self, key: str, progress: Progress) -> dict[str, Any]:
        kind, _, number = key.partition(" ")
        n = int(number)
        if kind == "seed":
            workspace = self.workspace(f"seed-{n}")
            state = self.generation(workspace, 1, seed=n)
            figures = generation_figures(state, self.heldout(workspace, state))
            figures["sealed"] = eval_figures(self.final(workspace, state, key, progress))
            return figures
        workspace = self.workspace("main")
        state = self.generation(workspace, n, seed=n - 1)
        if kind == "gen":
            return generation_figures(state, self.heldout(workspace, state))
        if kind == "final":
            outcome = self.final(workspace, state, key, progress)
            figures = eval_figures(outcome)
            first_id = (progress.stage("final 1").get("eval_id") if n > 1 else None)
            if first_id and (workspace.run_dir(first_id) / "eval.json").is_file():
                from rsi.evaluation import load_eval_outcome

                figures["vs_first"] = paired_versus(outcome, load_eval_outcome(workspace, first_id))
            return figures
        from rsi.generation.ablation import AblationSpec, ablate_generation
        from rsi.generation.outputs import TrainOutput

        if not state.outputs(TrainOutput).candidate_ref:
            raise Skip(f"{state.id} trained no candidate")
        record = ablate_generation(workspace, AblationSpec(generation=state.id, limit_heldout=self.args.limit_heldout,
                                                           workers=self.args.workers), on_note=self.note)
        return _dump(record)


def assemble(progress: Progress, generations: int, search_seeds: list[int], test_tasks: int | None,
             wall_min: float) -> dict[str, Any]:
    """The result file's figures from the progress file's stages (pure)."""
    gens = []
    for n in range(1, generations + 1):
        base = progress.figures(f"gen {n}")
        if base is None:
            continue
        gens.append({**base, "sealed": progress.figures(f"final {n}"), "ablation": progress.figures(f"ablate {n}")})
    seeds = []
    for s in search_seeds:
        found = (gens[0] if s == 0 and gens else progress.figures(f"seed {s}"))
        if found:
            seeds.append({"seed": s, "generation": found.get("generation"), "adapter": found.get("adapter"),
                          "heldout": found.get("heldout"), "sealed": found.get("sealed")})
    return {"generations": gens, "seeds": seeds, "test_tasks": test_tasks, "wall_min": wall_min,
            "stages": {k: {x: v.get(x) for x in ("status", "reason", "tries", "seconds")}
                       for k, v in progress.data["stages"].items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folder", type=Path, required=True, help="Everything the run keeps (module docstring): "
                        "outside the checkout, so it outlives it. Created if new; resumed if it exists.")
    parser.add_argument("--suite", default="pyfuncs2")
    parser.add_argument("--generations", type=int, default=3)
    parser.add_argument("--search-seeds", default="0", help="Generation 1 with each of these search seeds (0: the "
                        "main line's own), e.g. 0,1,2.")
    parser.add_argument("--budget-attempts", type=int, default=240)
    parser.add_argument("--select-tasks", type=int, default=40)
    parser.add_argument("--select-top", type=int, default=3)
    parser.add_argument("--harvest-per-task", type=int, default=2)
    parser.add_argument("--harvest-budget", type=int, default=120)
    parser.add_argument("--max-per-task", type=int, default=2)
    parser.add_argument("--limit-covered", type=int, default=40)
    parser.add_argument("--limit-heldout", type=int, default=None, help="Only the first N heldout tasks (a toy run).")
    parser.add_argument("--limit-test", type=int, default=None, help="Only the first N test tasks (a toy run).")
    parser.add_argument("--max-steps", type=int, default=None, help="Training step cap (a toy run).")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=384)
    parser.add_argument("--threads", type=int, default=None, help="torch threads for training (default: measured).")
    parser.add_argument("--section", default=SECTION, help="The RESULTS.md heading (a toy run names its own).")
    results.add_arguments(parser)
    args = parser.parse_args()
    seeds = parse_seeds(args.search_seeds)
    folder = args.folder.resolve()
    repo = results.repo_root()
    if folder.is_relative_to(repo):
        results._refuse(f"--folder {folder}: inside the checkout {repo}; put it outside (a new checkout would not "
                        "have it), e.g. /work/compounding")
    restore_record(folder, repo)
    run = results.start(NAME, seeds=seeds, allow_dirty=args.allow_dirty, section=args.section, params=vars(args))
    folder.mkdir(parents=True, exist_ok=True)
    keep_record(run, folder)
    (folder / RESUME_FILE).write_text(f"cd <checkout>/{run.data['cwd']} && {run.data['command']}\n", encoding="utf-8")
    for var, value in {"GIT_AUTHOR_NAME": "rsi bench", "GIT_AUTHOR_EMAIL": "bench@rsi.local",
                       "GIT_COMMITTER_NAME": "rsi bench", "GIT_COMMITTER_EMAIL": "bench@rsi.local"}.items():
        os.environ.setdefault(var, value)
    os.environ.pop("RSI_DB", None)  # each workspace's own store
    started = time.monotonic()

    def note(line: str) -> None:
        print(f"{datetime.now(UTC):%H:%M:%S} {time.monotonic() - started:7.0f}s load {os.getloadavg()[0]:4.1f} {line}",
              flush=True)

    progress = Progress(folder / PROGRESS)
    keys = stage_keys(args.generations, seeds)
    note(f"folder {folder}; stages {', '.join(keys)}; resume with: cd <checkout>/{run.data['cwd']} && {run.data['command']}")
    run_stages(progress, keys, Bench(args, folder, note), note)
    wall = sum(float(progress.stage(k).get("seconds") or 0) for k in keys) / 60
    figures = assemble(progress, args.generations, seeds, _test_tasks(folder, args), round(wall, 1))
    results.finish(run, json.loads(json.dumps(figures, default=str)))
    keep_record(run, folder)
    print(render_result(run.data))
    print(f"result file: {run.path}", flush=True)


def _test_tasks(folder: Path, args: argparse.Namespace) -> int | None:
    from rsi.tasks.load import load_suite
    from rsi.workspace import Workspace

    tasks = [t for t in load_suite(Workspace(folder / "main"), args.suite) if t.spec.split == "test"]
    return min(len(tasks), args.limit_test) if args.limit_test else len(tasks)


if __name__ == "__main__":
    main()
