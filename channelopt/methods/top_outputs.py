"""Hamming distortion under one LIP (G = X) or per-level ID-LDP notion on the most probable
outputs: a small LP, certified on the whole problem.

The optimal channels for Hamming distortion that the whole LP returns under these notions report
only a few of the most probable symbols (LIP: about e^eps + 1 of them, where RR-LIP, which uses
all d, is infeasible). Two reductions make the LP that finds them small:

- outputs: only the set S of candidate outputs gets a column (the others are 0);
- inputs: the inputs outside S gain nothing from any output of S, and inputs of one group meet
  the same constraints: under LIP every input (`e^-eps Pr(Y=y) <= q[x, y] <= e^eps Pr(Y=y)`; the
  cap `min(e^eps, 1/P_x)` of `lip.upper_factor` only drops rows that always hold), under ID-LDP
  the inputs of one budget level (their pair budgets to every other input are the same).
  Replacing the rows of a group's inputs outside S by their prior-weighted mean keeps Pr(Y),
  every constraint (they are linear and the same for each) and the accuracy, so each group is
  one merged input.

The reduced problem, over (|S| + merged) x |S| entries, is a channelopt Problem like any other
(prior: the rows' masses; the notion on the reduced inputs; distortion 0 on S's diagonal, 1
elsewhere), built and solved by `lp.build` and `lp.solve_highs`. Its row multipliers alpha (a merged
input's spread over its members in proportion to P) give, for every channel of the whole
problem, `Pr(Y = X) <= sum(alpha) + max_y max_u sum_x (P_x [x = y] - alpha_x) u_x` over the
admissible posterior ratios u (`P . u = 1`): the rows of a channel sum to 1 and its columns are
`Pr(Y=y) u_y` with `sum_y Pr(Y=y) = 1`. The inner max is exact: under LIP a fractional knapsack
per output (`structured.LIPBox.support`); under ID-LDP a threshold on `c_x / P_x` at each extreme
ray of the levels' cone (`_IDShape`). Outputs outside S whose term is positive join S and the LP
runs again; when none is, the bound certifies the channel. This is the column generation of the
Hamming LP by outputs, with a pricing that is exact.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass

import numpy as np

from ..notions.ldp import IDLDP
from ..notions.lip import LIP
from ..problem import Problem
from ..utility import Distortion
from .lp import build, new_highs, solve_highs
from .structured import LIPBox

ROUNDS = 6
"""Pricing rounds before giving up (each adds the outputs with the largest positive terms)."""
MAX_SHARE = 0.75
"""Give up (the whole LP runs) once S holds more than this share of the outputs. Measured on 26
LIP budgets in 0.5..3 (Dirichlet(1) priors, solve with the LP as fallback against the LP alone):
d = 8 45 / 40 ms, d = 16 63 / 62 ms, d = 32 95 / 189 ms; with 0.5, d = 8 took 63 ms (7 points
tried the reduced LP in vain)."""
PRICE_TOL = 1e-12
"""An output joins S when its term exceeds this (accuracy units)."""
DINKELBACH_STEPS = 100
"""Dinkelbach steps per extreme ray in the ID-LDP pricing (it stops when the ratio stops rising;
3-6 steps are typical)."""
ID_MIN_D = 128
"""ID-LDP from this many inputs on: below, its extreme rays (4 ms at three levels) and pricing
cost more than the whole LP saves. MinID-LDP with the benchmark's budgets, this path against the
LP alone: 26 scales in 0.5..3 at d = 32 446 / 197 ms, d = 64 300 / 351 ms, d = 96 408 / 606 ms;
a 100-point scale sweep at d = 64 0.93 s against 0.47 s warm, at d = 128 0.97 s against 1.02 s
(fresh: 2.1 s against 3.8 s)."""
MAX_LEVEL_EPS = 10.0
"""ID-LDP budgets up to this (pair ratios up to e^10 ~ 2.2e4 keep the facets' rank test clear)."""
MAX_LEVELS = 3
"""ID-LDP with at most this many budget levels: the extreme rays of the levels' cone are found by
trying every set of 2K - 1 of its K + K^2 facets (792 at K = 3, 77,520 at K = 4)."""


@dataclass
class Warm:
    """What one point leaves the next along a sweep: its outputs S (with the LP's basis) and the
    ones its channel used, and the HiGHS instance."""

    S: np.ndarray | None = None
    used: np.ndarray | None = None
    basis: object = None
    highs: object = None


class _LIPShape:
    """eps-LIP with G = X: one group (every input meets the same constraints)."""

    def __init__(self, P: np.ndarray, eps: float):
        self.eps = eps
        """The optima seen use about e^eps + 1 outputs (where RR-LIP is infeasible)."""
        self.fam = LIPBox(P, eps)
        self.groups = np.zeros(P.size, dtype=int)

    def notion(self, label: np.ndarray) -> LIP:
        """The notion on the reduced inputs (of groups `label`): the same eps-LIP."""
        return LIP(self.eps)

    def terms(self, alpha: np.ndarray, extra: bool) -> np.ndarray:
        G = np.eye(self.fam.d) - (alpha / self.fam.P)[None, :]
        if extra:
            G = np.vstack([G, -(alpha / self.fam.P)[None, :]])
        return self.fam.support(G)[0]


class _IDShape:
    """ID-LDP with budgets on K levels (`IDLDP.levels`): a group per level."""

    def __init__(self, P: np.ndarray, groups: np.ndarray, RL: np.ndarray):
        self.P, self.groups, self.RL, self.R = P, groups, RL, np.exp(RL)
        self.K = RL.shape[0]
        self.eps = float(RL.min())
        """The optima seen use about e^eps + 1 outputs with eps the least budget (MinID-LDP, the
        benchmark's levels, scales 0.5..3: 3, 4, 9, 22 outputs)."""
        self.rays = _level_rays(self.R)

    def notion(self, label: np.ndarray) -> IDLDP:
        """The notion on the reduced inputs (of levels `label`): their pair budgets, which
        `IDLDP.levels` finds on the same levels (so the LP is in the per-level form)."""
        R = self.RL[label][:, label]
        np.fill_diagonal(R, 0.0)
        return IDLDP(pair_epsilons=R)

    def terms(self, alpha: np.ndarray, extra: bool) -> np.ndarray:
        """Per output, `max_u c . u` over the admissible u with `P . u = 1`, c = P e_y - alpha.

        A vertex puts each input of level l at a[l] or b[l] for an extreme ray (a, b) of the
        levels' cone (for a fixed choice the objective is linear in (a, b)). For a fixed ray the
        best choice maximizes the ratio `c . u / P . u`; by Dinkelbach's method it raises exactly
        the inputs with `c_x / P_x` above the ratio, and iterating `lam <- ratio of {x : c_x / P_x
        > lam}` climbs to it in a few steps. With r = -alpha / P sorted once, a row differs from
        it only at its own output (ratio r_y + 1), so each step is a search in prefix sums."""
        P, d = self.P, self.P.size
        beta = -alpha / P
        order = np.argsort(-beta, kind="stable")
        desc = -beta[order]                                   # ascending, for searchsorted
        y = np.arange(d)
        own = np.ones(d)                                      # the +1 of row y's own ratio
        if extra:                                             # the output that gains nothing
            y, own = np.r_[y, 0], np.r_[own, 0.0]
        best = np.full(y.size, -np.inf)
        for a, b in self.rays:
            ax, wx = a[self.groups], (b - a)[self.groups]
            PW = np.r_[0.0, np.cumsum((P * wx)[order])]
            PWB = np.r_[0.0, np.cumsum((P * wx * beta)[order])]
            AN, AD = float(P @ (ax * beta)), float(P @ ax)
            rest = (desc, PW, PWB, AN, AD, own * P[y] * ax[y], P[y] * wx[y], beta[y], own)
            lam = (AN + rest[5]) / AD                         # no input raised
            for _ in range(DINKELBACH_STEPS):
                nxt = _ratio(lam, *rest)
                if np.all(nxt <= lam):
                    break
                lam = np.maximum(lam, nxt)
            best = np.maximum(best, lam)
        return best


def _ratio(lam, desc, PW, PWB, AN, AD, py_a, py_w, by, own):
    """`_IDShape.terms`' ratio `c . u / P . u` per row at the inputs with ratio above lam: the
    base ratios r (`desc` = -r sorted ascending, prefix sums PW of P w and PWB of P w r in that
    order, totals AN of P a r and AD of P a), corrected at each row's own output y (ratio by +
    own, with its P_y a_y and P_y w_y)."""
    t = np.searchsorted(desc, -lam, side="left")             # how many r_x > lam
    base_in, own_in = by > lam, by + own > lam
    num = AN + py_a + PWB[t] - np.where(base_in, py_w * by, 0.0) + np.where(own_in, py_w * (by + own), 0.0)
    den = AD + PW[t] - np.where(base_in, py_w, 0.0) + np.where(own_in, py_w, 0.0)
    return num / den


def _level_rays(R: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The extreme rays (a, b), scaled to sum 1, of the cone `a_l <= b_l`, `b_l <= R[l, l'] a_l'`
    (every l, l'): each spans the null space of 2K - 1 of its facets (one batched SVD) and meets
    the others. Budgets are at most MAX_LEVEL_EPS, so the facets are well scaled."""
    K = R.shape[0]
    F = np.array([np.r_[np.eye(K)[l], -np.eye(K)[l]] for l in range(K)]                          # a_l - b_l <= 0
                 + [np.r_[-R[l, m] * np.eye(K)[m], np.eye(K)[l]] for l in range(K) for m in range(K)])  # b_l - R a_m <= 0
    F /= np.linalg.norm(F, axis=1, keepdims=True)               # unit facets: one scale for the rank test
    picks = np.array(list(itertools.combinations(range(len(F)), 2 * K - 1)))
    _, sv, vt = np.linalg.svd(F[picks])                          # one batched SVD
    Z = vt[:, -1, :] * np.sign(vt[:, -1, :].sum(axis=1, keepdims=True))
    ok = (sv[:, -1] >= 1e-9 * sv[:, 0]) & (Z.sum(axis=1) > 0)   # rank 2K - 1: a single ray
    ok &= np.all(Z @ F.T <= 1e-12, axis=1) & np.all(Z >= -1e-12, axis=1)
    Z = np.maximum(Z[ok], 0.0)
    Z /= Z.sum(axis=1, keepdims=True)
    _, first = np.unique(np.round(Z, 12), axis=0, return_index=True)
    return [(z[:K], z[K:]) for z in Z[np.sort(first)]]


def _reducible(n, d: int) -> bool:
    """A `lip` notion, or an `id-ldp` notion whose pair budgets take at most MAX_LEVELS levels
    (`IDLDP.levels`), none above MAX_LEVEL_EPS, from ID_MIN_D inputs on."""
    if isinstance(n, LIP):
        return True
    found = n.levels if isinstance(n, IDLDP) and d >= ID_MIN_D else None
    return found is not None and found[1].shape[0] <= MAX_LEVELS and float(found[1].max()) <= MAX_LEVEL_EPS


def _shape(problem: Problem):
    """The shape of the problem's one notion (`applies` holds)."""
    n = problem.privacy[0]
    if isinstance(n, LIP):
        return _LIPShape(problem.prior, float(n.epsilon))
    groups, RL = n.levels
    return _IDShape(problem.prior, groups, RL)


def applies(problem: Problem) -> bool:
    """One `lip` notion with G = X or one `id-ldp` notion on at most MAX_LEVELS budget levels
    (d >= ID_MIN_D); plain Hamming distortion; a prior with no zero entry."""
    return (len(problem.privacy) == 1 and problem.latent is None and problem.utility is not None
            and problem.utility.plain_hamming(problem) and bool(np.all(problem.prior > 0))
            and _reducible(problem.privacy[0], problem.d))


def top_outputs(problem: Problem, warm: Warm | None = None,
                time_limit: float | None = None) -> tuple[np.ndarray, float, dict] | None:
    """The optimal channel for Hamming distortion under one LIP (G = X) or ID-LDP notion by the
    reduced LP on the most probable outputs, with a bound on the whole problem (see the module
    docstring).

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
    shape = _shape(problem)
    S = np.sort(np.argsort(-P, kind="stable")[:min(d, math.ceil(math.exp(min(shape.eps, 700.0)) + 1.0))])
    if warm is not None and warm.S is not None:
        # the previous S (its basis fits) unless it has outgrown what was used (eps going down,
        # or another prior's top outputs): then the outputs used and this point's own
        whole, lean = np.union1d(S, warm.S), np.union1d(S, warm.used if warm.used is not None else S)
        S = whole if whole.size <= 2 * lean.size else lean
    h = warm.highs if warm is not None and warm.highs is not None else new_highs()
    if warm is not None:
        warm.highs = h
    rounds = 0
    while True:
        rounds += 1
        if rounds > ROUNDS or S.size > MAX_SHARE * d:       # (S = X: the whole LP, in another form)
            return None
        basis = warm.basis if warm is not None and warm.S is not None and np.array_equal(warm.S, S) else None
        solved = _reduced_lp(shape, P, S, h, basis, deadline)
        if solved is None:
            return None
        q_red, alpha_red, basis, row_of = solved
        alpha = _spread(P, row_of, alpha_red)
        terms = shape.terms(alpha, m > d)
        if terms[d:].size and terms[d] > PRICE_TOL:      # an output outside X would gain: not this method's
            return None
        outside = np.setdiff1d(np.arange(d), S)
        join = outside[terms[outside] > PRICE_TOL]
        if not join.size:
            break
        # the best few (all positive ones at once overshoot: 38 outputs where 9 are used, LIP d = 128)
        S = np.sort(np.r_[S, join[np.argsort(-terms[join], kind="stable")[:max(2, S.size // 2)]]])
    q = np.zeros((d, m))
    q[:, S] = q_red[row_of]
    accuracy_bound = math.fsum(alpha) + float(terms.max())
    allowance = 8 * d * np.finfo(float).eps * (float(np.abs(alpha).sum()) + float(np.abs(terms).max()) + 1.0)
    used = q.sum(axis=0)[S] > 0
    if warm is not None:
        warm.S, warm.used, warm.basis = S, S[used], basis
    return q, 1.0 - accuracy_bound - allowance, {"algorithm": "top-outputs", "outputs": int(used.sum()), "rounds": rounds}


def _spread(P: np.ndarray, row_of: np.ndarray, alpha_red: np.ndarray) -> np.ndarray:
    """Row multipliers of the whole problem: each input's reduced row's, a merged row's spread
    over its members in proportion to P."""
    mass = np.bincount(row_of, weights=P, minlength=alpha_red.size)
    return alpha_red[row_of] * P / mass[row_of]


def _reduced_lp(shape, P: np.ndarray, S: np.ndarray, h, basis, deadline: float = np.inf):
    """The Hamming problem on the reduced channel, built and solved like any other (`lp.build`,
    `lp.solve_highs` on the given HiGHS instance and basis): a row per input of S (in S's order),
    then one per group of the other inputs (its prior mass), a column per output of S; distortion
    0 on S's diagonal, 1 elsewhere. Returns (q, the row sums' multipliers alpha for the accuracy,
    HiGHS basis, each input's row) or None (HiGHS failed, or the deadline passed)."""
    d, k = P.size, S.size
    row_of = np.empty(d, dtype=int)
    row_of[S] = np.arange(k)
    out = np.setdiff1d(np.arange(d), S)
    merged, row_of[out] = np.unique(shape.groups[out], return_inverse=True)
    row_of[out] += k
    mass = np.bincount(row_of, weights=P)
    r = mass.size
    D = np.ones((r, k))
    D[np.arange(k), np.arange(k)] = 0.0
    reduced = Problem(prior=mass, privacy=[shape.notion(np.r_[shape.groups[S], merged])],
                      utility=Distortion("distortion", matrix=D), output_size=k)
    left = deadline - time.perf_counter()
    if left <= 0:
        return None
    prog = build(reduced)
    raw = solve_highs(prog, highs=h, basis=basis, time_limit=left, restrict=False)
    if raw.status != "optimal" or raw.z is None or raw.y_eq is None:
        return None
    # the distortion is sum_i mass_i - accuracy over row-stochastic channels, so the accuracy's
    # multiplier of row i's sum is mass_i less the distortion's (the first r equality rows)
    return np.maximum(prog.channel(raw.z), 0.0), mass - raw.y_eq[:r], raw.basis, row_of
