"""What bake-offs are worth: a two-stage decision over scenarios of each candidate platform's achieved MFU.

A program's gated workload (`decide_after: [bakeoff-…]`) is bought or committed once its bake-offs have run: the
same scaled-down model on each candidate platform. A bake-off reveals its platform's efficiency only up to what a
scaled-down model cannot tell about the full run (`uncertainty.bakeoff_residual_sigma`). The question is whether
choosing the platform after them is worth their own cost and the delay they cause (decision notes §4: the expected
value of sample information, Raiffa & Schlaifer 1961; Howard 1966).

The numbers (pure numpy; `answers/program_decision.py` makes the actions and their costs):
- a *platform*'s MFU factor θ_p (real ÷ modelled MFU of the gated run there) is lognormal, log θ_p = Σ σ·Z over the
  standard-normal sources of `uncertainty.mfu_factor` — `mfu:common` (every platform), `mfu:software:<stack>`,
  `mfu:class:<class>` — so platforms on the same stack share that part and a bake-off on one tells about the
  others (on a platform whose MFU the user measured, `measured_mfu_sigma` on the common source alone, as there);
- a bake-off on platform p observes y = log θ_p + σ_c·E_c + σ_g·E_g: E_c shared by every bake-off of the same
  scaled-down model (the correction from the small run to the large one), E_g its own (`BakeoffResidual`);
- an *action* is a plan for the gated workload on one platform (made at one MFU level, `answers`), with its
  program cost — lateness past every deadline priced — as a function of the true θ of its platform, tabulated on
  a grid of log θ and interpolated linearly between grid points;
- **decide now**: the one action with the lowest expected cost over the prior (Gauss–Hermite quadrature of each
  platform's prior, not the scenarios' sample mean, which would bias the chosen action low: the optimiser's
  curse), paid at the true θ of every scenario;
- **decide after**: in each scenario, the signals y are drawn from the true θ, the posterior of every platform's
  log θ is normal (a linear Gaussian update: mean K·y, standard deviation fixed), each action is priced at its
  posterior expectation (Gauss–Hermite), the cheapest is chosen and paid at the **true** θ (decision notes §4:
  charging the posterior mean would bias the figure low);
- common random numbers: the θ of scenario s is drawn from the streams `plan risk` draws MFU from (the same seed),
  the bake-offs' residuals from their own streams, and every action and every choice reads the same draws, so the
  value is a paired difference with a paired standard error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..inputs.assumptions import Assumptions, BakeoffResidual
from .uncertainty import Draws

PRIOR_NODES = 32
"""Gauss–Hermite nodes for an action's expected cost over a platform's prior (the decide-now choice): the cost is
piecewise linear in log θ with a few kinks, and 32 nodes put the expectation within a few dollars in a million of
a 100,000-point sum."""
POSTERIOR_NODES = 9
"""Gauss–Hermite nodes for an action's expected cost over a posterior, in every scenario (N × actions × nodes
interpolations): the posterior is narrower than the grid's spacing times a few, where 9 nodes suffice."""


@dataclass(frozen=True)
class DecisionPlatform:
    """A candidate platform of the gated workload and its MFU factor's prior (see module docstring)."""

    accelerator: str
    loadings: tuple[tuple[str, float], ...]
    """(standard-normal source, σ): log θ = Σ σ·Z_source."""

    @property
    def sigma(self) -> float:
        return math.sqrt(sum(s * s for _, s in self.loadings))


def platform_prior(a: Assumptions, accelerator: str, software: str, accel_class: str,
                   measured: bool = False) -> DecisionPlatform:
    """The prior of `uncertainty.mfu_factor` for a platform, as loadings on its sources."""
    if measured:
        return DecisionPlatform(accelerator, (("mfu:common", a.uncertainty.measured_mfu_sigma),))
    s = a.uncertainty.mfu_sigma
    parts = [("mfu:common", s.common), (f"mfu:software:{software}", s.software[software]),  # type: ignore[index]
             (f"mfu:class:{accel_class}", s.accel_class[accel_class])]  # type: ignore[index]
    return DecisionPlatform(accelerator, tuple((k, v) for k, v in parts if v > 0))


