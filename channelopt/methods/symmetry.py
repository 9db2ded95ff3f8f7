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
problem. It is solved by column generation from the prior itself (u = 1, admissible under both
notions), pricing every type each round from a few sums over classes that phi and ubar depend on
(`_ldp_pricing`, `_lip_pricing`), so its dual y is a certificate: mu_x = y_c / (n_c P_x)
satisfies `phi(v) - mu . v <= max(0, the largest reduced cost)` on every vertex and
`mu . P = sum_c y_c`. A channel
is recovered from one representative vertex per used type, shifted within each class by the
rows of a design (`_design`) whose marginal on each class is uniform over its shifts, so that a
type's shifts average to its class averages: each shifted vertex of type t weighted W_t times its
row's weight gives a channel of the full problem with the LP's value; where those are more
columns than the problem's outputs, a basic solution on at most d of them is picked
(`posterior.basic_weights`).
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np

from .structured import SEPARABLE, Family, LDPCone
from .result import PosteriorSolution

MAX_TYPES = 100_000_000
"""Largest number of vertex types a round of pricing evaluates (`priced_count`), CHUNK at a time:
four levels at d = 1000 under LDP price 57 million a round (3.9 billion types), about 1 s."""
LINE = 4
"""Under LDP, the most counts of the largest class priced for each count vector of the others
(`_line_best`)."""
CHUNK = 1 << 17
"""Types evaluated together in one vectorized step of the pricing."""
ROUNDS = 300
"""Rounds of the column generation over types before giving up (None: the caller goes on)."""
JOIN = 8
"""Types of largest reduced cost that join the master a round (per class, at least 8)."""
STOP = 1e-13
"""The column generation stops once no type's reduced cost exceeds this (relative to the gain):
its bound, exact over every type, is then within it of the master's value."""


def classes(P: np.ndarray, h: np.ndarray | None) -> np.ndarray | None:
    """Class index of each symbol (equal prior mass and equal h), or None if all are distinct."""
    key = np.round(P / P.max(), 13)[:, None]
    if h is not None:
        key = np.hstack([key, np.round(h / max(1.0, np.abs(h).max()), 13)[:, None]])
    _, label = np.unique(key, axis=0, return_inverse=True)
    label = label.ravel()
    return label if label.max() + 1 < P.size else None


def _pivot(sizes: np.ndarray) -> int:
    """The largest class, whose count the pricing does not go through (the grid over the others
    is then the smallest): under LIP the mass fixes it, under LDP `_line_best` picks it."""
    return int(np.argmax(sizes))


def type_count(fam: Family, sizes: np.ndarray) -> int:
    """The vertex types: every count vector under LDP; under LIP, for each class of the inside
    symbol, every count vector of the classes but `_pivot`'s (whose count the mass then fixes to
    a few values)."""
    if isinstance(fam, LDPCone):
        return int(np.prod(sizes.astype(float) + 1))
    rest = np.delete(sizes, _pivot(sizes)).astype(float)
    return int(len(sizes) * np.prod(rest + 1))


def priced_count(fam: Family, sizes: np.ndarray) -> int:
    """The types a round of pricing evaluates (at most): LIP's `type_count`; under LDP every count
    vector of the classes but the largest, times LINE counts of that one (`_line_best`)."""
    if isinstance(fam, LDPCone):
        return int(np.prod(np.delete(sizes, _pivot(sizes)).astype(float) + 1) * min(LINE, int(sizes.max()) + 1))
    return type_count(fam, sizes)


def _levels(fam: Family, p: np.ndarray, A, tau):
    """Per type and class: (u of the symbols at the upper level, u of those at the lower level)."""
    if isinstance(fam, LDPCone):
        up = (1.0 + fam.c) / tau[:, None] * np.ones_like(A)
        low = 1.0 / tau[:, None] * np.ones_like(A)
    else:
        up = np.broadcast_to(np.minimum(math.exp(fam.eps), 1.0 / p), A.shape)
        low = np.full(A.shape, math.exp(-fam.eps_lower))
    return up, low


