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
array: about 15-20 ms of CPU at 134 configurations x 500 tasks (bench/scheduler_efficiency.py measures
it). No matrix products and no `ufunc.at`: a small product through OpenBLAS's thread pool took 40-70 ms
of wall time on a busy 2-core machine (its threads spin against the other jobs), bincount per column
is several times faster than `np.add.at`.

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
    state = _Sweep(sa2=s2, su2=priors.tag_scale**2 if priors.tag_scale is not None else s2, sd2=s2,
                   pi=priors.unreachable_prior, mu=0.0, a=np.zeros(C), va=np.full(C, s2), u=np.zeros((C, G)),
                   vu=np.zeros((C, G)))
    state.vu = np.full((C, G), state.su2)
    # Start from each configuration's own pass rate (logit, shrunk by one pseudo-attempt at the mean)
    # so that a few sweeps suffice, then stretch it by the probit factor of the difficulty spread
    # (a pass rate averages over tasks of all difficulties, which flattens it).
    n_c, s_c = np.bincount(data.pc, data.pn, C), np.bincount(data.pc, data.ps, C)
    mean = (data.ps.sum() + 0.5) / (data.pn.sum() + 1.0)
    raw = np.log((s_c + mean) / (n_c - s_c + 1 - mean)) * math.sqrt(1 + math.pi * s2 / 8)
    a = np.where(n_c > 0, raw, 0.0)
    state.mu = float(a[n_c > 0].mean()) if (n_c > 0).any() else 0.0
    state.a = np.where(n_c > 0, a - state.mu, 0.0)
    pair_tags = data.task_tags[data.pt] if G else np.zeros((len(data.pc), 0))  # (P, G)
    task_has_data = np.zeros(T, bool)
    task_has_data[data.pt] = True
    task_w = np.tile(np.exp(log_prior_w), (T, 1))
    reach = np.where(data.passed_task, 1.0, 1.0 - state.pi)
    for _ in range(int(priors.em_sweeps)):
        grid = nodes * math.sqrt(state.sd2)
        task_w, reach = _e_step(data, state, pair_tags, grid, log_prior_w)
        _m_step(data, state, pair_tags, grid, task_w, reach)
        _fit_spreads(data, state, priors, pair_tags, grid, task_w, reach, task_has_data)
    return Fit(state.mu, state.a, state.va, state.u, state.vu, nodes * math.sqrt(state.sd2), task_w, reach,
               math.sqrt(state.sa2), math.sqrt(state.su2) if G else 0.0, math.sqrt(state.sd2), state.pi)


@dataclass
class _Sweep:
    """What one EM sweep updates: spreads, unreachable share, and the logit-scale parameters."""

    sa2: float
    su2: float
    sd2: float
    pi: float
    mu: float
    a: Any
    va: Any
    u: Any
    vu: Any

    def eta(self, data: Data, pair_tags: Any) -> Any:
        """Each tried pair's logit before its task's difficulty."""
        out = self.mu + self.a[data.pc]
        for g in range(pair_tags.shape[1]):
            out = out + pair_tags[:, g] * self.u[data.pc, g]
        return out


def _e_step(data: Data, state: _Sweep, pair_tags: Any, grid: Any, log_prior_w: Any) -> tuple[Any, Any]:
    """Each tried task's difficulty on the grid, and P(reachable) for those still open."""
    import numpy as np

    q = sigmoid(state.eta(data, pair_tags)[:, None] - grid[None, :])  # (P, K)
    ll = data.ps[:, None] * np.log(q + 1e-12) + (data.pn - data.ps)[:, None] * np.log1p(-q + 1e-12)
    logw = _sum_rows(data.pt, ll, data.n_tasks) + log_prior_w[None, :]
    top = logw.max(axis=1, keepdims=True)
    w = np.exp(logw - top)
    reach_like = w.sum(axis=1) * np.exp(top[:, 0])  # P(outcomes | reachable); 1 for untried tasks
    pi = state.pi
    reach = np.where(data.passed_task, 1.0, (1 - pi) * reach_like / ((1 - pi) * reach_like + pi))
    return w / w.sum(axis=1, keepdims=True), reach


