"""Benchmark (issue 41 item 4, quality): what a learned router over several specialists buys on heldout tasks.

Every step is rsi's own, in a fresh workspace (bench/compounding.py's `prepare`: the text substrate on
pyfuncs2, greedy, `--max-tokens`, evaluation served in float32):

  generation  `run_generation` with `specialists_by = --specialists-by` ("cluster": the contract's `[training]
              clusters`, 3; "tag": each task's first tag, a tag with fewer than `--min-partition-examples`
              examples joining "other", set by a revision of the deployed contract before the generation):
              a coverage run of the text3 portfolio on the train split, a harvest, an export rendered in the
              deployed contract's conversation, and one LoRA per part, registered with its partition,
              listed in the candidate contract (routing stays the parent's: the base). Its own evaluation is
              cut to `--generation-heldout` tasks (what it decides is not this table).
  arms        one revision of the candidate contract per specialist, routing fixed to it; the parent
              contract is the base arm.
  evidence    exact evaluation (`rsi eval`'s path, EvalSpec.tasks; an evaluation takes three arms, so N arms
              take ceil(N / 3) of them) of the base and every specialist on a train slice (`--train-share`
              of the train tasks, chosen by a hash fixed before running): the per-specialist pass records
              the router is fitted on. Heldout tasks are never read here.
  router      `rsi router fit`'s core on those evaluation runs only; the learned arm is one more revision
              with `[routing] policy = "learned"`, the router and its sha256.
  heldout     exact evaluation of every arm on every heldout task (greedy, one attempt each, float32):
              base, each specialist, the learned router. The best single specialist is the one with the
              highest pass rate on the train slice (chosen before heldout is read; the heldout-best is shown
              beside it, labelled hindsight). The oracle router is computed, not run: a task counts if any
              specialist passed it (and, in a second column, the base too).

Rows: heldout pass rate, the paired lift of the learned router against the best single specialist and against
the base (Newcombe 95%), regret against the oracle (oracle rate - learned rate) beside the oracle's gain over
the base (the issue's bar: regret under a third of it), the share of turns each specialist took under the
learned router (from its trajectories' routing decisions), and completion tokens per heldout task.

    nice -n 5 .venv/bin/python bench/moe_heldout.py --workspace /tmp/rsi-moe --write
    .venv/bin/python bench/moe_heldout.py --workspace /tmp/rsi-moe-smoke --smoke   # minutes, numbers meaningless

A killed benchmark resumes with the same `--workspace` (every step is recorded in bench-moe.json there, and
the evaluations resume by id). `--write` replaces the `--section` of bench/RESULTS.md (default `## moe heldout`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shlex
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from compounding import open_or_prepare  # bench/ (scripts run from bench/)
from recipe_sweep import head_commit, make_note
from results import replace_section

SECTION = "## moe heldout"
STATE = "bench-moe.json"
SLICE_SALT = "moe-heldout/train-slice:"
SLICE_RULE = 'int(sha256("moe-heldout/train-slice:" + task_key).hexdigest()[:8], 16) % 1000 < 1000 * share'


def in_slice(key: str, share: float) -> bool:
    return int(hashlib.sha256((SLICE_SALT + key).encode("utf-8")).hexdigest()[:8], 16) % 1000 < 1000 * share


class Ledger:
    """bench-moe.json: what each step made (refs, ids), so a resumed benchmark skips what is done."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def put(self, key: str, value: Any) -> None:
        self.data[key] = value
        self.path.write_text(json.dumps(self.data, indent=2, sort_keys=True))


