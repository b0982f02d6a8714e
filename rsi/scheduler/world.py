"""Which world is this run in? Three explanations of its own outcomes, compared by leave-one-out
log-likelihood (each attempt predicted from all the others):

- `pooled`: one pass rate for every configuration and task;
- `ranking`: one pass rate per configuration (shrunk towards the pooled rate);
- `tags`: one pass rate per (configuration, tag), shrunk towards the configuration's rate with a
  strength fitted on a grid (the tag-level variance, in Beta-binomial terms).

`ranking` minus `pooled` says how much the configurations differ overall; `tags` minus `ranking` says
how much tags add beyond that. Where tags add more than the ranking does, the portfolio is a set of
specialists (each good at a few tags); where neither adds anything, nothing tells the configurations
apart; elsewhere it is a ranking with task difficulty, as real leaderboards are. Counts only (numpy over the tried pairs), so it costs well under a millisecond per
thousand pairs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SHRINK_GRID = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 64.0)  # pseudo-attempts behind the prior mean
MIN_ATTEMPTS = 24  # fewer counted attempts than this: too little to tell, the ranking model is used


@dataclass(frozen=True)
class WorldCheck:
    """Leave-one-out log-likelihood gains (nats over the run's attempts) and the verdict."""

    attempts: int
    ranking_gain: float  # ranking over pooled
    tag_gain: float  # tags over ranking, at the fitted shrinkage
    tag_shrink: float  # fitted pseudo-attempts behind a configuration's rate in each of its tag cells

    @property
    def specialists(self) -> bool:
        return self.attempts >= MIN_ATTEMPTS and self.tag_gain > max(self.ranking_gain, 0.0)

    @property
    def unstructured(self) -> bool:
        """Enough attempts, and neither the ranking nor tags predict held-out outcomes better than one rate."""
        return self.attempts >= MIN_ATTEMPTS and self.ranking_gain <= 0 and self.tag_gain <= 0

    def describe(self) -> str:
        kind = "specialists by tag" if self.specialists else "no structure" if self.unstructured else "one ranking"
        return (f"world: {kind} (leave-one-out gain over {self.attempts} attempts: ranking {self.ranking_gain:+.1f}"
                f" nats, tags beyond it {self.tag_gain:+.1f})")


def check_world(pc: Any, pt: Any, pn: Any, ps: Any, task_tags: Any, n_configs: int) -> WorldCheck:
    """Compare the three explanations on tried pairs (config index, task index, tries, passes)."""
    import numpy as np

    total_n, total_s = float(pn.sum()), float(ps.sum())
    if total_n < 2:
        return WorldCheck(int(total_n), 0.0, 0.0, 0.0)
    fails = pn - ps

    def loo(success_num: Any, fail_num: Any, denom: Any) -> float:
        """Sum over attempts of log P(outcome | the other attempts): a pass is predicted with its own
        pass removed from the counts, a failure with its own failure removed."""
        denom = np.maximum(denom, 1e-9)
        p_win = np.clip(success_num / denom, 1e-6, 1 - 1e-6)
        p_fail = np.clip(fail_num / denom, 1e-6, 1 - 1e-6)
        return float((ps * np.log(p_win)).sum() + (fails * np.log(p_fail)).sum())

    mean = (total_s + 0.5) / (total_n + 1.0)
    pooled = loo(np.full(len(pn), total_s - 1 + mean), np.full(len(pn), total_n - total_s - 1 + (1 - mean)),
                 np.full(len(pn), total_n))
    n_c = np.bincount(pc, pn, n_configs)[pc]
    s_c = np.bincount(pc, ps, n_configs)[pc]
    best_rank, k_rank = -np.inf, SHRINK_GRID[0]
    for k in SHRINK_GRID:
        value = loo(s_c - 1 + k * mean, n_c - s_c - 1 + k * (1 - mean), n_c - 1 + k)
        if value > best_rank:
            best_rank, k_rank = value, k
    if task_tags.shape[1] == 0:
        return WorldCheck(int(total_n), best_rank - pooled, 0.0, float("inf"))
    # Each pair's cell counts: summed over its task's tags, divided by the number of tags (a two-tag
    # task's cells are averaged), excluding the pair itself from its configuration's rate below.
    tags = task_tags[pt]  # (P, G)
    width = np.maximum(tags.sum(axis=1), 1.0)
    cell_n = np.stack([np.bincount(pc, tags[:, g] * pn, n_configs) for g in range(tags.shape[1])], axis=1)
    cell_s = np.stack([np.bincount(pc, tags[:, g] * ps, n_configs) for g in range(tags.shape[1])], axis=1)
    pair_n = (cell_n[pc] * tags).sum(axis=1) / width
    pair_s = (cell_s[pc] * tags).sum(axis=1) / width
    win_c = np.clip((s_c - 1 + k_rank * mean) / (n_c - 1 + k_rank), 1e-6, 1.0)
    fail_c = np.clip((n_c - s_c - 1 + k_rank * (1 - mean)) / (n_c - 1 + k_rank), 1e-6, 1.0)
    best_tag, k_tag = -np.inf, SHRINK_GRID[-1]
    for k in SHRINK_GRID:
        value = loo(pair_s - 1 + k * win_c, pair_n - pair_s - 1 + k * fail_c, pair_n - 1 + k)
        if value > best_tag:
            best_tag, k_tag = value, k
    return WorldCheck(int(total_n), best_rank - pooled, best_tag - best_rank, k_tag)
