"""IDUE: input-discriminative unary encoding for E-ID-LDP (ID-LDP §V).

Items are grouped in t privacy levels (level i: m_i items, budget eps_i); all items of a level
share the bit channel (a_i, b_i). Privacy (Eq 5): a_i (1-b_j) / (b_i (1-a_j)) <= e^{R_ij} with
R_ij = r(eps_i, eps_j) for every pair of distinct items, i.e. for every pair of levels i != j and
for i = j when m_i >= 2. The worst-case total variance per user (Eq 8) is
    f(a, b) = sum_i m_i b_i (1-b_i) / (a_i - b_i)^2 + max_i (1 - a_i - b_i) / (a_i - b_i).

Coordinates that make the structure visible: u = ln(a/b), w = ln((1-b)/(1-a)) (both > 0 when a > b).
Then Eq 5 is linear, u_i + w_j <= R_ij, and (with E = e^{u+w})
    b = (e^w - 1) / (E - 1),   a = e^u b,
    b(1-b)/(a-b)^2 = 1 / ((e^u - 1)(1 - e^{-w})) =: g(u, w)   (decreasing in u and in w),
    (1-a-b)/(a-b)  = 1/(e^w - 1) - 1/(e^u - 1)   =: h(u, w)   (increasing in u, decreasing in w).

opt1 (Eq 10, a + b = 1, u = w = tau) and opt2 (Eq 11, a = 1/2) are convex and solved with cvxpy.
opt0 (Eq 8) is not convex (h is concave in u). `opt0` solves it globally for small t: since f
decreases in every w_j, an optimum takes w_j = min_i (R_ij - u_i) over the pairs that involve j,
leaving t variables u. Moreover f itself decreases in every u_i and w_i: written as
f = max_j [sum_{i != j} m_i g_i + (m_j g_j + h_j)] with
m_j g_j + h_j = (m_j / (1 - e^{-w_j}) - 1) / (e^{u_j} - 1) + 1 / (e^{w_j} - 1) and m_j >= 1. So on a box
[lo, hi] of u, where w_j <= w_j(lo), the value f(hi, w(lo)) is a valid lower bound, and boxes are bisected until the incumbent (a feasible
point, improved by a local SLSQP polish) is within `tol` of the smallest bound. The result carries
that certified bound.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import minimize

from ..errors import ProblemError, SolverError
from ..notions.ldp import COMBINE


@dataclass(frozen=True)
class Levels:
    """t privacy levels: budgets eps_i, item counts m_i, and the pair budget R_ij = r(eps_i, eps_j)."""

    epsilons: np.ndarray
    sizes: np.ndarray
    R: np.ndarray

    @classmethod
    def make(cls, epsilons, sizes, combine: Any = "min") -> Levels:
        eps = np.atleast_1d(np.asarray(epsilons, float))
        m = np.atleast_1d(np.asarray(sizes))
        if eps.ndim != 1 or m.shape != eps.shape:
            raise ProblemError(f"epsilons and sizes must be vectors of one length, got {eps.shape} and {m.shape}")
        for i, e in enumerate(eps):
            if not (np.isfinite(e) and e > 0):
                raise ProblemError(f"epsilons[{i}] must be a finite number > 0, got {e!r}")
        for i, k in enumerate(m):
            if not (float(k).is_integer() and k >= 1):
                raise ProblemError(f"sizes[{i}] must be an integer >= 1, got {k!r}")
        if m.sum() < 2:
            raise ProblemError("IDUE needs at least 2 items in total")
        if callable(combine):
            r = combine
        elif combine in COMBINE:
            r = COMBINE[combine]
        else:
            raise ProblemError(f"combine must be one of {', '.join(COMBINE)} or a function, got {combine!r}")
        R = np.asarray(r(eps[:, None], eps[None, :]), float)
        return cls(eps, m.astype(int), R)

    @property
    def t(self) -> int:
        return self.epsilons.size

    @property
    def pairs(self) -> np.ndarray:
        """Boolean t x t: which level pairs carry an Eq 5 constraint (distinct items exist)."""
        A = ~np.eye(self.t, dtype=bool)
        A[np.diag_indices(self.t)] = self.sizes >= 2
        return A

    def expand(self, values) -> np.ndarray:
        """Per-level values repeated to per-item values (levels in order)."""
        return np.repeat(np.asarray(values, float), self.sizes)


def g(u, w):
    return 1.0 / (np.expm1(u) * -np.expm1(-w))


def h(u, w):
    return 1.0 / np.expm1(w) - 1.0 / np.expm1(u)


def from_uw(u, w) -> tuple[np.ndarray, np.ndarray]:
    u, w = np.asarray(u, float), np.asarray(w, float)
    b = np.expm1(w) / np.expm1(u + w)
    return np.exp(u) * b, b


def to_uw(a, b) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.log(a / b), np.log((1 - b) / (1 - a))


def worst_case(levels: Levels, a, b) -> float:
    """Eq 8's objective f(a, b) (total variance per user, worst case over the true counts)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float((levels.sizes * b * (1 - b) / (a - b) ** 2).sum() + ((1 - a - b) / (a - b)).max())