def run_the_generation(workspace: Any, args: argparse.Namespace, ledger: Ledger, note: Any) -> None:
    from rsi.generation.generation import GenerationSpec, run_generation
    from rsi.generation.outputs import TrainOutput
    from rsi.generation.state import list_generations

    if ledger.get("candidate"):
        return
    if args.min_partition_examples is not None and not ledger.get("partition_revision"):
        from rsi.contracts.revisions import revise_contract

        outcome = revise_contract(workspace, "default", {"training.min_partition_examples": args.min_partition_examples},
                                  f"bench moe_heldout: a part under {args.min_partition_examples} examples joins 'other'")
        ledger.put("partition_revision", outcome.revision)
    unfinished = [s for s in list_generations(workspace) if s.status != "done"]
    spec = GenerationSpec(portfolio="text3", budget_attempts=args.budget_attempts, workers=args.workers,
                          harvest_per_task=args.harvest_per_task, harvest_budget=args.harvest_budget,
                          max_per_task=args.max_per_task, render="deployed", specialists_by=args.specialists_by,
                          limit_heldout=args.generation_heldout, limit_covered=0, threads=args.threads,
                          max_steps=args.max_steps, limit_tasks=args.limit_tasks, epochs=args.epochs)
    started = time.monotonic()
    state = run_generation(workspace, spec, on_note=note, resume=unfinished[-1].id if unfinished else None)
    trained = state.outputs(TrainOutput)
    if not trained.specialists:
        raise SystemExit(f"{state.id} trained no specialists: {state.step('train').reason}")
    ledger.put("generation", {"id": state.id, "wall_s": round(time.monotonic() - started, 1),
                              "steps": {name: state.step(name).status for name in state.steps}})
    ledger.put("specialists", trained.specialists)
    ledger.put("specialists_by", trained.specialists_by)
    ledger.put("parent", trained.parent_ref)
    ledger.put("candidate", trained.candidate_ref)


def arm_refs(workspace: Any, ledger: Ledger) -> dict[str, str]:
    """base -> the parent ref; each specialist -> a candidate revision routing every turn to it."""
    from rsi.contracts.revisions import revise_contract

    refs = dict(ledger.get("arms", {}))
    name = ledger.get("candidate").split("@")[0]
    refs.setdefault("base", ledger.get("parent"))
    for specialist in sorted(ledger.get("specialists")):
        if specialist not in refs:
            outcome = revise_contract(workspace, name, {"routing.policy": "fixed", "routing.specialist": specialist},
                                      f"bench moe_heldout: every turn to specialist {specialist}")
            refs[specialist] = f"{name}@r{outcome.revision}"
            ledger.put("arms", refs)
    ledger.put("arms", refs)
    return refs


def measure(workspace: Any, ledger: Ledger, key: str, sides: list[str], tasks: list[str] | None, note: Any,
            args: argparse.Namespace) -> dict[str, Any]:
    """One exact evaluation of up to three arms (candidate, parent, control) on `tasks` (None: heldout),
    resumed by id; per arm: the task -> solved map and completion tokens per task."""
    from rsi.evaluation import EvalSpec, evaluate

    done = ledger.get(f"eval:{key}")
    if done and done.get("finished"):
        return done
    refs = ledger.get("arms")
    spec = EvalSpec(candidate=refs[sides[0]], parent=refs[sides[1]], control=refs[sides[2]] if len(sides) > 2 else None,
                    tasks=tasks or [], limit_covered=0, limit_heldout=args.limit_heldout if tasks is None else None,
                    workers=args.workers, resume=(done or {}).get("eval_id"))
    started = time.monotonic()
    outcome = evaluate(workspace, spec, on_note=lambda m: note(f"eval {key}: {m}"),
                       on_created=lambda eid: ledger.put(f"eval:{key}", {"eval_id": eid}))
    roles = ["candidate", "parent", "control"][: len(sides)]
    solved = {arm: {t: bool(outcome.per_task[t].get(role)) for t in outcome.per_task if role in outcome.per_task[t]}
              for arm, role in zip(sides, roles, strict=True)}
    tokens = {arm: outcome.costs[role].completion_tokens_per_task if role in outcome.costs else None
              for arm, role in zip(sides, roles, strict=True)}
    record = {"eval_id": outcome.eval_id, "finished": True, "solved": solved, "tokens_per_task": tokens,
              "wall_s": round(time.monotonic() - started, 1), "attempts": outcome.attempts, "errors": outcome.errors}
    ledger.put(f"eval:{key}", record)
    return record


