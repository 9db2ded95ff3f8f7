"""Distortion under one LIP (G = X) or per-level ID-LDP notion (and, past Hamming, LDP) on a few
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

Any other distortion (MAE, squared error, a user matrix; one prior) under one LIP, ID-LDP or LDP
notion takes the same column generation without the input merge (an input outside S may gain
from an output of S): the reduced LP keeps every input and the outputs of S, in one HiGHS model
grown in place (`_OutputsLP`), and its row multipliers beta bound every channel,
`E[D] >= sum(beta) - max_y max_post sum_x (beta_x / P_x - D[x, y]) post_x` (`priced`; under LDP
the inner max is a threshold on the ratio, `structured.LDPCone.support`). These optima use few
outputs too (MAE, Dirichlet(1) priors, eps 0.5..3: LDP 2-5 of 64, LIP and MinID-LDP 3-22 of 64),
and the whole LP does not know it: LIP MAE at d = 256 took 8-58 s.
"""

from __future__ import annotations

import functools
import itertools
import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..notions.ldp import IDLDP, LDP
from ..notions.lip import LIP
from ..problem import Problem
from ..utility import Distortion
from .lp import Program, build, cost_scale, new_highs, set_time_limit, solve_highs, whole_simplex
from . import parametric
from .result import clean
from .structured import Family, LDPCone, LIPBox

ROUNDS = 6
"""Pricing rounds before giving up (each adds the outputs with the largest positive terms)."""
GENERAL_ROUNDS = 40
"""Rounds of `_any_distortion` before giving up. Measured (MAE, Dirichlet(1) priors, eps 0.5..3):
6-16 at d = 64 / 128, 11-25 at d = 256."""
JOIN_SHARE = 2
"""`_any_distortion` adds at most max(2, outputs used / JOIN_SHARE) outputs a round (adding a
share of S instead grew S to 90 outputs where 7 were used, MinID-LDP MAE at d = 256)."""
MAX_SHARE = 0.75
"""Give up (the whole LP runs) once S holds more than this share of the outputs. Measured on 26
LIP budgets in 0.5..3 (Dirichlet(1) priors, solve with the LP as fallback against the LP alone):
d = 8 45 / 40 ms, d = 16 63 / 62 ms, d = 32 95 / 189 ms; with 0.5, d = 8 took 63 ms (7 points
tried the reduced LP in vain)."""
DROP_HELD = 2.0
"""A fresh `_any_distortion` (LIP, eps-free) deletes the unused outputs it holds (`_OutputsLP.drop`)
once it holds more than this many times the outputs in use, each output at most once (dropped
outputs that price positive join again and stay: with no such rule, squared error at d = 256,
eps = 2 cycled past GENERAL_ROUNDS to the whole LP, 49 s against 9 s). The model otherwise only
grows: squared error (eps = 1) held 69 outputs at the end at d = 256, 18 of them in use, and 126
at d = 512, where one run of 10,484 pivots on 52k rows took 18 s. Dirichlet(1) priors, eps = 1,
three seeds, one solve each (before -> after): MAE d = 256 0.74-1.46 -> 0.61-0.84 s, d = 512
4.7-13.3 -> 2.9-3.6 s; squared error d = 256 2.9-4.4 -> 3.1-3.5 s, d = 512 38-77 -> 35-52 s. Along
a sweep it is left to `_start` at each point: dropping within a point's rounds too made the LIP MAE
sweep at d = 128 slower (100 points, 7.9 -> 11.8-12.1 s), its held outputs deleted and joined
again."""
PRICE_TOL = 1e-12
"""An output joins S when its term exceeds this (accuracy units)."""
DINKELBACH_STEPS = 100
"""Dinkelbach steps per extreme ray in the ID-LDP pricing (it stops when the ratio stops rising;
3-6 steps are typical)."""
ID_MIN_D = 40
"""ID-LDP from this many inputs on: below, its extreme rays and pricing cost about what a fresh
whole LP costs, and more than a warm one along a sweep. MinID-LDP with the benchmark's three
levels, 26 scales in 0.5..3, this path against the LP alone: d = 16 96 / 75 ms, d = 24 107 / 118
ms, d = 32 181 / 189 ms, d = 40 142 / 328 ms, d = 64 116 / 336 ms; a 100-point scale sweep, this
path against the warm LP: d = 32 0.34 / 0.30 s, d = 40 0.34 / 0.38 s, d = 48 0.35 / 0.43 s, d = 64
0.35 / 0.40 s. Four levels (0.5, 0.8, 1.2, 2 nats), 13 scales: d = 40 9.5 / 13.2 ms a solve,
d = 128 10.9 / 45.8 ms, d = 256 15.2 / 240 ms."""
MAX_LEVEL_EPS = 30.0
"""ID-LDP budgets up to this. Measured: 24 random problems (d = 50..293, 2-4 levels, the least
budget 0.3..2 nats and the others up to 30, min / avg / max rules) had the whole LP's optimum, a
valid bound and a clean audit; larger budgets put ratios past e^30 ~ 1e13 into the reduced LP."""
MAX_LEVELS = 4
"""ID-LDP with at most this many budget levels: the extreme rays of the levels' cone come from the
spanning trees of a complete bipartite graph on 2K nodes (`_bipartite_trees`: 81 at K = 3, 4,096 at
K = 4, found once in 43 ms; K = 5 would try 2 million sets of facets), 0.25 / 4 ms a solve."""


