"""The default scheduler's model of P(configuration c passes task t), fitted to the run's own history.

    logit P(pass) = mu + a_c + sum_{g in tags(t)} u_cg - d_t,     and t is unreachable with prob. pi

- `a_c` (configuration ability) ~ N(0, sa^2): one ranking of the configurations, as on real
  leaderboards (a strong configuration is strong nearly everywhere).
- `u_cg` (configuration x tag) ~ N(0, su^2): specialists. `su` is *fitted* (empirical Bayes), so
  the run finds out from its own outcomes whether tags explain anything beyond the ranking: with
  useless tags `su` shrinks towards 0 and every cell follows its configuration's ability; with
  specialists it grows, and a configuration untried at a tag is then worth probing there.
- `d_t` (task difficulty) ~ N(0, sd^2), integrated on a grid per task: failures of strong
  configurations make a task look hard for every configuration, passes of weak ones make it easy.
- unreachable tasks (prior share `pi`, fitted): a task no configuration can pass. A task stays
  open after strong configurations failed it becomes likely unreachable and loses priority, while
  tasks a weaker configuration failed keep theirs.

The variances `sa`, `su`, `sd` and `pi` are fitted by a few EM sweeps (Newton steps for mu, a, u
given the task posteriors; the task posteriors given mu, a, u), each with a weak prior (2
pseudo-observations at 1 logit for the variances, 10 pseudo-tasks at 10% for `pi`). Everything is
a numpy array over the tried pairs, and the prediction is one (configurations x open tasks x grid)
array: about 10-40 ms at 134 configurations x 500 tasks (bench/scheduler_efficiency.py measures it).

numpy is imported inside the functions: `rsi --help` and `rsi.scheduler` stay light.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

GRID_POINTS = 9  # Gauss-Hermite points for each task's difficulty
MIN_SCALE, MAX_SCALE = 0.05, 4.0  # fitted spreads stay within these (logit sd)


@dataclass(frozen=True)
class Priors:
    """The model's few priors (see the module docstring)."""

    scale_prior: float = 1.0  # a priori spread (logit sd) of abilities, tag effects and difficulties
    scale_strength: float = 2.0  # pseudo-observations behind scale_prior
    unreachable_prior: float = 0.1  # a priori share of tasks no configuration can pass
    unreachable_strength: float = 100.0  # pseudo-tasks behind unreachable_prior
    em_sweeps: int = 5
    tag_scale: float | None = None  # fixed spread of tag effects (None: fitted)


@dataclass
class Fit:
    """The fitted model (numpy arrays; shapes in comments). Indices follow the request's order."""

    mu: float
    a: Any  # (C,) ability
    va: Any  # (C,) its posterior variance (Laplace)
    u: Any  # (C, G) tag effects
    vu: Any  # (C, G)
    grid: Any  # (K,) difficulty values
    task_w: Any  # (T, K) posterior weights of each task's difficulty (prior for tasks without data)
    reach: Any  # (T,) P(task reachable)
    sa: float
    su: float
    sd: float
    pi: float


@dataclass
class Data:
    """The history as arrays over tried (configuration, task) pairs, plus the tag incidence."""

    n_configs: int
    n_tasks: int
    n_tags: int
    pc: Any  # (P,) configuration index of each pair
    pt: Any  # (P,) task index
    pn: Any  # (P,) tries
    ps: Any  # (P,) passes
    task_tags: Any  # (T, G) 0/1 incidence
    passed_task: Any  # (T,) bool: some configuration passed it


def sigmoid(x: Any) -> Any:
    import numpy as np

    return 0.5 * (1.0 + np.tanh(0.5 * x))  # = 1 / (1 + exp(-x)), without overflow warnings