def fit_router(workspace: Any, ledger: Ledger, runs: list[str], note: Any) -> str:
    """Fit on the train-slice evaluations only; the learned arm is a candidate revision that applies it."""
    from rsi.contracts.revisions import revise_contract
    from rsi.trajectories.router_fit import fit_contract

    refs = ledger.get("arms")
    if "learned" in refs:
        return refs["learned"]
    name = ledger.get("candidate").split("@")[0]
    outcome = fit_contract(workspace, name, runs, head_commit())
    acc = outcome.accuracy
    note(f"router r{outcome.record.revision}: {outcome.record.evidence.attempts} train attempts on "
         f"{len(outcome.record.evidence.tasks)} tasks; picks a passing specialist on {acc.in_sample}/{acc.tasks} in "
         f"sample, {acc.leave_one_out}/{acc.tasks} leaving each task out (oracle {acc.oracle})")
    relative = outcome.path.relative_to(workspace.hcp_dir).as_posix()
    revised = revise_contract(workspace, name, {"routing.policy": "learned", "routing.router": relative,
                                                "routing.router_sha256": outcome.sha256},
                              f"bench moe_heldout: the learned router r{outcome.record.revision}")
    refs["learned"] = f"{name}@r{revised.revision}"
    ledger.put("arms", refs)
    ledger.put("router", {"path": relative, "sha256": outcome.sha256, "revision": outcome.record.revision,
                          "accuracy": acc.__dict__, "stats": [{"specialist": s.specialist or "base", "attempts": s.attempts,
                                                               "passes": s.passes} for s in outcome.record.specialists]})
    return refs["learned"]


def turn_shares(workspace: Any, eval_id: str) -> dict[str, int]:
    """Turns each specialist took under the learned router (the routing decisions its trajectories record)."""
    from rsi.harness.trajectory import read_trajectory
    from rsi.store import open_store

    counts: Counter[str] = Counter()
    with open_store(workspace.db_url) as store:
        paths = [a.trajectory_path for a in store.list_attempts(eval_id) if a.trajectory_path]
    for path in paths:
        file = Path(path) if Path(path).is_absolute() else workspace.root / path
        trajectory = read_trajectory(file)
        for step in trajectory.steps:
            if step.routing is not None and step.routing.reason.startswith("learned"):
                counts[step.routing.specialist or "base"] += 1
    return dict(counts)


def evaluations(ledger: Ledger, kind: str) -> list[dict[str, Any]]:
    """The recorded evaluations of one kind ("train" or "heldout"), in order: `<kind>-1`, `<kind>-2`, ..."""
    prefix = f"eval:{kind}-"
    keys = sorted((k for k in ledger.data if k.startswith(prefix)), key=lambda k: int(k.removeprefix(prefix)))
    return [ledger.data[k] for k in keys]


def arm_groups(arms: list[str]) -> list[list[str]]:
    """Arms in evaluations of at most three (candidate, parent, control); a lone last arm is paired with the
    first arm again (an evaluation needs two sides: the repeat costs one more pass of that arm)."""
    groups = [arms[i:i + 3] for i in range(0, len(arms), 3)]
    if len(groups[-1]) == 1:
        groups[-1].append(arms[0])
    return groups