def _parts(fam, p, sizes, A, j, f, tau) -> tuple:
    """What rebuilds a vertex of each type (`_representatives`): (A, counts at the lower level,
    the inside symbol's class as a 0/1 row, u at the upper level, u at the lower level, the
    inside u in its class's column)."""
    up, low = _levels(fam, p, A, tau)
    inside = np.zeros_like(A)
    has = j >= 0
    inside[np.flatnonzero(has), j[has]] = 1.0
    n_low = sizes[None, :] - A - inside
    fval = np.where(has, f, 0.0)[:, None] * inside
    return A, n_low, inside, np.array(up), low, fval


def _priced_types(fam, kind, p, hc, sizes, A, j, f, tau):
    """The types (A, j, f, tau) as the LP sees them: (class averages of u, phi)."""
    _, n_low, inside, up, low, fval = _parts(fam, p, sizes, A, j, f, tau)
    ubar = (A * up + n_low * low + fval) / sizes[None, :]
    return ubar, _phi(kind, p, hc, A, n_low, inside, up, low, fval)


def _ldp_functionals(kind: str, p: np.ndarray, hc: np.ndarray | None, sizes: np.ndarray, y: np.ndarray):
    """LDP: the sums over classes that phi and the duals' term of a type (counts A) depend on, as
    per-class tables of a = 0..n_c (`table[c][a]`), each with how classes combine (add or max).

    With tau = 1 + c s, s = A . p, a vertex has v = p (1 + c) / tau on S and p / tau off it, so
    `sum_c y_c ubar_c = (sum y + c A . (y / n)) / tau`, and phi is a function of tau and one more
    sum: sum v^2 = (sum n p^2 + (c^2 + 2c) A . p^2) / tau^2 (histogram-MSE); sum v log v =
    (sum n p log p + c A . p log p + (1 + c) s log(1 + c)) / tau - log tau (mutual information;
    log tau's factor, (sum n p + c s) / tau, is 1 up to the prior's round-off and kept as computed);
    (v . h)^2 = ((sum n p h + c A . p h) / tau)^2 (bayes-mse); and max v, the larger of
    (1 + c) max{p_c : A_c > 0} and max{p_c : A_c < n_c}, over tau (MAP)."""
    a = [np.arange(int(n) + 1, dtype=float) for n in sizes]
    tables: dict[str, tuple[list, np.ufunc]] = {}
    tables["s"] = ([x * pc for x, pc in zip(a, p)], np.add)
    tables["b"] = ([x * yc / nc for x, yc, nc in zip(a, y, sizes)], np.add)
    if kind == "histogram-mse":
        tables["r"] = ([x * pc * pc for x, pc in zip(a, p)], np.add)
    elif kind == "mutual-information":
        tables["r"] = ([x * pc * math.log(pc) for x, pc in zip(a, p)], np.add)
    elif kind == "bayes-mse":
        tables["r"] = ([x * pc * hv for x, pc, hv in zip(a, p, np.asarray(hc))], np.add)
    else:                                                # map: the heaviest symbol in S, and off it
        tables["up"] = ([np.where(x > 0, pc, 0.0) for x, pc in zip(a, p)], np.maximum)
        tables["low"] = ([np.where(x < n, pc, 0.0) for x, pc, n in zip(a, p, sizes)], np.maximum)
    return tables


