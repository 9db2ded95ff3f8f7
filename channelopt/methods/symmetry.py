"""The posterior-space LP over orbits of exchangeable symbols
(docs/reliability.md, "Certified Bayes optima at large d").

Symbols with the same prior mass (and, for bayes-mse, the same target value) are exchangeable:
permuting them maps the admissible posteriors of LIP (G = X) and of LDP onto themselves and
leaves phi unchanged. A vertex is then known up to symmetry by its *type*, the number of
symbols of each class at each bound:

- LIP: `a_c` symbols of class c at `hi_c`, at most one symbol (of class j) strictly inside, the
  rest at `lo`; the mass `P . u = 1` fixes the inside value.
- LDP: `k_c` symbols of class c in S.

Averaging any channel over the permutations of each class gives a channel with the same
utility and leakage whose posteriors are averaged within classes, so the LP

    maximize sum_t W_t phi(t)   s.t.   sum_t W_t ubar_c(t) = 1 for every class c,  W >= 0

(ubar_c: the class average of u = post / P of a vertex of type t) has the optimum of the full
problem. With every type enumerated its dual y is a certificate: mu_x = y_c / (n_c P_x) satisfies
`mu . v >= phi(v)` on every vertex and `mu . P = sum_c y_c`. A channel is recovered from one
representative vertex per used type and its rotations within classes (shift r of each class's
members, r = 0 .. lcm(n_c) - 1), whose average is the class average: each rotation of type t
weighted W_t / lcm(n_c) gives a channel of the full problem with the LP's value; where those
are more columns than the problem's outputs, the LP over them picks a basic optimum instead.
"""

from __future__ import annotations

import math

import numpy as np

from .structured import SEPARABLE, Family, LDPCone
from .result import PosteriorSolution

MAX_TYPES = 300_000
"""Largest number of vertex types enumerated."""
MAX_ROTATIONS = 4096
"""Largest lcm of the class sizes used to recover a channel."""


def classes(P: np.ndarray, h: np.ndarray | None) -> np.ndarray | None:
    """Class index of each symbol (equal prior mass and equal h), or None if all are distinct."""
    key = np.round(P / P.max(), 13)[:, None]
    if h is not None:
        key = np.hstack([key, np.round(h / max(1.0, np.abs(h).max()), 13)[:, None]])
    _, label = np.unique(key, axis=0, return_inverse=True)
    label = label.ravel()
    return label if label.max() + 1 < P.size else None


def type_count(fam: Family, sizes: np.ndarray) -> int:
    n = int(np.prod(sizes.astype(float) + 1))
    return n if isinstance(fam, LDPCone) else n * (len(sizes) + 1)


def _types(fam: Family, p: np.ndarray, sizes: np.ndarray):
    """Every vertex type: (counts at the upper level per class (T, k), the class of the symbol
    inside or -1 (T,), the inside value (T,), tau (T,))."""
    k = len(sizes)
    grids = np.meshgrid(*[np.arange(n + 1) for n in sizes], indexing="ij")
    A = np.stack([g.ravel() for g in grids], axis=1).astype(float)       # (T0, k)
    if isinstance(fam, LDPCone):
        tau = 1.0 + fam.c * (A @ p)
        return A, np.full(len(A), -1), np.zeros(len(A)), tau
    lo = math.exp(-fam.eps_lower)
    hi = np.minimum(math.exp(fam.eps), 1.0 / p)
    out_A, out_j, out_f = [], [], []
    for j in range(k):
        ok = A[:, j] <= sizes[j] - 1
        Aj = A[ok]
        rest = sizes[None, :] - Aj
        rest[:, j] -= 1
        mass = Aj @ (p * hi) + rest @ (p * lo)
        f = (1.0 - mass) / p[j]
        keep = (f >= lo - 1e-12) & (f <= hi[j] + 1e-12)
        out_A.append(Aj[keep])
        out_j.append(np.full(keep.sum(), j))
        out_f.append(np.clip(f[keep], lo, hi[j]))
    return np.vstack(out_A), np.concatenate(out_j), np.concatenate(out_f), np.ones(sum(len(a) for a in out_A))


def _levels(fam: Family, p: np.ndarray, A, tau):
    """Per type and class: (u of the symbols at the upper level, u of those at the lower level)."""
    if isinstance(fam, LDPCone):
        up = (1.0 + fam.c) / tau[:, None] * np.ones_like(A)
        low = 1.0 / tau[:, None] * np.ones_like(A)
    else:
        up = np.broadcast_to(np.minimum(math.exp(fam.eps), 1.0 / p), A.shape)
        low = np.full(A.shape, math.exp(-fam.eps_lower))
    return up, low


