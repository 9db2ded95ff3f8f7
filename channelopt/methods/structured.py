"""Exact pricing over the admissible-posterior polytopes of LIP (G = X) and LDP
(docs/reliability.md, "Certified Bayes optima at large d").

In `u = post / P` coordinates (`post = P * u`, `P . u = 1`):

- LIP with G = X: `K = {u : lo <= u <= hi, P . u = 1}` with `lo = e^-eps`, `hi = min(e^eps, 1/P)`
  (LIP-TDSC Eq 9 read on one output). A box cut by one hyperplane: every vertex has all
  coordinates at a bound but one.
- LDP: `K = {u : max u <= e^eps min u, P . u = 1}`, the union over `tau in [1, e^eps]` of the
  boxes `[1/tau, e^eps/tau]^d` cut by the same hyperplane. Its vertices are
  `u_S = (1 + c 1_S) / (1 + c P(S))` with `c = e^eps - 1` (LIP-TDSC Def 1 read on one output).

The support function `sigma(g) = max_{v in K} g . v` is a greedy fill (a fractional knapsack) for
LIP and the best prefix of the order of g for LDP (a ratio of additive set functions is
maximized by an upper set of g). Pricing asks for `max_{v in K} phi(v) - mu . v`:

- bayes-mse, `phi(v) = (h . v)^2 = max_lam (2 lam h . v - lam^2)`: the pricing equals
  `max_lam sigma(2 lam h - mu) - lam^2`, a problem in one variable. sigma is convex and piecewise
  linear in lam, so its chord bounds it on an interval and branch and bound on lam is exact;
  where one vertex maximizes at both ends of an interval, sigma *is* its chord there.
- map, `phi(v) = max_x v_x`: `max_x sigma(e_x - mu)`, d support functions, exact.
- histogram-mse and mutual information (phi a sum of convex functions of the coordinates): branch
  and bound whose bound replaces each coordinate's convex term by its chord over the node's
  interval (the concave envelope of a sum of one-dimensional convex terms on a box). For LIP a
  node is a box on u and its bound is a greedy fill; for LDP a node fixes part of S and an
  interval of `1/tau`, and its bound is a fill over the undecided symbols. At small d, where
  that search stalls (many coordinates tied at the master's duals), both are priced exactly by
  a meet in the middle: mutual information under LDP over all 2^d sets (`_price_kl_meet`), LIP
  by branch and bound over pairs of half-sets (`_price_lip_meet`).

Beside the pricing, closed-form bounds on the gain of every channel, with columns that approach
them: LIP's chord bound (`LIPBox.chord_bound`) and, for mutual information under LDP, the KL bound
`I(X; Y) <= t - 1 - log t` (`kl_top`, tightened by keeping heavy symbols apart: `Split`).

Every bound is valid whatever the branching did: a search stopped early (node or time limit)
reports the largest bound of its open nodes.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
import time
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, lru_cache
from itertools import combinations
from typing import Literal

import numpy as np
from scipy import sparse

from ..closed_forms import rr_lip

PRICING_TOL = 1e-10
"""Relative tolerance of the pricing optimum (scaled by the size of phi)."""
MAX_NODES = 20_000
BATCH = 16
"""Open nodes (or intervals) expanded together in one vectorized step."""
BOX_BATCH = {"lip": (128, 128), "ldp": (32, 128)}
"""Per family, BATCH of `_box_bnb` in a search (stop.ratio < 1) and in a proof search (ratio >= 1),
where every node above the best value is expanded anyway and the count does not move with it.
Replayed on the recorded pricing calls of three d = 64 solves (same dual points, one process,
idle machine), with the children built as arrays a batch at a time: LDP histogram-MSE (Dirichlet
eps = 2) 15.4 -> 9.8 s, 505k -> 506k nodes, the proofs' counts unchanged; LIP histogram-MSE /
mutual information (Zipf eps = 2 / 1) 33.5 -> 26.1 s and 37.3 -> 29.8 s, +0.2% / +0.1% nodes, against
one batch of 16 and a node loop. 128 in LDP's searches inflated their counts (5 of 19 stopped at
the node budget against 0); in LIP's it costs +1.2% / +0.4% nodes and is 22% / 18% faster than
32 (with the nodes stored in `_Nodes`: 21.6 -> 16.8 s and 20.4 -> 16.8 s)."""
NEAR_TIES = (14, 32)
"""(half, trials) of `LIPBox.near_ties`: two sets of 14 coordinates (16,384 subsets each), 32
trials a call."""
NEAR_TIES_FINE = 16
"""`LIPBox.near_ties`'s sets when `fine` (65,536 subsets each; 262 ms a call at d = 64 against 65
coarse, measured after its sums were sorted by doubling, 575 / 111 ms before on the same machine):
the sums come 16 times closer to the mass a vertex must fill, which the last 1e-10's of a master
on the chord bound's plateau need (mutual information, Zipf(1.1), d = 64, eps = 1: 5.4-6.2 s
against 12.5-15.7 s on three seeds, one at a time). Used everywhere, it cost more than it gained
(mutual information, Zipf eps = 4: 8.9 -> 10.9 s), hence `colgen.NEAR_CLOSE`."""
VERTEX_MAX_D = 16
"""LDP with a separable utility uses its 2^d - 2 closed-form vertices up to this d."""
MEET_MAX_D, MEET_AFTER = 40, 2_000
"""LDP mutual information is priced exactly by `_price_kl_meet` up to this d (2^20 subsets a half)
when the box branch and bound has not closed in MEET_AFTER nodes. A step costs 0.02 s at d = 32,
0.14 s at 36 and 0.8 s at 40, and a call mostly two steps. d = 38, Dirichlet and Zipf, eps = 4: 25 /
19 s certified, against 49 / 50 s ending 2.1e-6 / 5.4e-8 from the bound with MEET_MAX_D = 36."""
LIP_MEET_MAX_D = 36
"""LIP's separable pricings go to `_price_lip_meet` up to this d when the box branch and bound has
not closed in MEET_AFTER nodes (its first level is d 2^(d/2 - 1) ranges: 1.2 s a call at d = 36).
With 20,000 nodes first instead: mutual information, Dirichlet eps = 1, d = 32 / 36, 5.4 / 19.5 ->
9.3 / 26.0 s, and histogram-MSE, Dirichlet eps = 2, d = 36 ended 2e-6 from its bound at 30 s."""
DINKELBACH_STEPS = 40
"""Most ratio updates of `_price_kl_meet` (each one a meet in the middle; it stops when the ratio
no longer rises, typically after 3 to 6)."""
TAU_WIDE = 1.001
"""LDP nodes whose tau interval is wider than this ratio split tau first. In a proof search (ratio 1:
the level method's exact pricing) a node also splits tau when its bound exceeds the bound at its
tau midpoint by more than its largest chord gap. On the exact pricings of two d = 64 solves
(histogram-MSE, recorded, same dual points): 573k -> 1.1k nodes (Zipf eps = 0.5, 15 s -> 0.1 s) and
717k -> 178k (Dirichlet eps = 1). With the ratio alone the node counts swing by 100x with it
(1.0001: 18k, 1.00001: 2.1M); the slack test alone lost Dirichlet (480k)."""
LATTICE_MAX, LATTICE_WORK, LATTICE_COLUMNS = 10**6, 3 * 10**8, 16
"""`LIPBox.units`: the largest common denominator of a prior of counts, and the largest
`d^2 sum(n)` priced by `_price_lattice` (about a second a call); it returns up to LATTICE_COLUMNS
columns a call."""
LOW_LOSS_TUNING, LOW_LOSS_DEPTH = 32, (3, 4)
"""`LIPBox.low_loss`: the size of each of its two random tuning sets and how many coordinates of
each it flips: 3 (5,489 subset sums a side, 0.6 ms a column) while its columns' median loss is
within the pricing tolerance, else 4 (41,449 a side, 1.7e9 combinations, 5-8 ms a column).
Histogram-MSE's loss scales with the free coordinate's (small) width, so 3 is enough for it at
d = 256 (2.3 s against 8.5 s, eps = 1); mutual information's does not (3 did not close in 32 s)."""
FACE_VERTICES, FACE_BINDING = 64, 4
"""`LIPBox.face_vertices`: the subsets on each side of cap it turns into vertices, per binding face,
and the most faces (those of largest bound) it takes them from (their sums enumerated again)."""
FACE_SUMS, FACE_TRIES, FACE_REFINE = 1 << 18, 16, 64
"""`LIPBox.face_loss`: the most subset sums enumerated on each side of a face's meet in the middle
(a face that binds has few: 19,350 x 20,417 on Zipf(1.1), d = 64, eps = 1; at most 79,079 on the
d = 256 benchmark cells where a face binds; looser faces are abandoned sooner), the most
faces enumerated (tightest first), and the most free coordinates whose bound is made exact per face
(the others keep a smaller valid one). Without the last two, d = 1024, Dirichlet(5), eps = 6
enumerated 218 faces in 16 s (now at most 0.34 s on 144 priors tried, d = 64..1024, eps <= 6)."""
LOW_LOSS_KEEP = 16
"""`LIPBox.low_loss` keeps, of the matches with the LOW_LOSS_KEEP least losses, the one with the
largest reduced cost."""
RUN_ENTRIES = 1 << 24
"""`Family.runs` (the master's starting columns along an order) keeps its columns' entries (columns
times d) within this many by taking every k-th start of a run (`run_stride`): LDP's runs are about
17 d columns (every run of 1-7 symbols and of each power of 2), 68k at d = 4000, whose master took
15-28 s to set up and 12.5 GB at peak, past a 10 s limit by 27-31 s. Every run is kept up to
d = 1024 (LDP, 15.7M entries) and d = 2896 (LIP, 2 d columns)."""


def run_stride(rows: int, d: int) -> int:
    """The step between kept starts of `Family.runs` for `rows` runs of d entries (RUN_ENTRIES)."""
    return max(1, -(-rows * d // RUN_ENTRIES))


MAX_COLUMNS = 200
"""Columns with a positive reduced cost returned by one pricing call, best first. Measured on
bayes-mse under LIP at d = 256 (Dirichlet and Zipf priors, eps 0.5..4): 40 columns needed up to
1,900 rounds (57 s, eps = 1); 200 certify all eight cases in at most 15 s. The separable pricings
rarely find more than 40, so they are unchanged."""


@dataclass
class Priced:
    """One pricing call: the best value found, a valid upper bound on `max_K phi(v) - mu . v`,
    and admissible posteriors with a positive reduced cost (rows of `columns`)."""

    best: float
    upper: float
    columns: np.ndarray
    nodes: int = 0
    stopped: str = ""


@dataclass
class _Stop:
    """When a branch and bound may stop: closed to tol, good enough (ratio), or out of budget."""

    tol: float | None
    ratio: float
    deadline: float
    max_nodes: int

    def resolve(self, scale: float) -> float:
        return PRICING_TOL * scale if self.tol is None else self.tol

    def done(self, best: float, top: float, tol: float) -> bool:
        """top: the largest open bound."""
        return top <= best + tol or (self.ratio < 1.0 and best > tol and best >= self.ratio * top)

    def out(self, nodes: int) -> str:
        if nodes >= self.max_nodes:
            return "max_nodes"
        return "time_limit" if time.perf_counter() > self.deadline else ""


class _Columns:
    """Keep the best candidate columns by reduced cost."""

    def __init__(self, d: int, tol: float):
        self.d, self.tol = d, tol
        self.vals: list[np.ndarray] = []
        self.rows: list[np.ndarray] = []
        self.best = -np.inf
        self.stored = 0

    def add(self, values: np.ndarray, V: np.ndarray) -> None:
        if values.size:
            self.best = max(self.best, float(values.max()))
        keep = values > self.tol
        if keep.any():
            self.vals.append(values[keep])
            self.rows.append(V[keep])
            self.stored += int(keep.sum())
            if self.stored > 8 * MAX_COLUMNS:           # keep memory and the final sort small
                vals, rows = np.concatenate(self.vals), np.vstack(self.rows)
                best = np.argsort(-vals, kind="stable")[:4 * MAX_COLUMNS]
                self.vals, self.rows, self.stored = [vals[best]], [rows[best]], best.size

    def top(self) -> np.ndarray:
        """The best MAX_COLUMNS distinct candidates, best first."""
        if not self.vals:
            return np.zeros((0, self.d))
        vals, rows = np.concatenate(self.vals), np.vstack(self.rows)
        order = np.argsort(-vals, kind="stable")
        rows = rows[order]
        _, first = np.unique(np.round(rows, 13), axis=0, return_index=True)
        return rows[np.sort(first)][:MAX_COLUMNS]


def _xlogx(s: np.ndarray) -> np.ndarray:
    s = np.asarray(s, dtype=float)
    return np.where(s > 0, s * np.log(np.where(s > 0, s, 1.0)), 0.0)


SEPARABLE = {"histogram-mse": lambda s: s * s, "mutual-information": _xlogx}
"""phi(v) = sum_x f(v_x) for these Bayes utilities (histogram-MSE gain, -H)."""
SLOPE = {"histogram-mse": lambda s: 2.0 * s, "mutual-information": lambda s: np.log(np.maximum(s, 1e-300)) + 1.0}
"""f' of SEPARABLE (posteriors of LIP and LDP are positive wherever the prior is)."""


class Family:
    """Admissible posteriors of one notion with a closed-form polytope (base of LIPBox, LDPCone)."""

    name = ""
    last_loss = 0.0
    """The median chord loss of `low_loss`'s last columns (0 before any: the cheap search first)."""

    def __init__(self, P: np.ndarray, eps: float):
        self.P = np.asarray(P, dtype=float)
        self.d = self.P.size
        self.eps = float(eps)
        self.budget = eps
        """The budget as given (a family on merged symbols is built from it)."""
        self.eps_lower = self.eps
        """The lower side's budget (LIPBox's lo = e^-eps_lower; ALIP's own, else eps)."""

    @property
    def grr_eps(self) -> float:
        """The budget of the GRR that `grr` writes down (the smaller side: admissible for the family)."""
        return min(self.eps_lower, self.eps)

    def support(self, G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(sigma(g) for each row g of G, the maximizing posteriors as rows)."""
        raise NotImplementedError

    def grr(self) -> tuple[np.ndarray, np.ndarray]:
        """(posteriors as rows, their probabilities) of generalized randomized response at eps,
        `q[x, y] = e^eps^[x = y] / (e^eps + d - 1)`: `post_y = P (1 + c 1_y) / (1 + c P_y)` with
        probability `(1 + c P_y) / (d + c)`, c = e^eps - 1. It is eps-LDP, so its posteriors are
        admissible for eps-LIP too (u = post / P lies in [1 / (1 + c P_y), e^eps / (1 + c P_y)])."""
        c = np.exp(self.grr_eps) - 1.0
        V = self.P[None, :] * (1.0 + c * np.eye(self.d))
        return V / V.sum(axis=1, keepdims=True), (1.0 + c * self.P) / (self.d + c)

    def price(self, kind: str, mu: np.ndarray, h: np.ndarray | None = None, deadline: float = np.inf,
              max_nodes: int | None = None, tol: float | None = None, ratio: float = 1.0) -> Priced:
        """`max_{v in K} phi(v) - mu . v` for a Bayes utility `kind` (h: the target of bayes-mse),
        with a valid upper bound.

        tol: absolute tolerance (default PRICING_TOL times the size of phi). ratio < 1 stops the
        search as soon as the best value found is at least `ratio` times the largest open bound
        (enough for a column generation round; the bound returned stays valid).
        """
        stop = _Stop(tol, ratio, deadline, MAX_NODES if max_nodes is None else max_nodes)
        if kind == "bayes-mse":
            return _price_mse(self, np.asarray(h, dtype=float), mu, stop)
        if kind == "map":
            return _price_map(self, mu)
        return self._price_separable(SEPARABLE[kind], mu, stop)

    def _price_separable(self, f, mu, stop) -> Priced:
        raise NotImplementedError

    def ascend(self, kind: str, mu: np.ndarray, V: np.ndarray, steps: int = 50,
               deadline: float = np.inf) -> np.ndarray:
        """Admissible posteriors reached from the rows of V by successive linearization of the
        convex `phi(v) - mu . v` (separable phi): v <- argmax_{v in K} grad . v never decreases it
        (convexity) and stops at a vertex that is a local maximum of the linearization. A cheap
        heuristic pricing: no bound, only columns.

        Each row is its own sequence: a row that no longer moves (to 1e-15) is left out of the
        next steps. At the deadline every row stops where it is (an admissible posterior still:
        a row of V or a support point)."""
        grad = SLOPE[kind]
        V = np.array(np.atleast_2d(V), dtype=float)
        moving = np.arange(len(V))
        for _ in range(steps):
            if not moving.size or time.perf_counter() > deadline:
                break
            _, new = self.support(grad(V[moving]) - mu[None, :])
            moved = ~np.all(np.abs(new - V[moving]) <= 1e-15, axis=1)
            moving = moving[moved]
            V[moving] = new[moved]
        return V

    def prefers_vertices(self, kind: str) -> bool:
        """Whether the closed-form vertex set beats column generation for this utility."""
        return False

    def initial(self, h: np.ndarray | None = None) -> np.ndarray:
        """Starting columns: the prior; for each x, the admissible posterior with the most mass on
        x (GRR's posteriors for LDP); and the posteriors that favour a run of consecutive symbols
        in the order of the target h (bayes-mse) or else of the prior (`runs`): without them the
        master can sit at the trivial channel through many degenerate rounds."""
        _, V = self.support(np.eye(self.d))
        out = [self.P[None, :], V, self.closed_form()]
        key = h if h is not None and np.ptp(h) > 0 else self.P
        out.append(self.runs(np.argsort(np.argsort(key, kind="stable"), kind="stable")))
        return np.vstack(out)

    def runs(self, rank: np.ndarray) -> np.ndarray:
        """Admissible posteriors favouring runs of symbols consecutive in `rank` (rows); at large d
        from every k-th start only (`run_stride`)."""
        raise NotImplementedError

    def closed_form(self) -> np.ndarray:
        """The posteriors of the notion's closed-form mechanism, where they are admissible."""
        return np.zeros((0, self.d))

    def simple_channels(self) -> list[tuple[str, np.ndarray, np.ndarray]]:
        """The closed-form channels of the family that are feasible, as (name, posteriors as rows,
        their probabilities): GRR (`grr`), always."""
        return [("generalized randomized response", *self.grr())]

    def chord_bound(self, kind: str) -> float:
        """A closed-form upper bound on the gain `sum_y Pr(y) phi(post_y)` of every channel
        (separable phi), or inf where the family has none."""
        return np.inf

    def face_loss(self, kind: str) -> float:
        """A lower bound on what every channel falls short of `chord_bound` by (0 where the family
        knows none): `chord_bound - face_loss` is a bound too."""
        return 0.0

    def face_vertices(self, kind: str) -> np.ndarray:
        """Vertices (rows) of least loss where `face_loss` binds; none by default."""
        return np.zeros((0, self.d))

    def shape_bound(self, kind: str, deadline: float = np.inf) -> tuple[float, np.ndarray | None]:
        """(a bound on the gain of every channel, the dual point it holds at) for a separable phi
        without `chord_bound`, from a relaxation that needs no branching; (inf, None) where the
        family has none."""
        return np.inf, None

    def design(self, kind: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(posteriors as rows, their probabilities) of a channel built in closed form near
        `chord_bound`, empty where the family has none: what the column generation returns when
        it has not found better within its time."""
        return np.zeros((0, self.d)), np.zeros(0)

    def low_loss(self, kind: str, mu: np.ndarray | None, n: int, rng: np.random.Generator,
                 deadline: float = np.inf, depth: int = LOW_LOSS_DEPTH[1]) -> np.ndarray:
        """Vertices (rows) that nearly attain `chord_bound`, chosen by their reduced cost at the
        duals mu (None: the chord slopes); none where the family has no such bound."""
        return np.zeros((0, self.d))

    def near_ties(self, kind: str, mu: np.ndarray, rng: np.random.Generator, fine: bool = False) -> np.ndarray:
        """Vertices (rows) found by a heuristic search at the duals mu where the branch and bound's
        search gave up (separable phi; `LIPBox.near_ties`; `fine`: a finer, costlier search, for a
        master close to its bound); none where the family has no such search."""
        return np.zeros((0, self.d))


class LIPBox(Family):
    """eps-LIP with G = X: `lo <= u <= hi` on `P . u = 1`, lo = e^-eps, hi = e^eps (capped at
    1 / P). With eps = (lower, upper), ALIP with G = X (ALIP Def 1): lo = e^-lower, hi = e^upper;
    `eps` is then the upper budget and GRR's budget the smaller one (`Family.grr`)."""

    name = "lip"

    def __init__(self, P, eps):
        lower, upper = (eps, eps) if np.ndim(eps) == 0 else (float(eps[0]), float(eps[1]))
        super().__init__(P, upper)
        self.budget = eps
        self.eps_lower = float(lower)
        self.lo = np.full(self.d, np.exp(-self.eps_lower))
        self.hi = np.minimum(np.exp(self.eps), 1.0 / self.P)
        self.band = (1.0 - math.exp(-self.eps_lower)) / (math.exp(self.eps) - math.exp(-self.eps_lower))
        """The prior mass an admissible output holds at its upper bound, in z = (u - lo) / (hi - lo):
        every u in K has `P . z = band` (where hi = e^eps throughout), so bayes-mse's optimum splits
        the prior into about 1 / band bands along h (docs/reliability.md)."""
        self._face_cache: dict = {}
        self.drift = np.zeros(self.d)
        """How far `low_loss`'s columns so far have strayed from the patterns' target mean (their
        flips favour some coordinates): later patterns are drawn that much the other way."""

    def support(self, G):
        G = np.atleast_2d(np.asarray(G, dtype=float))
        n = G.shape[0]
        lo = np.broadcast_to(self.lo, G.shape)
        hi = np.broadcast_to(self.hi, G.shape)
        V = _fill(np.broadcast_to(self.P, G.shape), lo, hi, G)
        return np.einsum("ij,ij->i", G, V), V.reshape(n, self.d)

    def closed_form(self):
        """RR-LIP (LIP-TDSC Thm 3): q[x, x] = 1 - (1 - P_x) e^-eps, q[x, y] = P_y e^-eps; its
        posteriors, the admissible ones (all of them where the theorem's condition holds). Then
        GRR's, `post_y ~ P (1 + (e^eps - 1) 1_y)`, always admissible (eps-LDP implies eps-LIP):
        with them the master starts at least at GRR's gain (at d = 1024 the other starting
        columns mix to nothing better than the trivial channel)."""
        V, _, ok = self._rr_lip()
        return np.vstack([V[ok], self.grr()[0]])

    def simple_channels(self):
        """GRR, and RR-LIP (LIP-TDSC Thm 3) where every one of its posteriors is admissible."""
        V, lam, ok = self._rr_lip()
        return super().simple_channels() + ([("RR-LIP", V, lam)] if ok.all() else [])

    def _rr_lip(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """RR-LIP's posteriors (rows), their probabilities and which are admissible."""
        P = self.P
        q = rr_lip(P, self.eps)
        lam = P @ q
        V = (P[:, None] * q / lam[None, :]).T
        U = V / P
        ok = np.all(U >= self.lo * (1 - 1e-12), axis=1) & np.all(U <= self.hi * (1 + 1e-12), axis=1)
        return V, lam, ok

    def runs(self, rank):
        d = self.d
        a = np.arange(0, d, run_stride(2 * d, d))[:, None]
        r = rank[None, :].astype(float)
        up = np.where(r >= a, -(r - a), -(d + a - r))        # a, a+1, ..., then a-1, a-2, ...
        down = np.where(r <= a, -(a - r), -(d + r - a))      # a, a-1, ..., then a+1, ...
        _, V = self.support(np.vstack([up, down]))       # the fill follows the priority order
        return V

    def _price_separable(self, f, mu, stop):
        if self.units is not None:
            return _price_lattice(self, f, mu, stop)
        if self.d > LIP_MEET_MAX_D:
            return _box_bnb(self.P, f, mu, stop, self.lo, self.hi)
        # the box search first (most calls close in a few hundred nodes), then the paired one
        first = _box_bnb(self.P, f, mu, dataclasses.replace(stop, max_nodes=min(stop.max_nodes, MEET_AFTER)),
                         self.lo, self.hi)
        if first.stopped != "max_nodes":
            return first
        return _price_lip_meet(self, f, mu, stop, first.best, first.upper)

    @cached_property
    def meet_halves(self) -> list[tuple]:
        """`_price_lip_meet`'s two halves of coordinates (wide and narrow widths in each), with
        their subsets sorted by width sum (`_sorted_subsets`)."""
        w = self.P * self.hi - self.P * self.lo              # (b - a of `_price_lip_meet`)
        wide, narrow = np.array_split(np.argsort(-w, kind="stable"), 2)
        return _sorted_subsets(w, [np.sort(np.r_[wide[::2], narrow[1::2]]), np.sort(np.r_[wide[1::2], narrow[::2]])])

    @cached_property
    def units(self) -> np.ndarray | None:
        """Integers n with `P = n / sum(n)` when the prior's masses are counts over a common
        denominator of at most LATTICE_MAX, no coordinate's upper bound is cut (`e^eps P_x < 1`)
        and `d^2 sum(n) <= LATTICE_WORK`; else None. Then every width `w_x = (e^eps - e^-eps) P_x`
        is n_x units, and a vertex's coordinates at their upper bound sum to an integer number of
        units: `_price_lattice` prices exactly by dynamic programming over those integers."""
        if np.any(np.exp(self.eps) * self.P >= 1.0):
            return None
        N = 1
        for p in self.P:
            N = math.lcm(N, Fraction(float(p)).limit_denominator(LATTICE_MAX).denominator)
            if N > LATTICE_MAX:
                return None
        n = np.rint(self.P * N)
        if np.any(n < 1) or np.abs(n / N - self.P).max() > 1e-12 * self.P.max() \
                or self.d ** 2 * n.sum() > LATTICE_WORK:
            return None
        return n.astype(np.int64)

    def extent(self) -> tuple[np.ndarray, np.ndarray]:
        """The range `[a_x, b_x]` of each posterior coordinate over K (mass units): the box
        `[P lo, P hi]` cut by what the other coordinates' bounds leave of the unit mass."""
        a, b = self.P * self.lo, self.P * self.hi
        return np.maximum(a, 1.0 - (b.sum() - b)), np.minimum(b, 1.0 - (a.sum() - a))

    def _chords(self, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(a, b, slope): each coordinate's range (`extent`) and the slope of f's chord over it."""
        f = SEPARABLE[kind]
        a, b = self.extent()
        width = b - a
        return a, b, np.where(width > 0, (f(b) - f(a)) / np.where(width > 0, width, 1.0), 0.0)

    def chord_bound(self, kind):
        """`sum_x chord_x(P_x)`, with chord_x the chord of f over the coordinate's range: every
        admissible posterior has `f(v_x) <= chord_x(v_x)` (f convex) and chords are affine, so
        `sum_y Pr(y) phi(post_y) <= sum_x chord_x(sum_y Pr(y) post_y[x]) = sum_x chord_x(P_x)`.
        It is the dual point `mu = chord slopes`, whose pricing maximum is known in closed form.
        A channel attains it when every posterior has all coordinates at a bound: equality holds
        only through exact subset sums of the coordinates' widths, so it is approached (`low_loss`),
        and the column generation stops once the gap to it is within its target."""
        a, _, slope = self._chords(kind)
        return float(np.sum(SEPARABLE[kind](a) + slope * (self.P - a)))

    def face_loss(self, kind):
        """A lower bound on the chord loss `sum_y Pr(y) sum_x (chord_x - f)(post_y[x])` of every
        channel, from the face where one heavy coordinate x sits at its top.

        The gain of a channel is `chord_bound` less that loss, and a channel is WLOG a mixture of
        vertices (phi convex), each with at most one coordinate k strictly inside its range, so
        its loss is `gap_k(v_k - a_k)`, `gap_k(m) = chord_k(a_k + m) - f(a_k + m)` (concave, 0 at
        m = 0 and m = w_k). Fix x and let l(t) be the least loss of a vertex with `v_x = t`:
        the mixture's loss is at least `E l(v_x)`, hence (Jensen) at least the lower convex
        envelope of l at `E v_x = P_x`. With x at its top, the other coordinates share
        `cap = 1 - sum a - w_x` of mass: if few subsets of their widths fit under it, none fills
        it exactly and every such vertex pays `L_x > 0`; with x inside its range (the others at
        their bounds) x pays `gap_x`, and x comes no closer to its top than the least overshoot o
        of a subset over cap. Concavity of the gaps leaves three candidates for the envelope at
        P_x (the other coordinates' least loss 0 at `v_x = a_x`):
        `min(gap_x(P_x - a_x), pi_x L_x, gap_x(w_x - o) (P_x - a_x) / (w_x - o))`, with
        `pi_x = (P_x - a_x) / w_x`; `L_x >= min_k min(gap_k(d_lo), gap_k(w_k - d_hi_k))`, where
        d_lo is how far the largest subset sum under cap falls short of it and d_hi_k how far the
        least one above `cap - w_k` passes that (subsets of all the others: more sums, so a
        smaller bound). Subset sums come from a meet in the middle over the widths that fit;
        faces are tried from the tightest, at most FACE_TRIES of them, and given up at FACE_SUMS
        sums a side (a face skipped only gives up its contribution). The best x counts. Zipf(1.1), d = 64, mutual information:
        eps = 2, 1.83e-4 (the chord bound's whole excess over the optimum, to 4e-10: certified
        in 3 s, where the branch and bound stopped 3.3e-9 short in 60 s); eps = 1, 8.2e-10."""
        return self._faces(kind)[0]

    def face_vertices(self, kind, n=FACE_VERTICES):
        """The vertices of least chord loss on the faces that bind in `face_loss` (rows): for the
        n subsets of the others whose sums fall just short of cap, the free coordinate that absorbs
        the rest at the least loss; for the n that pass it, one of theirs (or x) left that much
        below its top. Where a face binds, the columns the master needs there are a handful of
        rare vertices (Zipf(1.1), d = 256, eps = 4: 9.6e-8 for the best, 3.5e-7 for the next;
        the column generation had found one of 1.5e-7 in 60 s)."""
        f = SEPARABLE[kind]
        a, b, slope = self._chords(kind)
        w = b - a
        out = []
        for x in self._faces(kind)[1]:
            face = self._face(x)
            assert face is not None                      # (it was enumerated once already)
            cap, _, first, second, A, S = face
            rest = np.ones(self.d, dtype=bool)
            rest[x] = False
            for short in (True, False):
                if short:      # A_i + S_j <= cap, as close as the sums come
                    j = np.searchsorted(S.sums, cap - A.sums, side="right") - 1
                    gapped = np.where(j >= 0, cap - A.sums - S.sums[np.maximum(j, 0)], np.inf)
                else:          # A_i + S_j > cap
                    j = np.searchsorted(S.sums, cap - A.sums, side="right")
                    gapped = np.where(j < S.sums.size, A.sums + S.sums[np.minimum(j, S.sums.size - 1)] - cap, np.inf)
                for i in np.argsort(gapped, kind="stable")[:n]:
                    m = float(gapped[i])
                    if not np.isfinite(m):
                        break
                    H = np.zeros(self.d, dtype=bool)
                    H[first[A.members(int(i))]] = True
                    H[second[S.members(int(j[i]))]] = True
                    v = np.where(H, b, a)
                    v[x] = b[x]
                    pool = np.flatnonzero(rest & ~H & (w >= m)) if short else np.flatnonzero((H | ~rest) & (w >= m))
                    if pool.size == 0:
                        continue
                    at = a[pool] + m if short else b[pool] - m
                    k = pool[int(np.argmin(_chord_gap(f, a, slope, pool, at - a[pool])))]
                    v[k] = a[k] + m if short else b[k] - m
                    out.append(v)
        return self._admissible(np.array(out).reshape(-1, self.d))

    def _admissible(self, V: np.ndarray) -> np.ndarray:
        """The rows of V inside the box and of mass 1 (to 1e-12): the others are not columns."""
        box_lo, box_hi = self.P * self.lo, self.P * self.hi
        return V[np.all(V >= box_lo * (1 - 1e-12), axis=1) & np.all(V <= box_hi * (1 + 1e-12), axis=1)
                 & (np.abs(V.sum(axis=1) - 1.0) <= 1e-12)]

    def _face(self, x: int):
        """The face where x is at its top: (cap, the limit `cap` plus the least other width, the two
        halves of the other coordinates whose widths fit under it, their `_Sums` up to it), or None
        if a half has more than FACE_SUMS sums."""
        a, b = self.extent()
        w = b - a
        cap = max(1.0 - float(a.sum()) - w[x], 0.0)
        others = np.delete(np.arange(self.d), x)
        lim = cap + float(w[others].min())
        fits = others[w[others] <= lim]
        A, S = _Sums.upto(w[fits[0::2]], lim), _Sums.upto(w[fits[1::2]], lim)
        return None if A is None or S is None else (cap, lim, fits[0::2], fits[1::2], A, S)

    def _faces(self, kind):
        """(face_loss, the binding faces' x, largest bound first), computed once per utility."""
        if kind in self._face_cache:
            return self._face_cache[kind]
        f = SEPARABLE[kind]
        a, b, slope = self._chords(kind)
        w = b - a
        d = self.d

        def gap(k, m):
            return _chord_gap(f, a, slope, k, m)

        best, binding, tries = 0.0, [], 0
        for x in np.argsort(-w, kind="stable"):          # tightest faces first
            if w[x] <= 0.0 or 1.0 - a.sum() - w[x] <= 0.0:   # x's top leaves the others at their bottom: no loss
                continue
            tries += 1
            face = self._face(x) if tries <= FACE_TRIES else None
            if face is None:
                break                                    # looser faces have more sums still
            cap, lim, _, _, A_sums, S_sums = face
            A, S, others = A_sums.sums, S_sums.sums, np.delete(np.arange(d), x)
            slack = 8 * d * np.finfo(float).eps * (lim + 1.0)   # the sums' round-off
            below = A[A <= cap]
            d_lo = max(float((cap - below - S[np.searchsorted(S, cap - below, side="right") - 1]).min()) - slack, 0.0)
            j = np.searchsorted(S, cap - A, side="right")
            over = A[j < S.size] + S[j[j < S.size]] - cap
            o = max(min(float(over.min()) if over.size else np.inf, lim - cap) - slack, 0.0)
            # the loss of a free k: its mass m lies in [d_lo, w_k - o] (adding k to the others
            # overshoots cap by w_k - m); the least bounds are made exact one k at a time
            lo_end = np.where(w[others] >= d_lo, gap(others, np.minimum(d_lo, w[others])), np.inf)
            hi_end = np.where(w[others] >= o, gap(others, np.maximum(w[others] - o, 0.0)), np.inf)
            exact = np.zeros(others.size, dtype=bool)
            for _ in range(FACE_REFINE):
                i = int(np.argmin(np.minimum(lo_end, hi_end)))
                if lo_end[i] <= hi_end[i] or exact[i]:
                    break
                t = cap - w[others[i]]
                j = np.searchsorted(S, t - A)
                up = A[j < S.size] + S[j[j < S.size]] - t
                d_hi = max(float(up.min()) - slack, 0.0) if up.size else np.inf
                hi_end[i] = gap(others[i], w[others[i]] - d_hi) if d_hi <= w[others[i]] else np.inf
                exact[i] = True
            L = float(np.minimum(lo_end, hi_end).min())
            pi = (self.P[x] - a[x]) / w[x]
            cands = [gap(x, self.P[x] - a[x]), pi * L]
            if w[x] - o > self.P[x] - a[x]:
                cands.append(gap(x, w[x] - o) * (self.P[x] - a[x]) / (w[x] - o))
            if min(cands) > 0.0:
                binding.append((min(cands), int(x)))
            best = max(best, float(min(cands)))
        # (the gaps' own round-off, well below the chord bound's digits)
        loss = max(best - 16 * d * np.finfo(float).eps * max(1.0, abs(self.chord_bound(kind))), 0.0)
        binding.sort(key=lambda face: -face[0])
        self._face_cache[kind] = loss, [face for _, face in binding[:FACE_BINDING]] if loss > 0.0 else []
        return self._face_cache[kind]

    def design(self, kind, rng):
        """The sliding-window channel (as `LDPCone.design`, with a free coordinate): the symbols
        laid on a circle of circumference `sum w` in a random order, each an arc of its width
        `w_x = b_x - a_x`; for theta uniform, the window `[theta, theta + B)`, `B = 1 - sum a`,
        gives the posterior `v_x = a_x + |arc_x & window|`, which sums to 1 and lies in the box.
        Each arc is covered at the rate `B / sum w = (P_x - a_x) / w_x` (the same for every
        symbol when no coordinate's range is cut by the mass: otherwise there is no design), so
        the posteriors average to the prior. Between breakpoints (an arc's end at a window's end)
        v is linear in theta, so the posteriors at the breakpoints (vertices: one arc cut), each
        with half the length of its two pieces, are the same channel. Its chord loss is the cut
        coordinate's. Built in O(d^2); d = 1024, Dirichlet(1), eps = 1, 2d outputs: mutual
        information 0.46123 against the bound 0.46212, histogram-MSE 0.996004 against 0.995996
        (the column generation's 60 s results before: 0.0227 and 0.997966)."""
        a, b = self.extent()
        if kind not in SEPARABLE or np.any(a > self.P * self.lo * (1 + 1e-12)) \
                or np.any(b < self.P * self.hi * (1 - 1e-12)):
            return np.zeros((0, self.d)), np.zeros(0)
        w = b - a
        C, B = float(w.sum()), 1.0 - float(a.sum())
        start, cuts = _arcs(w, B, rng)
        theta = cuts[:-1]
        over = sum(np.clip(np.minimum(start + w, theta[:, None] + B + k * C)
                           - np.maximum(start, theta[:, None] + k * C), 0.0, None) for k in (-1, 0, 1))
        piece = np.diff(cuts)                                        # from each breakpoint to the next
        return a + np.minimum(over, w), 0.5 * (piece + np.roll(piece, 1)) / C

    def low_loss(self, kind, mu, n, rng, deadline=np.inf, depth=LOW_LOSS_DEPTH[1]):
        """Up to n vertices whose free coordinate sits within a hair of a bound, so that their
        chord loss `chord_k(v_k) - f(v_k)` is tiny: the columns that approach `chord_bound`.

        Each starts from a pattern of coordinates at their upper bound drawn by the pivotal method
        (`_pivotal`: the patterns average to `pi_x = (P_x - a_x) / w_x`, less `drift`, and their
        mass is within one width of the target). The free coordinate k is one whose loss grows
        slowest away from a bound and ends at its cheaper bound (the others' means compensate).
        Flipping up to LOW_LOSS_DEPTH coordinates of each of two disjoint random tuning sets,
        matched by a meet in the middle over their sorted subset sums, brings what k absorbs to
        within about `spread / (#subsets)^2` of that bound. Of the LOW_LOSS_KEEP matches of least
        loss, the one with the largest reduced cost `phi(v) - mu . v` is kept: at the master's
        duals this steers the patterns toward the mixture the master lacks. Coordinates whose top
        is cut by the mass stay at their lower bound (their top vertex is one of `initial`'s).
        """
        d = self.d
        f = SEPARABLE[kind]
        a, b, slope = self._chords(kind)
        w = b - a
        span = np.where(w > 0, w, 1.0)                # w, where dividing by it is safe
        B = 1.0 - a.sum()
        pi = np.clip((self.P - a) / span, 0.0, 1.0)
        # a coordinate whose top is cut by the mass (e^eps P_x > 1 - sum of the others' lower
        # bounds) reaches it only with every other one at its lower bound: that vertex is one of
        # `initial`'s; the patterns here keep it at a_x and give the others their mean given it
        cut = b < self.P * self.hi * (1 - 1e-12)
        share_cut = float(pi[cut].sum())
        if cut.any() and share_cut < 1.0:
            given = (self.P - a * share_cut) / (1.0 - share_cut)
            pi = np.where(cut, 0.0, np.clip((given - a) / span, 0.0, 1.0))
        mu = slope if mu is None else mu
        ga, gb = f(a) - mu * a, f(b) - mu * b
        # the free coordinate: one whose loss grows slowest away from a bound, `cost * distance`
        cost_lo, cost_hi = slope - SLOPE[kind](a), SLOPE[kind](b) - slope
        cost = np.minimum(cost_lo, cost_hi)
        movable = np.flatnonzero(~cut) if cut.any() and share_cut < 1.0 else np.arange(d)
        half = min(LOW_LOSS_TUNING, (movable.size - 1) // 2)
        if half < 1:
            return np.zeros((0, d))
        subsets, M = _subset_matrix(half, depth)
        free = movable[cost[movable] <= 2.0 * np.sort(cost[movable])[max(1, movable.size // 8) - 1]]
        # k ends at its cheaper bound; the others' patterns are drawn with `pi_k - share * up_k`
        # left for them, so that every coordinate keeps its mean pi across the columns
        share = 1.0 / free.size
        up = np.where(np.isclose(cost_lo, cost_hi, rtol=1e-9), pi, (cost_hi < cost_lo).astype(float))
        rest = pi.copy()
        rest[free] = (pi[free] - share * up[free]) / (1.0 - share) if free.size > 1 else pi[free]
        bad = (rest < 0.0) | (rest > 1.0)
        up[bad], rest[bad] = pi[bad], pi[bad]          # not compensable: k's bound drawn with pi_k
        rest = np.clip(rest - self.drift, 0.0, 1.0)
        out, losses = [], []
        for _ in range(n):
            if time.perf_counter() > deadline:
                break
            z = _pivotal(rest, w, rng)
            k = int(rng.choice(free))
            target = w[k] if rng.random() < up[k] else 0.0
            T = rng.permutation(movable[movable != k])[:2 * half].reshape(2, half)
            left = B - float(w @ z) + z[k] * w[k]                 # mass k absorbs above a_k
            D = np.where(z[T], w[T], -w[T])                       # what flipping each item adds
            G = np.where(z[T], ga[T] - gb[T], gb[T] - ga[T])      # and to the reduced cost
            raw, gains, first, second = _meet(D, G, M, left, target)
            mass = np.clip(raw, 0.0, w[k])
            vk = a[k] + mass
            loss = np.where(np.abs(raw - mass) <= 1e-15, _chord_gap(f, a, slope, k, mass), np.inf)
            if not np.isfinite(loss.min()):
                continue
            r, i = _least_loss(loss)
            best = int(np.argmax(np.where(np.isfinite(loss[r, i]), gains[r, i] + f(vk[r, i]) - mu[k] * vk[r, i], -np.inf)))
            r, i = int(r[best]), int(i[best])
            losses.append(float(loss[r, i]))
            for side, pick in enumerate((first[i], second[r, i])):
                z[T[side, list(subsets[pick])]] ^= True
            v = np.where(z, b, a)
            v[k] = a[k] + float(mass[r, i])
            out.append(v)
        self.last_loss = float(np.median(losses)) if losses else np.inf
        out = self._admissible(np.array(out).reshape(-1, d))
        if len(out):
            self.drift += ((out - a) / span).mean(axis=0) - pi
        return out

    def near_ties(self, kind: str, mu: np.ndarray, rng: np.random.Generator, fine: bool = False,
                  trials: int = NEAR_TIES[1]) -> np.ndarray:
        """Vertices found by meet in the middle at the dual point mu (separable phi): a heuristic
        pricing, no bound, for the plateau where the branch and bound's search finds nothing.

        At the master's duals every coordinate's chord over its range often has the same slope
        per unit of mass (docs/reliability.md), so a vertex falls short of the chord bound by the
        chord gap of its free coordinate k only, and the best vertices are subsets of the others
        that leave k almost at a bound: a subset-sum search, where best-first branching on the
        chord bound finds little (mutual information, d = 64: nothing above -7.3e-10 in 1.19M
        nodes, where these trials find reduced costs of 1e-9..4e-9 with sets of 14 to 20
        coordinates, against a pricing tolerance of 1.2e-10). Each trial draws k, two
        disjoint sets of `half` other coordinates, and a random pattern for the rest (expected
        mass what k and the two sets leave); every subset of each set is enumerated, and for each
        subset of the first the subset of the second whose mass leaves k nearest each of its
        bounds is matched by a sorted search. The best vertex of each trial is returned (rows,
        posteriors); the caller keeps those with a positive reduced cost. `half` is NEAR_TIES[0],
        or NEAR_TIES_FINE when `fine`."""
        d = self.d
        n = min(NEAR_TIES_FINE if fine else NEAR_TIES[0], (d - 1) // 2)
        if n < 1:
            return np.zeros((0, d))
        f, P = SEPARABLE[kind], self.P
        F = _terms(f, P, mu, positive=bool(P.min() > 0))
        a, b = F(self.lo), F(self.hi)
        w, D = P * (self.hi - self.lo), b - a
        need = 1.0 - float(P @ self.lo)                  # mass above the lower bounds
        item = np.arange(n)
        out = []
        for _ in range(trials):
            k = int(rng.integers(d))
            others = rng.permutation(np.delete(np.arange(d), k))
            A, B, rest = others[:n], others[n:2 * n], others[2 * n:]
            left = need - 0.5 * (w[k] + w[A].sum() + w[B].sum())
            share = np.clip(left / w[rest].sum(), 0.0, 1.0) if rest.size and w[rest].sum() > 0 else 0.0
            fixed = rest[rng.random(rest.size) < share]
            room = need - w[fixed].sum()
            mA, gA, oA = _sorted_sums(w[A], D[A])             # (sorted queries search faster)
            mB, gB, o = _sorted_sums(w[B], D[B])
            for target, below in ((room, True), (room - w[k], False)):   # k near lo, near hi
                j = np.searchsorted(mB, target - mA, side="right") - 1 if below else np.searchsorted(mB, target - mA)
                j = np.clip(j, 0, mB.size - 1)
                extra = room - mA - mB[j]                   # what k absorbs above its lower bound
                ok = (extra >= 0.0) & (extra <= w[k])
                if not ok.any():
                    continue
                vk = P[k] * self.lo[k] + np.clip(extra, 0.0, w[k])
                value = np.where(ok, gA + gB[j] + f(vk) - mu[k] * vk - a[k], -np.inf)
                i = int(np.argmax(value))
                H = np.concatenate([fixed, A[(oA[i] >> item) & 1 == 1], B[(o[j[i]] >> item) & 1 == 1]])
                v = P * self.lo
                v[H] = P[H] * self.hi[H]
                v[k] = vk[i]
                out.append(v)
        V = np.array(out).reshape(-1, d)
        return V[np.abs(V.sum(axis=1) - 1.0) <= 1e-12]

def _price_lattice(fam: LIPBox, f, mu: np.ndarray, stop: _Stop) -> Priced:
    """Exact `max_v phi(v) - mu . v` over LIP's vertices when the widths are whole numbers of one
    unit (`LIPBox.units`): a vertex is a set H of coordinates at their upper bound and one free
    coordinate k absorbing `B - unit * sum_H n` (B = 1 - sum a), which must lie in [0, w_k].
    For every k at once, `best[k, s]` is the largest `sum_H (g_x(b_x) - g_x(a_x))` over sets H
    of the other coordinates with `sum_H n = s` (0/1 knapsack by dynamic programming, one pass
    per coordinate over a d x (sum n + 1) table), `g_x(v) = f(v) - mu_x v`; each k then reads
    its window of s. The best columns are rebuilt by a second pass with decisions kept."""
    d, n = fam.d, fam.units
    assert n is not None
    a, b = fam.P * fam.lo, fam.P * fam.hi
    unit = float((b - a).sum() / n.sum())
    B = 1.0 - a.sum()
    ga, gb = f(a) - mu * a, f(b) - mu * b
    gain = gb - ga
    total = int(n.sum())
    best = np.full((d, total + 1), -np.inf)
    best[:, 0] = 0.0
    for x in range(d):
        m = int(n[x])
        cand = best[:, :-m] + gain[x]
        cand[x] = best[x, m:]                       # row x leaves coordinate x out
        np.maximum(best[:, m:], cand, out=best[:, m:])
    vals, ks, sums = [], [], []                     # every free k's window of sums
    for k in range(d):
        lo_s = max(0, math.ceil((B - (b[k] - a[k])) / unit - 1e-9))
        hi_s = min(total, math.floor(B / unit + 1e-9))
        s = np.arange(lo_s, hi_s + 1)
        vk = np.clip(a[k] + B - unit * s, a[k], b[k])
        vals.append(ga.sum() - ga[k] + best[k, s] + f(vk) - mu[k] * vk)
        ks.append(np.full(s.size, k))
        sums.append(s)
    val, k_of, s_of = np.concatenate(vals), np.concatenate(ks), np.concatenate(sums)
    if not np.isfinite(val).any():
        return Priced(-np.inf, -np.inf, np.zeros((0, d)))
    order = np.argsort(-val, kind="stable")[:LATTICE_COLUMNS]
    top = float(val[order[0]])
    tol = stop.resolve(_scale(f, mu, d))
    cols = _Columns(d, tol)
    chosen = order[val[order] > tol]                # improving columns only
    for k in np.unique(k_of[chosen]):
        V = _lattice_vertices(a, b, n, gain, int(k), s_of[chosen][k_of[chosen] == k].tolist())
        cols.add((f(V) - mu * V).sum(axis=1), V)
    # exact up to the round-off of d-term sums
    return Priced(top, top + 1e-13 * _scale(f, mu, d), cols.top(), d)


def _price_lip_meet(fam: LIPBox, f, mu: np.ndarray, stop: _Stop, start: float = -np.inf,
                    fallback: float = np.inf) -> Priced:
    """Exact `max_v phi(v) - mu . v` over LIP's vertices for small d, by branch and bound over the
    pairs of a meet in the middle.

    A vertex is a set H of coordinates at their upper bound and one free coordinate k taking
    `a_k + B - W(H)` (B = 1 - sum a, `W(H) = sum_H w`, w = b - a), which must lie in [a_k, b_k]
    (`_price_lattice`): its value is `sum a-terms - g_k(a_k) + D(H) + phi_k(W(H))` with D additive
    and `phi_k(W) = g_k(a_k + B - W)` convex, on the window `B - w_k <= W(H) <= B`. The
    coordinates are split in two halves; for each k, each subset i of k's half (without k) is
    paired with a range of the other half's subsets sorted by W, those whose W lands in the
    window. Writing `D = r W + e` (r: the median ratio of gain to width, so that e is small where
    many coordinates tie, the case that stalls the box search), a range's pairs are worth at most
    `max e` over it (a sparse table) plus the larger of `r W + phi_k` at its two ends (convex in
    W); ranges above the best value found are halved until they close or are single pairs, whose
    values are exact. A search stopped early (node budget, deadline) returns its largest open
    bound; `start` is a value already attained (the box search's). The node budget counts the
    ranges halved after the first level (d 2^(d/2 - 1) ranges at most, bounded whatever the budget);
    past the deadline within the first level the search returns `fallback` (the box search's bound)."""
    d, P = fam.d, fam.P
    a, b = P * fam.lo, P * fam.hi
    w = b - a
    B = 1.0 - a.sum()
    ga, gb = f(a) - mu * a, f(b) - mu * b
    gain = gb - ga
    base = float(ga.sum())
    tol = stop.resolve(_scale(f, mu, d))
    r = float(np.median(gain / w))
    sides = []
    for h, bits, W in fam.meet_halves:
        D = bits @ gain[h]
        sides.append((h, bits, W, D, _SparseMax(D - r * W)))

    def value(k, Wr, Dr, Wc, Dc):
        v = a[k] + B - (Wr + Wc)
        return base - ga[k] + Dr + Dc + f(v) - mu[k] * v

    def bound(k, Wr, Dr, side, lo, hi):
        _, _, W, _, table = side
        e_max, _ = table.query(lo, hi)
        ends = [r * W[j] + f(a[k] + B - Wr - W[j]) - mu[k] * (a[k] + B - Wr - W[j]) for j in (lo, hi)]
        return base - ga[k] + Dr + e_max + np.maximum(*ends)

    best, found = start, None                      # found: (values, k, row side, row, column)

    def step(K, RS, I, LO, HI):
        """Bound and evaluate the ranges (the ends and the best e of each); returns the open ones
        (halved) and the largest bound among them."""
        nonlocal best, found
        ub = np.empty(K.size)
        for rs in (0, 1):
            m = RS == rs
            if not m.any():
                continue
            _, _, Wr, Dr, _ = sides[rs]
            col = sides[1 - rs]
            ub[m] = bound(K[m], Wr[I[m]], Dr[I[m]], col, LO[m], HI[m])
            _, arg = col[4].query(LO[m], HI[m])
            for j in (LO[m], HI[m], arg):
                vals = value(K[m], Wr[I[m]], Dr[I[m]], col[2][j], col[3][j])
                found = _keep_best(found, (vals, K[m], np.full(j.size, rs), I[m], j))
                best = max(best, float(vals.max()))
        o = (ub > best + tol) & (HI > LO)
        top = float(ub[o].max()) if o.any() else -np.inf
        K, RS, I, LO, HI = K[o], RS[o], I[o], LO[o], HI[o]
        mid = (LO + HI) // 2
        return (np.r_[K, K], np.r_[RS, RS], np.r_[I, I], np.r_[LO, mid + 1], np.r_[mid, HI]), top

    live, top, nodes = [], -np.inf, 0
    for k in range(d):                             # the first level, one free coordinate at a time
        if time.perf_counter() > stop.deadline:
            return _lip_meet_result(fam, f, mu, tol, sides, found, best, fallback, nodes, "time_limit")
        rs = 0 if np.isin(k, sides[0][0]) else 1
        h, bits, Wr, _, _ = sides[rs]
        W = sides[1 - rs][2]
        rows = np.flatnonzero(~bits[:, np.searchsorted(h, k)])
        lo = np.searchsorted(W, B - w[k] - Wr[rows], side="left")
        hi = np.searchsorted(W, B - Wr[rows], side="right") - 1
        keep = lo <= hi
        nodes += int(keep.sum())
        opened, t = step(np.full(int(keep.sum()), k), np.full(int(keep.sum()), rs), rows[keep], lo[keep], hi[keep])
        live.append(opened)
        top = max(top, t)
    ranges = tuple(np.concatenate(x) for x in zip(*live))
    first = nodes                                  # every search pays the first level; the budget is for the rest
    while ranges[0].size:
        stopped = stop.out(nodes - first)
        if stopped:
            return _lip_meet_result(fam, f, mu, tol, sides, found, best, top, nodes, stopped)
        nodes += ranges[0].size
        ranges, top = step(*ranges)
    return _lip_meet_result(fam, f, mu, tol, sides, found, best, best, nodes, "")


def _lip_meet_result(fam: LIPBox, f, mu, tol, sides, found, best, top, nodes, stopped) -> Priced:
    """`_price_lip_meet`'s answer: the best pairs evaluated as vertices (columns), and the bound
    (the largest open range's, or the best value, plus the pricing tolerance and round-off)."""
    d, P = fam.d, fam.P
    a, b = P * fam.lo, P * fam.hi
    _, k, rs, i, j = found if found is not None else (np.zeros(0), *(np.zeros(0, dtype=np.int64),) * 4)
    H = np.zeros((k.size, d), dtype=bool)
    for side in (0, 1):
        m = rs == side
        H[np.ix_(m, sides[side][0])] = sides[side][1][i[m]]
        H[np.ix_(m, sides[1 - side][0])] = sides[1 - side][1][j[m]]
    V = np.where(H, b, a)                          # k is never in H: it takes what the mass leaves
    V[np.arange(k.size), k] = a[k] + (1.0 - a.sum()) - (V - a).sum(axis=1)
    cols = _Columns(d, tol)
    cols.add((f(V) - mu * V).sum(axis=1), V)
    slack = 64 * np.finfo(float).eps * _scale(f, mu, d)
    return Priced(max(best, cols.best), max(top, best) + tol + slack, cols.top(), nodes, stopped)


def _subsets(n: int) -> np.ndarray:
    """Every subset of n items as a boolean row (row i: the bits of i), 2^n x n."""
    return (np.arange(1 << n)[:, None] >> np.arange(n)[None, :]) & 1 == 1


def _sorted_subsets(x: np.ndarray, halves: list[np.ndarray]) -> list[tuple]:
    """For each half (item indices): (the half, its subsets as boolean rows, their sums of x),
    ordered by the sums: what the meet-in-the-middle pricings search, independent of the duals
    (built once per family)."""
    out = []
    for h in halves:
        bits = _subsets(h.size)
        sums = bits @ x[h]
        order = np.argsort(sums, kind="stable")
        out.append((h, bits[order], sums[order]))
    return out


def _sorted_sums(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the 2^n subset sums of x in increasing order, the same subsets' sums of y, each subset as
    the integer whose bits are its items): built by doubling, each step merging the sorted sums
    with themselves plus the next item (two sorted runs, which a stable sort merges in linear
    time). A sort of all 2^n sums at once: 4.1 ms against 1.6 ms at n = 16 (`LIPBox.near_ties`)."""
    sums, ys, index = np.zeros(1), np.zeros(1), np.zeros(1, dtype=np.int64)
    for i, (xi, yi) in enumerate(zip(x, y)):
        merged = np.concatenate([sums, sums + xi])
        order = np.argsort(merged, kind="stable")
        sums = merged[order]
        ys = np.concatenate([ys, ys + yi])[order]
        index = np.concatenate([index, index | (1 << i)])[order]
    return sums, ys, index


def _keep_best(found: tuple | None, new: tuple) -> tuple:
    """Of two sets of evaluated pairs (parallel arrays, values first), the 8 MAX_COLUMNS best."""
    if found is not None:
        new = tuple(np.r_[x, y] for x, y in zip(found, new))
    n = 8 * MAX_COLUMNS
    if new[0].size <= n:
        return new
    take = np.argpartition(-new[0], n - 1)[:n]
    return tuple(x[take] for x in new)


class _SparseMax:
    """Range maxima (and where they are) of a fixed array in O(1) a query (a sparse table)."""

    def __init__(self, x: np.ndarray):
        self.val, self.arg = [x], [np.arange(x.size)]
        span = 1
        while 2 * span <= x.size:
            v, g = self.val[-1], self.arg[-1]
            right = v[span:]
            take = right > v[:-span]
            self.val.append(np.where(take, right, v[:-span]))
            self.arg.append(np.where(take, g[span:], g[:-span]))
            span *= 2

    def query(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(max x[lo..hi], an index where it is) for each pair of inclusive bounds."""
        p = np.floor(np.log2(hi - lo + 1)).astype(int)
        out_v, out_a = np.empty(lo.size), np.empty(lo.size, dtype=np.int64)
        for level in np.unique(p):
            m = p == level
            v, g = self.val[level], self.arg[level]
            left, right = lo[m], hi[m] - (1 << level) + 1
            take = v[right] > v[left]
            out_v[m] = np.where(take, v[right], v[left])
            out_a[m] = np.where(take, g[right], g[left])
        return out_v, out_a


def _lattice_vertices(a, b, n, gain, k: int, sums: list[int]) -> np.ndarray:
    """The vertices of `_price_lattice`'s best sets H (one per entry of sums) for free coordinate k:
    the knapsack over the other coordinates again, keeping each step's decisions, then traced back."""
    d, total = n.size, int(n.sum())
    row = np.full(total + 1, -np.inf)
    row[0] = 0.0
    take = np.zeros((d, total + 1), dtype=bool)
    for x in range(d):
        m = int(n[x])
        if x == k:
            continue
        cand = row[:-m] + gain[x]
        take[x, m:] = cand > row[m:]
        row[m:] = np.where(take[x, m:], cand, row[m:])
    out = []
    for s in sums:
        z = np.zeros(d, dtype=bool)
        for x in range(d - 1, -1, -1):
            if s >= n[x] and take[x, s]:
                z[x] = True
                s -= int(n[x])
        v = np.where(z, b, a)
        v[k] = 1.0 - (v.sum() - v[k])
        out.append(v)
    return np.array(out)


def _box_bnb(P, f, mu, stop, lo, hi, eps: float | None = None) -> Priced:
    """Branch and bound for max sum_x f(P_x u_x) - mu_x P_x u_x over lo <= u <= hi, P . u = 1,
    and, when eps is given, max u <= e^eps min u (LDP).

    A node is a box [L, R] on u (and for LDP an interval [T1, T2] of tau = 1 / min u, with which
    the box shrinks to [max(L, 1/T2), min(R, e^eps/T1)] and contains every admissible point of
    the node). Its bound replaces each coordinate's convex term by its chord over the box, a
    linear objective whose maximum on the box cut by P . u = 1 is a greedy fill. A node is split
    on the coordinate whose chord is farthest from its term at the fill point, or (LDP) on tau
    while the fill point is not admissible and the tau interval is wide, the chords are tight or
    (in a proof search, stop.ratio >= 1) the interval adds more to the bound than the largest
    chord gap (TAU_WIDE).
    """
    d = P.size
    tol = stop.resolve(_scale(f, mu, d))
    cols = _Columns(d, tol)
    ldp = eps is not None
    proof = ldp and stop.ratio >= 1.0
    top = float(np.exp(eps)) if eps is not None else 1.0       # the LDP cone's ratio (unused for LIP)

    F = _terms(f, P, mu, positive=bool(P.min() > 0 and lo.min() > 0))

    def relax(L, R, T1, T2, point=False):
        if ldp:
            L = np.maximum(L, 1.0 / T2[:, None])
            R = np.minimum(R, top / T1[:, None])
        chord, U = _chord_fill(P, L, R, F)
        ok = (L @ P <= 1.0 + 1e-13) & (R @ P >= 1.0 - 1e-13) & np.all(L <= R, axis=1)
        ub = np.where(ok, chord.sum(axis=1), -np.inf)
        if point:                      # the bound alone: the tau slack's midpoint relaxation
            return (ub,)
        Fu = F(U)
        admissible = np.ones(len(U), dtype=bool)
        if ldp:
            admissible = U.max(axis=1) <= top * U.min(axis=1) * (1 + 1e-12)
            # a vertex near every inadmissible fill point: S = the symbols above the middle
            mid = np.sqrt(U.max(axis=1) * U.min(axis=1))[:, None]
            Us = 1.0 + (top - 1.0) * (U > mid)
            Us /= (Us @ P)[:, None]
            cols.add(F(Us).sum(axis=1)[ok], (P * Us)[ok])
        keep = ok & admissible
        cols.add(Fu.sum(axis=1)[keep], (P * U)[keep])
        slack = np.zeros(len(U))                                   # what the tau interval adds
        if proof:
            mid = np.sqrt(T1 * T2)
            ub_mid = relax(L, R, mid, mid, point=True)[0]
            with np.errstate(invalid="ignore"):
                slack = np.where(np.isfinite(ub_mid), ub - ub_mid, np.inf)
        return ub, U, chord - Fu, admissible, slack

    one = np.ones(1)
    T1, T2 = (one.copy(), one * top) if ldp else (one, one)
    L0, R0 = lo[None, :].copy(), hi[None, :].copy()
    ub, U, gap, adm, ts = relax(L0, R0, T1, T2)
    sizes = BOX_BATCH["ldp" if ldp else "lip"]
    nodes_ = _Nodes(d, stop.max_nodes + 2 * max(sizes) + 2)
    j = gap.argmax(axis=1)
    heap = [(-ub[0], 0, int(nodes_.put(L0, R0, T1, T2, j, U[0, j], gap[0, j], adm, ts)[0]))]
    counter, nodes, stopped = 0, 0, ""
    while True:
        batch, stopped = _next_batch(heap, stop, cols.best, tol, nodes, sizes[stop.ratio >= 1.0])
        if not batch:
            break
        nodes += len(batch)
        Ls, Rs, T1s, T2s = _children(nodes_.take([item[2] for item in batch]), tol / d, top if ldp else None)
        if not len(Ls):
            continue
        ub, U, gap, adm, ts = relax(Ls, Rs, T1s, T2s)
        # the open children: their boxes, and of the fill point what the split needs: the
        # coordinate of the largest chord gap, its value there and the gap
        k = np.flatnonzero(ub > cols.best + tol)
        j = gap[k].argmax(axis=1)
        slots = nodes_.put(Ls[k], Rs[k], T1s[k], T2s[k], j, U[k, j], gap[k, j], adm[k], ts[k])
        for b, slot in zip((-ub[k]).tolist(), slots.tolist()):
            counter += 1
            heapq.heappush(heap, (b, counter, slot))
    return Priced(cols.best, _upper(cols.best, tol, heap), cols.top(), nodes, stopped)


def _chord_gap(f, a: np.ndarray, slope: np.ndarray, k, m):
    """`chord_k(a_k + m) - f(a_k + m)`: how far coordinate k's term at `a_k + m` falls below its
    chord (LIP's chord loss; k and m broadcast)."""
    return f(a[k]) + slope[k] * m - f(a[k] + m)


def _terms(f, P: np.ndarray, mu: np.ndarray, positive: bool):
    """u -> the terms `f(P_x u_x) - mu_x P_x u_x` of `_box_bnb`'s objective, with s = P u:
    `s (s - mu)` for histogram-MSE and `s (log s - mu)` for mutual information where every s is
    positive (a third of the array operations of the general form, which guards log(0))."""
    if f is SEPARABLE["histogram-mse"]:
        def F(u):
            s = P * u
            return s * (s - mu)
    elif f is _xlogx and positive:
        def F(u):
            s = P * u
            return s * (np.log(s) - mu)
    else:
        def F(u):
            s = P * u
            return f(s) - mu * s
    return F


class _Nodes:
    """The open nodes of `_box_bnb`, stored by slot in arrays (the heap holds only bound, order
    and slot): each node's box (L, R), tau interval (T1, T2), and of its fill point the split's
    coordinate j, its value u and chord gap g, whether it is admissible and its tau slack. The
    box arrays are allocated once for `capacity` nodes (a search keeps at most its budget plus
    one open; the reservation stops at RESERVE bytes and grows past it), and memory is touched
    only as slots are used; freed slots are reused first."""

    RESERVE = 2e9

    FIELDS = ("T1", "T2", "j", "u", "g", "adm", "slack")

    def __init__(self, d: int, capacity: int):
        capacity = max(1, min(capacity, int(self.RESERVE // (16 * d))))
        self.L, self.R = np.empty((capacity, d)), np.empty((capacity, d))
        self.cols = {k: np.empty(capacity, dtype=int if k == "j" else bool if k == "adm" else float)
                     for k in self.FIELDS}
        self.free: list[int] = []
        self.used = 0

    def put(self, L, R, *values) -> np.ndarray:
        """Store nodes (rows of L, R and the FIELDS in order); returns their slots."""
        n = len(L)
        reuse = min(n, len(self.free))
        fresh = np.arange(self.used, self.used + n - reuse)
        slots = np.concatenate([np.array(self.free[len(self.free) - reuse:], dtype=int), fresh])
        del self.free[len(self.free) - reuse:]
        self.used += n - reuse
        if self.used > len(self.L):                    # (only past RESERVE: capacity covers a budget)
            grow = self.used - len(self.L) + len(self.L) // 2
            self.L = np.vstack([self.L, np.empty((grow, self.L.shape[1]))])
            self.R = np.vstack([self.R, np.empty((grow, self.R.shape[1]))])
            self.cols = {k: np.concatenate([v, np.empty(grow, dtype=v.dtype)]) for k, v in self.cols.items()}
        self.L[slots], self.R[slots] = L, R
        for k, v in zip(self.FIELDS, values):
            self.cols[k][slots] = v
        return slots

    def take(self, slots: list[int]) -> tuple:
        """(L, R, T1, T2, j, u, g, adm, slack) of these nodes, copied out; their slots are freed."""
        idx = np.array(slots, dtype=int)
        self.free.extend(slots)
        return (self.L[idx], self.R[idx], *(self.cols[k][idx] for k in self.FIELDS))


def _children(node: tuple, small: float, top: float | None):
    """The children of a batch of `_box_bnb` nodes (`_Nodes.take`), two per node split, in the
    batch's order, as stacked (L, R, T1, T2). A node splits tau (LDP, top = e^eps) when its fill
    point is not admissible and its tau interval is wide (TAU_WIDE), its tau slack exceeds its
    largest chord gap, or its chords are tight (every gap <= small); else, unless its chords are
    tight, the coordinate j with the largest gap is cut at the fill point (at the middle of its
    range when the fill point is at an end): [L_j, cut] and [cut, R_j]."""
    L, R, T1, T2, j, u, g, adm, slack = node
    rows = np.arange(len(L))
    tight = g <= small
    tau = ~adm & ((T2 > T1 * TAU_WIDE) | (slack > g) | tight)
    coord = ~tau & ~tight
    Le, Re = L[rows, j], R[rows, j]
    if top is not None:
        Le, Re = np.maximum(Le, 1.0 / T2), np.minimum(Re, top / T1)
    inside = (Le + 1e-9 * (Re - Le) < u) & (u < Re - 1e-9 * (Re - Le))
    cut = np.where(inside, u, 0.5 * (Le + Re))
    parent = np.repeat(np.flatnonzero(tau | coord), 2)
    first = (np.arange(parent.size) % 2) == 0
    Lk, Rk, T1k, T2k = L[parent], R[parent], T1[parent], T2[parent]
    mid = np.sqrt(T1 * T2)[parent]
    split = tau[parent]
    T2k[split & first] = mid[split & first]
    T1k[split & ~first] = mid[split & ~first]
    k = np.flatnonzero(coord[parent])
    p, jk, lo_side = parent[k], j[parent[k]], first[k]
    Lk[k, jk] = np.where(lo_side, Le[p], cut[p])
    Rk[k, jk] = np.where(lo_side, cut[p], Re[p])
    return Lk, Rk, T1k, T2k


def _meet(D: np.ndarray, G: np.ndarray, M: sparse.csr_array, offset: float, target: float):
    """Meet in the middle over two tuning sets (`low_loss`): D[s] and G[s] are what flipping each
    item of set s adds to a sum and to the reduced cost, M the incidence matrix of the subsets
    flipped. For every subset of the first set, the two subsets of the second whose sums bracket
    `target - offset - first`. Returns (offset + the pair's sums, the pair's reduced-cost change,
    the first subset's index (n,), the second's (2, n)), the pairs' axes being (neighbour, first)."""
    first, second = M @ D[0], M @ D[1]                    # subset sums of each side
    o1, o2 = np.argsort(first)[::-1], np.argsort(second)
    f_sorted, s_sorted = first[o1], second[o2]
    g_first, g_second = (M @ G[0])[o1], (M @ G[1])[o2]
    pos = np.searchsorted(s_sorted, target - offset - f_sorted)   # ascending queries
    j = np.clip(pos[None, :] + np.array([[-1], [0]]), 0, s_sorted.size - 1)    # two neighbours
    return offset + f_sorted + s_sorted[j], g_first[None, :] + g_second[j], o1, o2[j]


def _least_loss(loss: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The indices (r, i) of the LOW_LOSS_KEEP matches of least loss (`_meet`'s axes): of them
    `low_loss` keeps the one with the largest reduced cost at the master's duals."""
    keep = min(LOW_LOSS_KEEP, loss.size - 1)
    r, i = np.unravel_index(np.argpartition(loss.ravel(), keep)[:keep + 1], loss.shape)
    return r, i


def _arcs(lengths: np.ndarray, window: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The designs' circle (`Family.design`): arcs of these lengths laid end to end in a random
    order on a circle of circumference C = sum(lengths). Returns (each arc's start, the sorted
    breakpoints of a window of length `window` going once round, from 0 to C: where an arc's
    start meets either end of the window)."""
    start = np.empty(lengths.size)
    order = rng.permutation(lengths.size)
    start[order] = np.r_[0.0, np.cumsum(lengths[order])[:-1]]
    C = float(lengths.sum())
    return start, np.unique(np.r_[start, (start - window) % C, C])


def _pivotal(pi: np.ndarray, w: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random 0/1 pattern z with `E z = pi` and `w . z` within one width of `w . pi` (the
    pivotal method of balanced sampling, Deville and Tille 1998): a running fractional coordinate
    trades mass with the next one, in random order, until one of them is 0 or 1, moving up or
    down with the probabilities that keep each coordinate's expectation; the one left fractional
    is rounded at random."""
    u = pi.astype(float).tolist()
    wl = w.tolist()
    order = rng.permutation(len(u)).tolist()
    coins = rng.random(len(u)).tolist()
    r = order[0]
    for x, coin in zip(order[1:], coins):
        ur, ux, wr, wx = u[r], u[x], wl[r], wl[x]
        up = min((1.0 - ur) * wr, ux * wx)          # mass moved raising r, lowering x
        down = min(ur * wr, (1.0 - ux) * wx)        # and the other way
        if up + down <= 0.0:
            r = x if 0.0 < ux < 1.0 else r
            continue
        t = up if coin * (up + down) < down else -down
        ur, ux = ur + t / wr, ux - t / wx
        u[r], u[x] = ur, ux
        r = r if 1e-12 < ur < 1.0 - 1e-12 else x
    z = np.array(u) > 0.5
    z[r] = rng.random() < u[r]                      # the last fractional one, rounded at random
    return z


@dataclass
class _Sums:
    """Every subset sum of some widths up to a limit, sorted, and how to read each one's subset back."""

    sums: np.ndarray
    parent: np.ndarray       # (unsorted) the entry each sum extends, -1 for the empty set
    item: np.ndarray         # (unsorted) the width it adds
    order: np.ndarray        # sorted position -> unsorted entry

    @classmethod
    def upto(cls, widths: np.ndarray, lim: float, most: int | None = None) -> _Sums | None:
        """None past `most` (FACE_SUMS) sums."""
        most = FACE_SUMS if most is None else most
        S, parent, item = np.zeros(1), np.full(1, -1), np.full(1, -1)
        for x in np.argsort(-widths, kind="stable"):
            keep = np.flatnonzero(S <= lim - widths[x])
            S = np.concatenate([S, S[keep] + widths[x]])
            parent, item = np.concatenate([parent, keep]), np.concatenate([item, np.full(keep.size, x)])
            if S.size > most:
                return None
        order = np.argsort(S, kind="stable")
        return cls(S[order], parent, item, order)

    def members(self, i: int) -> list[int]:
        """The widths (indices) of the i-th smallest sum."""
        out, e = [], int(self.order[i])
        while self.item[e] >= 0:
            out.append(int(self.item[e]))
            e = int(self.parent[e])
        return out


@lru_cache(maxsize=4)
def _subset_matrix(m: int, depth: int) -> tuple[list, sparse.csr_array]:
    """The subsets of range(m) of at most `depth` elements and their incidence matrix (rows)."""
    subsets = [c for r in range(depth + 1) for c in combinations(range(m), r)]
    sizes = np.array([len(c) for c in subsets])
    members = np.fromiter((i for c in subsets for i in c), dtype=np.int64, count=int(sizes.sum()))
    return subsets, sparse.csr_array((np.ones(members.size), members, np.r_[0, np.cumsum(sizes)]),
                                     shape=(len(subsets), m))


def _chord_fill(P: np.ndarray, L: np.ndarray, R: np.ndarray, F) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the concave envelope of `sum_x F(u)_x` (convex terms) on the box `L <= u <= R`
    cut by `P . u = 1`: each term replaced by its chord over `[L_x, R_x]`, the linear sum
    maximized by a greedy fill (`_fill`). Returns (the chords' terms at the maximizer, the
    maximizer u)."""
    FL, FR = F(L), F(R)
    width = R - L
    k = np.where(width > 0, (FR - FL) / np.where(width > 0, width, 1.0), 0.0)
    # (an unstable sort, 5x faster on rows of 64: ties move the maximizer, never the chords' maximum)
    U = _fill(np.broadcast_to(P, L.shape), L, R, k / P, kind="quicksort") / P
    return FL + k * (U - L), U


def _fill(P: np.ndarray, L: np.ndarray, R: np.ndarray, ratio: np.ndarray,
          kind: Literal["stable", "quicksort"] = "stable") -> np.ndarray:
    """Greedy maximizer of sum_x ratio_x P_x u_x over L <= u <= R, P . u = 1, per row; returns
    v = P * u. Symbols are raised from L to R in decreasing `ratio` until the mass reaches 1
    (symbols of equal ratio in index order; with kind = "quicksort" in any order, which changes
    the maximizer but not the maximum)."""
    P, L, R, ratio = (np.atleast_2d(a) for a in (P, L, R, ratio))
    n, d = ratio.shape
    order = np.argsort(-ratio, axis=1, kind=kind)
    rows = np.arange(n)[:, None]
    base = P * L
    cap = (P * (R - L))[rows, order]
    need = 1.0 - base.sum(axis=1, keepdims=True)
    before = np.cumsum(cap, axis=1) - cap
    take = np.clip(need - before, 0.0, cap)
    V = np.array(base, dtype=float, copy=True)
    V[rows, order] += take
    return V


class LDPCone(Family):
    """eps-LDP: `max u <= e^eps min u` on `P . u = 1`; vertices `P (1 + c 1_S) / (1 + c P(S))`."""

    name = "ldp"

    def __init__(self, P, eps):
        super().__init__(P, eps)
        self.c = float(np.expm1(self.eps))
        self.drift = np.zeros(self.d)
        """How far `low_loss`'s sets so far have strayed from the inclusion rate A* (as LIPBox's)."""

    def vertex(self, S: np.ndarray) -> np.ndarray:
        """Rows: the vertices for the boolean rows of S."""
        V = self.P * (1.0 + self.c * np.asarray(S, dtype=float))
        return V / V.sum(axis=-1, keepdims=True)

    def runs(self, rank):
        """Every threshold set of the order (prefixes and suffixes) and runs of lengths 2^k."""
        d = self.d
        r = rank[None, :]
        lengths = sorted({*(2 ** k for k in range(int(np.log2(d)) + 1)), *range(1, min(d, 8))})
        step = run_stride(sum(d - n + 1 for n in lengths) + 2 * (d - 1), d)
        blocks = []
        for length in lengths:                                   # runs [a, a + length) of ranks
            a = np.arange(0, d - length + 1, step)[:, None]
            blocks.append((r >= a) & (r < a + length))
        prefix = r < np.arange(1, d, step)[:, None]              # thresholds, each with its complement
        blocks.append(np.stack([prefix, ~prefix], axis=1).reshape(-1, d))
        return self.vertex(np.vstack(blocks))

    def support(self, G):
        G = np.atleast_2d(np.asarray(G, dtype=float))
        n, d = G.shape
        order = np.argsort(-G, axis=1, kind="stable")
        rows = np.arange(n)[:, None]
        Pg = (self.P * G)[rows, order]
        Ps = np.broadcast_to(self.P, G.shape)[rows, order]
        zero = np.zeros((n, 1))
        num = (self.P * G).sum(axis=1, keepdims=True) + self.c * np.hstack([zero, np.cumsum(Pg, axis=1)])
        den = 1.0 + self.c * np.hstack([zero, np.cumsum(Ps, axis=1)])
        k = np.argmax(num / den, axis=1)
        S = np.zeros((n, d), dtype=bool)
        S[rows, order] = np.arange(d)[None, :] < k[:, None]
        V = self.vertex(S)
        return np.einsum("ij,ij->i", G, V), V

    def _price_separable(self, f, mu, stop):
        lo, hi = np.full(self.d, np.exp(-self.eps)), np.minimum(np.exp(self.eps), 1.0 / self.P)
        if f is not SEPARABLE["mutual-information"] or self.d > MEET_MAX_D:
            return _box_bnb(self.P, f, mu, stop, lo, hi, self.eps)
        # the box search first (most calls close in a few hundred nodes), then the exact one
        first = _box_bnb(self.P, f, mu, dataclasses.replace(stop, max_nodes=min(stop.max_nodes, MEET_AFTER)),
                         lo, hi, self.eps)
        if first.stopped != "max_nodes":
            return first
        return _price_kl_meet(self, mu, stop, first.best)

    @cached_property
    def meet_halves(self) -> list[tuple]:
        """`_price_kl_meet`'s two halves of symbols (by mass), with their subsets sorted by mass
        (`_sorted_subsets`)."""
        return _sorted_subsets(self.P, np.array_split(np.argsort(-self.P, kind="stable"), 2))

    def kl(self, A: np.ndarray) -> np.ndarray:
        """`KL(v_S || P)` of the vertex of any set S of prior mass A (`_kl`)."""
        return _kl(A, self.eps)

    @cached_property
    def split(self) -> Split:
        """The mutual-information bound's relaxation (`Split`): the symbols of mass at least
        HEAVY_SHARE * A* (at most HEAVY_MAX, the largest) kept apart, the others merged into one
        divisible block; with none apart, its closed form (`kl_top`)."""
        A_star, top = kl_top(self.eps)
        heavy = np.flatnonzero(self.P >= HEAVY_SHARE * A_star)
        heavy = heavy[np.argsort(-self.P[heavy], kind="stable")][:min(HEAVY_MAX, self.d - 1)]
        if not heavy.size:
            return Split(heavy, np.zeros((1, 0), dtype=bool), np.array([A_star]), np.ones(1), np.array([top]), top,
                         np.zeros(0), 1.0)
        split = _relaxed_split(self.P, self.eps, np.sort(heavy))
        split.bound = min(split.bound, top)            # both bound I(X; Y)
        return split

    def chord_bound(self, kind):
        """Mutual information: `-H(P) + Split.bound`. I(X; Y) is the posteriors' mean
        `KL(post_y || P)`, KL is convex in the posterior so its maximum over the cone is at a
        vertex, and a vertex's KL depends on its set only through the set's mass A (`kl`). So
        every eps-LDP channel has `I(X; Y) <= t - 1 - log t`, `t = eps e^eps / (e^eps - 1)`, for
        any prior (`kl_top`): the dual point `mu = log P`, whose pricing maximum is known in closed
        form. A channel attains it when every posterior's set has mass A* and each symbol is in
        the sets at rate A*: impossible for a symbol heavier than A*, which is why those are kept
        apart (`Split`, a tighter bound). `low_loss` approaches it. None for histogram-MSE (its
        vertex value depends on `sum_S P_x^2` too)."""
        if kind != "mutual-information":
            return np.inf
        return float(_xlogx(self.P).sum() + self.split.bound)

    def shape_bound(self, kind: str, deadline: float = np.inf) -> tuple[float, np.ndarray | None]:
        """Histogram-MSE: (a bound on every channel's gain, the dual point it holds at) from the
        chord relaxation over intervals of tau at a dual of the prior's shape
        (`relaxed.shape_bound`); (inf, None) for mutual information, whose KL bound is tighter."""
        if kind != "histogram-mse":
            return np.inf, None
        from .relaxed import shape_bound
        return shape_bound(self.P, self.eps, kind, deadline)

    def design(self, kind, rng):
        """Mutual information: the sliding-window channel. The symbols are laid on a circle of
        circumference 1 in a random order, each an arc of length P_x; for theta uniform on the
        circle, the output is the interval of theta between consecutive breakpoints and its set
        `S_y` the symbols whose arc starts in `[theta, theta + A*)`. A start lies in that window for
        a fraction A* of theta, so every symbol is in the sets at rate exactly A*, and
        `q(y | x) = len_y (1 + c 1_{S_y}(x)) / (1 + c A*)` is a channel (rows sum to 1) and eps-LDP
        for any prior. Its sets' masses are within one symbol of A*, so its I(X; Y) is within
        about `kl''(A*) max P^2` of `t - 1 - log t` (d = 1024, Dirichlet(1), eps = 1: 9e-6
        relative). Up to 2d outputs, built in O(d^2); output y has probability
        `len_y (1 + c P(S_y)) / (1 + c A*)`."""
        if kind != "mutual-information":
            return np.zeros((0, self.d)), np.zeros(0)
        S, length = self.windows(rng)
        A_star = kl_top(self.eps)[0]
        return self.vertex(S), length * (1.0 + self.c * (S @ self.P)) / (1.0 + self.c * A_star)

    def windows(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(sets S_y as boolean rows, lengths len_y) of `design`'s sliding-window channel."""
        A_star = kl_top(self.eps)[0]
        start, cuts = _arcs(self.P, A_star, rng)
        mids = 0.5 * (cuts[:-1] + cuts[1:])
        return (start[None, :] - mids[:, None]) % cuts[-1] < A_star, np.diff(cuts)

    def low_loss(self, kind, mu, n, rng, deadline=np.inf, depth=LOW_LOSS_DEPTH[1]):
        """Up to n vertices that nearly attain `chord_bound`: each copies the heavy part J and the
        light mass a of a column of the relaxation's optimum (`Split`, drawn by weight) and fills
        the light part with a set of mass within a hair of a, so that its loss, the relaxation's
        reduced cost lost (quadratic in the distance), is tiny. The light set is drawn by the
        pivotal method with inclusion rate `a / P(light)` (less `drift`) and its mass within one
        symbol's of a; flipping up to `depth` symbols of each of two disjoint random tuning sets,
        matched by a meet in the middle (`_meet`), brings it to a. Of the LOW_LOSS_KEEP matches
        of least loss, the one with the largest reduced cost at the master's duals mu (None: the
        chord's `log P`) is kept (`_least_loss`)."""
        d, P, c = self.d, self.P, self.c
        sp = self.split
        light = np.setdiff1d(np.arange(d), sp.heavy)
        half = min(LOW_LOSS_TUNING, light.size // 2)
        if kind != "mutual-information" or half < 1:
            return np.zeros((0, d))
        PL = P[light]
        mass_l = float(PL.sum())
        log_p = np.log(P)
        # phi(v_S) - mu . v_S = kl(A) + v_S . (log P - mu) = kl(A) + (sum rho + c rho(S)) / (1 + c A)
        rho = P * (log_p - (log_p if mu is None else mu))
        subsets, M = _subset_matrix(half, depth)
        rate = float(sp.w @ sp.a) / mass_l                  # the light symbols' mean inclusion rate
        out, losses = [], []
        for _ in range(n):
            if time.perf_counter() > deadline:
                break
            k = int(rng.choice(sp.w.size, p=sp.w))
            z = np.zeros(d, dtype=bool)
            z[sp.heavy] = sp.J[k]
            z[light] = _pivotal(np.clip(sp.a[k] / mass_l - self.drift[light], 0.0, 1.0), PL, rng)
            T = light[rng.permutation(light.size)[:2 * half]].reshape(2, half)
            D = np.where(z[T], -P[T], P[T])                       # what flipping each symbol adds
            R = np.where(z[T], -rho[T], rho[T])
            A, gains, first, second = _meet(D, R, M, float(P @ z), float(P[sp.heavy] @ sp.J[k]) + sp.a[k])
            loss = np.where((A > 0.0) & (A < 1.0), -sp.reduced_cost(sp.J[k], A, self.eps), np.inf)
            if not np.isfinite(loss.min()):
                continue
            base = rho.sum() + c * float(rho @ z)
            r, i = _least_loss(loss)
            value = self.kl(A[r, i]) + (base + c * gains[r, i]) / (1.0 + c * A[r, i])
            best = int(np.argmax(np.where(np.isfinite(loss[r, i]), value, -np.inf)))
            r, i = int(r[best]), int(i[best])
            losses.append(float(loss[r, i]))
            for side, pick in enumerate((first[i], second[r, i])):
                z[T[side, list(subsets[pick])]] ^= True
            out.append(z)
        self.last_loss = float(np.median(losses)) if losses else np.inf
        S = np.array(out, dtype=bool).reshape(-1, d)
        S = S[S.any(axis=1) & ~S.all(axis=1)]
        if len(S):
            self.drift[light] += S[:, light].mean(axis=0) - rate
        return self.vertex(S)

    def prefers_vertices(self, kind: str) -> bool:
        """Whether the closed-form vertex set (2^d - 2 columns) beats column generation here."""
        return kind in SEPARABLE and self.d <= VERTEX_MAX_D


@dataclass
class Split:
    """A relaxation of mutual information under LDP (`LDPCone.split`): the heavy symbols kept, the
    light ones merged into one block whose set part may have any mass a in [0, P(light)]. A
    column is (J, a), J the heavy symbols in the set; its posterior on (heavy, block) is
    `(P_H (1 + c 1_J), P(light) + c a) / (1 + c A)`, `A = P(J) + a`, and its gain `kl(A)`, the KL
    of every vertex whose set is J plus light symbols of mass a. Every channel's posteriors, so
    merged, are a mixture of such columns averaging to the merged prior, with the same mean KL
    (its I(X; Y)): the relaxation's optimum `bound` bounds I(X; Y). Kept: its optimal columns
    (J, a, weights w) and duals mu (on heavy symbols, then the block)."""

    heavy: np.ndarray
    J: np.ndarray
    a: np.ndarray
    w: np.ndarray
    mu: np.ndarray
    bound: float
    PH: np.ndarray
    PL: float

    def reduced_cost(self, J: np.ndarray, A: np.ndarray, eps: float) -> np.ndarray:
        """`kl(A) - mu . posterior` of the columns with heavy part J and total masses A."""
        PH, PL = self.PH, self.PL
        c = math.expm1(eps)
        u = 1.0 + c * np.asarray(A, dtype=float)
        a = np.asarray(A) - float(PH @ J)
        return _kl(A, eps) - (self.mu[:-1] @ (PH * (1.0 + c * J)) + self.mu[-1] * (PL + c * a)) / u


HEAVY_SHARE, HEAVY_MAX = 0.5, 12
"""`LDPCone.split` keeps apart the symbols of mass at least HEAVY_SHARE * A* (A* the mass of the
sets farthest from the prior, `kl_top`), at most HEAVY_MAX of them (2^HEAVY_MAX heavy parts)."""
SPLIT_ROUNDS = 200


def _relaxed_split(P: np.ndarray, eps: float, heavy: np.ndarray) -> Split:
    """Solve `Split`'s relaxation by column generation on its own small master (heavy symbols + 1
    rows). Pricing is closed form for each of the 2^h heavy parts J: with `u = 1 + c A`, a
    column's reduced cost is `t - mu_L - (t + K_J) / u - log u` (t = eps e^eps / (e^eps - 1),
    `K_J = mu . P' + c mu_H . P_J - mu_L (1 + c P(J))`), whose one stationary point `u = t + K_J`
    is its maximum, clipped to the masses J allows. The bound is `mu . P' + max reduced cost`
    (weak duality, valid for any mu) plus a margin of 16 ulps of t for round-off; the loop stops
    once it is within 1e-13 t of the master's value (or after SPLIT_ROUNDS rounds)."""
    from .colgen import Master

    c = math.expm1(eps)
    t = (1.0 + c) * eps / c
    light = np.setdiff1d(np.arange(P.size), heavy)
    PH, PL = P[heavy], float(P[light].sum())
    Pm = np.r_[PH, PL]
    Js = np.array(np.meshgrid(*[[False, True]] * heavy.size, indexing="ij")).reshape(heavy.size, -1).T
    PJ = Js @ PH

    def columns(rows, a):
        u = 1.0 + c * (PJ[rows] + a)
        V = np.hstack([PH * (1.0 + c * Js[rows]) / u[:, None], ((PL + c * a) / u)[:, None]])
        return V, _kl(PJ[rows] + a, eps)

    def price(mu):
        K = mu @ Pm + c * (Js @ (mu[:-1] * PH)) - mu[-1] * (1.0 + c * PJ)
        u = np.clip(t + K, 1.0 + c * PJ, 1.0 + c * (PJ + PL))
        return t - mu[-1] - (t + K) / u - np.log(u), np.clip((u - 1.0) / c - PJ, 0.0, PL)

    master = Master(Pm)
    A_star = kl_top(eps)[0]
    rows = np.tile(np.arange(len(Js)), 3)
    a0 = np.r_[np.clip(A_star - PJ, 0.0, PL), np.zeros(len(Js)), np.full(len(Js), PL)]
    master.add(*columns(rows, a0))
    J_of, a_of = rows, a0
    tol = 1e-13 * max(1.0, t)                       # what round-off leaves of a reduced cost
    for rounds in range(SPLIT_ROUNDS + 1):
        w, mu = master.solve()
        assert mu is not None
        rc, a = price(mu)
        value, bound = float(master.gains @ w), float(mu @ Pm + rc.max())
        new = np.flatnonzero(rc > tol)
        if bound - value <= tol or not new.size or rounds == SPLIT_ROUNDS:
            break
        master.add(*columns(new, a[new]))
        J_of, a_of = np.r_[J_of, new], np.r_[a_of, a[new]]
    used = w > 0
    assert mu is not None
    return Split(heavy, Js[J_of[used]], a_of[used], w[used] / w[used].sum(), mu,
                 bound + 16 * np.finfo(float).eps * t, PH, PL)


def _price_kl_meet(fam: LDPCone, mu: np.ndarray, stop: _Stop, start: float = -np.inf) -> Priced:
    """Mutual information under LDP, priced exactly over the 2^d vertices (small d).

    A vertex's reduced cost depends on its set S only through two additive quantities,
    `A = P(S)` and `rho(S)` with `rho = P (log P - mu)` (`LDPCone.low_loss`):
    `G(S) = kl(A) + (rho(X) + c rho(S)) / (1 + c A)`, a ratio. Dinkelbach's method maximizes it:
    `G(S) >= lam` iff `F_S(lam) = (1 + c A)(G(S) - lam) >= 0`, and
    `F_S(lam) = rho(X) - lam + c rho(S) + ((1 + c) eps - c lam) A - psi(A)`, `psi(A) = (1 + c A) log(1 + c A)`,
    is additive in S but for a convex function of A. Over the pairs of a meet in the middle (each
    half's subsets sorted by A) it is an inverse Monge array, so each row's largest maximizer does
    not increase along the rows and all rows' maxima take O(n log n) evaluations (`_monotone_max`),
    n = 2^(d/2). Each step sets lam to the best set's G until it no longer rises; for any lam,
    `G(S) - lam = F_S(lam) / (1 + c A) <= max(F(lam), 0)`, so `lam + max(F(lam), 0)` bounds the
    pricing whatever the number of steps (plus the search's round-off: a few ulps of the terms a level),
    so a search cut by the deadline (between steps) or by DINKELBACH_STEPS returns a valid bound.
    `start`: the value of an admissible posterior already found, where the steps begin if above
    the prior's (at a master's optimum, one step then proves it)."""
    d, P, c, eps = fam.d, fam.P, fam.c, fam.eps
    tol = stop.resolve(_scale(SEPARABLE["mutual-information"], mu, d))
    rho = _xlogx(P) - P * mu
    R0 = float(rho.sum())
    (h1, B1, A1), (h2, B2, A2) = fam.meet_halves
    r1, r2 = B1 @ rho[h1], B2 @ rho[h2]

    def gain(A, r):
        return _kl(A, eps) + (R0 + c * r) / (1.0 + c * A)

    def psi(A):
        return (1.0 + c * A) * np.log1p(c * A)

    lam = max(float(gain(np.zeros(1), np.zeros(1))[0]), start)          # S empty: the prior
    levels = np.log2(A1.size) + 2
    steps = 0
    while True:
        steps += 1
        k = (1.0 + c) * eps - c * lam
        l1, l2 = c * r1 + k * A1, c * r2 + k * A2
        J, F = _monotone_max(l1, A1, l2, A2, psi)
        F += R0 - lam
        # each evaluation is a few ulps of its terms off; a level's misstep costs at most that
        size = float(np.abs(l1).max() + np.abs(l2).max() + psi(A1[-1] + A2[-1]) + abs(R0 - lam))
        slack = 8 * levels * np.finfo(float).eps * size
        G = gain(A1 + A2[J], r1 + r2[J])
        top = float(G.max())
        if top <= lam + slack or steps >= DINKELBACH_STEPS or time.perf_counter() > stop.deadline:
            break
        lam = top
    terms = np.abs(_xlogx(P)) + np.abs(P * mu)               # rho's terms, before they cancel
    upper = lam + _kl_rows_bound(F, slack, (A1, r1, B1 @ terms[h1]), (A2, r2, B2 @ terms[h2]), c, lam, gain,
                                 float(terms.sum()))
    rows = np.argsort(-G, kind="stable")[:8 * MAX_COLUMNS]
    S = np.zeros((rows.size, d), dtype=bool)
    S[:, h1] = B1[rows]
    S[:, h2] = B2[J[rows]]
    V = fam.vertex(S)
    values = (_xlogx(V) - V * mu).sum(axis=1)
    cols = _Columns(d, tol)
    cols.add(values, V)
    stopped = "time_limit" if top > lam + slack and steps < DINKELBACH_STEPS else ""
    return Priced(cols.best, max(upper, cols.best), cols.top(), steps * A1.size, stopped)


KL_EXACT_ENTRIES = 1 << 22
"""`_kl_rows_bound` evaluates G over whole rows of least mass, at most this many entries in all
(and at least the first row): at d = 40 a row holds 2^20 sets, four rows 32 MB an array."""


def _kl_rows_bound(F, slack, half1, half2, c, lam, gain, size: float) -> float:
    """A bound on `max_S G(S) - lam` (>= 0) from `_price_kl_meet`'s row maxima F of
    `F_S(lam) = (1 + c A_S)(G(S) - lam)`, each within `slack` of its true value; half1 / half2:
    each half's subsets as (mass A, rho-sum r, sum of rho's terms' magnitudes).

    Every set of row i has mass `A_S >= A1[i]`, so `G(S) - lam <= max(F[i] + slack, 0) / (1 + c A1[i])`.
    The factor matters at large eps: F's terms grow like c (1 + c) eps, and so does the slack (LDP,
    d = 17, eps = 14.9, prior entries of 2e-9..2e-6: the slack alone was 1.7e-6 of I(X; Y) = 1.6,
    and the loop stopped there without a column). Rows where dividing gains little (`c A1[i] < 1`,
    at most KL_EXACT_ENTRIES sets in all: the empty set of the heavy half first, then subsets of its
    lightest symbols) are evaluated exactly instead, G on every set of the row, with a round-off allowance
    of a few ulps of the magnitudes of its terms (`size`: all of rho's, before they cancel)."""
    (A1, r1, m1), (A2, r2, m2) = half1, half2
    row = np.maximum(F + slack, 0.0) / (1.0 + c * A1)
    light = np.flatnonzero(c * A1 < 1.0)[:max(1, KL_EXACT_ENTRIES // A2.size)]
    if light.size:
        A, r = A1[light, None] + A2[None, :], r1[light, None] + r2[None, :]
        G = gain(A, r)
        terms = np.abs(G) + (size + c * (m1[light, None] + m2[None, :])) / (1.0 + c * A)
        G = G + 8 * A1.size.bit_length() * np.finfo(float).eps * terms
        row[light] = np.maximum(G.max(axis=1) - lam, 0.0)
    return float(row.max())


def _monotone_max(l1: np.ndarray, a1: np.ndarray, l2: np.ndarray, a2: np.ndarray, psi) -> tuple[np.ndarray, np.ndarray]:
    """For every i, the largest j maximizing `l1[i] + l2[j] - psi(a1[i] + a2[j])` and the maximum,
    with a1 and a2 ascending and psi convex. Convexity makes the array inverse Monge, so that j
    does not increase with i: divide and conquer on the rows (the middle row of each block of rows
    searched over its block's range of j, the rows above it then over j >= its maximizer, those
    below over j <= it), one level of every block at a time."""
    n1, n2 = l1.size, l2.size
    J, best = np.empty(n1, dtype=np.int64), np.empty(n1)
    r0, r1, c0, c1 = (np.array([v], dtype=np.int64) for v in (0, n1, 0, n2 - 1))
    while r0.size:
        mid = (r0 + r1) // 2
        count = c1 - c0 + 1
        starts = np.r_[0, np.cumsum(count)[:-1]]
        block = np.repeat(np.arange(r0.size), count)
        cols = np.arange(int(count.sum())) - starts[block] + c0[block]
        vals = l2[cols] - psi(a1[mid[block]] + a2[cols])
        top = np.maximum.reduceat(vals, starts)
        last = np.maximum.reduceat(np.where(vals == top[block], cols, -1), starts)
        J[mid], best[mid] = last, top + l1[mid]
        up, down = mid > r0, mid + 1 < r1
        r0, r1, c0, c1 = (np.r_[r0[up], mid[down] + 1], np.r_[mid[up], r1[down]],
                          np.r_[last[up], c0[down]], np.r_[c1[up], last[down]])
    return J, best


def _kl(A, eps: float) -> np.ndarray:
    """`KL(v_S || P)` of the LDP vertex of any set S of prior mass A: with `v_S = P (1 + c 1_S) /
    (1 + c A)` (c = e^eps - 1) the log-ratio is `log((1 + c) / (1 + c A))` on S and
    `-log(1 + c A)` off it, so `KL = (1 + c) A eps / (1 + c A) - log(1 + c A)`, whatever the prior."""
    c = math.expm1(eps)
    A = np.asarray(A, dtype=float)
    return (1.0 + c) * A * eps / (1.0 + c * A) - np.log1p(c * A)


def kl_top(eps: float) -> tuple[float, float]:
    """(A*, KL*): the mass of the LDP vertices farthest from the prior in KL and that KL,
    `max_A (1 + c) A eps / (1 + c A) - log(1 + c A)` (`LDPCone.kl`, c = e^eps - 1). Setting its
    derivative `(1 + c) eps / (1 + c A)^2 - c / (1 + c A)` to zero gives `1 + c A* = t`,
    `t = eps e^eps / (e^eps - 1)`, and `KL* = t - 1 - log t`. `t - 1` and `s - log(1 + s)` are
    summed as series where the direct forms cancel (eps < 0.1, s < 0.05)."""
    if eps < 0.1:                                   # t - 1 = (eps + expm1(-eps)) / -expm1(-eps)
        num = math.fsum((-eps) ** k / math.factorial(k) for k in range(2, 25))
    else:
        num = eps + math.expm1(-eps)
    s = num / -math.expm1(-eps)
    if s < 0.05:
        top = math.fsum((-1) ** k * s ** k / k for k in range(2, 40))
    else:
        top = s - math.log1p(s)
    c = math.expm1(eps) if eps < 700 else math.inf
    return s / c, top


def _price_map(fam: Family, mu: np.ndarray) -> Priced:
    """max_v max_x v_x - mu . v = max_x sigma(e_x - mu): exact."""
    d = fam.d
    sig, V = fam.support(np.eye(d) - mu[None, :])
    vals = V.max(axis=1) - V @ mu
    tol = PRICING_TOL
    cols = _Columns(d, tol)
    cols.add(vals, V)
    return Priced(float(vals.max()), float(max(sig.max(), vals.max())), cols.top(), d)  # exact


def _next_batch(heap: list, stop: _Stop, best: float, tol: float, nodes: int,
                size: int = BATCH) -> tuple[list, str]:
    """The open nodes to expand next (largest bounds first, up to `size`), or none and why the
    search ends ("" when it closed)."""
    if not heap or stop.done(best, -heap[0][0], tol):
        return [], ""
    stopped = stop.out(nodes)
    if stopped:
        return [], stopped
    batch: list = []
    while heap and len(batch) < size and heap[0][0] <= -(best + tol):
        batch.append(heapq.heappop(heap))
    return batch, ""


def _scale(f, mu: np.ndarray, d: int) -> float:
    """A bound on |phi(v) - mu . v| over posteriors: |phi| <= 1 (sum v^2) or log d (entropy)."""
    return 1.0 + float(np.abs(mu).max()) + (np.log(d) if f is SEPARABLE["mutual-information"] else 0.0)


def _upper(best: float, tol: float, heap: list) -> float:
    """A valid bound: open nodes keep theirs; pruned ones were within tol of the best."""
    return max([best + tol] + [-item[0] for item in heap])


def _price_mse(fam: Family, h: np.ndarray, mu: np.ndarray, stop: _Stop) -> Priced:
    """max_v (h . v)^2 - mu . v = max_lam sigma(2 lam h - mu) - lam^2, by branch and bound on lam."""
    d = fam.d
    ext, _ = fam.support(np.vstack([h, -h]))
    t_hi, t_lo = float(ext[0]), float(-ext[1])
    scale = max(1.0, t_hi ** 2, t_lo ** 2, float(np.abs(mu).max()))
    tol = stop.resolve(scale)
    cols = _Columns(d, tol)

    def evaluate(lams):
        G = 2.0 * lams[:, None] * h[None, :] - mu[None, :]
        sig, V = fam.support(G)
        t = V @ h
        cols.add(t * t - V @ mu, V)
        return sig, V

    lams = np.linspace(t_lo, t_hi, 33)
    sig, V = evaluate(lams)
    heap: list = []
    counter, nodes, stopped = 0, 0, ""

    def push(a, b, sa, sb, va, vb):
        nonlocal counter
        # one vertex optimal at both ends: sigma equals its chord on [a, b], no better point inside
        if (2 * b * h - mu) @ va >= sb - tol * 1e-3 or (2 * a * h - mu) @ vb >= sa - tol * 1e-3:
            return
        slope = (sb - sa) / (b - a) if b > a else 0.0
        lam = min(max(0.5 * slope, a), b)
        ub = sa + slope * (lam - a) - lam * lam
        if ub > cols.best + tol:
            counter += 1
            heapq.heappush(heap, (-ub, counter, a, b, sa, sb, va, vb, lam))

    for i in range(len(lams) - 1):
        push(lams[i], lams[i + 1], sig[i], sig[i + 1], V[i], V[i + 1])
    while True:
        batch, stopped = _next_batch(heap, stop, cols.best, tol, nodes)
        if not batch:
            break
        mids = []
        for item in batch:
            a, b, lam = item[2], item[3], item[8]
            w = b - a
            mids.append(lam if a + 1e-6 * w < lam < b - 1e-6 * w else 0.5 * (a + b))
        nodes += len(batch)
        sm, Vm = evaluate(np.array(mids))
        for item, m, s_m, v_m in zip(batch, mids, sm, Vm):
            _, _, a, b, sa, sb, va, vb, _ = item
            if b - a <= 1e-13 * max(1.0, abs(a), abs(b)):
                continue
            push(a, m, sa, s_m, va, v_m)
            push(m, b, s_m, sb, v_m, vb)
    return Priced(cols.best, _upper(cols.best, tol, heap), cols.top(), nodes, stopped)


def family_for(problem):
    """The closed-form family of the problem's admissible posteriors, or None: a single notion whose
    `posterior_family` names one of FAMILIES (a `lip` notion with G = X, an `ldp` notion)."""
    if len(problem.privacy) != 1:
        return None
    shape = problem.privacy[0].posterior_family(problem)
    if shape is None or np.min(shape[1]) <= 0:
        return None
    return FAMILIES[shape[0]](problem.prior, shape[1])


FAMILIES = {"lip-box": LIPBox, "ldp-cone": LDPCone}
"""`Notion.posterior_family` shapes -> the family classes that price them."""