def _ldp_rc(kind: str, c: float, p: np.ndarray, hc, sizes: np.ndarray, y: np.ndarray, F: dict) -> np.ndarray:
    """Reduced costs `phi - ubar . y` of LDP types from their sums F (`_ldp_functionals`)."""
    tau = 1.0 + c * F["s"]
    if kind == "histogram-mse":
        phi = (float(sizes @ (p * p)) + c * (c + 2.0) * F["r"]) / (tau * tau)
    elif kind == "mutual-information":
        phi = (float(sizes @ (p * np.log(p))) + c * F["r"] + (1.0 + c) * math.log1p(c) * F["s"]) / tau \
            - np.log(tau) * (float(sizes @ p) + c * F["s"]) / tau
    elif kind == "bayes-mse":
        phi = ((float(sizes @ (p * hc)) + c * F["r"]) / tau) ** 2
    else:
        phi = np.maximum((1.0 + c) * F["up"], F["low"]) / tau
    return phi - (float(y.sum()) + c * F["b"]) / tau


def _outer_sums(tables: dict, dims: list[int]):
    """Every count vector of `dims` (C order), CHUNK at a time: (index of the first, {name: the
    tables combined over classes}) with `tables[name] = ([one table per class], np.add or
    np.maximum)`. The last classes' tables are combined once (the inner part), the first ones' a
    block at a time, each block combined with the inner part as an outer sum."""
    k = len(dims)
    if not k:
        yield 0, {name: np.zeros(1) for name in tables}
        return
    split = k - 1
    while split > 0 and math.prod(dims[split - 1:]) <= CHUNK:
        split -= 1
    inner = {}
    for name, (tab, op) in tables.items():
        arr = tab[split]
        for c in range(split + 1, k):
            arr = op.outer(arr, tab[c]).ravel()
        inner[name] = arr
    n_in, n_out = math.prod(dims[split:]), math.prod(dims[:split])
    block = max(1, CHUNK // n_in)
    for first in range(0, n_out, block):
        counts = np.unravel_index(np.arange(first, min(first + block, n_out)), dims[:split]) if split else ()
        F = {}
        for name, (tab, op) in tables.items():
            if split:
                head = tab[0][counts[0]]
                for c in range(1, split):
                    head = op(head, tab[c][counts[c]])
                F[name] = op.outer(head, inner[name]).ravel()
            else:
                F[name] = inner[name]
        yield first * n_in, F


class _Best:
    """The `join` largest reduced costs seen, with their keys (rows of ints), and the largest."""

    def __init__(self, join: int, width: int):
        self.join, self.best = join, -np.inf
        self.rc, self.keys = np.empty(0), np.empty((0, width), dtype=np.int64)

    def add(self, rc: np.ndarray, keys) -> None:
        if not rc.size:
            return
        self.best = max(self.best, float(rc.max()))
        top = np.argpartition(-rc, min(self.join, rc.size) - 1)[:self.join]
        self.rc = np.r_[self.rc, rc[top]]
        self.keys = np.vstack([self.keys, np.column_stack([np.asarray(key)[top] for key in keys]).astype(np.int64)])
        keep = np.argsort(-self.rc, kind="stable")[:self.join]
        self.rc, self.keys = self.rc[keep], self.keys[keep]


def _found(fam, kind, p, hc, sizes, y, A, j, f, tau, best: float):
    """The best types (A, j, f, tau), rebuilt as the master sees them (`_priced_types`) and their
    reduced costs recomputed from those: (the largest reduced cost over every type, [(reduced
    cost, ubar, phi, the type)], largest first)."""
    ubar, phi = _priced_types(fam, kind, p, hc, sizes, A, j, f, tau)
    rc = phi - ubar @ y
    found = [(float(rc[i]), ubar[i], float(phi[i]), (A[i:i + 1], j[i:i + 1], f[i:i + 1], tau[i:i + 1]))
             for i in np.argsort(-rc, kind="stable")]
    return max(best, float(rc.max(initial=-np.inf))), found


def _line_best(kind: str, c: float, p: np.ndarray, hc, sizes: np.ndarray, y: np.ndarray, F: dict, line: int,
               tables: dict) -> tuple[np.ndarray, np.ndarray]:
    """LDP: for each count vector of the classes but `line` (their sums F, `_ldp_functionals`;
    `tables` are those of every class), the count a of `line` that extends it to the type of
    largest reduced cost, and that reduced cost: (a, rc). Along a, tau = tau0 + c p_line a is
    affine, and so are the numerators of phi and of the duals' term over tau (`_ldp_rc`), so that
    the reduced cost is, in u = 1 / tau (decreasing in a):

    - histogram-MSE: `alpha u^2 + (beta - gamma) u - zeta`. Where alpha < 0 it rises up to its
      vertex u* and falls after it (past a = n where u* <= 0), so that its largest value on the
      integers is at floor(a*) or the next count (clipped to 0..n); else it is largest at an end.
    - mutual information: `(alpha - gamma) u + beta - zeta + log u`, whose derivative in tau,
      `-(alpha - gamma + tau) / tau^2`, changes sign once, at tau* = gamma - alpha (if > 0; else
      it falls from a = 0): floor(a*) or the next count.
    - bayes-mse: `(alpha u + beta)^2 - gamma u - zeta`, convex: at an end.
    - MAP: for 0 < a < n the heaviest symbols in S and off it stay, so `M u - zeta` is monotone:
      at a = 0, 1, n - 1 or n.

    So at most LINE counts are priced per count vector, not n + 1."""
    n = int(sizes[line])
    size = F["s"].size
    if kind not in ("histogram-mse", "mutual-information"):
        counts = [np.zeros(size), np.full(size, float(n))]
        if kind == "map":
            counts += [np.full(size, float(min(1, n))), np.full(size, float(max(n - 1, 0)))]

        def at(a):
            G = {name: op(F[name], tab[line][a.astype(np.int64)]) for name, (tab, op) in tables.items()}
            return _ldp_rc(kind, c, p, hc, sizes, y, G)
    else:
        delta = c * p[line]                                      # d tau / d a
        tau0 = 1.0 + c * F["s"]
        zeta = c * y[line] / sizes[line] / delta                 # the duals' numerator: gamma + zeta tau
        gamma = float(y.sum()) + c * F["b"] - zeta * tau0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if kind == "histogram-mse":
                kappa = c * (c + 2.0)
                beta = kappa * p[line] ** 2 / delta
                alpha = float(sizes @ (p * p)) + kappa * F["r"] - beta * tau0
                slope = beta - gamma

                def value(u):
                    return (alpha * u + slope) * u - zeta
                u_top = -slope / (2.0 * alpha)
                a_top = np.where(u_top > 0, (1.0 / u_top - tau0) / delta, np.inf)
                counts = [np.where(alpha < 0, np.clip(np.floor(a_top), 0, n), 0.0),
                          np.where(alpha < 0, np.clip(np.floor(a_top) + 1, 0, n), float(n))]
            else:
                log_c = (1.0 + c) * math.log1p(c)
                beta = (c * p[line] * math.log(p[line]) + log_c * p[line]) / delta
                alpha = float(sizes @ (p * np.log(p))) + c * F["r"] + log_c * F["s"] - beta * tau0
                slope, rest = alpha - gamma, beta - zeta

                def value(u):
                    return slope * u + rest + np.log(u)
                a_top = np.where(slope < 0, np.floor((-slope - tau0) / delta), 0.0)
                counts = [np.clip(a_top, 0, n), np.clip(a_top + 1, 0, n)]

        def at(a):
            return value(1.0 / (tau0 + delta * a))
    best_a, best = counts[0], np.full(size, -np.inf)
    for a in counts:
        rc = at(a)
        better = rc > best
        best_a, best = np.where(better, a, best_a), np.where(better, rc, best)
    return best_a, best


def _ldp_pricing(fam: LDPCone, kind: str, p: np.ndarray, hc, sizes: np.ndarray, y: np.ndarray, join: int,
                 deadline: float):
    """LDP's pricing over every type (every count vector A, `tau = 1 + c A . p`) without building
    its class averages: each type's reduced cost from a few sums over classes
    (`_ldp_functionals`), summed as outer sums (`_outer_sums`) over every class but the largest,
    whose best count for each of them is one of a few (`_line_best`). The `join` best types are
    then rebuilt as the master sees them (`_found`). Returns (the largest reduced cost over every
    type, [(reduced cost, ubar, phi, the type)] of the best, largest first), or None once the
    deadline passes. Four levels at d = 256 (17.8 million types), one round: histogram-MSE /
    mutual information / MAP 0.03 / 0.03 / 0.06 s, against 0.27 / 0.48 / 0.46 s with every type
    summed (and 4.6 / 7.9 / 5.4 s building every type's class averages and phi); five levels
    (380 million types) 0.31 / 0.46 / 1.1 s."""
    k = len(sizes)
    line = _pivot(sizes)
    others = [c for c in range(k) if c != line]
    full = _ldp_functionals(kind, p, hc, sizes, y)
    tables = {name: ([tab[c] for c in others], op) for name, (tab, op) in full.items()}
    dims = [int(sizes[c]) + 1 for c in others]
    top = _Best(join, 2)
    for first, F in _outer_sums(tables, dims):
        a, rc = _line_best(kind, fam.c, p, hc, sizes, y, F, line, full)
        top.add(rc, [first + np.arange(rc.size), a])
        if time.perf_counter() > deadline:
            return None
    A = np.zeros((len(top.keys), k))
    if others:
        A[:, others] = np.stack(np.unravel_index(top.keys[:, 0], dims), axis=1)
    A[:, line] = top.keys[:, 1]
    none = np.full(len(A), -1)
    return _found(fam, kind, p, hc, sizes, y, A, none, np.zeros(len(A)), 1.0 + fam.c * (A @ p), top.best)


def _lip_pricing(fam, kind: str, p: np.ndarray, hc, sizes: np.ndarray, y: np.ndarray, join: int,
                 deadline: float):
    """LIP's pricing over every type without building their class averages, as `_ldp_pricing`.
    A type: a symbol of class j inside, A_c symbols of class c at `hi_c` (the first A_c of each
    class), the rest at `lo`; the mass `P . u = 1` leaves the inside symbol `f = (1 - mass) / p_j`.
    Its reduced cost is a constant of j, plus sums over classes of its counts (`A . alpha` for a
    separable phi; for bayes-mse `A . p (hi - lo) h` in theta and `A . y (hi - lo) / n` in the
    duals' term; for MAP the heaviest class at hi and at lo), plus a term of f. For each j the sums
    over the classes but `_pivot`'s are outer sums (`_outer_sums`), and the pivot's counts that
    leave f in `[lo, hi_j]`, a few for each, are added to them. Returns what `_ldp_pricing`
    returns. Five levels at d = 256 (31.7 million types): the whole orbit LP 52.5 / 80.1 s ->
    9.6 / 8.5 s (histogram-MSE / mutual information) against building every type's class
    averages and phi; three and four levels as fast as with those kept across rounds (0.1-0.5 s)."""
    k = len(sizes)
    lo = math.exp(-fam.eps_lower)
    hi = np.minimum(math.exp(fam.eps), 1.0 / p)
    piv = _pivot(sizes)
    others = [c for c in range(k) if c != piv]
    step = p * (hi - lo)                                  # the mass one more symbol at hi adds
    dual = y * (hi - lo) / sizes                          # and what it adds to the duals' term
    g = SEPARABLE.get(kind)
    if g is not None:                                     # phi's change, less the duals'
        coef = {"L": g(p * hi) - g(p * lo) - dual}
    elif kind == "bayes-mse":
        coef = {"T": step * hc, "B": dual}
    else:
        coef = {"B": dual}
    top = _Best(join, 3)
    caps = sizes.astype(int)[None, :] - np.eye(k, dtype=int)    # per j: the counts j's inside symbol leaves
    for j in range(k):
        cap = caps[j]
        a = [np.arange(cap[c] + 1, dtype=float) for c in range(k)]
        tables: dict[str, tuple[list, np.ufunc]] = {"m": ([a[c] * step[c] for c in others], np.add)}
        tables.update({name: ([a[c] * v[c] for c in others], np.add) for name, v in coef.items()})
        if kind == "map":
            tables["up"] = ([np.where(a[c] > 0, p[c] * hi[c], 0.0) for c in others], np.maximum)
            tables["low"] = ([np.where(a[c] < cap[c], p[c] * lo, 0.0) for c in others], np.maximum)
        low_mass, high_mass = 1.0 - p[j] * hi[j], 1.0 - p[j] * lo          # f in [lo, hi_j]
        for first, F in _outer_sums(tables, [int(cap[c]) + 1 for c in others]):
            base = lo * (1.0 - p[j]) + F["m"]
            if step[piv] > 0:
                fa = np.maximum(np.ceil((low_mass - base) / step[piv] - 1e-9), 0.0)
                la = np.minimum(np.floor((high_mass - base) / step[piv] + 1e-9), float(cap[piv]))
            else:
                fa, la = np.zeros(base.size), np.full(base.size, float(cap[piv]))
            n = np.maximum(la - fa + 1, 0).astype(np.int64)
            if not n.sum():
                continue
            at = np.repeat(np.arange(base.size), n)
            ap = fa[at] + (np.arange(at.size) - np.repeat(np.cumsum(n) - n, n))     # the pivot's count
            f = (1.0 - (base[at] + ap * step[piv])) / p[j]
            ok = (f >= lo - 1e-12) & (f <= hi[j] + 1e-12)
            at, ap, f = at[ok], ap[ok], np.clip(f[ok], lo, hi[j])
            S = {name: F[name][at] + ap * v[piv] for name, v in coef.items()}
            if g is not None:
                rc = S["L"] + g(p[j] * f) - y[j] * f / sizes[j]
            else:
                term = S["B"] + y[j] * (f - lo) / sizes[j]
                if kind == "bayes-mse":
                    theta = lo * float(sizes @ (p * hc)) + S["T"] + p[j] * hc[j] * (f - lo)
                    rc = theta ** 2 - term
                else:
                    up = np.maximum(F["up"][at], np.where(ap > 0, p[piv] * hi[piv], 0.0))
                    low = np.maximum(F["low"][at], np.where(ap < cap[piv], p[piv] * lo, 0.0))
                    rc = np.maximum(np.maximum(up, low), p[j] * f) - term
            if g is not None:                              # the constant of j
                rc += float(sizes @ g(p * lo)) - float(g(p[j] * lo)) + y[j] * lo / sizes[j]
            top.add(rc - lo * float(y.sum()), [np.full(at.size, j), first + at, ap])
            if time.perf_counter() > deadline:
                return None
    inside = top.keys[:, 0]
    A = np.zeros((len(inside), k))
    for i, (jj, grid, ap) in enumerate(top.keys):
        if others:
            A[i, others] = np.unravel_index(grid, [int(caps[jj, c]) + 1 for c in others])
        A[i, piv] = ap
    f = np.clip((1.0 - (lo * (1.0 - p[inside]) + A @ step)) / p[inside], lo, hi[inside])
    return _found(fam, kind, p, hc, sizes, y, A, inside, f, np.ones(len(inside)), top.best)


def solve_orbits(problem, fam: Family, kind: str, h: np.ndarray | None, deadline: float = np.inf, progress=None):
    """Certified optimum over vertex types. Returns (V, w, gain, bound, info) like
    `posterior.enumerate_and_solve`, or None when there is no symmetry to use, too many types, or
    the deadline or ROUNDS pass first. progress: an optional callable(rounds, relative gap) called
    after each round's pricing.

    The LP over types has one row per class; it is solved by column generation whose pricing
    goes through every type (`_ldp_pricing`, `_lip_pricing`), so that its bound `sum(y) + max(0,
    max reduced cost)` is exact over every vertex, and it starts from the prior itself (u = 1, admissible
    under both notions), which keeps the master feasible."""
    from scipy.optimize import linprog

    from .colgen import Scaled
    from .posterior import basic_weights

    P = problem.prior
    label = classes(P, h if kind == "bayes-mse" else None)
    if label is None:
        return None
    k = label.max() + 1
    sizes = np.bincount(label, minlength=k)
    count = type_count(fam, sizes)
    if priced_count(fam, sizes) > MAX_TYPES:
        return None
    p = np.array([P[label == c][0] for c in range(k)])
    hc = None if h is None else np.array([h[label == c][0] for c in range(k)])
    # the master's columns: the prior (every class at u = 1), then the types that price in
    ones = np.ones((1, k))
    ubar = ones.copy()
    phi = _phi(kind, p, hc, sizes[None, :].astype(float), 0.0 * ones, 0.0 * ones, ones, ones, 0.0 * ones)
    parts: list[tuple] = []
    keys: set = set()
    join = max(JOIN, 2 * k)
    rounds = 0
    for _ in range(ROUNDS):
        rounds += 1
        res = linprog(-phi, A_eq=ubar.T, b_eq=np.ones(k), bounds=(0, None), method="highs",
                      options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
        if res.status != 0 or time.perf_counter() > deadline:
            return None
        x, y = _basic(ubar, phi, np.asarray(res.x), -np.asarray(res.eqlin.marginals))
        gain = float(phi @ x)
        if isinstance(fam, LDPCone):
            priced = _ldp_pricing(fam, kind, p, hc, sizes, y, join, deadline)
        else:
            priced = _lip_pricing(fam, kind, p, hc, sizes, y, join, deadline)
        if priced is None:
            return None
        best, found = priced
        bound = float(y.sum() + max(0.0, best))          # exact over every type
        if progress is not None:
            progress(rounds, (bound - gain) / max(1.0, abs(gain)))
        if best <= STOP * max(1.0, abs(gain)):
            break
        added = 0
        for r, row, value, part in found:
            key = tuple(np.round(row, 12)) + (round(value, 12),)
            if r <= 0 or key in keys:
                continue
            keys.add(key)
            ubar, phi = np.vstack([ubar, row]), np.r_[phi, value]
            parts.append(_parts(fam, p, sizes, *part))
            added += 1
        if not added:                                    # (what prices in is in the master already)
            break
    else:
        return None
    W = x
    used = np.flatnonzero(W[1:] > 1e-13)
    U = np.empty((0, P.size))
    w = np.empty(0)
    shifts = 0
    if used.size:
        picked = [np.concatenate(x) for x in zip(*(parts[i] for i in used))]
        reps = _representatives(label, sizes, *picked)
        A, inside = picked[0], picked[2]
        moved = ((A + inside > 0) & (A < sizes[None, :])) & (sizes[None, :] > 1)     # classes not at one bound
        U, w = _spread(reps, label, sizes, moved, W[1:][used])
        shifts = len(w)
    if W[0] > 1e-13:                                     # the prior itself: one output that releases nothing
        U, w = np.vstack([U, np.ones((1, P.size))]), np.r_[w, W[0]]
    V = U * P[None, :]
    gains = Scaled(kind, h).phi(V)
    if len(V) > problem.m:
        # more columns than the problem has outputs: a basic optimum of the LP over them uses at
        # most d (the frontend would otherwise merge outputs and lose the certificate)
        w = basic_weights(V, gains, P, w)
    info = {"orbits": int(k), "types": count, "rounds": rounds, "shifts": shifts}
    return PosteriorSolution(V, w, float(gains @ w), bound, info)


def _basic(ubar: np.ndarray, phi: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The master's (x, y) solved again on its columns in use: HiGHS meets the rows and the duals
    to its tolerances (1e-10), and the gap `sum(y) - phi . x` that leaves is past 1e-9 of a small
    mutual information (four levels at d = 256, eps = 0.5: rows off by 6.4e-10, gap 1.3e-10 against
    I = 0.12). x is `polish`ed on the master's rows (the prior's column alone had weight 1 + 1.3e-13:
    LIP, MAP, eps = 0.01, a mass of 3e-5); where its k columns in use are a basis, y is solved on
    it, and kept if it prices the master's columns no worse than HiGHS's y (to round-off): the gap
    is then 1e-15."""
    from .posterior import polish

    k = ubar.shape[1]
    x = polish(ubar, x, np.ones(k))
    used = np.flatnonzero(x > 0)
    if used.size != k:
        return x, y
    try:
        yb = np.linalg.solve(ubar[used], phi[used])
    except np.linalg.LinAlgError:
        return x, y
    if np.all(np.isfinite(yb)) and (phi - ubar @ yb).max() <= max(0.0, float((phi - ubar @ y).max())) \
            + 1e-14 * max(1.0, abs(float(phi @ x))):
        return x, yb
    return x, y


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


def _design(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Shifts of the classes (rows r: shift r_c of class c) with weights whose marginal on each
    class is uniform over its n_c shifts: the common refinement of the partitions of [0, 1) into
    n_c equal parts, each piece [a, b) giving the shifts floor(n_c (a + b) / 2) and the weight
    b - a (exact fractions, rounded once). At most sum(n_c) - k + 1 rows: one class gives its n
    shifts at 1/n each, and classes of coprime sizes no longer need lcm(n_c) of them."""
    cuts = sorted({Fraction(i, int(n)) for n in sizes for i in range(int(n))} | {Fraction(1)})
    mid = np.array([float((a + b) / 2) for a, b in zip(cuts, cuts[1:])])
    share = np.array([float(b - a) for a, b in zip(cuts, cuts[1:])])
    return np.floor(mid[:, None] * sizes[None, :]).astype(int), share


def _spread(U, label, sizes, moved, W):
    """Every representative shifted within each class by each row of a design (rows, duplicates
    merged), and each row's weight: W_t times the design's weight of each shift that gives it.
    A type's design shifts only its classes `moved` (rows of booleans; the others hold one value
    throughout: all at one bound), so that a type with one mixed class gives n_c rows, not about
    d. Over its design a type's u averages to its class averages, so these weights meet
    `sum w u = 1` (to round-off) where the types' weights W meet the LP's rows: no LP over the
    columns is needed while they fit the outputs (d = 2000, uniform prior, LIP mutual
    information: 15 s of HiGHS before)."""
    d = label.size
    members = [np.flatnonzero(label == c) for c in range(len(sizes))]
    rows, weights = [], []
    for u, mixed, Wt in zip(U, moved, np.asarray(W, dtype=float)):
        design = np.zeros((1, len(sizes)), dtype=int)
        share = np.ones(1)
        if mixed.any():
            part, share = _design(sizes[mixed])
            design = np.zeros((len(share), len(sizes)), dtype=int)
            design[:, mixed] = part
        perm = np.empty((len(design), d), dtype=int)
        for c, m in enumerate(members):
            perm[:, m] = m[(np.arange(sizes[c])[None, :] - design[:, c:c + 1]) % sizes[c]]
        rows.append(u[perm])                    # rows[r, x] = u[perm[r, x]]
        weights.append(Wt * share)
    out, weight = np.vstack(rows), np.concatenate(weights)
    _, first, inverse = np.unique(np.round(out, 14), axis=0, return_index=True, return_inverse=True)
    w = np.bincount(inverse.ravel(), weights=weight, minlength=first.size)
    order = np.argsort(first)
    return out[first[order]], w[order]
