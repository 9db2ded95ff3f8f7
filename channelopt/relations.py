"""Exact leakage implied by a privacy notion, over all channels that satisfy it (CA-LIP §II-III).

Every notion here constrains each output column c = q[:, y] by homogeneous linear inequalities
(a cone K = {c >= 0, A c <= 0}), and K contains the all-ones column in its interior whenever a
channel exists; so any c in K is a column of some feasible channel ([t c, 1 - t c] for a small
t > 0). The largest leakage a notion allows is then a maximum of a ratio of linear functions of c
over K: one LP per pair of inputs after fixing the denominator to 1 (`max_ratio`, HiGHS). That is
the exact value of CA-LIP Eq 9's eps~(P), and of each relation's left-hand side.

Composition (CA-LIP Thm 4, Cor 4-5): the leakage of independent releases is linear-fractional in
each release's column separately, so its extremes are attained at extreme rays of the cones
(`rays`, `composed_leakage`), without materializing the |Y|^n outputs.

Approximate notions (CA-LIP Cor 3) are not column-homogeneous; `sup_approx` solves them exactly
for a given number of outputs.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from .errors import SolverError


# ---- cones (rows A with A c <= 0), from the notions' own rows ---------------------------------

def cone(notion, P) -> np.ndarray:
    """The notion's own column rows (`Notion.column_rows`) for prior P, as a dense A."""
    from .problem import Problem

    C = notion.column_rows(Problem(prior=np.asarray(P, float)))
    return C.toarray() if sp.issparse(C) else np.asarray(C, float)


def lip_cone(P, eps: float) -> np.ndarray:
    """eps-LIP under prior P (G = X): e^-eps P.c <= c_x <= e^eps P.c."""
    from .notions import LIP

    return cone(LIP(eps), P)


def ldp_cone(d: int, eps: float) -> np.ndarray:
    """eps-LDP: c_x <= e^eps c_x' for x != x'."""
    from .notions import LDP

    return cone(LDP(eps), np.full(d, 1.0 / d))


def di_cone(P, eps: float) -> np.ndarray:
    """eps-DI under prior P: P_x c_x <= e^eps P_x' c_x'."""
    from .notions import DI

    return cone(DI(eps), P)


def max_ratio(num: np.ndarray, den: np.ndarray, A: np.ndarray) -> float:
    """max num.c s.t. den.c = 1, A c <= 0, c >= 0 (inf if unbounded)."""
    r = linprog(-num, A_ub=A, b_ub=np.zeros(A.shape[0]), A_eq=den[None, :], b_eq=[1.0],
                bounds=[(0, None)] * num.size, method="highs")
    if r.status == 3:
        return np.inf
    if r.status != 0:
        raise SolverError(f"ratio LP failed: {r.message}")
    return float(-r.fun)


def ldp_leakage_of(A: np.ndarray, d: int, weights=None) -> float:
    """max over channels with columns in K of max_{x,x',y} ln (w_x q[x,y]) / (w_x' q[x',y])
    (w = 1: LDP; w = P: DI)."""
    w = np.ones(d) if weights is None else np.asarray(weights, float)
    best = 0.0
    for x in range(d):
        for x2 in range(d):
            if x != x2:
                e = np.eye(d)
                best = max(best, max_ratio(w[x] * e[x], w[x2] * e[x2], A))
    return float(np.log(best))


def lip_leakage_of(A: np.ndarray, P) -> float:
    """max over channels with columns in K of max_{x,y} |ln q[x,y] / lambda_y| under prior P."""
    P = np.asarray(P, float)
    d = P.size
    top = max(max_ratio(np.eye(d)[x], P, A) for x in range(d))
    low = max(max_ratio(P, np.eye(d)[x], A) for x in range(d))      # 1 / min c_x / (P.c)
    return float(max(np.log(top), np.log(low)))



# ---- composition ---------------------------------------------------------------------------------

def rays(A: np.ndarray, P) -> np.ndarray:
    """Extreme rays of the column cone {c >= 0, A c <= 0}, scaled as c = post / P with post a vertex
    of the posterior polytope under P (methods.posterior.vertices)."""
    from .methods.posterior import vertices
    P = np.asarray(P, float)
    return vertices(A / P[None, :], P) / P[None, :]


def composed_leakage(ray_sets, joint: np.ndarray) -> float:
    """Exact max over independent mechanisms (column cone k for coordinate k) of the LIP leakage of
    the sequence X_1..X_n (joint: d_1 x ... x d_n) from (Y_1..Y_n). The ratio
    Pr(x^n | y^n) / Pr(x^n) = prod_k c^k[x_k] / sum_x' Pr(x') prod_k c^k[x'_k] is linear-fractional in
    each column c^k separately, so its extremes over the cones are attained at extreme rays: the
    maximum over all combinations of rays is exact."""
    n = len(ray_sets)
    best = 0.0
    J = np.asarray(joint, float)
    prod = np.ones((1,) + J.shape)
    for k, R in enumerate(ray_sets):
        shape = [1] * n
        shape[k] = R.shape[1]
        prod = (prod[:, None] * R.reshape((1, R.shape[0]) + tuple(shape))).reshape((-1,) + J.shape)
    den = (prod * J[None]).reshape(prod.shape[0], -1).sum(axis=1)
    ratio = prod.reshape(prod.shape[0], -1)[:, J.ravel() > 0] / den[:, None]
    best = max(np.log(ratio.max()), -np.log(ratio.min()))
    return float(best)