@dataclass
class Warm:
    """What one point leaves the next along a sweep: its outputs S (with the LP's basis) and the
    ones its channel used, and the HiGHS instance; for a distortion other than Hamming, the
    outputs of each block of its model, in order (`_OutputsLP`); the best response with its bound
    and leakage (`closed._best_response_along`)."""

    S: np.ndarray | None = None
    used: np.ndarray | None = None
    basis: object = None
    highs: object = None
    blocks: list | None = None
    best: tuple | None = None
    model: object = None
    """Under LIP, the last point's `_OutputsLP` itself (eps-free: the next point changes its budget
    in place)."""
    outgrown: tuple | None = None
    """(the eps-free model, eps) where the reduced LP last outgrew MAX_SHARE of the outputs: the
    same problem at a budget at least as large skips it (`_any_distortion`)."""


class _FamilyShape:
    """A notion whose admissible posteriors are a closed-form family (`structured.Family`): every
    output is priced by the family's exact support."""

    def __init__(self, fam: Family):
        self.fam, self.P, self.eps = fam, fam.P, fam.eps

    def support(self, G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row g of G, `max g . post` over the admissible posteriors, and the maximizing
        posteriors as rows."""
        return self.fam.support(G)


class _LIPShape(_FamilyShape):
    """eps-LIP with G = X: one group (every input meets the same constraints); the optima seen use
    about e^eps + 1 outputs (where RR-LIP is infeasible)."""

    def __init__(self, P: np.ndarray, eps: float):
        super().__init__(LIPBox(P, eps))
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
        self.P, self.groups, self.RL = P, groups, RL
        self.eps = float(RL.min())
        """The optima seen use about e^eps + 1 outputs with eps the least budget (MinID-LDP, the
        benchmark's levels, scales 0.5..3: 3, 4, 9, 22 outputs)."""
        K, rays = RL.shape[0], _level_rays(RL)
        self.A, self.W = rays[:, :K][:, groups], (rays[:, K:] - rays[:, :K])[:, groups]
        """Per ray (rows) and input: a of its level, and b - a."""

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
        A, W = self.A, self.W
        zero = np.zeros((A.shape[0], 1))
        PW = np.hstack([zero, np.cumsum((P * W)[:, order], axis=1)])
        PWB = np.hstack([zero, np.cumsum((P * W * beta)[:, order], axis=1)])
        AN, AD = (A * beta) @ P, A @ P
        rest = (desc, PW, PWB, AN[:, None], AD[:, None], own * P[y] * A[:, y], P[y] * W[:, y], beta[y], own)
        lam = (rest[3] + rest[5]) / rest[4]                          # no input raised
        for _ in range(DINKELBACH_STEPS):
            nxt = _ratio(lam, *rest)
            if np.all(nxt <= lam):
                break
            lam = np.maximum(lam, nxt)
        return lam.max(axis=0)

    def support(self, G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row g of G, `max g . post` over the admissible posteriors `post = P u / P . u`, and
        the maximizing posteriors as rows.

        A vertex puts each input of level l at a[l] or b[l] of an extreme ray (a, b), and for a
        fixed ray the best inputs to raise are those with g_x above the ratio reached (as in
        `terms`): a prefix of the inputs in decreasing g. So the maximum is the best prefix of each
        ray, read off cumulative sums; exact, no iteration. Rows are taken SUPPORT_ENTRIES / d at a
        time."""
        G = np.atleast_2d(np.asarray(G, dtype=float))
        n, d = G.shape
        P, A, W = self.P, self.A, self.W
        out, V = np.full(n, -np.inf), np.zeros((n, d))
        step = max(1, SUPPORT_ENTRIES // d)
        for lo in range(0, n, step):
            g = G[lo:lo + step]
            order = np.argsort(-g, axis=1, kind="stable")
            rows = np.arange(g.shape[0])[:, None]
            Pg, Pw = (P * g)[rows, order], np.broadcast_to(P, g.shape)[rows, order]
            best, ray, k = np.full(g.shape[0], -np.inf), np.zeros(g.shape[0], dtype=int), np.zeros(g.shape[0], dtype=int)
            for r, (a, w) in enumerate(zip(A, W)):
                ws = w[order]
                zero = np.zeros((g.shape[0], 1))
                num = np.hstack([zero, np.cumsum(Pg * ws, axis=1)]) + ((P * g) @ a)[:, None]   # the first k raised
                den = np.hstack([zero, np.cumsum(Pw * ws, axis=1)]) + P @ a
                ratio = num / den
                top = ratio.argmax(axis=1)
                value = ratio[np.arange(g.shape[0]), top]
                better = value > best
                best[better], ray[better], k[better] = value[better], r, top[better]
            raised = np.zeros(g.shape, dtype=bool)
            raised[rows, order] = np.arange(d)[None, :] < k[:, None]
            u = A[ray] + W[ray] * raised
            out[lo:lo + step] = best
            V[lo:lo + step] = P * u / (u @ P)[:, None]
        return out, V


SUPPORT_ENTRIES = 1 << 20
"""Entries of G that `_IDShape.support` sorts and sums at once."""


def _ratio(lam, desc, PW, PWB, AN, AD, py_a, py_w, by, own):
    """`_IDShape.terms`' ratio `c . u / P . u` per ray (rows) and output (columns) at the inputs with
    ratio above lam: the base ratios r (`desc` = -r sorted ascending, each ray's prefix sums PW of
    P w and PWB of P w r in that order, totals AN of P a r and AD of P a), corrected at each
    row's own output y (ratio by + own, with its P_y a_y and P_y w_y)."""
    t = np.searchsorted(desc, -lam, side="left")             # how many r_x > lam
    base_in, own_in = by > lam, by + own > lam
    num = (AN + py_a + np.take_along_axis(PWB, t, axis=1) - np.where(base_in, py_w * by, 0.0)
           + np.where(own_in, py_w * (by + own), 0.0))
    den = AD + np.take_along_axis(PW, t, axis=1) - np.where(base_in, py_w, 0.0) + np.where(own_in, py_w, 0.0)
    return num / den


def _level_rays(RL: np.ndarray) -> np.ndarray:
    """The extreme rays (a, b) as rows, scaled to sum 1, of the cone `a_l <= b_l`, `b_l <= e^{RL[l, m]} a_m`
    (every l, m; RL the levels' pair budgets).

    Every facet ties an a to a b and every coordinate bounds every other, so the cone lies in the
    open orthant and `z = log(a, b)` maps it onto the polytrope `z_i - z_j <= w_ij` (modulo
    constants). A ray is extreme when its tight facets have rank 2K - 1; a set of two-coordinate
    facets has the same rank in both coordinates (a cycle of tight facets is dependent in both:
    its budgets sum to 0, its ratios multiply to 1), so the tight facets of an extreme ray contain
    a spanning tree of the complete bipartite graph between the a's and the b's. Each pair
    (a_l, b_m) has one facet, `z_{b_m} - z_{a_l} <= RL[m, l]`, and the pairs l = m also
    `z_{b_l} - z_{a_l} >= 0`: each spanning tree (K^{2K-2} of them; its reduced incidence matrix has
    determinant +-1) and each choice of value on its diagonal pairs gives z by one product with
    the tree's inverse (sums of budgets along its paths), and the z that meet every facet are the
    rays: exact in the log budgets, with no rank threshold."""
    K = RL.shape[0]
    RL = np.asarray(RL, dtype=float)
    n = 2 * K
    l, m = np.divmod(np.arange(K * K), K)                         # pair (a_l, b_m)
    picks, inv, owner, zero = _bipartite_trees(K)                 # (owner: each candidate's tree)
    # tight values: RL[m, l] on each pair of the tree, 0 on the diagonal pairs its bits say
    top = np.broadcast_to(RL.T.ravel(), (owner.size, K * K)).copy()
    top[:, np.arange(K) * (K + 1)] *= ~zero
    z = np.zeros((owner.size, n))
    z[:, 1:] = np.einsum("cij,cj->ci", inv[owner], np.take_along_axis(top, picks[owner], axis=1))
    hi = np.r_[K + m, np.arange(K)]                               # every facet z_hi - z_lo <= w
    lo = np.r_[l, K + np.arange(K)]
    w = np.r_[RL.T.ravel(), np.zeros(K)]
    z = z[np.all(z[:, hi] - z[:, lo] <= w + 1e-9, axis=1)]
    z = np.unique(z, axis=0)                                      # (the same vertex from several trees)
    Z = np.exp(z)
    return Z / Z.sum(axis=1, keepdims=True)


@functools.lru_cache(maxsize=8)
def _bipartite_trees(K: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The spanning trees of the complete bipartite graph between K a's and K b's, as their pairs
    (rows of indices `l K + m` of pair (a_l, b_m)), with the inverses of their incidence matrices
    (`+1` at b_m, `-1` at a_l, a_0's column dropped), and the candidates: a tree each, with K bits,
    bit l set where the tree's diagonal pair (a_l, b_l) is tight at 0 rather than at RL[l, l]
    (pairs not in the tree keep 0). 81 trees and 300 candidates at K = 3, 4,096 and 17,280 at
    K = 4."""
    n = 2 * K
    l, m = np.divmod(np.arange(K * K), K)
    inc = np.zeros((K * K, n))
    inc[np.arange(K * K), K + m] = 1.0
    inc[np.arange(K * K), l] = -1.0
    picks = np.array(list(itertools.combinations(range(K * K), n - 1)), dtype=np.intp).reshape(-1, n - 1)
    B = inc[picks][:, :, 1:]
    tree = np.abs(np.linalg.det(B)) > 0.5                         # +-1 for a spanning tree, else 0
    picks = picks[tree]
    has = (picks[:, :, None] == (np.arange(K) * (K + 1))[None, None, :]).any(axis=1)   # its diagonal pairs
    bits = ((np.arange(1 << K)[:, None] >> np.arange(K)[None, :]) & 1).astype(bool)
    t, c = np.nonzero(~np.any(bits[None, :, :] & ~has[:, None, :], axis=2))
    return picks, np.linalg.inv(B[tree]), t, bits[c]


def _reducible(n, d: int, hamming: bool = True) -> bool:
    """A `lip` notion, an `ldp` notion (not for Hamming: subset randomized response is its closed
    form), or an `id-ldp` notion whose pair budgets take at most MAX_LEVELS levels
    (`IDLDP.levels`), none above MAX_LEVEL_EPS, from ID_MIN_D inputs on."""
    if isinstance(n, LIP):
        return True
    if isinstance(n, LDP):
        return not hamming and LDP_ANY
    found = n.levels if isinstance(n, IDLDP) and d >= ID_MIN_D else None
    return found is not None and found[1].shape[0] <= MAX_LEVELS and float(found[1].max()) <= MAX_LEVEL_EPS


def _shape(problem: Problem):
    """The shape of the problem's one notion (`applies` holds)."""
    n = problem.privacy[0]
    if isinstance(n, LIP):
        return _LIPShape(problem.prior, float(n.epsilon))
    if isinstance(n, LDP):        # (any distortion but Hamming, whose optimum is subset RR in closed form)
        return _FamilyShape(LDPCone(problem.prior, float(n.epsilon)))
    groups, RL = n.levels
    return _IDShape(problem.prior, groups, RL)


def applies(problem: Problem, along: bool = False) -> bool:
    """One `lip` notion with G = X or one `id-ldp` notion on at most MAX_LEVELS budget levels
    (d >= ID_MIN_D), and plain Hamming distortion; or one of these (`ldp` too with `LDP_ANY`)
    and any other distortion under the problem's own prior with at least GENERAL_MIN_ENTRIES
    channel entries (`general`); a prior with no zero entry.

    along: the problem is a point of a sweep or batch, which solves the whole LP from the previous
    point's basis. There a distortion other than Hamming takes the reduced LP under LIP only, from
    ALONG_MIN_ENTRIES: each point needs 10-15 rounds of it again, and under MinID-LDP the warm
    whole LP is as fast or faster (MAE, 100 scales: d = 64 1.1 s against 3.7 s, d = 128 5.0 s
    against 24.5 s; 20 scales at d = 256 26 s both), while under LIP it was faster from d = 128
    on (100 points at d = 128 24.7 s against 11.9 s; 20 points at d = 256 373 s against 21 s) and,
    since its model is kept from point to point (`Warm.model`: there 11.4 s and 28.7 s), it is
    from GENERAL_MIN_ENTRIES on (`ALONG_MIN_ENTRIES`)."""
    u = problem.utility
    if not (len(problem.privacy) == 1 and problem.latent is None and isinstance(u, Distortion)
            and bool(np.all(problem.prior > 0))):
        return False
    if u.plain_hamming(problem):
        return _reducible(problem.privacy[0], problem.d)
    n = problem.privacy[0]
    return (general(problem) and _reducible(n, problem.d, hamming=False)
            and (not along or (isinstance(n, LIP) and problem.d * problem.m >= ALONG_MIN_ENTRIES)))


ALONG_MIN_ENTRIES = 1 << 11
"""Channel entries from which a sweep's point under LIP takes the reduced LP for a distortion
other than Hamming (`applies`). Once its model is kept from point to point (`Warm.model`) and a
point whose S outgrew MAX_SHARE of the outputs hands the larger budgets to the whole LP
(`Warm.outgrown`), it is as fast or faster from GENERAL_MIN_ENTRIES on. 100-point sweeps (eps
0.5..3, Dirichlet(1)) against 100 fresh `solve` calls, the whole LP along / the reduced one:
d = 48 MAE 4.39x / 5.42x, squared error 5.42x / 5.72x; d = 64 MAE 3.46x / 4.91x, squared error
4.15x / 5.80x (before `Warm.outgrown`, squared error lost: d = 64 21.8 / 25.3 ms a point, its last
25 points trying the reduced LP in vain). It was 8192 while each point built its model again."""


LDP_ANY = False
"""Whether LDP takes `_any_distortion` (off: the whole LDP program is small, one floor per output,
and the reduced LP's rounds do not pay for themselves). Measured (MAE, Dirichlet(1) priors, eps
0.5 / 1 / 2 / 3, reduced LP against the whole LP): d = 64 25 / 20 / 36 / 43 ms against
23 / 23 / 17 / 15 ms; d = 128 49 / 135 / 244 / 207 ms against 169 / 120 / 98 / 71 ms; d = 256
0.21 / 0.51 s against 1.39 / 1.19 s at eps 0.5 / 1, but 1.24 s (39 rounds) against 0.54 s at
eps 3 and gave up after 2.5 s at eps 2 (the LP: 0.94 s)."""

GENERAL_MIN_ENTRIES = 2048
"""Channel entries (d * m) from which a distortion other than plain Hamming takes the reduced LP
first (below, the whole LP costs a few milliseconds)."""


def general(problem: Problem) -> bool:
    """A distortion other than plain Hamming, under the problem's own prior (not a worst case over
    priors), on at least GENERAL_MIN_ENTRIES entries: `top_outputs` keeps every input and prices
    each output left out by its own column of D."""
    u = problem.utility
    return (isinstance(u, Distortion) and not u.plain_hamming(problem) and u.priors is None
            and u.prior_lower is None and problem.d * problem.m >= GENERAL_MIN_ENTRIES)


def top_outputs(problem: Problem, warm: Warm | None = None,
                time_limit: float | None = None) -> tuple[np.ndarray, float, dict] | None:
    """The optimal channel for a distortion under one LIP (G = X), LDP or ID-LDP notion by the
    reduced LP on a few outputs, with a bound on the whole problem (see the module docstring).

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
        The d x m channel, the lower bound on its expected distortion, and details (outputs
        used, rounds); None when S would outgrow `MAX_SHARE` of the outputs, the rounds run out,
        or HiGHS fails or runs out of time (then the whole LP runs).
    """
    if general(problem):
        return _any_distortion(problem, warm, time_limit)
    P = problem.prior
    d, m = problem.d, problem.m
    deadline = time.perf_counter() + (np.inf if time_limit is None else time_limit)
    shape = _shape(problem)
    S = _start(np.sort(np.argsort(-P, kind="stable")[:min(d, _outputs(shape.eps))]), warm)
    h = warm.highs if warm is not None and warm.highs is not None else new_highs()
    if warm is not None:
        warm.highs = h
    rounds = 0
    last = None             # the last round's (S, its channel's rows, each input's row, bound), for a time limit
    while True:
        rounds += 1
        if rounds > ROUNDS or S.size > MAX_SHARE * d:       # (S = X: the whole LP, in another form)
            return None
        basis = warm.basis if warm is not None and warm.S is not None and np.array_equal(warm.S, S) else None
        solved = _reduced_lp(shape, P, S, h, basis, deadline)
        if solved is None:
            return _stopped(None if last is None else (_whole(d, m, *last[:3]), last[3]), rounds - 1, warm, deadline)
        q_red, alpha, basis, row_of = solved
        terms = shape.terms(alpha, m > d)
        if terms[d:].size and terms[d] > PRICE_TOL:      # an output outside X would gain: not this method's
            return None
        accuracy_bound = math.fsum(alpha) + float(terms.max())
        allowance = 8 * d * np.finfo(float).eps * (float(np.abs(alpha).sum()) + float(np.abs(terms).max()) + 1.0)
        lower = 1.0 - accuracy_bound - allowance
        last = (S, q_red, row_of, lower)
        outside = np.setdiff1d(np.arange(d), S)
        join = outside[terms[outside] > PRICE_TOL]
        if not join.size:
            break
        # the best few (all positive ones at once overshoot: 38 outputs where 9 are used, LIP d = 128)
        S = np.sort(np.r_[S, join[np.argsort(-terms[join], kind="stable")[:max(2, S.size // 2)]]])
    q = _whole(d, m, S, q_red, row_of)
    used = q.sum(axis=0)[S] > 0
    if warm is not None:
        warm.S, warm.used, warm.basis = S, S[used], basis
    return q, lower, {"algorithm": "top-outputs", "outputs": int(used.sum()), "rounds": rounds}


def _whole(d: int, m: int, S: np.ndarray, q_red: np.ndarray, row_of: np.ndarray) -> np.ndarray:
    """The reduced Hamming LP's channel as one of the whole problem: each input takes its row of
    q_red (`_reduced_lp`'s row_of), on the outputs of S; the others unused."""
    q = np.zeros((d, m))
    q[:, S] = q_red[row_of]
    return q


def _stopped(last, rounds: int, warm: Warm | None, deadline: float):
    """What `top_outputs` returns when a reduced LP gives no answer: None (the whole LP runs), or,
    when the time limit ran out (not along a sweep) after at least one round, that round's channel
    (one of the whole problem: its outputs outside S unused) and its bound on the whole problem,
    which the caller audits and reports as they are (`closed.closed_form_result`, `partial`)."""
    if last is None or warm is not None or time.perf_counter() < deadline:
        return None
    q, _ = clean(last[0])
    if q is None:
        return None
    return q, last[1], {"algorithm": "top-outputs", "outputs": int((q.sum(axis=0) > 0).sum()), "rounds": rounds,
                        "stopped": "time_limit"}


def _outputs(eps: float) -> int:
    """How many outputs S starts with: the optima seen use about e^eps + 1."""
    return math.ceil(math.exp(min(eps, 700.0)) + 1.0)


def _start(S: np.ndarray, warm: Warm | None) -> np.ndarray:
    """The first S along a sweep: the previous point's (its basis fits) unless it has outgrown
    what was used (eps going down, or another prior's top outputs): then the outputs used and
    this point's own."""
    if warm is None or warm.S is None:
        return S
    whole, lean = np.union1d(S, warm.S), np.union1d(S, warm.used if warm.used is not None else S)
    return whole if whole.size <= 2 * lean.size else lean


def _any_distortion(problem: Problem, warm: Warm | None, time_limit: float | None):
    """`top_outputs` for a distortion other than plain Hamming: every input kept, S the outputs
    with a column (`_OutputsLP`, grown in place), each output outside S priced by the exact
    maximum of its term over the admissible posteriors (`priced`).

    The row-sum multipliers beta of a reduced LP are degenerate (many are optimal), and the
    extreme ones HiGHS returns price most outputs positive. So the pricing is stabilized
    (Wentges): first at the midpoint of the current beta and the beta of the best bound so far;
    where nothing prices positive there, at the current beta. Every beta priced gives a valid
    bound, and the best one is returned. Of the outputs that price positive, each one's best
    posterior names its least-loss output, which prices at least as high there: those join, once
    each, best first."""
    P, m = problem.prior, problem.m
    deadline = time.perf_counter() + (np.inf if time_limit is None else time_limit)
    shape = _shape(problem)
    D = problem.utility.matrix_for(problem)
    if warm is not None and warm.outgrown is not None and shape.eps >= warm.outgrown[1] \
            and warm.outgrown[0].takes(problem, D):
        # a larger budget spreads a LIP optimum over more outputs: the whole LP, without the
        # rounds that would find S outgrown again (squared error, d = 64, 100 points: the last 25)
        return None
    # the outputs whose constant channel costs least (each alone is feasible)
    S = _start(np.sort(np.argsort(P @ D, kind="stable")[:min(m, _outputs(shape.eps))]), warm)
    S = S[S < m]
    held = warm.model if warm is not None and isinstance(warm.model, _OutputsLP) else None
    if held is not None and held.takes(problem, D):
        # LIP: the previous point's model itself, less the unused outputs that `_start` left out
        # where their deletion keeps its basis, its budget changed in place; then the rest of S
        model = held
        model.problem = problem
        model.drop(np.setdiff1d(model.outputs(), S))
        before = model.outputs()
        model.set_budget(shape.eps)
        model.warm = True
        rest = np.setdiff1d(S, before)
        S = np.r_[before, rest]
        if rest.size:
            model.add(rest)
    elif warm is not None and warm.blocks is not None and (warm.model is not None) == _eps_free(problem) \
            and np.isin(before := np.concatenate(warm.blocks), S).all():
        # the previous point's model (of another prior, or past what `takes`), block by block, from
        # its last basis; then the rest of S
        model = _OutputsLP(problem, D)
        for outputs in warm.blocks:
            model.add(outputs)
        model.h.setBasis(warm.basis)
        model.warm = True
        rest = np.setdiff1d(S, before)
        S = np.r_[before, rest]
        if rest.size:
            model.add(rest)
    else:
        model = _OutputsLP(problem, D)
        model.add(S)
    best, center = -np.inf, None
    last = None             # the last round's channel and the best bound, for a time limit
    rounds = 0
    dropped = S[:0]
    while True:
        rounds += 1
        if rounds > GENERAL_ROUNDS or S.size > MAX_SHARE * m:
            if warm is not None and model.eps_free and S.size > MAX_SHARE * m:
                warm.outgrown, warm.model = (model, shape.eps), None
            return None
        solved = model.solve(deadline)
        if solved is None:
            if warm is not None:                # (HiGHS failed or ran out of time: the next point starts afresh)
                warm.model = None
            return _stopped(last, rounds - 1, warm, deadline)
        q, beta, objective = solved
        used = q.sum(axis=0) > 0
        outside = np.setdiff1d(np.arange(m), S)
        join = outside[:0]
        for b in ([beta] if center is None else [(center + beta) / 2, beta]):
            bound, terms, V, size = priced(shape, D, b)
            if bound > best:
                best, center = bound, b
            join = outside[terms[outside] > PRICE_TOL * size]
            if join.size:
                join = join[np.argsort(-terms[join], kind="stable")]
                a = np.argmin(V[join] @ D, axis=1)
                a = a[~np.isin(a, S)]
                if a.size:          # (at a stabilized beta an output of S may serve them best)
                    join = a[np.sort(np.unique(a, return_index=True)[1])]
                break
        last = (q, best)
        if not join.size or objective - best <= PRICE_TOL * size:
            break
        join = join[:max(2, int(used.sum()) // JOIN_SHARE)]
        if warm is None and model.eps_free and S.size > DROP_HELD * max(int(used.sum()), 1):
            gone = model.drop(np.setdiff1d(S[~used[S]], dropped, assume_unique=True))
            S, dropped = np.setdiff1d(S, gone, assume_unique=True), np.r_[dropped, gone]
        model.add(join)
        S = np.r_[S, join]
    if warm is not None:
        warm.model = model if model.eps_free else None
        warm.blocks, warm.basis = [outputs for outputs, _, _ in model.blocks], model.h.getBasis()
    S = np.sort(S)
    q, _ = clean(q)                 # solver noise, as on the whole LP's channel (its own audit follows)
    if q is None:
        return None
    used = q.sum(axis=0) > 0
    if warm is not None:
        warm.S, warm.used = S, S[used[S]]
    return q, best, {"algorithm": "top-outputs", "outputs": int(used.sum()), "rounds": rounds}


def _reduced_lp(shape, P: np.ndarray, S: np.ndarray, h, basis, deadline: float = np.inf):
    """The Hamming problem on the reduced channel, built and solved like any other (`lp.build`,
    `lp.solve_highs` on the given HiGHS instance and basis): a row per input of S (in S's order),
    then one per group of the other inputs (its prior mass), a column per output of S; distortion
    0 on S's diagonal, 1 elsewhere. Returns (q, the accuracy's multipliers alpha of the whole
    problem's row sums, HiGHS basis, each input's row) or None (HiGHS failed, or the deadline
    passed)."""
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
    # multiplier of row i's sum is mass_i less the distortion's (the first r equality rows); a
    # merged row's is spread over its members in proportion to P
    share = np.divide(raw.y_eq[:r], mass, out=np.zeros(r), where=mass > 0)
    alpha = (1.0 - share)[row_of] * P
    return np.maximum(prog.channel(raw.z), 0.0), alpha, raw.basis, row_of


def bound(problem: Problem, D: np.ndarray, beta: np.ndarray) -> float:
    """The bound `priced` gives with row-sum multipliers beta (any) on the expected distortion D of
    every channel of `problem` (one notion `_any_distortion` takes: LIP with G = X, LDP or ID-LDP
    on levels), as `merged` uses it."""
    return priced(_shape(problem), D, beta)[0]


def priced(shape, D: np.ndarray, beta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray, float]:
    """The bound that row-sum multipliers beta (any) give on the expected distortion of every
    channel of the whole problem, with each output's term and best posterior:

        E[D] >= sum(beta) - max_y term_y,   term_y = max_post sum_x (beta_x / P_x - D[x, y]) post_x

    (a channel's rows sum to 1 and its column y is `Pr(Y = y) post_y / P` with an admissible
    posterior and `sum_y Pr(Y = y) = 1`), less a float allowance. Returns (bound, terms, the best
    posteriors as rows, the size of the terms)."""
    P = shape.P
    G = (beta / P)[None, :] - D.T
    terms, V = shape.support(G)
    size = float(np.abs(beta).sum()) + float(np.abs(G).max()) + 1.0
    return math.fsum(beta) - float(terms.max()) - 8 * P.size * np.finfo(float).eps * size, terms, V, size


class _LIPBlock:
    """A block of outputs of `_OutputsLP` under LIP in eps-free form (`parametric`): for each output
    y, in order, the column t[y] (the floor l[y] = t[y] / g in units of its slack, g = e^2eps - 1)
    and then s[x, y] for every input, q[x, y] = s[x, y] + t[y] / g; its rows `s[x, y] - t[y] <= 0`
    for every (y, x), then `sum_x P_x s[x, y] - t[y] / (e^eps + 1) = 0` for every y (the floor is
    e^-eps Pr(Y = y))."""

    def __init__(self, outputs: np.ndarray, P: np.ndarray, D: np.ndarray, col0: int, floor0: int):
        self.outputs, self.col0, self.floor0 = outputs, col0, floor0
        self.d, self.k = P.size, outputs.size
        self.n = self.k * (self.d + 1)
        self.s_cost = (P[:, None] * D[:, outputs]).T                      # (k, d)
        self.t_cost = self.s_cost.sum(axis=1)                              # sum_x P_x D[x, y]
        self.g = np.nan

    @property
    def t_columns(self) -> np.ndarray:
        return (self.col0 + (self.d + 1) * np.arange(self.k)).astype(np.int32)

    @property
    def c(self) -> np.ndarray:
        """The block's costs at its budget."""
        return np.column_stack([self.t_cost / self.g, self.s_cost]).ravel()

    def channel(self, zb: np.ndarray) -> np.ndarray:
        Z = zb.reshape(self.k, self.d + 1)
        return (Z[:, 1:] + Z[:, :1] / self.g).T


class _OutputsLP:
    """The problem on the outputs of S (every input kept, D's columns of S) as one HiGHS model
    grown by blocks of outputs: rows the d row sums, then each block's own rows. The notions'
    rows never join two outputs (they are column-homogeneous), so a block is the program `lp.build`
    writes for its outputs alone, its row-sum rows mapped onto the model's. New columns enter
    nonbasic at 0 and their rows basic, so the last basis stays primal feasible and the simplex
    goes on from it (HiGHS keeps it across `addCols` / `addRows`). Its row-sum multipliers beta
    are what `priced` bounds the whole problem with.

    Under LIP (budgets up to `parametric.MAX_TOP`) the model is the eps-free one of
    `parametric.Parametric` on S (`_LIPBlock`): a column L (the total floor) in every row sum and
    the row `sum_y t[y] - g L = 0`, so that a new budget changes 1 + |S| coefficients and |S|
    costs and bounds (`set_budget`), and a sweep keeps the model from one point to the next
    (`Warm.model`) instead of building it again."""

    def __init__(self, problem: Problem, D: np.ndarray):
        import highspy

        self.problem, self.D, self.d = problem, D, problem.d
        self.blocks: list[tuple[np.ndarray, Program | _LIPBlock, int]] = []
        self.warm = False
        """Whether the next solve starts from another point's basis."""
        self.eps_free = _eps_free(problem)
        self.h = h = new_highs()
        h.setOptionValue("presolve", "off")
        self.inf = highspy.kHighsInf
        d, one = self.d, np.ones(self.d)
        if self.eps_free:                    # L (column 0) in every row sum; the total row (row d)
            h.addCol(0.0, 0.0, 1.0, 0, np.zeros(0, dtype=np.int32), np.zeros(0))
            h.addRows(d, one, one, d, np.arange(d, dtype=np.int32), np.zeros(d, dtype=np.int32), one)
            h.addRows(1, np.zeros(1), np.zeros(1), 1, np.zeros(1, dtype=np.int32), np.zeros(1, dtype=np.int32), -one[:1])
            self.set_budget(float(problem.privacy[0].epsilon))
        else:
            h.setOptionValue("user_objective_scale", cost_scale(problem.prior[:, None] * D))
            h.addRows(d, one, one, 0, np.zeros(d, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))

    def takes(self, problem: Problem, D: np.ndarray) -> bool:
        """Whether this eps-free model is `problem`'s at another budget (same prior and distortion)."""
        return (self.eps_free and _eps_free(problem)
                and (problem.prior is self.problem.prior or np.array_equal(problem.prior, self.problem.prior))
                and (D is self.D or np.array_equal(D, self.D)))

    def outputs(self) -> np.ndarray:
        """The outputs with a column, in the model's order."""
        return np.concatenate([outputs for outputs, _, _ in self.blocks]) if self.blocks else np.zeros(0, dtype=int)

    def set_budget(self, eps: float) -> None:
        """eps-free model: LIP's budget eps (the total's -g, each floor row's -1 / (e^eps + 1), the
        costs and bounds of t)."""
        h, g = self.h, parametric.slack(eps, lip=True)
        self.g, self.eps = g, eps
        h.changeCoeff(self.d, 0, -g)
        floor = -parametric.lip_floor_share(eps)
        for _, block, _ in self.blocks:
            assert isinstance(block, _LIPBlock)             # (an eps-free model has no other)
            block.g = g
            t = block.t_columns
            h.changeColsCost(t.size, t, block.t_cost / g)
            h.changeColsBounds(t.size, t, np.zeros(t.size), np.full(t.size, parametric.top(eps, lip=True)))
            for j, col in enumerate(t.tolist()):
                h.changeCoeff(block.floor0 + j, col, floor)
        s_cost = self.problem.prior[:, None] * self.D
        h.setOptionValue("user_objective_scale", cost_scale(np.r_[s_cost.ravel(), s_cost.sum(axis=0) / g]))

    def add(self, outputs: np.ndarray) -> None:
        """A block of columns for `outputs` (not yet in S)."""
        if self.eps_free:
            self._add_lip(outputs)
            return
        d, inf = self.d, self.inf
        prog = build(Problem(prior=self.problem.prior, privacy=self.problem.privacy,
                             utility=Distortion("distortion", matrix=self.D[:, outputs]), output_size=outputs.size))
        col0 = self.h.getNumCol()
        sums = prog.A_eq[:d].tocsc()
        self.h.addCols(prog.n, prog.c, np.where(np.isinf(prog.lb), -inf, prog.lb), np.where(np.isinf(prog.ub), inf, prog.ub),
                       sums.nnz, sums.indptr[:-1].astype(np.int32), sums.indices.astype(np.int32), sums.data)
        own = sp.vstack([prog.A_ub, prog.A_eq[d:]], format="csr")
        if own.shape[0]:
            lower = np.r_[np.full(prog.b_ub.size, -inf), prog.b_eq[d:]]
            upper = np.r_[prog.b_ub, prog.b_eq[d:]]
            self.h.addRows(own.shape[0], lower, upper, own.nnz, own.indptr[:-1].astype(np.int32),
                           (own.indices + col0).astype(np.int32), own.data)
        self.blocks.append((outputs, prog, col0))

    def drop(self, outputs: np.ndarray) -> np.ndarray:
        """eps-free model: delete the columns and rows of those `outputs` whose own columns and
        rows hold exactly as many basic variables as the output has rows (d + 1), and keep the
        basis of the rest, which then stays a basis of the smaller model (its basic count matches
        its rows, and the deleted entries were at 0: an unused output's). Returns the outputs
        deleted. HiGHS keeps the other entries' statuses through a deletion but marks the basis
        invalid: it is marked valid again here."""
        h, d = self.h, self.d
        if not outputs.size or not h.getBasis().valid:
            return outputs[:0]
        basic = np.asarray(h.getBasicVariables()[1])     # column j as j, row i as -1 - i
        col_basic = np.zeros(h.getNumCol(), dtype=np.int64)
        row_basic = np.zeros(h.getNumRow(), dtype=np.int64)
        col_basic[basic[basic >= 0]] = 1
        row_basic[-1 - basic[basic < 0]] = 1
        cut_cols = np.zeros(col_basic.size, dtype=bool)
        cut_rows = np.zeros(row_basic.size, dtype=bool)
        blocks: list[tuple[np.ndarray, Program | _LIPBlock, int]] = []
        found = []
        for outs, block, col0 in self.blocks:
            assert isinstance(block, _LIPBlock)
            k, ratio0 = block.k, block.floor0 - block.k * d
            count = (col_basic[col0:col0 + k * (d + 1)].reshape(k, d + 1).sum(axis=1)
                     + row_basic[ratio0:block.floor0].reshape(k, d).sum(axis=1) + row_basic[block.floor0:block.floor0 + k])
            gone = np.isin(outs, outputs) & (count == d + 1)
            cut_cols[col0:col0 + k * (d + 1)] = np.repeat(gone, d + 1)
            cut_rows[ratio0:block.floor0] = np.repeat(gone, d)
            cut_rows[block.floor0:block.floor0 + k] = gone
            found.append(outs[gone])
            if not gone.all():                          # the block's other outputs, where they now start
                lip = _LIPBlock(outs[~gone], self.problem.prior, self.D, col0 - int(cut_cols[:col0].sum()),
                                block.floor0 - int(cut_rows[:block.floor0].sum()))   # (its own ratio rows' cuts before)
                lip.g = block.g
                blocks.append((lip.outputs, lip, lip.col0))
        dropped = np.concatenate(found)
        if not dropped.size:
            return dropped
        h.deleteCols(int(cut_cols.sum()), np.flatnonzero(cut_cols).astype(np.int32))
        h.deleteRows(int(cut_rows.sum()), np.flatnonzero(cut_rows).astype(np.int32))
        kept = h.getBasis()
        kept.valid = True
        h.setBasis(kept)
        self.blocks = blocks
        return dropped

    def _add_lip(self, outputs: np.ndarray) -> None:
        """`_LIPBlock` columns and rows for `outputs`, at the model's budget."""
        h, d, k, P = self.h, self.d, outputs.size, self.problem.prior
        col0, row0 = h.getNumCol(), h.getNumRow()
        block = _LIPBlock(outputs, P, self.D, col0, row0 + k * d)
        block.g = self.g
        # columns, output by output: t[y] (in the total row), then s[., y] (in the row sums)
        index = np.column_stack([np.full(k, self.d), np.tile(np.arange(d), (k, 1))]).ravel().astype(np.int32)
        upper = np.column_stack([np.full(k, parametric.top(self.eps, lip=True)), np.ones((k, d))]).ravel()
        h.addCols(block.n, block.c, np.zeros(block.n), upper, block.n, np.arange(block.n, dtype=np.int32), index,
                  np.ones(block.n))
        # rows: s[x, y] - t[y] <= 0, then sum_x P_x s[x, y] - t[y] / (e^eps + 1) = 0
        t = block.t_columns
        s_col = (t[:, None] + 1 + np.arange(d)[None, :]).ravel()
        ratio_index = np.column_stack([s_col, np.repeat(t, d)]).ravel().astype(np.int32)
        ratio_value = np.tile([1.0, -1.0], k * d)
        floor_index = np.column_stack([s_col.reshape(k, d), t[:, None]]).ravel().astype(np.int32)
        floor_value = np.tile(np.r_[P, -parametric.lip_floor_share(self.eps)], k)
        h.addRows(k * d + k, np.r_[np.full(k * d, -self.inf), np.zeros(k)], np.zeros(k * d + k), ratio_index.size + floor_index.size,
                  np.r_[2 * np.arange(k * d), 2 * k * d + (d + 1) * np.arange(k)].astype(np.int32),
                  np.r_[ratio_index, floor_index].astype(np.int32), np.r_[ratio_value, floor_value])
        self.blocks.append((outputs, block, col0))

    def solve(self, deadline: float):
        """(the d x m channel, beta, the objective) or None (HiGHS failed, or the deadline passed)."""
        import highspy

        left = deadline - time.perf_counter()
        if left <= 0:
            return None
        h = self.h
        set_time_limit(h, left)      # (the time left alone stopped a LIP squared-error solve at d = 512 1.1 s early)
        # after the first solve, primal simplex from the last basis (added columns keep it feasible):
        # d = 256 MAE, LIP 0.6-2.8 s against 1.1-3.8 s with the dual simplex, MinID-LDP 0.8-1.8 s
        # against 0.7-3.1 s
        # a sweep's previous basis (its coefficients changed) lets HiGHS choose, with Devex pricing
        # (`lp.whole_simplex`): the default's first steepest-edge weights of a 9,000-row basis cost
        # more than its pivots (LIP MAE d = 128, the first run of six points: 26-169 ms for 43-165
        # pivots, against 23-76 ms; the 100-point sweep 23.9 s against 17.3 s)
        if self.warm:
            whole_simplex(h, warm=True)
        else:
            h.setOptionValue("simplex_strategy", 4 if len(self.blocks) > 1 else 1)
        self.warm = False
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        sol = h.getSolution()
        z, y = np.asarray(sol.col_value), np.asarray(sol.row_dual)
        q = np.zeros(self.D.shape)
        objective = 0.0
        for outputs, prog, col0 in self.blocks:
            zb = z[col0:col0 + prog.n]
            q[:, outputs] = np.maximum(prog.channel(zb), 0.0)
            objective += float(prog.c @ zb)
        return q, y[:self.d], objective


def _eps_free(problem: Problem) -> bool:
    """Whether `_OutputsLP` takes `problem` in eps-free form: one LIP notion within `parametric.MAX_TOP`."""
    n = problem.privacy[0]
    return isinstance(n, LIP) and parametric.top(float(n.epsilon), lip=True) <= parametric.MAX_TOP
