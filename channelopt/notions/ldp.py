"""Context-free notions on X: eps-LDP, E-ID-LDP (MinID / AvgID / any r), eps-DI."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, ClassVar
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from ..closed_forms import subset_rr
from ..errors import ProblemError
from ..problem import MAX_EPSILON, as_matrix, as_vector
from .base import (BatchVertices, LinearBlock, Notion, bit_patterns, check_keys, column_spread, distinct_pairs,
                   floor_rows, ratio_rows, require, within)


@dataclass(frozen=True)
class LDP(Notion):
    """eps-LDP: q[x,y] <= e^eps q[x',y] for all x != x' (LIP-TDSC Def 1).

    Compiled compactly with one auxiliary l_y per output: l_y <= q[x,y] <= e^eps l_y, which is
    equivalent to all pairwise ratios (take l_y = min_x q[x,y]) and has 2dm rows instead of
    d(d-1)m. With Hamming distortion the optimum is subset randomized response in closed form
    (KSR; `closed_forms.subset_rr`).

    Parameters
    ----------
    epsilon : float
        The budget in nats, finite and > 0 (at most 700).

    Raises
    ------
    ProblemError
        If epsilon is not a finite positive number within range.
    """

    epsilon: float
    name: ClassVar[str] = "ldp"
    budget_free: ClassVar[bool] = True

    def column_rows(self, problem):
        i, j = distinct_pairs(problem.d)
        return ratio_rows(problem.d, i, j, 1.0, np.exp(self.epsilon))

    def linear(self, problem) -> LinearBlock:
        d, m = problem.d, problem.m
        # the column minimum l[y]: l[y] <= q[x, y] (the floor) and q[x, y] <= e^eps l[y]
        A_q, A_aux = floor_rows(d, m, -1.0, 1.0, -np.exp(self.epsilon))
        return LinearBlock(A_q, np.zeros(2 * d * m), A_aux, np.zeros(m), np.ones(m), floor=0)

    def leakage(self, problem, q):
        return column_spread(q)

    def batch_leakage(self, P, q):
        with np.errstate(divide="ignore", invalid="ignore"):
            hi, lo = q.max(axis=1), q.min(axis=1)
            spread = np.where(hi == 0, 0.0, np.log(hi) - np.log(lo))
        return spread.max(axis=1)

    def posterior_family(self, problem):
        return ("ldp-cone", self.epsilon)

    def closed_form(self, problem):
        """Hamming distortion, any prior: subset randomized response (`closed_forms.subset_rr`)."""
        if problem.utility.plain_hamming(problem):
            return subset_rr(problem.prior, self.epsilon, problem.m)
        return None

    def batch_vertices(self, P, limit):
        """The cone's extreme rays `1 + (e^eps - 1) 1_S` (see `posterior_vertices`), scaled to
        posteriors of each prior: u = ray / (P . ray); all of them are vertices for every prior."""
        N, d = P.shape
        if 2 ** d - 2 > limit:
            return None
        S = bit_patterns(d)[1:-1].astype(float)
        c = np.expm1(self.epsilon)
        one = np.ones_like(P)
        return BatchVertices(one, c * one, S, np.ones((N, S.shape[0]), dtype=bool),
                             scale=1.0 / (1.0 + c * (P @ S.T)))

    def posterior_vertices(self, problem, limit):
        """In u = post / P the admissible set is the cone max u <= e^eps min u, whose extreme rays
        have every coordinate at l or e^eps l: the vertices are P * (1 + (e^eps - 1) 1_S)
        normalized, for every subset S other than the empty and the full set."""
        d = problem.d
        if 2 ** d - 2 > limit:
            return None
        S = bit_patterns(d)[1:-1].astype(float)
        V = problem.prior[None, :] * (1.0 + (np.exp(self.epsilon) - 1.0) * S)
        return V / V.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class DI(Notion):
    """eps-DI in the local setting: P[x] q[x,y] <= e^eps P[x'] q[x',y] (LIP-TDSC Def 4).

    Parameters
    ----------
    epsilon : float
        The budget in nats, finite and > 0. No channel is DI when max P / min P > e^eps (the
        result is then `infeasible` with that structural proof).

    Raises
    ------
    ProblemError
        If epsilon is not a finite positive number within range.
    """

    epsilon: float
    name: ClassVar[str] = "di"
    budget_free: ClassVar[bool] = True

    def column_rows(self, problem):
        i, j = distinct_pairs(problem.d)
        P = problem.prior
        return ratio_rows(problem.d, i, j, P[i], np.exp(self.epsilon) * P[j])

    def infeasibility(self, problem):
        """Summing P[x] q[x,y] <= e^eps P[x'] q[x',y] over y gives P[x] <= e^eps P[x']: a prior whose
        largest entry exceeds e^eps times its smallest admits no channel."""
        P = problem.prior
        if P.max() > np.exp(self.epsilon) * P.min() * (1 + 1e-12):
            return f"max P / min P = {P.max() / P.min():.6g} exceeds e^eps = {np.exp(self.epsilon):.6g}"
        return ""

    def leakage(self, problem, q):
        return column_spread(problem.prior[:, None] * q)


COMBINE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "min": np.minimum,
    "avg": lambda a, b: (a + b) / 2.0,
    "max": np.maximum,
}


@dataclass(frozen=True)
class IDLDP(Notion):
    """E-ID-LDP: q[x,y] <= e^{r(eps_x, eps_x')} q[x',y] (ID-LDP Def 2; MinID Def 3: r = min).

    `combine` is "min", "avg", "max" or a Python callable r(eps_x, eps_x') acting elementwise on
    arrays; alternatively `pair_epsilons[x][x']` gives every pair budget directly.
    Leakage is the largest ratio of audited pair leakage to its pair budget (<= 1 satisfies).

    MinID is compiled per budget level (an equivalent form with O(levels * d) rows per output):
    for level e_k with inputs L_k = {x: eps_x = e_k} and S_k = {x: eps_x >= e_k}, every pair whose
    budget is e_k has one end in L_k and the other in S_k, so the pair constraints are exactly
    max_{L_k} q <= e^{e_k} min_{S_k} q and max_{S_k} q <= e^{e_k} min_{L_k} q, each written with
    one auxiliary variable per output.

    Parameters
    ----------
    epsilons : array_like, shape (d,), optional
        Per-input budgets eps_x in nats.
    combine : {"min", "avg", "max"} or callable, optional
        r(eps_x, eps_x') (default "min": MinID-LDP).
    pair_epsilons : array_like, shape (d, d), optional
        Every pair budget directly (instead of epsilons and combine).

    Raises
    ------
    ProblemError
        If the budgets are missing, invalid (not finite, <= 0, above 700) or of the wrong shape.
    """

    epsilons: Any = None
    combine: Any = "min"
    pair_epsilons: Any = None
    name: ClassVar[str] = "id-ldp"
    keys: ClassVar[tuple[str, ...]] = ("epsilons", "combine", "pair_epsilons")
    budget_keys: ClassVar[tuple[str, ...]] = ()
    infinite_stays: ClassVar[bool] = True
    """The leakage is max L(x, x') / R(x, x') over distinct inputs, and every such pair budget R is
    finite and > 0 (`__post_init__`, `pair_budgets`): an infinite L stays infinite at any budgets."""

    @classmethod
    def parse(cls, table, key):
        check_keys(table, cls.keys, key)
        if "pair_epsilons" in table:
            return cls(pair_epsilons=table["pair_epsilons"])
        return cls(epsilons=require(table, "epsilons", key), combine=table.get("combine", "min"))

    @classmethod
    def example(cls, d, epsilon, rng, latent_k=None):
        return {"notion": cls.name, "epsilons": rng.choice([epsilon, 2 * epsilon], size=d).tolist(),
                "combine": "min"}

    def budgets(self):
        if self.pair_epsilons is not None:
            R = self.pair_epsilons
            return {"pair_epsilons": R[np.isfinite(R)]}
        return {"epsilons": self.epsilons}

    def __post_init__(self):
        if self.pair_epsilons is not None:
            R = as_matrix("pair_epsilons", self.pair_epsilons)
            if R.shape[0] != R.shape[1]:
                raise ProblemError(f"pair_epsilons must be square, got shape {R.shape}")
            off = ~np.eye(R.shape[0], dtype=bool)
            if np.any(R[off] <= 0):
                raise ProblemError("pair_epsilons must be > 0 off the diagonal")
            if np.any(R[off] > MAX_EPSILON):
                raise ProblemError(f"pair_epsilons must be at most {MAX_EPSILON:g} (e^eps must be a finite double), "
                                   f"got {float(R[off].max())!r}")
            R = R.copy()
            np.fill_diagonal(R, np.inf)
            object.__setattr__(self, "pair_epsilons", R)
            return
        eps = as_vector("epsilons", self.epsilons)
        if np.any(eps <= 0):
            i = int(np.argmin(eps))
            raise ProblemError(f"epsilons[{i}] must be a finite number > 0, got {float(eps[i])!r}")
        if np.any(eps > MAX_EPSILON):
            i = int(np.argmax(eps))
            raise ProblemError(f"epsilons[{i}] must be at most {MAX_EPSILON:g} (e^eps must be a finite double), "
                               f"got {float(eps[i])!r}")
        if not callable(self.combine) and (not isinstance(self.combine, str) or self.combine not in COMBINE):
            raise ProblemError(f"combine must be one of {', '.join(COMBINE)}, got {self.combine!r}")
        object.__setattr__(self, "epsilons", eps)

    def validate(self, problem, key):
        n = self.pair_budgets().shape[0]
        if n != problem.d:
            what = "pair_epsilons" if self.pair_epsilons is not None else "epsilons"
            raise ProblemError(f"{key}.{what} must have {problem.d} entries (one per input), got {n}")

    def _rule(self):
        """The pair budget r(eps_x, eps_x') as an elementwise function."""
        return self.combine if callable(self.combine) else COMBINE[self.combine]

    def pair_budgets(self) -> np.ndarray:
        """R[x, x'] = r(eps_x, eps_x'), with +inf on the diagonal."""
        if self.pair_epsilons is not None:
            return self.pair_epsilons
        e = self.epsilons
        R = np.array(self._rule()(e[:, None], e[None, :]), dtype=float)
        if R.shape != (e.size, e.size) or np.any(~(R > 0)):
            raise ProblemError("combine must return a positive budget for every pair of inputs")
        if np.any(R > MAX_EPSILON):
            raise ProblemError(f"combine must return pair budgets of at most {MAX_EPSILON:g}, got {float(R.max())!r}")
        np.fill_diagonal(R, np.inf)
        return R

    def column_rows(self, problem):
        i, j = distinct_pairs(problem.d)
        return ratio_rows(problem.d, i, j, 1.0, np.exp(self.pair_budgets()[i, j]))

    @functools.cached_property
    def levels(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(g, RL), computed once per notion (the audit, the LP build and `top_outputs` all read
        it; grouping d = 1024 pair budgets takes 0.3 s): each input's budget level g[x] and the
        pair budgets between levels, with
        `r(eps_x, eps_x') = RL[g[x], g[x']]` for every pair x != x'; None when there are as many
        levels as inputs. Per-input budgets: the distinct values of `epsilons`. Pair budgets: the
        classes of inputs whose rows and columns of `pair_epsilons` agree off the pair itself
        (grouped by their sorted rows and columns), kept only when every pair budget is its
        classes' entry exactly; a class of one input gets 1 (it has no pair within)."""
        if self.pair_epsilons is None:
            values, g = np.unique(self.epsilons, return_inverse=True)
            RL = np.array(self._rule()(values[:, None], values[None, :]), dtype=float)
        else:
            R = self.pair_epsilons
            d = R.shape[0]
            off = ~np.eye(d, dtype=bool)
            rows, cols = R[off].reshape(d, d - 1), R.T[off].reshape(d, d - 1)
            _, g = np.unique(np.hstack([np.sort(rows, axis=1), np.sort(cols, axis=1)]), axis=0, return_inverse=True)
            g = g.ravel()
            K = int(g.max()) + 1
            RL = np.ones((K, K))
            i, j = np.nonzero(off)
            RL[g[i], g[j]] = R[i, j]                          # the last pair of each pair of classes
            if not np.array_equal(RL[g[i], g[j]], R[i, j]):
                return None
        return (g, RL) if RL.shape[0] < g.size else None

    def linear(self, problem) -> LinearBlock | None:
        """Per-level form (any `combine` or pair budgets, when they take K < d levels: `levels`).

        Every pair budget r(eps_x, eps_x') depends only on the levels of x and x'. With
        u[k, y] <= q[x, y] <= v[k, y] for x in level k, the pair constraints are exactly
        v[j, y] <= e^{r(e_j, e_k)} u[k, y] for every ordered pair of levels (take u, v the
        level's min and max): 2dm + K^2 m rows instead of d(d-1)m. The rows u <= q are a floor
        that the LP substitutes away.
        """
        found = self.levels
        if found is None:  # every input its own level: the pairwise rows are no larger
            return super().linear(problem)
        g, RL = found
        K, d, m = RL.shape[0], problem.d, problem.m
        nq, nk = d * m, K * m
        xy = np.arange(nq)
        level = g[xy // m] * m + xy % m                   # u[k, y] / v[k, y] of q[x, y]'s level
        jk = np.arange(K * K * m)
        j, k, y = jk // (K * m), (jk // m) % K, jk % m
        rows = 2 * nq + jk.size
        # -q + u <= 0, q - v <= 0, then v[j, y] - e^r(j, k) u[k, y] <= 0: one triplet set each
        A_q = sp.csr_matrix((np.r_[-np.ones(nq), np.ones(nq)], (np.r_[xy, nq + xy], np.r_[xy, xy])),
                            shape=(rows, nq))
        A_aux = sp.csr_matrix((np.r_[np.ones(nq), -np.ones(nq), -np.exp(RL[j, k]), np.ones(jk.size)],
                               (np.r_[xy, nq + xy, 2 * nq + jk, 2 * nq + jk],
                                np.r_[level, nk + level, k * m + y, nk + j * m + y])), shape=(rows, 2 * nk))
        return LinearBlock(A_q, np.zeros(A_q.shape[0]), A_aux, np.zeros(2 * nk), np.ones(2 * nk),
                           floor=0, floor_group=g)

    def leakage(self, problem, q):
        found = self.levels
        if found is not None:
            return self._level_leakage(q, *found)
        with np.errstate(divide="ignore", invalid="ignore"):
            logq = np.log(q)
            diff = logq[:, None, :] - logq[None, :, :]
        both_zero = (q[:, None, :] == 0) & (q[None, :, :] == 0)
        pair = np.where(both_zero, -np.inf, diff).max(axis=2)
        off = ~np.eye(problem.d, dtype=bool)
        return max(float(np.max(pair[off] / self.pair_budgets()[off])), 0.0)

    def _level_leakage(self, q, g, RL) -> float:
        """`leakage` through the budget levels (K of them): the pair budget depends only on the
        levels of x and x', so the largest log q[x, y] - log q[x', y] over x in level j and x' in
        level k is the level's maximum minus the other's minimum: O(K^2 m + d m) instead of
        O(d^2 m) (MinID-LDP at d = 128 with two levels: 14 ms to well under 1 ms)."""
        order = np.argsort(g, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(g[order]) != 0])
        with np.errstate(divide="ignore", invalid="ignore"):
            logq = np.log(q[order])
            hi = np.maximum.reduceat(logq, starts, axis=0)               # (K, m)
            lo = np.minimum.reduceat(logq, starts, axis=0)
            diff = hi[:, None, :] - lo[None, :, :]                       # (K, K, m)
        diff = np.where(np.isneginf(hi)[:, None, :], -np.inf, diff)     # a level all 0 in y: no pair
        pair = diff.max(axis=2) / RL
        alone = np.bincount(g) < 2                                       # no distinct pair within
        pair[np.diag_indices(RL.shape[0])] = np.where(alone, -np.inf, np.diag(pair))
        return max(float(pair.max()), 0.0)

    def satisfied(self, leakage, tol=None):
        return within(leakage, 1.0) if tol is None else within(leakage, 1.0, tol)

    def budget(self):
        return 1.0

    def to_table(self):
        if self.pair_epsilons is not None:
            R = np.where(np.isinf(self.pair_epsilons), 0.0, self.pair_epsilons)
            return {"notion": self.name, "pair_epsilons": R.tolist()}
        combine = self.combine if isinstance(self.combine, str) else "custom"
        return {"notion": self.name, "epsilons": self.epsilons.tolist(), "combine": combine}