@dataclass(frozen=True)
class BakeoffSignal:
    """One bake-off: its workload id and the index of the platform it runs on."""

    id: str
    platform: int


@dataclass(frozen=True)
class DecisionAction:
    """A plan of the gated workload on one platform, its program cost tabulated over that platform's log θ."""

    platform: int
    label: str
    log_theta: np.ndarray
    """Increasing grid of ln θ."""
    cost: np.ndarray
    """Program cost (lateness priced) at each grid point."""

    def at(self, log_theta: np.ndarray) -> np.ndarray:
        """Linear interpolation on the grid (held at the ends: the grid spans ±4.5 prior σ)."""
        return np.interp(log_theta, self.log_theta, self.cost)

    def shifted(self, usd: float) -> "DecisionAction":
        return DecisionAction(self.platform, self.label, self.log_theta, self.cost + usd)


def _sources(platforms: Sequence[DecisionPlatform], signals: Sequence[BakeoffSignal]) -> list[str]:
    names = sorted({k for p in platforms for k, _ in p.loadings})
    return names + ["bakeoff:common"] + [f"bakeoff:{g.id}" for g in signals]


def _matrices(platforms: Sequence[DecisionPlatform], signals: Sequence[BakeoffSignal],
              residual: BakeoffResidual) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(sources, B: log θ of each platform on the sources, A: each signal on the sources)."""
    names = _sources(platforms, signals)
    col = {k: i for i, k in enumerate(names)}
    b = np.zeros((len(platforms), len(names)))
    for i, p in enumerate(platforms):
        for k, s in p.loadings:
            b[i, col[k]] = s
    a = np.zeros((len(signals), len(names)))
    for j, g in enumerate(signals):
        a[j] = b[g.platform]
        a[j, col["bakeoff:common"]] = residual.common
        a[j, col[f"bakeoff:{g.id}"]] = residual.platform
    return names, b, a


def posterior(platforms: Sequence[DecisionPlatform], signals: Sequence[BakeoffSignal],
              residual: BakeoffResidual) -> tuple[np.ndarray, np.ndarray]:
    """(K, sd): the posterior mean of every platform's log θ is K·y for the signals y, its standard deviation sd
    whatever y is (Gaussian conditioning: K = Σ_θy Σ_yy⁻¹, sd² = diag(Σ_θθ − K Σ_yθ))."""
    _names, b, a = _matrices(platforms, signals, residual)
    prior_var = np.einsum("ij,ij->i", b, b)
    if not signals:
        return np.zeros((len(platforms), 0)), np.sqrt(prior_var)
    c_ty, c_yy = b @ a.T, a @ a.T
    k = c_ty @ np.linalg.pinv(c_yy)  # pinv: two exact readings of one platform (no residual) are one reading
    var = prior_var - np.einsum("ij,ij->i", k, c_ty)
    return k, np.sqrt(np.maximum(var, 0.0))


def draw(draws: Draws, platforms: Sequence[DecisionPlatform], signals: Sequence[BakeoffSignal],
         residual: BakeoffResidual) -> tuple[np.ndarray, np.ndarray]:
    """(log θ [N × platforms], y [N × signals]) of every scenario, from named streams (common random numbers)."""
    names, b, a = _matrices(platforms, signals, residual)
    z = np.stack([draws.normal(k) for k in names], axis=1)
    return z @ b.T, z @ a.T


def _hermite(n: int) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.hermite_e.hermegauss(n)
    return x, w / w.sum()


def prior_means(actions: Sequence[DecisionAction], platforms: Sequence[DecisionPlatform]) -> np.ndarray:
    """Each action's expected cost over its platform's prior."""
    x, w = _hermite(PRIOR_NODES)
    return np.array([float(w @ act.at(platforms[act.platform].sigma * x)) for act in actions])


def choose_after(actions: Sequence[DecisionAction], mean: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Per scenario, the action with the lowest expected cost over the posterior (mean [N × platforms], sd
    [platforms]); the first of equals."""
    x, w = _hermite(POSTERIOR_NODES)
    expected = np.empty((mean.shape[0], len(actions)))
    for i, act in enumerate(actions):
        nodes = mean[:, act.platform, None] + sd[act.platform] * x[None, :]
        expected[:, i] = act.at(nodes) @ w
    return np.argmin(expected, axis=1)