def pair_excess(levels: Levels, a, b) -> float:
    """max over constrained level pairs of ln(a_i (1-b_j) / (b_i (1-a_j))) - R_ij (<= 0: Eq 5 holds)."""
    u, w = to_uw(a, b)
    E = u[:, None] + w[None, :] - levels.R
    return float(E[levels.pairs].max())


@dataclass
class IDUE:
    """Per-level bit channels and how they were obtained."""

    levels: Levels
    a: np.ndarray
    b: np.ndarray
    model: str
    value: float                     # Eq 8 objective f(a, b)
    bound: float | None = None       # certified lower bound on Eq 8's minimum (opt0)
    info: dict = field(default_factory=dict)

    def per_item(self) -> tuple[np.ndarray, np.ndarray]:
        return self.levels.expand(self.a), self.levels.expand(self.b)


def _cvx(problem, name: str):
    import cvxpy as cp

    from ..solvers import c_output
    for solver in ("CLARABEL", "ECOS", "SCS"):
        try:
            with c_output(keep=False):         # a solver library's own prints stay off the terminal
                problem.solve(solver=solver)
        except (cp.error.SolverError, ValueError):
            continue
        if problem.status == cp.OPTIMAL:
            return
    raise SolverError(f"{name}: no solver reached an optimal status (last: {problem.status})")


def opt1(levels: Levels) -> IDUE:
    """ID-LDP Eq 10: a_i = e^tau_i / (e^tau_i + 1), b_i = 1 - a_i, tau_i + tau_j <= R_ij;
    minimize sum_i m_i e^tau_i / (e^tau_i - 1)^2 = sum_i m_i exp(-tau_i - 2 ln(1 - e^-tau_i))."""
    import cvxpy as cp
    tau = cp.Variable(levels.t)
    I, J = np.nonzero(levels.pairs)
    obj = cp.sum(cp.multiply(levels.sizes, cp.exp(-tau - 2 * cp.log(1 - cp.exp(-tau)))))
    prob = cp.Problem(cp.Minimize(obj), [tau[I] + tau[J] <= levels.R[I, J]])
    _cvx(prob, "opt1")
    t = np.asarray(tau.value, float)
    t = t - max(0.0, float(np.max(t[I] + t[J] - levels.R[I, J]))) / 2   # solver round-off: inside Eq 10
    a, b = np.exp(t) / (np.exp(t) + 1), 1 / (np.exp(t) + 1)
    return IDUE(levels, a, b, "opt1", worst_case(levels, a, b), info={"tau": t.tolist()})


def opt2(levels: Levels) -> IDUE:
    """ID-LDP Eq 11: a_i = 1/2, e^{R_ij} b_i + b_j >= 1; minimize sum_i m_i b_i(1-b_i)/(1/2 - b_i)^2,
    written with s_i = 1/2 - b_i as sum_i m_i (1/(4 s_i^2) - 1)."""
    import cvxpy as cp
    s = cp.Variable(levels.t)
    I, J = np.nonzero(levels.pairs)
    eR = np.exp(levels.R[I, J])
    obj = cp.sum(cp.multiply(levels.sizes, 0.25 * cp.power(s, -2) - 1))
    prob = cp.Problem(cp.Minimize(obj), [cp.multiply(eR, 0.5 - s[I]) + (0.5 - s[J]) >= 1, s <= 0.5])
    _cvx(prob, "opt2")
    b = 0.5 - np.asarray(s.value, float)
    b = b + max(0.0, float(np.max(1 - eR * b[I] - b[J])))          # solver round-off: back inside Eq 11
    a = np.full(levels.t, 0.5)
    return IDUE(levels, a, b, "opt2", worst_case(levels, a, b))


def _w_of(levels: Levels, u: np.ndarray) -> np.ndarray:
    """w_j(u) = min over constrained pairs (i, j) of R_ij - u_i; u is (..., t)."""
    A = levels.pairs
    cand = np.where(A, levels.R - u[..., :, None], np.inf)           # (..., i, j)
    return cand.min(axis=-2)


def _F(levels: Levels, u: np.ndarray) -> np.ndarray:
    w = _w_of(levels, u)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        val = (levels.sizes * g(u, w)).sum(axis=-1) + h(u, w).max(axis=-1)
    ok = np.all(w > 0, axis=-1) & np.all(u > 0, axis=-1)
    return np.where(ok, val, np.inf)