def fit(data: Data, priors: Priors = Priors()) -> Fit:
    """EM for the model (see the module docstring). Pure: same data, same fit."""
    import numpy as np

    C, T, G = data.n_configs, data.n_tasks, data.n_tags
    nodes, weights = np.polynomial.hermite_e.hermegauss(GRID_POINTS)
    log_prior_w = np.log(weights / weights.sum())
    s2 = priors.scale_prior**2
    sa2 = su2 = sd2 = s2
    if priors.tag_scale is not None:
        su2 = priors.tag_scale**2
    pi = priors.unreachable_prior
    # Start from each configuration's own pass rate (logit, shrunk by one pseudo-attempt at the mean)
    # so that a few sweeps suffice, then stretch it by the probit factor of the difficulty spread
    # (a pass rate averages over tasks of all difficulties, which flattens it).
    n_c, s_c = np.bincount(data.pc, data.pn, C), np.bincount(data.pc, data.ps, C)
    mean = (data.ps.sum() + 0.5) / (data.pn.sum() + 1.0)
    raw = np.log((s_c + mean) / (n_c - s_c + 1 - mean)) * math.sqrt(1 + math.pi * s2 / 8)
    a, u = np.where(n_c > 0, raw, 0.0), np.zeros((C, G))
    mu = float(a[n_c > 0].mean()) if (n_c > 0).any() else 0.0
    a = np.where(n_c > 0, a - mu, 0.0)
    va, vu = np.full(C, sa2), np.full((C, G), su2)
    pair_tags = data.task_tags[data.pt] if G else np.zeros((len(data.pc), 0))  # (P, G)
    fails = data.pn - data.ps
    task_has_data = np.zeros(T, bool)
    task_has_data[data.pt] = True
    task_w = np.tile(np.exp(log_prior_w), (T, 1))
    reach = np.where(data.passed_task, 1.0, 1.0 - pi)
    tried_c = np.bincount(data.pc, minlength=C) > 0
    for _ in range(int(priors.em_sweeps)):
        grid = nodes * math.sqrt(sd2)
        eta = mu + a[data.pc] + (pair_tags * u[data.pc]).sum(axis=1)  # (P,)
        # E-step: each tried task's difficulty on the grid, and P(reachable) for those still open.
        q = sigmoid(eta[:, None] - grid[None, :])  # (P, K)
        ll = data.ps[:, None] * np.log(q + 1e-12) + fails[:, None] * np.log1p(-q + 1e-12)
        task_ll = np.zeros((T, len(grid)))
        np.add.at(task_ll, data.pt, ll)
        logw = task_ll + log_prior_w[None, :]
        top = logw.max(axis=1, keepdims=True)
        w = np.exp(logw - top)
        reach_like = w.sum(axis=1) * np.exp(top[:, 0])  # P(outcomes | reachable); 1 for untried tasks
        task_w = w / w.sum(axis=1, keepdims=True)
        reach = np.where(data.passed_task, 1.0, (1 - pi) * reach_like / ((1 - pi) * reach_like + pi))
        # M-step: Newton steps for mu, a, u with the difficulty integrated over each task's grid;
        # failures on a task that is likely unreachable say nothing about the configurations.
        weight = reach[data.pt]
        for _ in range(2):
            eta = mu + a[data.pc] + (pair_tags * u[data.pc]).sum(axis=1)
            q = sigmoid(eta[:, None] - grid[None, :])
            tw = task_w[data.pt]
            grad = weight * (data.ps - data.pn * (tw * q).sum(axis=1))
            hess = weight * data.pn * (tw * q * (1 - q)).sum(axis=1) + 1e-9
            mu += _step(grad.sum() / (hess.sum() + 1.0))
            ga = np.bincount(data.pc, grad, C) - a / sa2
            ha = np.bincount(data.pc, hess, C) + 1 / sa2
            # Each task's difficulty is integrated out, and the marginal likelihood is flatter in a
            # than the complete one by about the probit factor: the steps are stretched by it.
            stretch = 1 + math.pi * sd2 / 8
            a = a + _step(stretch * ga / ha)
            va = 1 / ha
            # mu is the AVERAGE configuration's level, not the attempt-weighted one: the configuration
            # exploited most would otherwise define mu, and every barely tried one would look as good.
            shift = float(a[tried_c].mean()) if tried_c.any() else 0.0
            a, mu = a - shift, mu + shift
            if G:
                gu = np.zeros((C, G))
                hu = np.zeros((C, G))
                np.add.at(gu, data.pc, pair_tags * grad[:, None])
                np.add.at(hu, data.pc, pair_tags * hess[:, None])
                u = u + _step(stretch * (gu - u / su2) / (hu + 1 / su2))
                vu = 1 / (hu + 1 / su2)
        # Variances and the unreachable share, each with its weak prior.
        k, prior = priors.scale_strength, priors.scale_strength * s2
        sa2 = _bounded((float((a[tried_c] ** 2 + va[tried_c]).sum()) + prior) / (int(tried_c.sum()) + k))
        if G and priors.tag_scale is None:
            cell_n = np.zeros((C, G))
            np.add.at(cell_n, data.pc, pair_tags * data.pn[:, None])
            seen = cell_n > 0
            su2 = _bounded((float((u[seen] ** 2 + vu[seen]).sum()) + prior) / (int(seen.sum()) + k))
        d_mean = task_w @ grid
        d_var = task_w @ grid**2
        rw = reach * task_has_data
        sd2 = _bounded((float((rw * d_var).sum()) + prior) / (float(rw.sum()) + k))
        del d_mean
        alpha = priors.unreachable_strength * priors.unreachable_prior
        pi = (float((1 - reach).sum()) + alpha) / (T + priors.unreachable_strength)
        pi = min(max(pi, 1e-3), 0.9)
    return Fit(mu, a, va, u, vu, nodes * math.sqrt(sd2), task_w, reach,
               math.sqrt(sa2), math.sqrt(su2) if G else 0.0, math.sqrt(sd2), pi)


