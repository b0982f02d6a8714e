"""Scheduler sample efficiency on simulated portfolios: attempts to reach full coverage.

For each setting (a `rsi.simulate.MatrixSpec`) and seed, generate a pass-probability matrix, run
every scheduler against it with seeded Bernoulli outcomes (common random numbers across
schedulers), and count the attempts spent until every task passed once (jobs of 8 tasks, one
attempt per task, capped at 20x the oracle). The oracle lower bound is sum over tasks of 1 / p_best
(each task attempted only with its best configuration). Targets on the default setting: at most
half the attempts of round-robin, and within 1.5x of the oracle.

    .venv/bin/python bench/scheduler_efficiency.py [--seeds N] [--settings a,b] [--write]

`--write` replaces the `## scheduler_efficiency` section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from dataclasses import asdict
from datetime import UTC, datetime

from results import replace_section  # bench/results.py (scripts run from bench/)

from rsi.scheduler import ThompsonScheduler, make_scheduler
from rsi.simulate import MatrixSpec, PassMatrix, generate_matrix, simulate

SECTION = "## scheduler_efficiency"
SCHEDULERS = ["thompson", "thompson-draws", "round-robin", "random", "best-single"]
SETTINGS: dict[str, tuple[str, MatrixSpec]] = {
    "default": ("122 tasks x 12 configs, 12 tags, 1-2 specialties per config", MatrixSpec()),
    "diffuse": (
        "8 tags (broader, weaker specialists), p_best floor 0.2",
        MatrixSpec(n_tags=8, specialist_logit=4.5, min_best_p=0.2),
    ),
    "easier": ("stronger specialists, p_best floor 0.5", MatrixSpec(specialist_logit=7.5, min_best_p=0.5, difficulty_sd=0.5)),
    "harder": (
        "more task difficulty and cell noise, p_best floor 0.15",
        MatrixSpec(min_best_p=0.15, difficulty_sd=1.2, cell_sd=0.9),
    ),
    "fewer-configs": ("4 configs, 4 tags", MatrixSpec(n_configs=4, n_tags=4)),
    "correlated": ("configs in families of 3 sharing specialties", MatrixSpec(family_size=3, n_tags=6)),
    "noisy-tags": ("30% of tasks show a wrong tag", MatrixSpec(tag_noise=0.3)),
    "no-structure": ("abilities independent of tags (tags useless)", MatrixSpec(structured=False)),
    "larger": ("300 tasks x 24 configs, 24 tags", MatrixSpec(n_tasks=300, n_configs=24, n_tags=24)),
}


class TagOracle(ThompsonScheduler):
    """The default scheduler told which (configuration, tag) cells are able (mean p over the tag's
    tasks above 0.1): a reference that separates the cost of learning the cells from the rest."""

    name: str = "tag-oracle"

    def __init__(self, matrix: PassMatrix) -> None:
        super().__init__()
        self.truth = matrix.able_cells(0.1)

    def _fit_mixture(self, cells, n_cg, s_cg, mu0):  # type: ignore[no-untyped-def]
        _, r1, r0 = super()._fit_mixture(cells, n_cg, s_cg, mu0)
        return {cell: 1.0 if cell in self.truth else 0.0 for cell in cells}, r1, r0


def run_setting(spec: MatrixSpec, seeds: range) -> dict:
    matrices = [generate_matrix(spec, s) for s in seeds]
    oracle = [m.oracle_attempts() for m in matrices]
    rates = [r for m in matrices for r in m.config_rates()]
    best = sorted(m.best_p(t) for m in matrices for t in range(len(m.tasks)))
    out = {
        "oracle": statistics.mean(oracle),
        "rates": (min(rates), max(rates)),
        "p_best_median": best[len(best) // 2],
        "search": statistics.mean(m.tag_search_attempts() for m in matrices),
        "schedulers": {},
    }
    for name in [*SCHEDULERS, "tag-oracle"]:
        started = time.perf_counter()
        attempts, unfinished, to_half = [], 0, []
        for s, m, o in zip(seeds, matrices, oracle, strict=True):
            scheduler = TagOracle(m) if name == "tag-oracle" else make_scheduler(name)
            result = simulate(scheduler, m, seed=s, max_attempts=int(20 * o))
            attempts.append(result.attempts)
            unfinished += not result.full_coverage
            half = next((i + 1 for i, v in enumerate(result.curve) if v * 2 >= len(m.tasks)), result.attempts)
            to_half.append(half)
        out["schedulers"][name] = {
            "mean": statistics.mean(attempts),
            "sd": statistics.pstdev(attempts),
            "unfinished": unfinished,
            "to_half": statistics.mean(to_half),
            "seconds": time.perf_counter() - started,
        }
    return out


def render(results: dict[str, dict], n_seeds: int) -> str:
    lines = [
        f"Mean attempts to full coverage over {n_seeds} seeds (sd in brackets); `>` marks a mean that includes "
        "runs stopped at the cap (20x oracle) before full coverage, with their count. Jobs of 8 tasks, 1 attempt each.",
        "",
        "| setting | config pass rates | median p_best | oracle | tag-oracle | thompson | thompson-draws | round-robin "
        "| random | best-single | thompson / oracle | round-robin / thompson | (oracle + search) / oracle |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, r in results.items():
        cells = []
        for s in ["tag-oracle", *SCHEDULERS]:
            x = r["schedulers"][s]
            mark = f"> {x['mean']:.0f} ({x['unfinished']} capped)" if x["unfinished"] else f"{x['mean']:.0f} ({x['sd']:.0f})"
            cells.append(mark)
        t = r["schedulers"]["thompson"]["mean"]
        rr = r["schedulers"]["round-robin"]["mean"]
        lo, hi = r["rates"]
        lines.append(
            f"| {name} | {lo:.3f}-{hi:.3f} | {r['p_best_median']:.2f} | {r['oracle']:.0f} | " + " | ".join(cells)
            + f" | **{t / r['oracle']:.2f}** | **{rr / t:.2f}** | {(r['oracle'] + r['search']) / r['oracle']:.2f} |"
        )
    lines += [
        "",
        "Columns: `oracle` = sum over tasks of 1 / p_best (a lower bound no scheduler can beat on average); "
        "`tag-oracle` = the default scheduler told which configurations are able at which tags (not a "
        "real scheduler: it separates the attempts spent learning that from the rest); `thompson` = the "
        "default (`make_scheduler()`, posterior means); `thompson-draws` = the same model with Thompson draws; "
        "`(oracle + search) / oracle` = the oracle plus the failed attempts that finding an able configuration "
        "for every tag costs a scheduler that learns each tag on its own, with nothing telling the "
        "configurations apart beforehand (`PassMatrix.tag_search_attempts`: per tag, sweeps in a random order "
        "until an able configuration passes; Monte Carlo). It estimates what any such scheduler pays at least; "
        "only structure across tags (a configuration already known able elsewhere is less likely to be able "
        "here) or two-tag tasks can beat it.",
        "",
        "Settings:",
        "",
    ]
    for name in results:
        desc, spec = SETTINGS[name]
        changed = {k: v for k, v in asdict(spec).items() if v != asdict(MatrixSpec())[k]}
        lines.append(f"- `{name}`: {desc}" + (f" (`MatrixSpec({', '.join(f'{k}={v!r}' for k, v in changed.items())})`)" if changed else ""))
    d = results.get("default")
    if d:
        t_mean = d["schedulers"]["thompson"]["mean"]
        rr_ratio = d["schedulers"]["round-robin"]["mean"] / t_mean
        oracle_ratio = t_mean / d["oracle"]
        tag = d["schedulers"]["tag-oracle"]["mean"]
        learning = (t_mean - tag) / max(t_mean - d["oracle"], 1e-9)
        lines += [
            "",
            "Targets on the default setting:",
            "",
            f"- at least 2x fewer attempts than round-robin: {'MET' if rr_ratio >= 2 else 'NOT MET'} ({rr_ratio:.2f}x fewer).",
            f"- within 1.5x of the oracle: {'MET' if oracle_ratio <= 1.5 else 'NOT MET'} ({oracle_ratio:.2f}x the oracle). "
            f"Of the attempts above the oracle, {learning:.0%} go to learning which configurations are able at which "
            f"tags (thompson minus tag-oracle); the rest is per-task: tasks whose best configuration is not their "
            f"tag's specialist, and hard tasks a specialist keeps failing.",
            f"- why 1.5x is out of reach here: finding an able configuration for each tag alone costs an "
            f"estimated {d['search']:.0f} failed attempts to a scheduler that learns tag by tag "
            f"(`(oracle + search) / oracle` = {(d['oracle'] + d['search']) / d['oracle']:.2f}), before any task is "
            f"attempted with a configuration that is able but not its best (tag-oracle / oracle = "
            f"{tag / d['oracle']:.2f} with the cells known). Only structure across tags can beat that estimate: "
            f"the default uses some (`assume_useful`: every configuration is able at some tag; two-tag tasks "
            f"probe two cells at once).",
        ]
        t = d["schedulers"]["thompson"]
        lines += [
            "",
            f"Default setting, attempts to cover half the tasks: thompson {t['to_half']:.0f}, "
            + ", ".join(f"{s} {d['schedulers'][s]['to_half']:.0f}" for s in SCHEDULERS[1:])
            + ".",
            "",
            "Where it does worse: with tags that carry no information (`no-structure`) the default does worse "
            "than round-robin (last-but-one column below 1; its per-task fairness rule keeps the loss small); with wrong tags on "
            "30% of the tasks (`noisy-tags`) it still beats round-robin but wastes attempts on each mis-tagged "
            "task before its tag's specialist is judged unable there; with a few configurations "
            "(`fewer-configs`) there is little to learn and the margin over round-robin shrinks. "
            "Thompson draws (`thompson-draws`) explore more and lose to posterior means on most settings.",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--settings", default=",".join(SETTINGS))
    parser.add_argument("--write", action="store_true", help="Update bench/RESULTS.md.")
    args = parser.parse_args()
    names = [n for n in args.settings.split(",") if n]
    unknown = [n for n in names if n not in SETTINGS]
    if unknown:
        parser.error(f"unknown settings {unknown}; known: {', '.join(SETTINGS)}")
    results = {}
    started = time.perf_counter()
    for name in names:
        results[name] = run_setting(SETTINGS[name][1], range(args.seeds))
        print(f"{name}: done ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    body = render(results, args.seeds)
    print(body)
    if args.write:
        command = "python bench/scheduler_efficiency.py" + "".join(f" {a}" for a in sys.argv[1:])
        header = (
            f"Machine: {os.cpu_count()} cores ({platform.machine()}), Python {platform.python_version()}; "
            f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {time.perf_counter() - started:.0f} s in all.\n\n"
        )
        write_section(header + body + f"\n\nReproduce: `{command}`")


def write_section(body: str) -> None:
    replace_section(SECTION, f"{SECTION}\n\n{body}")


if __name__ == "__main__":
    main()