def _m_step(data: Data, state: _Sweep, pair_tags: Any, grid: Any, task_w: Any, reach: Any) -> None:
    """Newton steps for mu, a, u with the difficulty integrated over each task's grid; failures on a
    task that is likely unreachable say nothing about the configurations. In place."""
    import numpy as np

    C, G = data.n_configs, data.n_tags
    weight = reach[data.pt]
    tw = task_w[data.pt]
    tried_c = np.bincount(data.pc, minlength=C) > 0
    # Each task's difficulty is integrated out, and the marginal likelihood is flatter in a than the
    # complete one by about the probit factor: the steps are stretched by it.
    stretch = 1 + math.pi * state.sd2 / 8
    for _ in range(2):
        q = sigmoid(state.eta(data, pair_tags)[:, None] - grid[None, :])
        grad = weight * (data.ps - data.pn * (tw * q).sum(axis=1))
        hess = weight * data.pn * (tw * q * (1 - q)).sum(axis=1) + 1e-9
        state.mu += _step(grad.sum() / (hess.sum() + 1.0))
        ga = np.bincount(data.pc, grad, C) - state.a / state.sa2
        ha = np.bincount(data.pc, hess, C) + 1 / state.sa2
        state.a = state.a + _step(stretch * ga / ha)
        state.va = 1 / ha
        # mu is the AVERAGE configuration's level, not the attempt-weighted one: the configuration
        # exploited most would otherwise define mu, and every barely tried one would look as good.
        shift = float(state.a[tried_c].mean()) if tried_c.any() else 0.0
        state.a, state.mu = state.a - shift, state.mu + shift
        if G:
            gu = _sum_rows(data.pc, pair_tags * grad[:, None], C)
            hu = _sum_rows(data.pc, pair_tags * hess[:, None], C)
            state.u = state.u + _step(stretch * (gu - state.u / state.su2) / (hu + 1 / state.su2))
            state.vu = 1 / (hu + 1 / state.su2)


def _fit_spreads(data: Data, state: _Sweep, priors: Priors, pair_tags: Any, grid: Any, task_w: Any, reach: Any,
                 has_data: Any) -> None:
    """The variances and the unreachable share, each with its weak prior. In place."""
    import numpy as np

    k, prior = priors.scale_strength, priors.scale_strength * priors.scale_prior**2
    tried_c = np.bincount(data.pc, minlength=data.n_configs) > 0
    a, va = state.a[tried_c], state.va[tried_c]
    state.sa2 = _bounded((float((a**2 + va).sum()) + prior) / (int(tried_c.sum()) + k))
    if data.n_tags and priors.tag_scale is None:
        seen = _sum_rows(data.pc, pair_tags * data.pn[:, None], data.n_configs) > 0
        state.su2 = _bounded((float((state.u[seen] ** 2 + state.vu[seen]).sum()) + prior) / (int(seen.sum()) + k))
    d_var = (task_w * grid[None, :] ** 2).sum(axis=1)
    rw = reach * has_data
    state.sd2 = _bounded((float((rw * d_var).sum()) + prior) / (float(rw.sum()) + k))
    alpha = priors.unreachable_strength * priors.unreachable_prior
    pi = (float((1 - reach).sum()) + alpha) / (data.n_tasks + priors.unreachable_strength)
    state.pi = min(max(pi, 1e-3), 0.9)


def _sum_rows(index: Any, values: Any, size: int) -> Any:
    """Rows of `values` (P, K) summed by `index` into (size, K): np.add.at's result, column by column
    with bincount (several times faster)."""
    import numpy as np

    out = np.empty((size, values.shape[1]))
    for k in range(values.shape[1]):
        out[:, k] = np.bincount(index, values[:, k], size)
    return out


def _by_tags(coef: Any, tag_inc: Any) -> Any:
    """(C, n): sum over tags of coef[c, g] * tag_inc[n, g]. An explicit loop over the (few) tags, not
    a matrix product: OpenBLAS's thread pool makes a small product 10x slower on a busy machine."""
    import numpy as np

    out = np.zeros((coef.shape[0], tag_inc.shape[0]))
    for g in range(tag_inc.shape[1]):
        out += coef[:, g : g + 1] * tag_inc[None, :, g]
    return out


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
    m = model.mu + a[:, None] + _by_tags(u, tag_inc)  # (C, n)
    v = va[:, None] + _by_tags(vu, tag_inc)
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