# ---- transferability -------------------------------------------------------------------------

def tv(P1, P2) -> float:
    return float(0.5 * np.abs(np.asarray(P1) - np.asarray(P2)).sum())


def eta(P1, P2) -> float:
    """CA-LIP Lemma 3: eta = ln(1 + D_TV(P1, P2) / min(P1_min, P2_min))."""
    return float(np.log(1 + tv(P1, P2) / min(np.min(P1), np.min(P2))))



# ---- approximate notions -------------------------------------------------------------------------

def _families(P, eps: float, m: int, notion: str) -> list[np.ndarray]:
    """Linear forms L (m x d*m, one row per output y) in the channel q (flattened row-major) whose
    positive parts define the notion's delta: LDP (Def 1): q[x,y] - e^eps q[x',y] for x != x';
    LIP (Def 5 / Eq 4): e^-eps q[x,y] - lam_y and lam_y - e^eps q[x,y] for every x."""
    P = np.asarray(P, float)
    d, e = P.size, np.exp(eps)
    rows = [np.kron(np.eye(d)[x], np.eye(m)) for x in range(d)]        # q[x, .] as m x d*m
    if notion == "ldp":
        return [rows[x] - e * rows[x2] for x in range(d) for x2 in range(d) if x != x2]
    lam = np.kron(P, np.eye(m))
    return [L for x in range(d) for L in (rows[x] / e - lam, lam - e * rows[x])]


def _constraints(P, eps: float, delta: float, m: int, notion: str, form: str):
    """A_ub z <= b_ub on z = [q, slacks]: form "set" (sum_y max(0, L_y) <= delta, one slack per (L, y))
    or "pointwise" (every L_y <= delta)."""
    fams = _families(P, eps, m, notion)
    nq = fams[0].shape[1]
    if form == "pointwise":
        A = np.vstack(fams)
        return A, np.full(A.shape[0], delta), 0
    F = len(fams)
    ns = F * m
    S = -np.eye(ns)
    top = np.hstack([np.vstack(fams), S])                                # L_y(q) - t_{L,y} <= 0
    sums = np.hstack([np.zeros((F, nq)), np.kron(np.eye(F), np.ones((1, m)))])
    return np.vstack([top, sums]), np.concatenate([np.zeros(ns), np.full(F, delta)]), ns


def sup_approx(P, eps: float, delta: float, m: int, given: str, form: str, measure: str, eps_measure: float,
               measure_form: str = "set", channel: bool = False):
    """Exact max, over channels with m outputs that satisfy `given` at (eps, delta) in `form`, of the
    delta of `measure` at eps_measure (in `measure_form`). The max of a sum of positive parts is the
    max over output subsets S of an LP; the constraints are symmetric in the outputs, so only |S|
    matters (pointwise: |S| = 1)."""
    P = np.asarray(P, float)
    d = P.size
    A, b, ns = _constraints(P, eps, delta, m, given, form)
    nq = d * m
    Aeq = np.hstack([np.kron(np.eye(d), np.ones((1, m))), np.zeros((d, ns))])
    best, arg = 0.0, np.full((d, m), 1.0 / m)
    for L in _families(P, eps_measure, m, measure):
        for k in (range(1, m + 1) if measure_form == "set" else (1,)):
            c = np.concatenate([-L[:k].sum(axis=0), np.zeros(ns)])
            r = linprog(c, A_ub=A, b_ub=b, A_eq=Aeq, b_eq=np.ones(d), bounds=[(0, None)] * (nq + ns),
                        method="highs")
            if r.status != 0:
                raise SolverError(f"approximate-notion LP: {r.message}")
            if -r.fun > best:
                best, arg = float(-r.fun), r.x[:nq].reshape(d, m)
    return (best, arg) if channel else best


def repeated_leakage(ray_sets, P) -> float:
    """Exact LIP leakage of n independent releases of the same X (prior P), column cone k for release
    k: the product column is prod_k c^k (elementwise); extremes at extreme rays as in
    `composed_leakage`, enumerated release by release with duplicate products removed (the ratio is
    scale-free, so products are kept normalized)."""
    P = np.asarray(P, float)
    prods = np.ones((1, P.size))
    for R in ray_sets:
        prods = (prods[:, None, :] * R[None, :, :]).reshape(-1, P.size)
        prods /= prods.max(axis=1, keepdims=True)
        _, first = np.unique(np.round(np.log(prods), 10), axis=0, return_index=True)   # dedup in log space
        prods = prods[first]
    ratio = prods / (prods @ P)[:, None]
    return float(max(np.log(ratio.max()), -np.log(ratio.min())))


def empirical_prior(samples, d: int) -> np.ndarray:
    """Relative frequencies of samples in 0..d-1; an unseen symbol makes LIP under the empirical
    prior undefined (its posterior ratio is 0/0), so it is an error naming the symbol."""
    from .errors import ProblemError
    x = np.asarray(samples)
    if x.size < 1:
        raise ProblemError("empirical prior needs n >= 1 samples")
    counts = np.bincount(x, minlength=d)
    if counts.size > d:
        raise ProblemError(f"samples must lie in 0..{d - 1}, got {int(x.max())}")
    if np.any(counts == 0):
        raise ProblemError(f"empirical prior: symbol {int(np.argmin(counts))} is unseen in {x.size} samples")
    return counts / x.size
