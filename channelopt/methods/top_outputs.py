"""Hamming distortion under eps-LIP (G = X) on the most probable outputs: a small LP, certified
on the whole problem.

The optimal LIP channels for Hamming distortion that the whole LP returns report only the k
most probable symbols, k about e^eps + 1 (where RR-LIP, which uses all d, is infeasible). Two
reductions make the LP that finds them small:

- outputs: only the set S of candidate outputs gets a column (the others are 0);
- inputs: the inputs outside S gain nothing from any output of S, and their LIP constraints are
  the same for every input (`e^-eps Pr(Y=y) <= q[x, y] <= e^eps Pr(Y=y)`; the cap
  `min(e^eps, 1/P_x)` of `lip.upper_factor` only drops rows that always hold). Replacing their
  rows by the prior-weighted mean row keeps Pr(Y), every constraint and the accuracy, so they
  are one merged input of mass P(not S).

The LP over (|S| + 1) x |S| entries is solved by HiGHS. Its row multipliers alpha (the merged
input's spread over its members in proportion to P) give, for every channel of the whole
problem, `Pr(Y = X) <= sum(alpha) + max_y max_u sum_x (P_x [x = y] - alpha_x) u_x` over the
admissible posterior ratios u (the LIP box cut by `P . u = 1`): the rows of a channel sum to 1
and its columns are `Pr(Y=y) u_y` with `sum_y Pr(Y=y) = 1`. The inner max is a fractional
knapsack per output (`structured.LIPBox.support`), exact. Outputs outside S whose term is
positive join S and the LP runs again; when none is, the bound certifies the channel. This is
the column generation of the Hamming LP by outputs, with a pricing that is exact.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..notions.lip import LIP
from ..problem import Problem
from .lp import load_program, new_highs
from .structured import LIPBox

ROUNDS = 6
"""Pricing rounds before giving up (each adds every output with a positive term)."""
MAX_SHARE = 0.75
"""Give up (the whole LP runs) once S holds more than this share of the outputs. Measured on 26
budgets in 0.5..3 (Dirichlet(1) priors, solve with the LP as fallback against the LP alone):
d = 8 45 / 40 ms, d = 16 63 / 62 ms, d = 32 95 / 189 ms; with 0.5, d = 8 took 63 ms (7 points
tried the reduced LP in vain)."""
PRICE_TOL = 1e-12
"""An output joins S when its term exceeds this (accuracy units)."""


@dataclass
class Warm:
    """What one point leaves the next along a sweep: the outputs it used and the LP's basis."""

    S: np.ndarray | None = None
    basis: object = None
    highs: object = None
    info: dict = field(default_factory=dict)


def applies(problem: Problem) -> bool:
    """One `lip` notion with G = X, plain Hamming distortion, a prior with no zero entry."""
    return (len(problem.privacy) == 1 and isinstance(problem.privacy[0], LIP) and problem.latent is None
            and problem.utility is not None and problem.utility.plain_hamming(problem)
            and bool(np.all(problem.prior > 0)))