def table(ledger: Ledger, workspace: Any) -> str:
    from rsi.promotion.decision import paired_lift

    specialists = sorted(ledger.get("specialists"))
    solved: dict[str, dict[str, bool]] = {}
    tokens: dict[str, float | None] = {}
    for record in evaluations(ledger, "heldout"):
        solved.update(record.get("solved", {}))
        tokens.update(record.get("tokens_per_task", {}))
    train: dict[str, dict[str, bool]] = {}
    for record in evaluations(ledger, "train"):
        train.update(record.get("solved", {}))
    tasks = sorted(set.intersection(*(set(solved[a]) for a in ["base", *specialists, "learned"])))

    def rate(arm: str) -> float:
        return sum(solved[arm][t] for t in tasks) / len(tasks)

    train_rate = {s: sum(train[s].values()) / max(1, len(train[s])) for s in ["base", *specialists]}
    best = max(specialists, key=lambda s: (train_rate[s], -specialists.index(s)))
    hindsight = max(specialists, key=lambda s: (rate(s), -specialists.index(s)))
    oracle = {t: any(solved[s][t] for s in specialists) for t in tasks}
    oracle_all = {t: oracle[t] or solved["base"][t] for t in tasks}
    learned = {t: solved["learned"][t] for t in tasks}
    o_rate, o_all = sum(oracle.values()) / len(tasks), sum(oracle_all.values()) / len(tasks)
    shares = ledger.get("turns", {})
    total_turns = sum(shares.values()) or 1
    rows = ["| arm | heldout pass rate | train-slice pass rate | completion tokens per task | turns under the learned router |",
            "|---|---|---|---|---|"]
    for arm in ["base", *specialists]:
        mark = " (best single, chosen on train)" if arm == best else ""
        mark += " (best single in hindsight)" if arm == hindsight and arm != best else ""
        rows.append(f"| {arm}{mark} | {rate(arm):.3f} ({sum(solved[arm][t] for t in tasks)}/{len(tasks)}) | "
                    f"{train_rate[arm]:.3f} | {tokens.get(arm) or 0:.1f} | {shares.get(arm, 0) / total_turns:.0%} |")
    rows.append(f"| learned router | {rate('learned'):.3f} ({sum(learned.values())}/{len(tasks)}) | - | "
                f"{tokens.get('learned') or 0:.1f} | 100% |")
    rows.append(f"| oracle router (any specialist passes) | {o_rate:.3f} | - | - | - |")
    rows.append(f"| oracle with the base too | {o_all:.3f} | - | - | - |")
    vs_best = paired_lift(learned, {t: solved[best][t] for t in tasks})
    vs_base = paired_lift(learned, {t: solved["base"][t] for t in tasks})
    gain, regret = o_rate - rate("base"), o_rate - rate("learned")
    reached = vs_best.ci.low > 0 and regret < gain / 3
    lines = ["", f"- learned router against the best single specialist ({best}): {rate('learned') - rate(best):+.3f} "
             f"[{vs_best.ci.low:+.3f}, {vs_best.ci.high:+.3f}] (learned only {vs_best.candidate_only}, {best} only "
             f"{vs_best.parent_only})",
             f"- learned router against the base: {rate('learned') - rate('base'):+.3f} [{vs_base.ci.low:+.3f}, "
             f"{vs_base.ci.high:+.3f}] (learned only {vs_base.candidate_only}, base only {vs_base.parent_only})",
             f"- regret against the oracle: {regret:.3f}; the oracle's gain over the base: {gain:.3f} (bar: regret < "
             f"{gain / 3:.3f})",
             f"- the issue's goal (interval against the best single above zero, regret under a third of the gain): "
             f"{'reached' if reached else 'not reached'}"]
    return "\n".join(rows + lines)