def predict(model: Fit, data: Data, tasks: Any, rng: Any = None, temperature: float = 0.0) -> Any:
    """P(pass) of every configuration on each task of `tasks` (indices): a (C, len(tasks)) array.

    Posterior means (the uncertainty of a and u taken in by the probit approximation
    E[sigmoid(x)] ~ sigmoid(m / sqrt(1 + pi v / 8)), so an untried cell is worth more than a failed
    one when tags matter), or with `temperature` > 0 one draw of a and u per proposal (Thompson).
    """
    import numpy as np

    tag_inc = data.task_tags[tasks]  # (n, G)
    a, u = model.a, model.u
    va, vu = model.va, model.vu
    if rng is not None and temperature > 0:
        a = a + temperature * np.sqrt(va) * rng.standard_normal(a.shape)
        u = u + temperature * np.sqrt(vu) * rng.standard_normal(u.shape)
        va, vu = va * (1 - min(temperature, 1.0)), vu * (1 - min(temperature, 1.0))
    m = model.mu + a[:, None] + u @ tag_inc.T  # (C, n)
    v = va[:, None] + vu @ tag_inc.T
    scale = 1.0 / np.sqrt(1.0 + math.pi * v / 8.0)
    q = sigmoid((m[:, :, None] - model.grid[None, None, :]) * scale[:, :, None])  # (C, n, K)
    p = np.einsum("cnk,nk->cn", q, model.task_w[tasks])
    return p * model.reach[tasks][None, :]


def _step(x: Any) -> Any:
    """Newton steps clipped to 1 logit: outcomes that separate perfectly (a configuration that passed
    everything it tried) would otherwise send a parameter, and the variance fitted from it, away."""
    import numpy as np

    return np.clip(x, -1.0, 1.0)


def _bounded(variance: float) -> float:
    return min(max(variance, MIN_SCALE**2), MAX_SCALE**2)


def _logit(p: float) -> float:
    return math.log(p / (1 - p))