def _polish(levels: Levels, u0: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Local SLSQP on (u, w, s): min sum m g + s, h_j <= s, u_i + w_j <= R_ij, from u0."""
    t = levels.t
    w0 = _w_of(levels, u0)
    x0 = np.concatenate([u0, w0, [h(u0, w0).max()]])
    I, J = np.nonzero(levels.pairs)
    cons = [{"type": "ineq", "fun": lambda x: levels.R[I, J] - x[I] - x[t + J]},
            {"type": "ineq", "fun": lambda x: x[-1] - h(x[:t], x[t:2 * t])}]
    with np.errstate(all="ignore"):
        r = minimize(lambda x: (levels.sizes * g(x[:t], x[t:2 * t])).sum() + x[-1], x0, method="SLSQP",
                     constraints=cons, bounds=[(1e-9, None)] * (2 * t) + [(None, None)],
                     options={"ftol": 1e-15, "maxiter": 500})
    u, w = r.x[:t], r.x[t:2 * t]
    if np.any(u <= 0) or np.any(w <= 0) or np.any(levels.R[I, J] - u[I] - w[J] < 0):
        w = np.minimum(w, _w_of(levels, u))       # back inside Eq 5 (f only improves with w)
        if np.any(w <= 0):
            return None
    return u, w


def opt0(levels: Levels, tol: float = 1e-7, max_boxes: int = 1_500_000, seeds=()) -> IDUE:
    """ID-LDP Eq 8 solved globally by branch and bound over u (module docstring); `seeds` are
    extra feasible (a, b) to start the incumbent from (e.g. opt1/opt2 solutions)."""
    t = levels.t
    A = levels.pairs
    top = np.where(A, levels.R, np.inf).min(axis=1)                      # u_i < min_j R_ij
    lo, hi = np.zeros((1, t)), top[None, :].copy()
    grid = np.stack(np.meshgrid(*[np.linspace(0, 1, 41)[1:-1] * top[i] for i in range(t)]), -1).reshape(-1, t)
    vals = _F(levels, grid)
    best_u = grid[int(np.argmin(vals))]
    for a, b in seeds:
        u_s, _ = to_uw(a, b)
        if _F(levels, u_s) < _F(levels, best_u):
            best_u = u_s
    polished = _polish(levels, best_u)
    if polished is not None and _F(levels, polished[0]) < _F(levels, best_u):
        best_u = polished[0]
    best = float(_F(levels, best_u))
    tol = tol * max(1.0, best)
    boxes, rounds, pruned = 1, 0, np.inf
    while lo.shape[0]:
        rounds += 1
        w_hi = _w_of(levels, lo)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            LB = (levels.sizes * g(hi, w_hi)).sum(axis=1) + h(hi, w_hi).max(axis=1)
        LB = np.where(np.all(w_hi > 0, axis=1), LB, np.inf)
        mid = (lo + hi) / 2
        fm = _F(levels, mid)
        k = int(np.argmin(fm))
        if fm[k] < best:
            best, best_u = float(fm[k]), mid[k]
        keep = LB < best - tol
        if (~keep).any():
            pruned = min(pruned, float(LB[~keep].min()))
        lo, hi, LB = lo[keep], hi[keep], LB[keep]
        if not lo.shape[0]:
            break
        if boxes + 2 * lo.shape[0] > max_boxes:
            break
        # bisect every box across its widest coordinate
        k = np.argmax(hi - lo, axis=1)
        rows = np.arange(lo.shape[0])
        cut = (lo[rows, k] + hi[rows, k]) / 2
        lo2, hi2 = lo.copy(), hi.copy()
        hi[rows, k] = cut
        lo2[rows, k] = cut
        lo, hi = np.concatenate([lo, lo2]), np.concatenate([hi, hi2])
        boxes += lo.shape[0]
    polished = _polish(levels, best_u)
    if polished is not None:
        a_p, b_p = from_uw(*polished)
        if worst_case(levels, a_p, b_p) < best and pair_excess(levels, a_p, b_p) <= 1e-12:
            best_u = None
            a, b = a_p, b_p
    if best_u is not None:
        a, b = from_uw(best_u, _w_of(levels, best_u))
    value = worst_case(levels, a, b)
    bound = min(pruned, float(LB.min()) if lo.shape[0] else np.inf, value)
    return IDUE(levels, np.asarray(a), np.asarray(b), "opt0", value, bound,
                {"boxes": boxes, "rounds": rounds, "gap": value - bound})


def design(levels: Levels, model: str = "opt0") -> IDUE:
    """IDUE parameters by one of the paper's models ("opt0", "opt1", "opt2")."""
    if model == "opt1":
        return opt1(levels)
    if model == "opt2":
        return opt2(levels)
    if model == "opt0":
        seeds = [(s.a, s.b) for s in (opt1(levels), opt2(levels))]
        return opt0(levels, seeds=seeds)
    raise ProblemError(f"model must be opt0, opt1 or opt2, got {model!r}")
