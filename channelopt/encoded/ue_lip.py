"""UE-LIP: unary encoding with one binary channel for all bits, designed for LIP (LIP-TDSC §4.3.2).

The bit channel is (p, q) = (Pr(y=1 | bit 1), Pr(y=1 | bit 0)) = (1 - q10, q01). The paper's
objective (Eq 33) maximizes sum_k Var[E[U^k | Y^k]] (each bit estimated from its own output), so
the per-user error of Eq 30 is sum_k P_k (1 - P_k) minus that.

Feasibility is exact (unary.lip_budget_ratio): the channel is eps-LIP iff its LDP ratio
t = p(1-q) / (q(1-p)) <= T = (e^eps - P_min) / (1 - P_min); with prior uncertainty (Cor 2) the
smallest P_min over the prior set gives the smallest T.

Certified optimum (`optimum`). Every channel with 1 <= t <= T is a garbling of one with t = T:
the segment from (q, p) = (0, 0) through it meets the curve p = T q / (1 + (T-1) q), and points of
that segment are channels followed by "with some probability answer 0". A garbling never
increases Var[E[U|Y]] under any prior, so the max (and the max-min over a prior set) is attained
on the curve; channels with p < q are relabelings of channels with p > q. On the curve the
one-parameter search over q in [0, 1] is a branch and bound: on [q0, q1] the curve stays in the box
[q0, q1] x [f(q0), f(q1)] and each Var[E[U|Y]] is jointly convex in (p, q) (quadratic over
linear), so its maximum over the box is at a corner — a valid upper bound for every prior, hence for
the minimum over priors. Intervals whose bound is within `tol` of the incumbent are closed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ProblemError
from .unary import lip_budget_ratio


def _priors(priors) -> np.ndarray:
    P = np.atleast_2d(np.asarray(priors, float))
    if P.shape[1] < 2:
        raise ProblemError(f"unary encoding needs a prior over d >= 2 symbols, got {P.shape[1]}")
    if np.any(P < 0) or np.any(np.abs(P.sum(axis=1) - 1) > 1e-9):
        raise ProblemError("each prior must be a probability vector (entries >= 0, sum 1)")
    return P


def theorem4(prior, eps: float) -> tuple[float, float]:
    """LIP-TDSC Theorem 4 (Cor 2 with a prior set: the smallest P_min over it):
    q01 = (1 - P_min) / (e^eps - 2 P_min + 1), q10 = 1/2. Returned as (p, q) = (1 - q10, q01)."""
    p_min = float(_priors(prior).min())
    return 0.5, (1 - p_min) / (np.exp(eps) - 2 * p_min + 1)


def explained(prior, p, q) -> np.ndarray:
    """sum_k Var[E[U^k | Y^k]] (LIP-TDSC Eq 33's objective); p, q broadcast together."""
    P = np.asarray(prior, float)[..., None] if np.ndim(p) else np.asarray(prior, float)
    p, q = np.asarray(p, float), np.asarray(q, float)
    lam = P * p + (1 - P) * q
    with np.errstate(divide="ignore", invalid="ignore"):
        one = np.where(lam > 0, (P * p) ** 2 / lam, 0.0)
        zero = np.where(lam < 1, (P * (1 - p)) ** 2 / (1 - lam), 0.0)
    return (one + zero - P ** 2).sum(axis=0)


def mse(prior, p, q) -> float:
    """Per-user error of Eq 30: sum_k P_k (1 - P_k) - sum_k Var[E[U^k | Y^k]]."""
    P = np.asarray(prior, float)
    return float((P * (1 - P)).sum() - explained(P, p, q))


@dataclass
class UEOptimum:
    p: float
    q: float
    value: float           # max over feasible (p, q) of min over priors of Eq 33's objective
    bound: float           # certified upper bound on that maximum
    T: float               # LDP-ratio limit equivalent to the LIP constraint

    @property
    def gap(self) -> float:
        return self.bound - self.value


def optimum(priors, eps: float, tol: float = 1e-9, max_rounds: int = 200) -> UEOptimum:
    """Certified max over eps-LIP symmetric bit channels of min over `priors` (one row per prior)
    of sum_k Var[E[U^k|Y^k]] (LIP-TDSC Eq 33; Eq 34 for several priors). See the module docstring."""
    P = _priors(priors)
    if not eps > 0:
        raise ProblemError(f"epsilon must be > 0, got {eps!r}")
    T = lip_budget_ratio(float(P.min()), eps)
    curve = lambda q: T * q / (1 + (T - 1) * q)                                # noqa: E731

    def value(p, q):
        return np.min([explained(row, p, q) for row in P], axis=0)

    def upper(q0, q1):
        p0, p1 = curve(q0), curve(q1)
        corners = [value(pp, qq) for pp in (p0, p1) for qq in (q0, q1)]
        return np.max(corners, axis=0)

    edges = np.linspace(0.0, 1.0, 257)
    q0, q1 = edges[:-1], edges[1:]
    pts = np.concatenate([edges, (q0 + q1) / 2])
    vals = value(curve(pts), pts)
    i = int(np.argmax(vals))
    best_q, best = float(pts[i]), float(vals[i])
    for _ in range(max_rounds):
        ub = upper(q0, q1)
        keep = ub > best + tol
        if not keep.any():
            bound = best + tol
            break
        q0, q1 = q0[keep], q1[keep]
        mid = (q0 + q1) / 2
        mv = value(curve(mid), mid)
        j = int(np.argmax(mv))
        if mv[j] > best:
            best_q, best = float(mid[j]), float(mv[j])
        q0, q1 = np.concatenate([q0, mid]), np.concatenate([mid, q1])
    else:
        bound = float(upper(q0, q1).max())
    return UEOptimum(float(curve(best_q)), best_q, best, max(bound, best), float(T))