def solve_orbits(problem, fam: Family, kind: str, h: np.ndarray | None):
    """Certified optimum over vertex types. Returns (V, w, gain, bound, info) like
    `posterior.enumerate_and_solve`, or None when there is no symmetry to use, too many types,
    or the rotations of the classes are too many to recover a channel."""
    from scipy.optimize import linprog

    from .colgen import Scaled
    from .posterior import master_lp

    P = problem.prior
    label = classes(P, h if kind == "bayes-mse" else None)
    if label is None:
        return None
    k = label.max() + 1
    sizes = np.bincount(label, minlength=k)
    if type_count(fam, sizes) > MAX_TYPES:
        return None
    period = math.lcm(*sizes.tolist())
    if period > MAX_ROTATIONS:
        return None
    p = np.array([P[label == c][0] for c in range(k)])
    hc = None if h is None else np.array([h[label == c][0] for c in range(k)])
    A, j, f, tau = _types(fam, p, sizes)
    up, low = _levels(fam, p, A, tau)
    inside = np.zeros_like(A)
    has = j >= 0
    inside[np.flatnonzero(has), j[has]] = 1.0
    n_low = sizes[None, :] - A - inside
    fval = np.where(has, f, 0.0)[:, None] * inside                 # inside u, in its class's column
    ubar = (A * up + n_low * low + fval) / sizes[None, :]          # class averages of u
    phi = _phi(kind, p, hc, A, n_low, inside, up, low, fval)
    res = linprog(-phi, A_eq=ubar.T, b_eq=np.ones(k), bounds=(0, None), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:
        return None
    y = -np.asarray(res.eqlin.marginals)
    bound = float(y.sum() + max(0.0, float(np.max(phi - ubar @ y))))     # exact over every type
    used = np.flatnonzero(res.x > 1e-13)
    reps = _representatives(label, sizes, A[used], n_low[used], inside[used], up[used], low[used], fval[used])
    U, w = _rotations(reps, label, sizes, period, res.x[used])
    V = U * P[None, :]
    gains = Scaled(kind, h).phi(V)
    if len(V) > problem.m:
        # more columns than the problem has outputs: a basic optimum of the LP over them uses at
        # most d (the frontend would otherwise merge outputs and lose the certificate)
        w, _ = master_lp(V, gains, P)
    info = {"orbits": int(k), "types": int(len(A)), "rotations": int(period)}
    return PosteriorSolution(V, w, float(gains @ w), bound, info)


def _phi(kind, p, hc, A, n_low, inside, up, low, fval):
    """phi of every type from its class counts (posterior mass v = p * u per symbol)."""
    vu, vl, vf = p * up, p * low, p * fval
    if kind == "bayes-mse":
        return ((A * vu + n_low * vl + vf) @ hc) ** 2
    if kind == "map":
        cand = np.where(A > 0, vu, 0.0)
        cand = np.maximum(cand, np.where(n_low > 0, vl, 0.0))
        cand = np.maximum(cand, np.where(inside > 0, vf, 0.0))
        return cand.max(axis=1)
    g = SEPARABLE[kind]
    return (A * g(vu) + n_low * g(vl) + inside * g(vf)).sum(axis=1)


def _representatives(label, sizes, A, n_low, inside, up, low, fval):
    """One vertex u per type: in each class, its first members at the upper level, then the one
    inside, then the rest at the lower level."""
    T, d = len(A), label.size
    U = np.empty((T, d))
    for c in range(len(sizes)):
        members = np.flatnonzero(label == c)
        pos = np.arange(sizes[c])[None, :]
        a = A[:, c:c + 1]
        val = np.where(pos < a, up[:, c:c + 1], low[:, c:c + 1])
        val = np.where((pos == a) & (inside[:, c:c + 1] > 0), fval[:, c:c + 1], val)
        U[:, members] = val
    return U


def _rotations(U, label, sizes, period, W):
    """Every representative shifted by r = 0 .. period - 1 within each class (rows, duplicates
    merged), and each row's weight: W_t / period for each shift of type t that gives it. Over its
    shifts a type's u averages to its class averages, so these weights meet `sum w u = 1` exactly
    where the types' weights W meet the orbit LP's rows: no LP over the d x (types x period)
    columns is needed while they fit the outputs (d = 2000, uniform prior, LIP mutual
    information: 15 s of HiGHS before)."""
    d = label.size
    perm = np.empty((period, d), dtype=int)
    for c in range(len(sizes)):
        members = np.flatnonzero(label == c)
        idx = (np.arange(sizes[c])[None, :] - np.arange(period)[:, None]) % sizes[c]
        perm[:, members] = members[idx]
    out = U[:, perm]                        # (T, period, d): out[t, r, x] = U[t, perm[r, x]]
    out = out.reshape(-1, d)
    weight = np.repeat(np.asarray(W, dtype=float) / period, period)
    _, first, inverse = np.unique(np.round(out, 14), axis=0, return_index=True, return_inverse=True)
    w = np.bincount(inverse.ravel(), weights=weight, minlength=first.size)
    order = np.argsort(first)
    return out[first[order]], w[order]