def paid(actions: Sequence[DecisionAction], chosen: np.ndarray, log_theta: np.ndarray) -> np.ndarray:
    """What each scenario pays for its chosen action at its true θ."""
    out = np.empty(len(chosen))
    for i, act in enumerate(actions):
        mask = chosen == i
        if mask.any():
            out[mask] = act.at(log_theta[mask, act.platform])
    return out


@dataclass(frozen=True)
class TwoStage:
    """Per scenario: the true ln θ of every platform, the signals, the cost deciding now, the action chosen and the
    cost deciding after the signals, and the cost with perfect information (the cheapest action at the truth)."""

    log_theta: np.ndarray
    y: np.ndarray
    now_action: int
    now: np.ndarray
    chosen: np.ndarray
    after: np.ndarray
    perfect: np.ndarray


def decide_now(actions: Sequence[DecisionAction], platforms: Sequence[DecisionPlatform], log_theta: np.ndarray
               ) -> tuple[int, np.ndarray]:
    """The action with the lowest expected cost over the prior, and what it costs in every scenario."""
    best = int(np.argmin(prior_means(actions, platforms)))
    return best, paid(actions, np.full(len(log_theta), best), log_theta)


def decide_after(actions: Sequence[DecisionAction], platforms: Sequence[DecisionPlatform],
                 signals: Sequence[BakeoffSignal], residual: BakeoffResidual, log_theta: np.ndarray, y: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Per scenario, the action chosen on the posterior given its signals `y` (one column per signal), and what it
    costs at the truth."""
    k, sd = posterior(platforms, signals, residual)
    chosen = choose_after(actions, y @ k.T, sd)
    return chosen, paid(actions, chosen, log_theta)


def two_stage(now_actions: Sequence[DecisionAction], after_actions: Sequence[DecisionAction],
              platforms: Sequence[DecisionPlatform], signals: Sequence[BakeoffSignal],
              residual: BakeoffResidual, draws: Draws) -> TwoStage:
    """Decide now among `now_actions` (the program without the bake-offs), after the signals among
    `after_actions` (the program with them), on the same scenarios (see module docstring)."""
    log_theta, y = draw(draws, platforms, signals, residual)
    best_now, now = decide_now(now_actions, platforms, log_theta)
    chosen, after = decide_after(after_actions, platforms, signals, residual, log_theta, y)
    perfect = np.min(np.stack([a.at(log_theta[:, a.platform]) for a in after_actions]), axis=0)
    return TwoStage(log_theta, y, best_now, now, chosen, after, perfect)


def paired(diff: np.ndarray) -> tuple[float, float]:
    """(mean, standard error) of a paired difference over the scenarios."""
    n = len(diff)
    return float(diff.mean()), float(diff.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0


def shares(actions: Sequence[DecisionAction], chosen: np.ndarray, count: int) -> np.ndarray:
    """The share of scenarios in which each platform's action is chosen."""
    per = np.bincount(np.array([a.platform for a in actions])[chosen], minlength=count)
    return per / len(chosen)


__all__ = ["DecisionPlatform", "BakeoffSignal", "DecisionAction", "TwoStage",
           "platform_prior", "posterior", "draw", "prior_means", "choose_after", "paid", "two_stage", "paired",
           "decide_now", "decide_after",
           "shares", "PRIOR_NODES", "POSTERIOR_NODES"]