def top_outputs(problem: Problem, warm: Warm | None = None,
                time_limit: float | None = None) -> tuple[np.ndarray, float, dict] | None:
    """The optimal channel for Hamming distortion under eps-LIP (G = X) by the reduced LP on the
    most probable outputs, with a bound on the whole problem (see the module docstring).

    Parameters
    ----------
    problem : Problem
        A problem for which `applies` holds.
    warm : Warm, optional
        The previous sweep point's outputs and basis (updated in place).
    time_limit : float, optional
        Seconds for all its LP solves; past them it gives up (None).

    Returns
    -------
    (ndarray, float, dict) or None
        The d x m channel, the lower bound on its expected Hamming distortion, and details
        (outputs used, rounds); None when S would outgrow `MAX_SHARE` of the outputs or HiGHS
        fails or runs out of time (then the whole LP runs).
    """
    P = problem.prior
    d, m = problem.d, problem.m
    deadline = time.perf_counter() + (np.inf if time_limit is None else time_limit)
    eps = float(problem.privacy[0].epsilon)
    fam = LIPBox(P, eps)
    by_mass = np.argsort(-P, kind="stable")
    S = by_mass[:min(d, math.ceil(math.exp(min(eps, 700.0)) + 1.0))]   # the optima seen use about e^eps + 1
    if warm is not None and warm.S is not None:
        S = np.union1d(S, warm.S)
    S = np.sort(S)
    h = warm.highs if warm is not None and warm.highs is not None else new_highs()
    if warm is not None:
        warm.highs = h
    rounds = 0
    while True:
        rounds += 1
        if rounds > ROUNDS or MAX_SHARE * d < S.size < d:
            return None
        basis = warm.basis if warm is not None and warm.S is not None and np.array_equal(warm.S, S) else None
        solved = _reduced_lp(P, S, eps, h, basis, deadline)
        if solved is None:
            return None
        q_red, alpha_red, basis = solved
        alpha = _spread(P, S, alpha_red)
        terms = _terms(fam, alpha, m > d)
        if terms[d:].size and terms[d] > PRICE_TOL:      # an output outside X would gain: not this method's
            return None
        outside = np.setdiff1d(np.arange(d), S)
        join = outside[terms[outside] > PRICE_TOL]
        if not join.size:
            break
        # the best few (all positive ones at once overshoot: 38 outputs where 9 are used, d = 128)
        S = np.sort(np.r_[S, join[np.argsort(-terms[join], kind="stable")[:max(2, S.size // 2)]]])
    q = np.zeros((d, m))
    rows = np.full(d, S.size)                       # the merged input's row for inputs outside S
    rows[S] = np.arange(S.size)
    q[:, S] = q_red[rows]
    accuracy_bound = math.fsum(alpha) + float(terms.max())
    allowance = 8 * d * np.finfo(float).eps * (float(np.abs(alpha).sum()) + float(np.abs(terms).max()) + 1.0)
    used = q.sum(axis=0)[S] > 0
    if warm is not None:
        warm.S, warm.basis = S[used], (basis if used.all() else None)
    return q, 1.0 - accuracy_bound - allowance, {"algorithm": "top-outputs", "outputs": int(used.sum()), "rounds": rounds}


def _spread(P: np.ndarray, S: np.ndarray, alpha_red: np.ndarray) -> np.ndarray:
    """Row multipliers of the whole problem: S's own, and the merged input's in proportion to P."""
    alpha = np.empty(P.size)
    out = np.ones(P.size, dtype=bool)
    out[S] = False
    alpha[S] = alpha_red[:S.size]
    if out.any():
        alpha[out] = alpha_red[S.size] * P[out] / P[out].sum()
    return alpha


def _terms(fam: LIPBox, alpha: np.ndarray, extra: bool) -> np.ndarray:
    """Per output y, `max_u sum_x (P_x [x = y] - alpha_x) u_x` over the admissible posteriors (in
    posterior mass v = P u: `(e_y - alpha / P) . v`), and last, when `extra`, the same for an
    output that gains nothing (m > d)."""
    G = np.eye(fam.d) - (alpha / fam.P)[None, :]
    if extra:
        G = np.vstack([G, -(alpha / fam.P)[None, :]])
    sig, _ = fam.support(G)
    return sig


def _reduced_lp(P: np.ndarray, S: np.ndarray, eps: float, h, basis, deadline: float = np.inf):
    """max sum_j P_{S_j} q[j, j] over the (|S| + merged) x |S| channel with variables q and
    lam[j] = Pr(Y = S_j): `q[i, j] <= up_i lam[j]`, `e^-eps lam[j] <= q[i, j]`,
    `sum_i P_i q[i, j] = lam[j]`, `sum_j q[i, j] = 1`. Returns (q, row multipliers alpha of the
    rows' sums, HiGHS basis) or None (HiGHS failed, or the deadline passed)."""
    import highspy

    k = S.size
    mass = np.r_[P[S], np.delete(P, S).sum()] if k < P.size else P[S].copy()
    r = mass.size
    n_q = r * k
    with np.errstate(divide="ignore"):
        up = np.minimum(math.exp(min(eps, 700.0)), 1.0 / mass)
    low = math.exp(-eps)
    ij = np.arange(n_q)
    i, j = ij // k, ij % k
    # rows 0..n_q-1: q[i, j] - up_i lam[j] <= 0; rows n_q..2 n_q-1: low lam[j] - q[i, j] <= 0
    rr = np.r_[ij, ij, n_q + ij, n_q + ij]
    cc = np.r_[ij, n_q + j, ij, n_q + j]
    vv = np.r_[np.ones(n_q), -up[i], -np.ones(n_q), np.full(n_q, low)]
    A_ub = sp.csr_matrix((vv, (rr, cc)), shape=(2 * n_q, n_q + k))
    # rows 0..k-1: sum_i mass_i q[i, j] - lam[j] = 0; rows k..k+r-1: sum_j q[i, j] = 1
    er = np.r_[j, np.arange(k), k + i]
    ec = np.r_[ij, n_q + np.arange(k), ij]
    ev = np.r_[mass[i], -np.ones(k), np.ones(n_q)]
    A_eq = sp.csr_matrix((ev, (er, ec)), shape=(k + r, n_q + k))
    c = np.zeros(n_q + k)
    c[np.arange(k) * k + np.arange(k)] = -mass[:k]                 # minimize -Pr(Y = X)
    load_program(h, c, A_ub, np.zeros(2 * n_q), A_eq, np.r_[np.zeros(k), np.ones(r)],
                 np.zeros(n_q + k), np.full(n_q + k, np.inf))
    h.setOptionValue("presolve", "off")
    left = deadline - time.perf_counter()
    if left <= 0:
        return None
    h.setOptionValue("time_limit", float(min(left, highspy.kHighsInf)))
    if basis is not None:
        h.setBasis(basis)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    sol = h.getSolution()
    z = np.asarray(sol.col_value)
    y = np.asarray(sol.row_dual)
    return np.maximum(z[:n_q], 0.0).reshape(r, k), -y[2 * n_q + k:], h.getBasis()
