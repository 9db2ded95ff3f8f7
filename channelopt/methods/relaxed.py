"""A bound on every eps-LDP channel's separable Bayes gain (histogram-MSE, mutual information)
from a dual point of the prior's shape (docs/reliability.md, "The shape bound").

Weak duality (colgen): for every mu, every channel's gain `sum_y Pr(y) phi(post_y)` is at most
`mu . P + max_{v in K} phi(v) - mu . v`. On the LDP cone (structured.LDPCone) with
`phi(v) = sum_x f(v_x)`, every vertex is `u = (1 + c 1_S) / tau` in `u = v / P`, with
`tau = 1 + c P(S)` in `[1, e^eps]`. Over an interval `[T1, T2]` of tau every coordinate of such a
vertex lies in `[1 / T2, min(e^eps / T1, 1 / P_x)]`, where `f(P_x u_x)` is below its chord; the
chords' sum is linear in u, and its maximum on that box cut by `P . u = 1` is a fractional knapsack (`structured._chord_fill`).
The largest over intervals covering `[1, e^eps]` bounds the pricing for any mu: no branching on symbols, so
it costs `O(K d log d)` for K intervals at any d.

The dual point is searched in a family of the prior's shape, `mu_x = g(P_x)` with g piecewise
linear between quantiles of P, plus a multiple of P and the heaviest symbols' own coordinates
(symbols of equal mass are exchangeable, and so are their optimal duals), by a box-step
cutting-plane method on the exact fixed-tau values at points of tau (convex in mu); the bound is
then taken over intervals, refined by a branch and bound on tau (`_Intervals.refined`) at that
mu. The relaxation's slack, one fractional symbol, is small only when every symbol is light: a
solve stopped at 60 s reports relative gaps of 5.3e-6 (d = 1024, Dirichlet(1), eps = 1; the
pricing's own bound: 0.11) and 9.2e-4 (eps = 4; 0.91); at d = 64 (eps = 1) the bound is 8e-6
above the optimum, where the column generation's own ends 1.7e-6 above it. So it is the column
generation's fallback bound, not its certificate.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.optimize import linprog

from .structured import SEPARABLE, _chord_fill

INTERVALS, KNOTS, OWN, ROUNDS = 256, 16, 16, 60
"""The dual search: points of tau, quantile knots of g, the heaviest symbols given their own
coordinate of mu, and cutting planes. d = 1024, eps = 1, histogram-MSE (2.0e-3 / 6.9e-2 after 60 s
of column generation, Dirichlet / Zipf):
the search on interval bounds (256) instead of points: 2.5407e-3 / 7.080e-2; on points: 2.5389e-3 /
7.072e-2; with 8 / 16 own coordinates 2.5386e-3 / 6.957e-2, 2.5385e-3 / 6.9569e-2. 32 knots did not
converge in 100 rounds. 20-40 rounds converge, 0.5-2.5 s."""
REFINE_TOL, REFINE_ROWS = 1e-6, 200_000
"""The final bound's branch and bound on tau (`_Intervals.refined`): relative tolerance, and the
most intervals it evaluates (each a fill over d symbols)."""
MARGIN = 64 * np.finfo(float).eps
"""Relative margin for rounding in the sums of d terms."""


def shape_bound(P: np.ndarray, eps: float, kind: str, deadline: float = np.inf) -> tuple[float, np.ndarray]:
    """(bound on the gain `sum_y Pr(y) phi(post_y)` of every eps-LDP channel, the dual point mu
    it was found at), phi the separable utility `kind` (structured.SEPARABLE). Valid whatever the
    search reached: the search stops at the deadline and the bound is that of its best point."""
    P = np.asarray(P, dtype=float)
    f = SEPARABLE[kind]
    B = _shape_basis(P)
    slope = 2.0 * P if kind == "histogram-mse" else np.log(P) + 1.0
    theta = np.linalg.lstsq(B, slope, rcond=None)[0]        # the tangent of phi at P, projected
    T = np.geomspace(1.0, 1.0 + np.expm1(eps), INTERVALS + 1)
    T[0], T[-1] = 1.0, 1.0 + np.expm1(eps)                      # exactly the range of tau
    box = _Intervals(P, eps, f, T, T)          # the search: exact fixed-tau values at the points
    value, U = box.top(B @ theta)
    center, best = theta.copy(), value
    step = np.maximum(np.abs(theta), 0.1 * np.abs(theta).max())
    cuts, rhs = [], []
    n = B.shape[1]
    for _ in range(ROUNDS):
        if time.perf_counter() > deadline:
            break
        g = B.T @ (P * (1.0 - U))                                   # a subgradient in theta
        cuts.append(np.r_[g, -1.0])
        rhs.append(g @ theta - value)
        res = linprog(np.r_[np.zeros(n), 1.0], A_ub=np.array(cuts), b_ub=np.array(rhs),
                      bounds=[(c - s, c + s) for c, s in zip(center, step)] + [(None, None)], method="highs")
        if res.status != 0:
            break
        predicted, theta = float(res.x[-1]), res.x[:n]
        edge = bool(np.any(np.abs(theta - center) >= 0.999 * step))  # the box, not the model, stopped it
        value, U = box.top(B @ theta)
        if value < best - 0.1 * (best - predicted):                 # a serious step: move the box
            center, best = theta.copy(), value
            step = 2.0 * step if edge else step
        else:
            step = 0.5 * step
        if not edge and best - predicted <= 1e-10 * abs(best):      # the model's minimum is reached
            break
    mu = B @ center
    # the relaxation's points need not be posteriors: never report above the largest phi
    bound = _Intervals(P, eps, f, T[:-1], T[1:]).refined(mu, deadline)
    return min(bound, 1.0 if kind == "histogram-mse" else 0.0), mu


def _shape_basis(P: np.ndarray) -> np.ndarray:
    """Columns spanning `g(P_x)`: hat functions at up to KNOTS quantiles of P, and P itself."""
    knots = np.unique(np.quantile(P, np.linspace(0.0, 1.0, KNOTS)))
    if knots.size == 1:
        return np.ones((P.size, 1))
    hats = [np.interp(P, knots, np.eye(knots.size)[j]) for j in range(knots.size)]
    heavy = np.argsort(-P, kind="stable")[:min(OWN, P.size)]
    own = np.zeros((P.size, heavy.size))
    own[heavy, np.arange(heavy.size)] = 1.0
    return np.column_stack([*hats, P, own])


class _Intervals:
    """The chord relaxation of the LDP pricing on intervals `[T1, T2]` of tau (module docstring)."""

    def __init__(self, P, eps, f, T1, T2):
        self.P, self.eps, self.f = P, eps, f
        self.T1, self.T2 = T1, T2

    def bounds(self, mu, T1=None, T2=None) -> tuple[np.ndarray, np.ndarray]:
        """(each interval's bound on `max phi(v) - mu . v + mu . P`, its maximizers u as rows), on
        this box's intervals or on the ones given."""
        P = self.P
        T1, T2 = (self.T1, self.T2) if T1 is None else (T1, T2)
        L = np.broadcast_to(1.0 / T2[:, None], (T1.size, P.size))
        # a coordinate is at most e^eps / tau and, being a posterior's, at most 1 / P_x
        R = np.minimum((1.0 + np.expm1(self.eps)) / T1[:, None], 1.0 / P[None, :])
        chord, U = _chord_fill(P, L, R, lambda u: self.f(P * u) - mu * P * u)
        terms = chord + P * mu
        return terms.sum(axis=1) + MARGIN * np.abs(terms).sum(axis=1), U

    def top(self, mu) -> tuple[float, np.ndarray]:
        ub, U = self.bounds(mu)
        i = int(np.argmax(ub))
        return float(ub[i]), U[i]

    def refined(self, mu, deadline: float = np.inf) -> float:
        """The largest bound over tau at mu, by branch and bound on the intervals: an interval is
        split in two while its bound exceeds the best exact fixed-tau value (an interval of zero
        width: the chord relaxation at one tau, which leaves only the fractional symbol) by more
        than REFINE_TOL of it. Returns the largest bound of the intervals left open, or of the
        closed ones (within REFINE_TOL of a fixed-tau value), whichever is larger."""
        T1, T2 = self.T1, self.T2
        ub, _ = self.bounds(mu)
        best = -np.inf
        closed = -np.inf
        rows = 0
        while T1.size:
            mid = np.sqrt(T1 * T2)
            best = max(best, float(self.bounds(mu, mid, mid)[0].max()))
            tol = REFINE_TOL * max(abs(best), 1e-300)
            done = ub <= best + tol
            closed = max(closed, float(ub[done].max()) if done.any() else -np.inf)
            T1, T2, ub, mid = T1[~done], T2[~done], ub[~done], mid[~done]
            rows += 2 * T1.size
            if not T1.size or rows > REFINE_ROWS or time.perf_counter() > deadline:
                break
            T1, T2 = np.r_[T1, mid], np.r_[mid, T2]
            ub, _ = self.bounds(mu, T1, T2)
        return float(max(closed, ub.max() if ub.size else -np.inf))
