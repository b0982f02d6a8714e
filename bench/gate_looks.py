"""Gate looks: how often the adapter gate promotes a candidate of NO true lift when one split gates many candidates.

The gate (rsi/promotion/decision.py `paired_lift`, rsi/evaluation/measure.py `decide_adapter`) promotes when the
lower end of the paired lift's 95% interval (Newcombe 1998, method 10, with its continuity adjustment) lies above
min_lift = 0. One look at a candidate with zero true lift passes about alpha/2 = 2.5% of the time. A heldout split
that gates k candidates (generations, ablations, recipes, reruns) gives k such chances: the chance that at
least one candidate of no lift is promoted grows with k.

The model (pure numpy, seeded): one split of N tasks; the parent solves each with probability `base` (fixed
for the split, as a greedy parent is); each of k candidates differs from the parent on D expected discordant
tasks, half gained and half lost in expectation (zero true lift: it loses a parent-solved task with
probability D/2 / (N base) and gains an unsolved one with probability D/2 / (N (1 - base))), independently
across candidates given the split. Figures, over `trials` splits:

- per-look: the share of single looks that pass the gate (about alpha/2 by construction of the interval);
- family: the share of splits on which at least one of the k candidates passes (the false-promotion rate of
  a split that gates k candidates);
- family under Bonferroni (the interval at 1 - alpha/k): what it costs to hold the family at alpha/2;
- power: the share of single looks a candidate of true lift +`lift` passes, at 95% and at 1 - alpha/k.

Defaults match pyfuncs2: 207 heldout tasks, base rate 0.155 (the base solved 32), D = 15 discordant tasks per
comparison (the first promoted generation gained 12 and lost 3), and D = 6 and 30 beside it.

    .venv/bin/python bench/gate_looks.py            # prints the figures, writes bench/results/gate_looks-*.json
    .venv/bin/python bench/gate_looks.py --write    # and the "## gate looks" section of bench/RESULTS.md
"""

from __future__ import annotations

import argparse
from statistics import NormalDist
from typing import Any

import numpy as np
import results  # bench/results.py (a benchmark runs as a script: bench/ is on its path)

SECTION = "gate looks"
ALPHA = 0.05
KS = (1, 5, 10, 20, 50)


def z_of(alpha: float) -> float:
    """Two-sided standard normal quantile for a (1 - alpha) interval."""
    return NormalDist().inv_cdf(1 - alpha / 2)


