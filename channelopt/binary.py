"""Binary inputs: the posterior-space LP in closed form, vectorized over many priors (docs/spec.md §4).

For d = 2 a posterior is one number p = Pr(X=1 | Y=y), and for a column-homogeneous notion the
admissible set K is an interval [lo, hi] containing the prior P1. Any concave Bayes risk is
minimized by splitting the prior between the two ends (the two-point mixture is the upper
concave envelope on an interval), so for the MSE of the MMSE estimate of X:

    MSE* = P1 (1 - P1) - (P1 - lo)(hi - P1)                      (docs/spec.md §4 example)

This is the certified optimum of the posterior LP (its two vertices are lo and hi), not a
heuristic, so it is valid for every prior; it is exact to rounding and costs O(1) per user.

Intervals:
  LIP (LIP-CNS Def 1 / LIP-TDSC Def 3):  e^-eps <= p / P1 <= e^eps  and  e^-eps <= (1-p)/(1-P1) <= e^eps.
  LDP (LIP-CNS Def 2):              posterior odds = prior odds * likelihood ratio, ratio in [e^-eps, e^eps].
"""

from __future__ import annotations

import numpy as np

from .errors import ProblemError


def _check(P1, eps):
    P1 = np.asarray(P1, float)
    eps = np.asarray(eps, float)
    if np.any(~np.isfinite(P1)) or np.any((P1 <= 0) | (P1 >= 1)):
        raise ProblemError("binary prior P1 must lie strictly between 0 and 1")
    if np.any(~np.isfinite(eps)) or np.any(eps < 0):
        raise ProblemError("epsilon must be finite and >= 0")
    return P1, eps


def lip_interval(P1, eps):
    """[lo, hi] of admissible posteriors Pr(X=1|Y) under eps-LIP (docs/spec.md §4)."""
    P1, eps = _check(P1, eps)
    e = np.exp(eps)
    lo = np.maximum(P1 / e, 1 - e * (1 - P1))
    hi = np.minimum(e * P1, 1 - (1 - P1) / e)
    return lo, hi


def ldp_interval(P1, eps):
    """[lo, hi] of admissible posteriors Pr(X=1|Y) under eps-LDP."""
    P1, eps = _check(P1, eps)
    odds = P1 / (1 - P1)
    lo_odds, hi_odds = odds * np.exp(-eps), odds * np.exp(eps)
    return lo_odds / (1 + lo_odds), hi_odds / (1 + hi_odds)


INTERVALS = {"lip": lip_interval, "ldp": ldp_interval}


def mmse(P1, lo, hi):
    """Certified optimal per-user MSE of the MMSE estimate of X in {0, 1}: P1(1-P1) - (P1-lo)(hi-P1)."""
    P1 = np.asarray(P1, float)
    return P1 * (1 - P1) - (P1 - lo) * (hi - P1)


def channel(P1, lo, hi) -> np.ndarray:
    """The optimal channel(s), shape (..., 2, 2): output 0 has posterior lo, output 1 posterior hi.

    Weights lam_lo = (hi - P1)/(hi - lo), lam_hi = (P1 - lo)/(hi - lo); q[x, y] = lam_y post_y(x) / P_x.
    With hi == lo (eps = 0) the channel is constant (both rows release output 0).
    """
    P1, lo, hi = np.broadcast_arrays(*(np.asarray(a, float) for a in (P1, lo, hi)))
    width = hi - lo
    safe = np.where(width > 0, width, 1.0)
    lam_hi = np.where(width > 0, (P1 - lo) / safe, 0.0)
    q = np.empty(P1.shape + (2, 2))
    q[..., 1, 1] = lam_hi * hi / P1
    q[..., 1, 0] = 1 - q[..., 1, 1]
    q[..., 0, 1] = lam_hi * (1 - hi) / (1 - P1)
    q[..., 0, 0] = 1 - q[..., 0, 1]
    return q


def optimum(notion: str, P1, eps):
    """(mse, channel) of the certified optimum for many users at once (notion 'lip' or 'ldp')."""
    if notion not in INTERVALS:
        raise ProblemError(f"binary closed optimum available for {', '.join(INTERVALS)}, got {notion!r}")
    lo, hi = INTERVALS[notion](P1, eps)
    return mmse(P1, lo, hi), channel(P1, lo, hi)