def write(ledger: Ledger, workspace: Any, args: argparse.Namespace) -> None:
    gen, router = ledger.get("generation"), ledger.get("router")
    evals = {k[5:]: v for k, v in ledger.data.items() if k.startswith("eval:")}
    text = "\n".join([
        SECTION, "",
        f"`bench/moe_heldout.py` (its docstring says what each step does): specialists per {ledger.get('specialists_by', 'cluster')} from one "
        "generation, a router learned from train-slice evidence, every arm evaluated exactly on heldout.", "",
        f"Code {ledger.get('code')}; {platform.node()} ({os.cpu_count()} cores), started {ledger.get('started')}; "
        f"pyfuncs2, text substrate, greedy, float32, {args.max_tokens} tokens. Generation {gen['id']} "
        f"({gen['wall_s'] / 60:.0f} min): specialists {', '.join(f'{k} {v[:12]}' for k, v in sorted(ledger.get('specialists').items()))}. "
        f"Train slice: {SLICE_RULE} with share {args.train_share} ({ledger.get('train_tasks')} tasks). Router "
        f"r{router['revision']} (sha256 {router['sha256'][:12]}): fitted on {sum(s['attempts'] for s in router['stats'])} "
        f"train attempts; picks a passing specialist on {router['accuracy']['in_sample']}/{router['accuracy']['tasks']} "
        f"train tasks in sample, {router['accuracy']['leave_one_out']} leaving each out (oracle "
        f"{router['accuracy']['oracle']}).", "",
        table(ledger, workspace), "",
        "Evaluations: " + "; ".join(f"{k} {v['eval_id']} ({v['attempts']} attempts, {v['errors']} errors, "
                                   f"{v['wall_s'] / 60:.0f} min)" for k, v in sorted(evals.items()) if v.get("finished")),
        "", "Command:", "", "    nice -n 5 .venv/bin/python bench/moe_heldout.py " + shlex.join(sys.argv[1:]), ""])
    replace_section(args.section, text.replace(SECTION, args.section, 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", type=Path, required=True, help="Created if new; resumed if it exists.")
    parser.add_argument("--budget-attempts", type=int, default=150)
    parser.add_argument("--harvest-per-task", type=int, default=4)
    parser.add_argument("--harvest-budget", type=int, default=150)
    parser.add_argument("--max-per-task", type=int, default=4)
    parser.add_argument("--specialists-by", choices=["cluster", "tag"], default="cluster")
    parser.add_argument("--min-partition-examples", type=int, default=None, help="A part with fewer examples joins "
                        "'other' (a revision of the deployed contract's [training] before the generation; None: its own, 4).")
    parser.add_argument("--epochs", type=int, default=None, help="Each specialist's training epochs (None: the "
                        "contract's [training] epochs, 2).")
    parser.add_argument("--train-share", type=float, default=0.5, help="Share of train tasks in the router's slice.")
    parser.add_argument("--generation-heldout", type=int, default=5)
    parser.add_argument("--limit-heldout", type=int, default=None, help="Only the first N heldout tasks (by key).")
    parser.add_argument("--limit-tasks", type=int, default=None, help="Only the first N train tasks in the generation.")
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--smoke", action="store_true", help="Tiny slices everywhere: checks the plumbing only.")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--section", default=SECTION, help="The bench/RESULTS.md section --write replaces (a second setting "
                        "keeps the first's table).")
    args = parser.parse_args()
    if args.smoke:
        args.budget_attempts, args.harvest_budget, args.limit_tasks, args.max_steps = 30, 20, 24, 4
        args.limit_heldout, args.generation_heldout, args.train_share, args.max_tokens = 6, 2, 0.15, 96
    target = args.workspace.resolve()
    workspace = open_or_prepare(target, args.max_tokens, "float32")

    from rsi.contracts.refs import resolve_ref
    from rsi.tasks.load import load_suite

    ledger = Ledger(target / STATE)
    ledger.data.setdefault("code", head_commit())
    ledger.data.setdefault("started", f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC")
    note = make_note(time.monotonic())
    run_the_generation(workspace, args, ledger, note)
    specialists = sorted(ledger.get("specialists"))
    arm_refs(workspace, ledger)
    suite = resolve_ref(workspace, ledger.get("parent")).spec.evaluation.suite
    train = sorted(t.key for t in load_suite(workspace, suite) if t.spec.split == "train" and in_slice(t.key, args.train_share))
    ledger.put("train_tasks", len(train))
    # train-slice evidence for the router: the base and every specialist, three arms to an evaluation
    runs = [measure(workspace, ledger, f"train-{i}", group, train, note, args)["eval_id"]
            for i, group in enumerate(arm_groups(["base", *specialists]), start=1)]
    fit_router(workspace, ledger, runs, note)
    heldout = [measure(workspace, ledger, f"heldout-{i}", group, None, note, args)
               for i, group in enumerate(arm_groups(["base", *specialists, "learned"]), start=1)]
    learned = next(record for record in heldout if "learned" in record["solved"])
    ledger.put("turns", turn_shares(workspace, learned["eval_id"]))
    print(table(ledger, workspace))
    if args.write:
        write(ledger, workspace, args)


if __name__ == "__main__":
    main()