def _wilson(x: np.ndarray, n: int, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval, vectorised, clamped exactly as rsi.promotion.evidence.wilson_interval."""
    p = x / n
    z2 = z * z
    denominator = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    low = np.where(x > 0, np.maximum(0.0, centre - half), 0.0)
    high = np.where(x < n, np.minimum(1.0, centre + half), 1.0)
    return low, high


def newcombe_low(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, z: float = z_of(ALPHA)) -> np.ndarray:
    """Lower end of Newcombe's method-10 interval for p1 - p2 from paired tables (a both, b first only, c second
    only, d neither), vectorised; equal to rsi.promotion.decision.newcombe_paired_interval at z = 1.96."""
    a, b, c, d = (np.asarray(v, dtype=np.float64) for v in (a, b, c, d))
    n = int((a + b + c + d).flat[0])
    p1, p2 = (a + b) / n, (a + c) / n
    l1, _u1 = _wilson(a + b, n, z)
    _l2, u2 = _wilson(a + c, n, z)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    numerator = a * d - b * c
    numerator = np.where(numerator > 0, np.maximum(numerator - n / 2, 0.0), numerator)
    phi = np.where(margins == 0, 0.0, numerator / np.sqrt(np.where(margins == 0, 1.0, margins)))
    delta = np.sqrt(np.maximum((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    return np.maximum(-1.0, p1 - p2 - delta)


def simulate(k: int, trials: int, seed: int, n: int = 207, base: float = 0.155, discordant: float = 15.0,
             lift: float = 0.0, z: float = z_of(ALPHA)) -> dict[str, float]:
    """Gate k candidates on each of `trials` splits; returns the per-look and the family pass rates."""
    rng = np.random.default_rng(seed)
    solved = rng.binomial(n, base, size=trials)  # the parent's solved tasks on each split (fixed across candidates)
    lose = min(1.0, discordant / 2 / (n * base))
    gain = min(1.0, (discordant / 2 + lift * n) / (n * (1 - base)))
    lost = rng.binomial(solved[:, None], lose, size=(trials, k))
    gained = rng.binomial((n - solved)[:, None], gain, size=(trials, k))
    a, b, c = solved[:, None] - lost, gained, lost
    d = n - a - b - c
    passed = newcombe_low(a, b, c, d, z) > 0.0
    return {"per_look": float(passed.mean()), "family": float(passed.any(axis=1).mean()),
            "discordant_mean": float((b + c).mean())}


def figures(trials: int, seed: int) -> dict[str, Any]:
    """Every figure of the section: family rates by k (95% and Bonferroni), at three discordance levels, and power."""
    rows = []
    for discordant in (15.0, 6.0, 30.0):
        for k in KS:
            plain = simulate(k, trials, seed + k, discordant=discordant)
            bonferroni = simulate(k, trials, seed + k, discordant=discordant, z=z_of(ALPHA / k))
            rows.append({"discordant": discordant, "k": k, "per_look": plain["per_look"], "family": plain["family"],
                         "family_bonferroni": bonferroni["family"], "discordant_mean": plain["discordant_mean"]})
    power = []
    for true_lift in (0.03, 0.05, 0.07):
        for k in KS:
            got = simulate(1, trials, seed + 1000 + k, discordant=15.0, lift=true_lift, z=z_of(ALPHA / k))
            power.append({"lift": true_lift, "k": k, "power": got["per_look"]})
    return {"trials": trials, "rows": rows, "power": power}


def render_result(result: dict[str, Any]) -> str:
    """The RESULTS.md section's body, from the result file alone (bench/render.py adds the heading, what ran
    and how to reproduce it)."""
    figs = result["figures"]
    lines = [f"{figs['trials']} simulated splits per figure.", "",
             "A split of 207 tasks, the parent solving each with probability 0.155; k candidates of zero true lift, "
             "each differing from the parent on D tasks in expectation (half gained, half lost). The gate: the "
             "lower end of the paired lift's Newcombe 95% interval above 0 (rsi/promotion/decision.py). "
             "*family* = the share of splits on which at least one of the k candidates is promoted.", "",
             "| D | k | per look | family (95% gate) | family (Bonferroni, 1 - 0.05/k) |", "|---:|---:|---:|---:|---:|"]
    for row in figs["rows"]:
        lines.append(f"| {row['discordant']:.0f} | {row['k']} | {row['per_look']:.4f} | {row['family']:.4f} | "
                     f"{row['family_bonferroni']:.4f} |")
    lines += ["", "Power of one look (D = 15) at a true lift, with the interval the Bonferroni rule would use after k looks:",
              "", "| true lift | " + " | ".join(f"k = {k}" for k in KS) + " |", "|---:|" + "---:|" * len(KS)]
    for lift in sorted({p["lift"] for p in figs["power"]}):
        cells = [next(p["power"] for p in figs["power"] if p["lift"] == lift and p["k"] == k) for k in KS]
        lines.append(f"| +{lift:.2f} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
    lines += ["", "**The rule the gate follows** (docs/promotion.md \"Looks\"): the heldout split is the development "
              "gate and is worn by every look, which the look ledger counts and `rsi eval` / `rsi lineage` show; "
              "a claim of improvement is read from the sealed test split, once per candidate (`rsi eval --final`, "
              "a second look refused unless `--second-look`, then marked), where the one-look rate in the first row "
              "holds. A Bonferroni gate on heldout would hold the family rate, at the power shown above.", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20000, help="Splits per figure.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--write", action="store_true", help="Also re-render bench/RESULTS.md.")
    results.add_arguments(parser)
    args = parser.parse_args()
    run = results.start("gate_looks", seeds=[args.seed], allow_dirty=args.allow_dirty, section=SECTION,
                        params=vars(args))
    results.finish(run, figures(args.trials, args.seed))
    print(render_result(run.data))
    print(f"result file: {run.path}")
    if args.write:
        results.render_now()


if __name__ == "__main__":
    main()
