"""The channel-design program as sparse matrices, and the solver calls that take it.

Variables z = [vec(q) (row-major, d*m) | each notion's auxiliaries | epigraph t (minimax only)].

    minimize    c @ z
    subject to  A_ub @ z <= b_ub,   A_eq @ z = b_eq (rows of q sum to 1),   lb <= z <= ub

Linear notions contribute sparse blocks; convex non-linear notions (MIP) are added as cvxpy
constraints on the same variable by `solve_cvxpy`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp



@dataclass
class Program:
    d: int
    m: int
    c: np.ndarray
    A_ub: sp.csr_matrix
    b_ub: np.ndarray
    A_eq: sp.csr_matrix
    b_eq: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    conic: list = field(default_factory=list)  # notions with cvxpy-only constraints
    lift: sp.csr_matrix | None = None  # vec(q) = lift @ z when a floor was substituted away
    floors: tuple | None = None        # (first floor column, each input's floor group, scale): `pooled`

    @property
    def n(self) -> int:
        return self.c.size

    def channel(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z)
        q = z[: self.d * self.m] if self.lift is None else self.lift @ z
        return np.asarray(q).reshape(self.d, self.m)

    def dual_bound(self, y_ub: np.ndarray, y_eq: np.ndarray) -> float:
        """A lower bound on the optimum from any multipliers (weak duality), checked here, not trusted.

        For y_ub <= 0 and any y_eq: c @ z >= y_ub @ b_ub + y_eq @ b_eq + min over the box of
        (c - A_ub^T y_ub - A_eq^T y_eq) @ z for every feasible z. Multipliers of the wrong sign are
        clipped to 0, so the bound is valid whatever the solver returned.
        """
        y_ub = np.minimum(np.asarray(y_ub, dtype=float), 0.0)
        y_eq = np.asarray(y_eq, dtype=float)
        AT_ub, AT_eq = self.transposes()
        r = self.c - AT_ub @ y_ub - AT_eq @ y_eq
        with np.errstate(invalid="ignore"):
            box = np.where(r > 0, r * self.lb, r * self.ub)
        box = np.where(r == 0, 0.0, box)
        if np.any(~np.isfinite(box)):
            return -np.inf
        # elementwise products summed, not BLAS dot products: over 2dm rows OpenBLAS runs a dot
        # product on every core and its threads then spin (LDP MAE at d = 128: 1.6 cores a solve)
        return float((y_ub * self.b_ub).sum() + (y_eq * self.b_eq).sum() + box.sum())

    def transposes(self) -> tuple:
        """(A_ub^T, A_eq^T), kept while A_ub and A_eq are the same objects, when they share their
        arrays with them (CSR to CSC, no copy): a coefficient updated in place
        (`Parametric.set_budget`) shows in both. Building them costs more than the product at
        the sizes a sweep's point has (0.1 ms a call at d = 64)."""
        kept = self.__dict__.get("_transposes")
        if kept is not None and kept[0] is self.A_ub and kept[1] is self.A_eq:
            return kept[2], kept[3]
        AT_ub, AT_eq = self.A_ub.T, self.A_eq.T
        if all(getattr(A, "format", "") == "csr" and np.shares_memory(T.data, A.data)
               for A, T in ((self.A_ub, AT_ub), (self.A_eq, AT_eq))):
            self.__dict__["_transposes"] = (self.A_ub, self.A_eq, AT_ub, AT_eq)
        return AT_ub, AT_eq

    def farkas_margin(self, y_ub: np.ndarray, y_eq: np.ndarray) -> float:
        """How far multipliers y prove the program infeasible, checked here, not trusted.

        For y_ub >= 0 and any y_eq, every feasible z has r @ z = y_ub @ A_ub z + y_eq @ A_eq z <=
        y_ub @ b_ub + y_eq @ b_eq =: S with r = A_ub^T y_ub + A_eq^T y_eq, while r @ z >= M, the
        minimum of r @ z over the box. M > S is a proof of infeasibility (Farkas). Returns
        (M - S) / scale, scale the magnitude of the terms; > 1e-9 is taken as a proof. Both signs
        of y are tried (solvers differ in their ray conventions).
        """
        best = -np.inf
        for sign in (1.0, -1.0):
            yu, ye = sign * np.asarray(y_ub, dtype=float), sign * np.asarray(y_eq, dtype=float)
            if np.any(yu < -1e-12 * max(1.0, np.abs(yu).max(initial=0.0))):
                continue
            yu = np.maximum(yu, 0.0)
            r = self.A_ub.T @ yu + self.A_eq.T @ ye
            with np.errstate(invalid="ignore"):
                box = np.where(r > 0, r * self.lb, r * self.ub)
            box = np.where(r == 0, 0.0, box)
            if np.any(~np.isfinite(box)):
                continue
            M, S = float(box.sum()), float(yu @ self.b_ub + ye @ self.b_eq)
            scale = float(np.abs(box).sum() + np.abs(yu * self.b_ub).sum() + np.abs(ye * self.b_eq).sum())
            if scale > 0:
                best = max(best, (M - S) / scale)
        return best


FARKAS_TOL = 1e-9
"""A Farkas ray proves infeasibility when its normalized margin exceeds this."""

SPAN_LIMITS = (1e12, 1e11, 1e10)
"""A program the first solver does not certify is solved again without its inequality rows whose
nonzero coefficients span (largest / smallest magnitude) more than each of these in turn
(`relaxed`; `frontend.solve_program`), until one is certified. DI at d = 30 (MAE, a prior whose
entries span 1,500): at eps = 27 HiGHS could not solve the program without the rows past 1e12
("Not Set") and certified it without those past 1e11 (MAE 3.1e-9; 2.9e-8 past 1e10); at eps = 30
and 40 the first limit certifies. Each limit costs a mixture of about m / limit with the constant
channel, which the gap then counts."""


@dataclass
class Relaxation:
    """A program without its inequality rows of extreme span (`relaxed`), and what was left out."""

    program: Program
    limit: float
    dropped: int
    span: float
    """The smallest span among the dropped rows."""


def relaxed(prog: Program, limit: float) -> Relaxation | None:
    """`prog` without the inequality rows whose coefficients span more than `limit`; None when no
    row does.

    Ratio rows `a q[x, y] <= b q[x', y]` with b / a = e^eps (LDP, ID-LDP, DI and the like) reach
    spans of 1e15 at budgets of about 35 nats, where HiGHS refuses the model, and from about 1e13 on
    the solvers' answers lose their bounds (DI at d = 30, eps = 27: HiGHS's channel had MSE-scale
    error 0.05 with a bound of -1e-5, where the optimum is 5e-10). Leaving rows out is a
    relaxation: the feasible set only grows, so `dual_bound` on the relaxed program bounds the
    problem itself. Its channel may break the rows left out, by a margin that a tiny mixture with
    a constant channel closes (a ratio row of span s holds for `(1 - t) q + t / m` once
    t >= m / s): the frontend mixes, audits, and the gap decides the status.
    """
    A = prog.A_ub.tocsr()
    counts = np.diff(A.indptr)
    rows = np.flatnonzero(counts > 0)
    if not rows.size:
        return None
    mags = np.abs(A.data)
    starts = A.indptr[rows]
    span = np.ones(A.shape[0])
    with np.errstate(divide="ignore", over="ignore"):      # (an infinite span is dropped too)
        span[rows] = np.maximum.reduceat(mags, starts) / np.minimum.reduceat(mags, starts)
    drop = span > limit
    if not drop.any():
        return None
    keep = ~drop
    out = Program(prog.d, prog.m, prog.c, A[keep], prog.b_ub[keep], prog.A_eq, prog.b_eq, prog.lb, prog.ub,
                  prog.conic, prog.lift)
    return Relaxation(out, limit, int(drop.sum()), float(span[drop].min()))


def build(problem, linear_costs: bool = True, substitute: bool = True) -> Program:
    """Stack the notions' blocks and the utility's cost into one Program (cost 0 when
    `linear_costs` is False, for methods that bring their own objective).

    substitute: when a notion declares a per-output floor l_y <= q[x, y] (LDP, MinID-LDP; LIP and
    ALIP with G = X, where l_y = e^-eps Pr(Y = y)), write q = s + l with s >= 0
    (`_Triplets.substitute`): the d*m floor rows become bounds. Same feasible set and optimum; at
    d = 128 HiGHS solves the LDP Hamming LP ~15x faster in this form, and the LIP MAE LP ~7x
    (benchmarks/results/bench_formulation.txt).
    """
    d, m = problem.d, problem.m
    nq = d * m
    blocks = [(n, n.linear(problem)) for n in problem.privacy if n.linear_form]
    conic = [n for n in problem.privacy if not n.linear_form]
    n_aux = sum(b.n_aux for _, b in blocks)
    costs = problem.utility.costs(problem) if linear_costs else np.zeros((1, nq))
    minimax = costs.shape[0] > 1
    n = nq + n_aux + (1 if minimax else 0)

    ub, eq = _Triplets(), _Triplets()
    eq.add(sp.csr_matrix((np.ones(nq), np.arange(nq), np.arange(0, nq + 1, m)), shape=(d, nq)), 0, 0)  # rows sum to 1
    eq.rows = d
    rhs, eq_rhs = [], [np.ones(d)]
    offset, floor = nq, None
    for _, b in blocks:
        if b.floor is not None and floor is None:
            group = np.zeros(d, dtype=int) if b.floor_group is None else np.asarray(b.floor_group)
            floor = (ub.rows + b.floor, offset, group, b.floor_scale)
        r0 = ub.rows
        ub.add(b.A_q, r0, 0)
        if b.n_aux:
            ub.add(b.A_aux, r0, offset)
        ub.rows = r0 + b.n_rows
        rhs.append(b.b)
        if b.n_eq:
            r0 = eq.rows
            eq.add(b.E_q, r0, 0)
            if b.n_aux and b.E_aux is not None:
                eq.add(b.E_aux, r0, offset)
            eq.rows = r0 + b.n_eq
            eq_rhs.append(b.e)
        offset += b.n_aux
    lb = np.concatenate([np.zeros(nq)] + [b.aux_lower for _, b in blocks] + ([[-np.inf]] if minimax else []))
    ub_z = np.concatenate([np.ones(nq)] + [b.aux_upper for _, b in blocks] + ([[np.inf]] if minimax else []))
    if minimax:   # costs[k] @ q - t <= 0
        k = costs.shape[0]
        ub.add(sp.coo_matrix(costs), ub.rows, 0)
        ub.add(sp.coo_matrix(-np.ones((k, 1))), ub.rows, n - 1)
        ub.rows += k
        rhs.append(np.zeros(k))
        c = np.zeros(n)
        c[-1] = 1.0
    else:
        c = np.concatenate([costs[0], np.zeros(n - nq)])
    b_ub = np.concatenate(rhs) if rhs else np.zeros(0)
    b_eq = np.concatenate(eq_rhs)
    if not (substitute and floor is not None):
        return Program(d, m, c, ub.csr(n), b_ub, eq.csr(n), b_eq, lb, ub_z, conic)
    row0, aux0, group, scale = floor
    cols = aux0 + group[np.arange(nq) // m] * m + np.arange(nq) % m
    keep = np.ones(ub.rows, dtype=bool)
    keep[row0:row0 + nq] = False
    ub.substitute(cols, scale, keep)
    eq.substitute(cols, scale)
    np.add.at(c, cols, scale * c[:nq].copy())
    lift = sp.csr_matrix((np.column_stack([np.ones(nq), np.full(nq, scale)]).ravel(),
                          np.column_stack([np.arange(nq), cols]).ravel(), np.arange(0, 2 * nq + 1, 2)), shape=(nq, n))
    return Program(d, m, c, ub.csr(n), b_ub[keep], eq.csr(n), b_eq, lb, ub_z, conic, lift=lift,
                   floors=(aux0, np.asarray(group), float(scale)))


def pooled(prog: Program) -> Program:
    """The substituted program with each floor group's total T_g = sum_y l[g, y] as a column
    (appended after prog's columns; its definition rows after prog's equality rows).

    After the substitution, row x of q sums to 1 as sum_y s[x, y] + scale * sum_y l[g(x), y] = 1:
    m floor coefficients a row, d * m in all, as many as the entries have. With the rows
    sum_y l[g, y] - T_g = 0 it reads sum_y s[x, y] + scale * T_g(x) = 1: d + G (m + 1). Same
    feasible set (the l fix T). T_g >= 0 has no upper bound, so at an optimum it is basic or at 0,
    and the multipliers of prog's own rows then price prog's floor columns as the pooled program
    prices them, or higher. (With T_g <= 1 / scale, a MinID-LDP group of inputs all on their
    floor put T_g at that bound, and prog's dual bound from those multipliers fell 6% short.)

    A program on a few entries (`solve_restricted`) is otherwise mostly this floor block: LIP
    Hamming at d = 512, 1,023 entries and 262,144 floor coefficients. Whole programs gain less or
    lose (LIP at d = 128, eps = 1: Hamming 0.36 -> 1.36 s, MAE 3.95 -> 3.29 s), and so does the
    reduced LP on the top outputs (LIP MAE d = 512 10.4 -> 7.3 s, MinID-LDP d = 256 3.0 -> 3.1 s),
    so `build` keeps the rows as they are."""
    if prog.floors is None:                     # no floor substituted: nothing to pool
        return prog
    d, m, n = prog.d, prog.m, prog.n
    aux0, group, scale = prog.floors
    G = int(group.max()) + 1
    A = prog.A_eq.tocoo()
    floor = (A.row < d) & (A.col >= aux0) & (A.col < aux0 + G * m)
    k = A.shape[0]
    rows = np.concatenate([A.row[~floor], np.arange(d), k + np.repeat(np.arange(G), m), k + np.arange(G)])
    cols = np.concatenate([A.col[~floor], n + group, aux0 + np.arange(G * m), n + np.arange(G)])
    vals = np.concatenate([A.data[~floor], np.full(d, scale), np.ones(G * m), -np.ones(G)])
    A_eq = sp.csr_matrix((vals, (rows, cols)), shape=(k + G, n + G))

    def wide(M):
        return sp.csr_matrix((M.data, M.indices, M.indptr), shape=(M.shape[0], n + G))

    return Program(d, m, np.r_[prog.c, np.zeros(G)], wide(prog.A_ub), prog.b_ub, A_eq, np.r_[prog.b_eq, np.zeros(G)],
                   np.r_[prog.lb, np.zeros(G)], np.r_[prog.ub, np.full(G, np.inf)], prog.conic, lift=wide(prog.lift))


class _Triplets:
    """A sparse matrix assembled from blocks placed at (row, column) offsets, converted once.

    `substitute` applies the floor substitution of `build` to the entries during the conversion:
    rows row0 .. row0 + dm - 1 of A_ub read `-q[x, y] + l[x, y] <= 0` with l[x, y] =
    scale * z[cols[x * m + y]]. With q = s + l they read `-s <= 0`, a bound: they are dropped and
    every other row is mapped through z_old = M z_new, M = I + scale * E (E: entry (x, y) to
    its floor's column): each coefficient a of q[x, y] also puts scale * a on the floor's
    column. q <= 1 and l >= 0 give 0 <= s <= 1.
    """

    def __init__(self):
        self.r, self.c, self.v, self.rows = [], [], [], 0
        self.sub: tuple | None = None       # (cols, keep) of the floor substitution, and its scale
        self.scale = 1.0

    def add(self, M, row: int, col: int) -> None:
        r, c, v = _entries(M)
        self.r.append(r + row)
        self.c.append(c + col)
        self.v.append(v)

    def substitute(self, cols: np.ndarray, scale: float, keep: np.ndarray | None = None) -> None:
        if self.r:
            self.sub, self.scale = (cols, keep), scale

    def csr(self, n: int) -> sp.csr_matrix:
        if not self.r:
            return sp.csr_matrix((self.rows, n))
        cat = np.concatenate
        r, c, v = cat(self.r), cat(self.c), cat(self.v)
        on, on_q, rows, slot, indices, indptr = _plan(r, c, self.rows, n, self.sub)
        if on is not None:
            v = v[on]
        if on_q is not None:
            v = cat([v, self.scale * v[on_q]])
        data = np.bincount(slot, weights=v, minlength=indices.size)   # duplicates summed
        out = sp.csr_matrix((data, indices, indptr), shape=(rows, n))
        if not data.all():
            out.eliminate_zeros()
        return out


def _entries(M) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, columns, values) of a sparse block, duplicates kept (`_Triplets.csr` sums them):
    read off a CSR or CSC block's arrays directly (scipy's `tocoo` checks and copies first, a
    third of `build`'s time for the LIP program at d = 32)."""
    if M.format == "csr":
        return np.repeat(np.arange(M.shape[0]), np.diff(M.indptr)), M.indices, M.data
    if M.format == "csc":
        return M.indices, np.repeat(np.arange(M.shape[1]), np.diff(M.indptr)), M.data
    M = M.tocoo()
    return M.row, M.col, M.data


_PATTERNS: list = []
"""The last PATTERNS_KEPT conversion plans made by `_plan`, newest first (programs along a sweep,
or solved one after another, repeat their inequality and equality patterns and their floor
substitution: only their values change)."""
PATTERNS_KEPT = 4
_PATTERNS_LOCK = threading.Lock()


def _plan(r: np.ndarray, c: np.ndarray, rows: int, n: int, sub: tuple | None):
    """How triplets (r, c) become a CSR matrix, the floor substitution `sub` = (cols, keep) of
    `_Triplets.substitute` applied: (on, on_q, rows, slot, indices, indptr) such that
    with v' = v[on] (all of v when on is None) and v'' = [v', scale * v'[on_q]] (v' when on_q is
    None) the matrix is `bincount(slot, v'')` in the structure (indices, indptr) with `rows` rows,
    duplicate positions sharing a slot. Depends on the positions only, never on the values or the
    scale: reused while the triplets and the substitution are one of the last PATTERNS_KEPT (an eps
    sweep, LIP Hamming: building a point's program at d = 128 4.2 -> 2.1 ms, at d = 32 0.62 ->
    0.43 ms, against converting the substituted triplets each time; the matrices are identical)."""
    cols, keep = sub if sub is not None else (None, None)
    with _PATTERNS_LOCK:
        kept = list(_PATTERNS)
    for shape, r0, c0, cols0, keep0, plan in kept:
        if (shape == (rows, n) and np.array_equal(r0, r) and np.array_equal(c0, c)
                and _same(cols0, cols) and _same(keep0, keep)):
            return plan
    on = on_q = None
    rs, cs, out_rows = r, c, rows
    if keep is not None:         # drop the floor rows, renumber the others
        on = keep[r]
        rs, cs, out_rows = np.cumsum(keep)[r[on]] - 1, c[on], int(keep.sum())
    if cols is not None:         # each coefficient of q[x, y] also on its floor's column
        on_q = np.flatnonzero(cs < cols.size)
        rs, cs = np.concatenate([rs, rs[on_q]]), np.concatenate([cs, cols[cs[on_q]]])
    key = rs.astype(np.int64) * n + cs
    order = np.argsort(key, kind="stable")
    ks = key[order]
    new = np.r_[True, ks[1:] != ks[:-1]]
    slot = np.empty(key.size, dtype=np.int64)
    slot[order] = np.cumsum(new) - 1
    first = ks[new]
    indptr = np.r_[0, np.cumsum(np.bincount(first // n, minlength=out_rows))].astype(np.int32)
    plan = (on, on_q, out_rows, slot, (first % n).astype(np.int32), indptr)
    with _PATTERNS_LOCK:
        _PATTERNS[:] = [((rows, n), r, c, cols, keep, plan)] + _PATTERNS[:PATTERNS_KEPT - 1]
    return plan


def _same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    return a is b or (a is not None and b is not None and np.array_equal(a, b))


@dataclass
class RawSolution:
    status: str               # optimal | infeasible | failed | time_limit (a feasible point, not optimal)
    z: np.ndarray | None
    y_ub: np.ndarray | None
    y_eq: np.ndarray | None
    message: str = ""
    basis: object = None
    restricted: tuple | None = None
    """From `solve_restricted`: (the pooled program's column and inequality-row counts, its model's
    columns and inequality rows in order, HiGHS basis) to start the next one."""


def load_program(h, c, A_ub, b_ub, A_eq, b_eq, lb, ub) -> None:
    """Give HiGHS the program `min c z : A_ub z <= b_ub, A_eq z = b_eq, lb <= z <= ub` (numpy
    infinities for absent bounds), as arrays in one call (a `HighsLp` built attribute by
    attribute copies every array element by element: 11.5 ms against 2.0 ms for the LIP
    program at d = 128)."""
    load_rows(h, c, sp.vstack([A_ub, A_eq], format="csr"), np.concatenate([np.full(b_ub.size, -np.inf), b_eq]),
              np.concatenate([b_ub, b_eq]), lb, ub)


def load_rows(h, c, A, lo, hi, lb, ub) -> None:
    """Give HiGHS `min c z : lo <= A z <= hi, lb <= z <= ub` (rows in A's order; numpy
    infinities for absent bounds)."""
    import highspy

    inf = highspy.kHighsInf
    A = sp.csr_matrix(A)
    n = c.size
    # HiGHS works on the costs times 2^scale and reports the solution and the duals in the
    # program's own units; set at every load (an instance is reused along a sweep)
    h.setOptionValue("user_objective_scale", cost_scale(c))
    # a model HiGHS refuses leaves the instance empty, not holding the previous one (tested)
    h.passModel(n, A.shape[0], A.nnz, int(highspy.MatrixFormat.kRowwise), int(highspy.ObjSense.kMinimize), 0.0,
                np.asarray(c, dtype=float), np.where(np.isinf(lb), -inf, lb), np.where(np.isinf(ub), inf, ub),
                np.where(np.isinf(lo), -inf, lo), np.where(np.isinf(hi), inf, hi),
                A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data.astype(float),
                np.zeros(n, dtype=np.int32))    # every column continuous


COST_SCALE_TO = 2.0 ** 20
"""Costs larger than this are scaled down by a power of two for the solvers, to at most this (`cost_scale`)."""


def cost_scale(c: np.ndarray) -> int:
    """The exponent k <= 0 of the power of two 2^k that brings the largest cost to at most
    COST_SCALE_TO (0 when it already is): a power of two scales every cost exactly.

    Squared distortion of values ~1e5 has costs ~4e9: HiGHS's dual simplex stopped on "excessive
    dual values" (status Not Set) and Clarabel and ECOS at their iteration limits, so no solver
    answered; scaled, HiGHS certifies it. Measured on the six status-fuzz problems (seed 0) that
    the scaling changes: to at most 2^20 all six are certified; to at most 1, two were and the four
    with budgets of 23-38 nats (coefficients up to e^38) were not (the scaled duals meet HiGHS's
    absolute tolerance with less precision in the program's units); not scaled, the first two are
    not (HiGHS stops, as above)."""
    top = float(np.max(np.abs(c), initial=0.0))
    if not (np.isfinite(top) and top > COST_SCALE_TO):
        return 0
    return -int(np.ceil(np.log2(top / COST_SCALE_TO)))


def solve_highs(prog: Program, ipm: bool = False, highs=None, basis=None,
                time_limit: float | None = None, restrict: bool = True) -> RawSolution:
    """HiGHS called directly on the sparse program (dual simplex, or interior point + crossover).

    highs: a `highspy.Highs` to reuse (its options kept); basis: a `HighsBasis` of a program of
    the same shape to start the simplex from (a warm start, as in `channelopt.sweep`). The basis
    reached is returned in `RawSolution.basis`. A fresh simplex solve of a large substituted
    program first tries `solve_restricted` (restrict=False skips it).
    """
    if restrict and highs is None and basis is None and not ipm and restrictable(prog):
        t0 = time.perf_counter()
        raw = solve_restricted(prog, time_limit)
        if raw is not None:
            return raw
        if time_limit is not None:
            time_limit = max(time_limit - (time.perf_counter() - t0), 1e-3)
    h = highs if highs is not None else new_highs(ipm)
    load_program(h, prog.c, prog.A_ub, prog.b_ub, prog.A_eq, prog.b_eq, prog.lb, prog.ub)
    # presolve costs more than it saves once a floor is substituted away (d = 128, 18 LIP / ALIP
    # / LDP programs: 1.2-3x faster without; LIP Hamming d = 128: 3.9 s with, 0.65 s without)
    h.setOptionValue("presolve", "off" if prog.lift is not None else "choose")
    set_time_limit(h, time_limit)            # (none left from an earlier call on a reused instance)
    whole_simplex(h, warm=basis is not None)
    if basis is not None:
        h.setBasis(basis)
    h.run()
    return answer(h, prog.b_ub.size)


def set_time_limit(h, seconds: float | None) -> None:
    """HiGHS's `time_limit` for the next run of `h`: `seconds` from now (None or infinite: none).
    HiGHS reads the option against its run clock, which adds up over every run of one instance,
    passModel or not: a reused instance that had run 1.9 s stopped at once under a limit of 1 s."""
    if seconds is None or not np.isfinite(seconds):
        h.setOptionValue("time_limit", float("inf"))
    else:
        h.setOptionValue("time_limit", h.getRunTime() + float(seconds))


def whole_simplex(h, warm: bool) -> None:
    """HiGHS's simplex for a whole program: from scratch the dual simplex with its default pricing;
    warm (from another point's basis, or after changing the model it holds) HiGHS's choice of
    simplex with Devex pricing (`WARM_PRICING`)."""
    h.setOptionValue("simplex_dual_edge_weight_strategy", WARM_PRICING["whole"] if warm else -1)
    h.setOptionValue("simplex_strategy", 0 if warm else 1)


def answer(h, k: int, basis: bool = True) -> RawSolution:
    """What the HiGHS instance `h` has just solved, as a RawSolution: the solution and its duals
    split after the k inequality rows (the basis reached too, with `basis`), a Farkas ray when
    infeasible, or "failed" (with the multipliers HiGHS holds, if any)."""
    import highspy

    status = h.getModelStatus()
    text = h.modelStatusToString(status)
    if status == highspy.HighsModelStatus.kInfeasible:
        _, has_ray, ray = h.getDualRay()
        if has_ray:
            ray = np.asarray(ray)
            return RawSolution("infeasible", None, ray[:k], ray[k:], text)
        return RawSolution("infeasible", None, None, None, text)
    if status != highspy.HighsModelStatus.kOptimal:
        # (a simplex stopped short, e.g. at its time limit, still has multipliers: whatever they
        # are, `Program.dual_bound` makes a valid bound of them; the dual simplex keeps them feasible)
        sol = h.getSolution()
        if sol.dual_valid and len(sol.row_dual) == h.getNumRow():
            y = np.asarray(sol.row_dual, dtype=float)
            return RawSolution("failed", None, y[:k], y[k:], text)
        return RawSolution("failed", None, None, None, text)
    sol = h.getSolution()
    y = np.fromiter(sol.row_dual, float)           # (from the lists highspy makes: 30% faster than asarray)
    return RawSolution("optimal", np.fromiter(sol.col_value, float), y[:k], y[k:], text,
                       basis=h.getBasis() if basis else None)


WARM_PRICING = {"restricted": 0, "whole": 1}
"""HiGHS's dual edge weights for a simplex started from another point's basis (0 Dantzig,
1 Devex; the default, steepest edge, first computes a weight per row, which costs more than the
few pivots a warm start needs). Measured over 100-point LIP / LDP sweeps (HiGHS time): the
restricted program at d = 128 2.7 s with steepest edge, 0.73 s Devex, 0.56 s Dantzig; whole
programs (LIP Hamming d = 32, LDP / LIP MAE d = 64) 0.21 / 0.17 / 0.82 s with steepest edge,
0.14 / 0.11 / 0.72 s Devex. A warm whole program lets HiGHS choose the simplex (`simplex_strategy`
0: the primal one where the previous basis stays primal feasible): the median warm point of a
30-point MAE sweep, LDP d = 64 / 128 2.26 / 12.1 ms against 2.69 / 15.9 ms with the dual simplex,
LIP d = 64 7.9 ms against 9.3 ms; 100-point LDP MAE sweeps 1.95x / 3.24x / 3.75x faster than
fresh solves at d = 32 / 64 / 128, against 1.71x / 2.83x / 2.54x."""
RESTRICT_MIN = 4096
"""Channel entries (d * m) from which a substituted program is first solved on a few outputs."""
RESTRICT_OUTPUTS, RESTRICT_ROUNDS, RESTRICT_SHARE, RESTRICT_ENTRIES = 8, 40, 0.5, 3
"""Outputs whose every entry starts in the restricted program (and that enter it per round by the
"outputs" rule); pricing rounds, and the share of the entries active, before giving up; entries
that enter per round and input by the "entries" rule (each input's best, and this many times d
of all). On 108 Hamming programs (LIP, LDP, MinID-LDP; d = 64 / 128 / 256; eps 0.5..4 and ln 2d;
two priors; `benchmarks/bench_restricted.py`): 8.3 s in all by entries against 12.0 s by whole
outputs; at d = 1024, eps = ln 2d (LIP), 1 / 3 / 6 / 10 times d of all took 20 / 12.8 / 13.1 /
10.5 s (76,346 entries active at 10)."""


def restrictable(prog: Program) -> bool:
    """A substituted program (floor rows gone, so a zero entry needs no row) with at least
    RESTRICT_MIN entries and a Hamming-like linear cost on q: every input has at most one
    output cheaper than the rest, all the others costing the same (Hamming, weighted Hamming).
    Such optima use few outputs. MAE and squared error optima do too (2-22 of 64), but zero
    multipliers on the dropped rows price most of their entries negative and the restriction gives
    up (forced: 100 fresh MAE solves at d = 64 1.4-1.8x slower, LDP d = 128 2.8x), so it is not
    tried; `top_outputs` prices whole outputs exactly instead (LIP, ID-LDP)."""
    nq = prog.d * prog.m
    if prog.lift is None or nq < RESTRICT_MIN or not np.any(prog.c[:nq] != 0):
        return False
    cost = prog.c[:nq].reshape(prog.d, prog.m)
    top = cost.max(axis=1, keepdims=True)
    return bool(np.all((cost < top - 1e-12 * np.maximum(1.0, np.abs(top))).sum(axis=1) <= 1))


def solve_restricted(prog: Program, time_limit: float | None = None, start: tuple | None = None,
                     enter: str = "entries") -> RawSolution | None:
    """The program solved with most channel entries fixed at 0, priced out exactly.

    Starts from every entry of the RESTRICT_OUTPUTS outputs with the lowest cost of answering
    them always (a constant channel among them: feasible) and each input's cheapest output; keeps
    every row that can bind: those with an active entry, and those whose auxiliary part the
    auxiliaries' bounds do not already satisfy (one per distinct auxiliary part). After each solve
    the multipliers of the kept rows, with 0 for the others, are tested on the whole program:

    - every fixed entry's reduced cost c_j - A_j' y >= 0 (dual feasibility), and
    - every dropped row holds at the solution (primal feasibility);

    together they make the restricted optimum optimal for the whole program, and the caller's
    certificate (`Program.dual_bound` with these multipliers) checks it again. Otherwise entries
    join with their rows, and the violated rows; `enter` = "entries": each input's entry of most
    negative reduced cost and the RESTRICT_ENTRIES * d most negative of all, "outputs": the
    RESTRICT_OUTPUTS outputs with the most negative reduced costs, whole. The program is one
    HiGHS model grown in place, in the floor-pooled form (`pooled`), and its simplex goes on from
    the last basis (added columns enter nonbasic at 0, added rows basic). Returns None (solve the
    whole program) when the restricted program is not solved, after RESTRICT_ROUNDS rounds, or
    once RESTRICT_SHARE of the entries is active. When `time_limit` runs out first, it returns its
    last point that meets every row of the whole program (status "time_limit", with that round's
    multipliers, whose `Program.dual_bound` holds for any multipliers), or None if no round got
    that far: LIP Hamming at d = 512, eps = ln 2d, with 1 s left, had returned the trivial
    channel (Hamming loss 0.987; the optimum 0.026).

    Entries, not outputs, because the optimum's entries above their floor are few even where it
    uses every output (LIP Hamming at eps = ln 2d, Dirichlet(1): 298 of 65,536 at d = 256 on 201
    outputs; 1,214 of 1,048,576 at d = 1024); whole outputs then made the program the whole one
    (d = 512: 65 s; d = 1024: not done in 13 min). `benchmarks/bench_restricted.py` compares the
    two rules.

    start: `RawSolution.restricted` of a program of the same shape (the previous point of a
    sweep): its columns, rows and basis are the first round's.
    """
    import highspy

    t0 = time.perf_counter()
    d, m, nq = prog.d, prog.m, prog.d * prog.m
    work = pooled(prog)
    cost = work.c[:nq].reshape(d, m)
    k_eq = work.A_eq.shape[0]
    A_csc = work.A_ub.tocsc()
    basis = None
    if start is not None and start[0] == work.n and start[1] == work.b_ub.size:
        # the previous point's columns (among them a whole output: a constant channel, feasible)
        # and rows; the checks below price out everything else on this program
        cols, kept, basis = start[2].copy(), start[3].copy(), start[4]
    else:
        first = np.zeros(work.n, dtype=bool)
        first[nq:] = True
        first[np.arange(d) * m + cost.argmin(axis=1)] = True
        for y in np.argsort(cost.sum(axis=0), kind="stable")[:RESTRICT_OUTPUTS]:
            first[np.arange(d) * m + y] = True
        touches = np.diff(work.A_ub[:, :nq].tocsr().indptr) > 0
        keep = ~touches | _aux_rows_that_bind(work, touches)
        keep[np.unique(A_csc[:, np.flatnonzero(first[:nq])].indices)] = True
        cols, kept = np.flatnonzero(first), np.flatnonzero(keep)
    active = np.zeros(work.n, dtype=bool)
    active[cols] = True
    rows = np.zeros(work.b_ub.size, dtype=bool)
    rows[kept] = True
    tol = 1e-10 * max(1.0, float(np.abs(work.c).max()))     # HiGHS's own dual feasibility tolerance
    inf = highspy.kHighsInf
    h = new_highs()
    h.setOptionValue("presolve", "off")
    # model rows: the equality rows, then the kept inequality rows in the order they joined
    load_rows(h, work.c[cols], sp.vstack([work.A_eq[:, cols], work.A_ub[kept][:, cols]]),
              np.r_[work.b_eq, np.full(kept.size, -np.inf)], np.r_[work.b_eq, work.b_ub[kept]], work.lb[cols], work.ub[cols])
    if basis is not None:
        h.setOptionValue("simplex_dual_edge_weight_strategy", WARM_PRICING["restricted"])
        h.setBasis(basis)
    cold = False
    incumbent = None        # the last point feasible for the whole program, kept for a time limit
    for rounds in range(1, RESTRICT_ROUNDS + 1):
        if time_limit is not None:
            left = time_limit - (time.perf_counter() - t0)
            if left <= 0:
                return incumbent
            set_time_limit(h, left)
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return incumbent if h.getModelStatus() == highspy.HighsModelStatus.kTimeLimit else None
        sol = h.getSolution()
        z = np.zeros(work.n)
        z[cols] = sol.col_value
        y = np.asarray(sol.row_dual)
        y_ub = np.zeros(work.b_ub.size)
        y_ub[kept] = y[k_eq:]
        y_eq = y[:k_eq]
        reduced = work.c - work.A_ub.T @ y_ub - work.A_eq.T @ y_eq
        entering = ~active & (reduced < -tol)
        broken = work.A_ub @ z > work.b_ub + 1e-9
        violated = ~rows & broken
        point = (z[:prog.n], y_ub, y_eq[:prog.A_eq.shape[0]])      # in prog's own columns and rows
        if not broken.any():
            incumbent = RawSolution("time_limit", *point, f"time limit reached after {rounds} round(s) of the "
                                    "restricted program; its last point is feasible for the whole program, its "
                                    "multipliers bound it")
        if not entering.any() and not violated.any():
            if broken.any() and not cold:
                # a warm simplex can leave a kept row broken past 1e-9 after HiGHS's own scaling
                # (MinID-LDP, eps = 10.4: 5.5e-7 on coefficients of e^10): once more from scratch
                h.clearSolver()
                cold = True
                continue
            text = f"Optimal (on {int(active[:nq].sum()):,} of {nq:,} channel entries, {rounds} round(s))"
            return RawSolution("optimal", *point, text, restricted=(work.n, work.b_ub.size, cols, kept, h.getBasis()))
        red = np.where(entering[:nq], reduced[:nq], 0.0).reshape(d, m)
        pick = np.zeros(nq, dtype=bool)
        if enter == "outputs":
            ys = np.argsort(red.min(axis=0), kind="stable")[:RESTRICT_OUTPUTS]
            pick[(np.arange(d)[:, None] * m + ys[None, :]).ravel()] = True
        else:
            pick[np.arange(d) * m + red.argmin(axis=1)] = True
            cand = np.flatnonzero(entering[:nq])
            top = RESTRICT_ENTRIES * d
            pick[cand[np.argpartition(reduced[cand], top)[:top]] if cand.size > top else cand] = True
        new = np.concatenate([pick, np.zeros(work.n - nq, dtype=bool)]) & entering
        if active[:nq].sum() + new.sum() > RESTRICT_SHARE * nq:
            return None
        J = np.flatnonzero(new)
        C = sp.vstack([work.A_eq[:, J], work.A_ub[kept][:, J]], format="csc")
        h.addCols(J.size, work.c[J], work.lb[J], np.where(np.isinf(work.ub[J]), inf, work.ub[J]),
                  C.nnz, C.indptr[:-1].astype(np.int32), C.indices.astype(np.int32), C.data)
        active[J] = True
        cols = np.concatenate([cols, J])
        joining = np.zeros(work.b_ub.size, dtype=bool)
        joining[np.unique(A_csc[:, J].indices)] = True
        R = np.flatnonzero((joining | violated) & ~rows)
        if R.size:
            rows[R] = True
            M = work.A_ub[R][:, cols].tocsr()
            h.addRows(R.size, np.full(R.size, -inf), work.b_ub[R].astype(float), M.nnz, M.indptr[:-1].astype(np.int32),
                      M.indices.astype(np.int32), M.data)
            kept = np.concatenate([kept, R])
        h.setOptionValue("simplex_strategy", 0)      # primal simplex where the basis stays feasible
    return None


def _aux_rows_that_bind(prog: Program, touches: np.ndarray) -> np.ndarray:
    """Rows with channel entries whose auxiliary part alone can exceed b_ub within the
    auxiliaries' bounds (so they may bind with every entry at 0), one per distinct part (rows
    equal on a random projection: a rare false match only costs a row found violated later)."""
    nq = prog.d * prog.m
    aux = prog.A_ub[:, nq:].tocsr()
    lo, hi = prog.lb[nq:], prog.ub[nq:]
    top = aux.maximum(0) @ np.where(np.isinf(hi), 1e300, hi) + aux.minimum(0) @ np.where(np.isinf(lo), -1e300, lo)
    binds = touches & (top > prog.b_ub + 1e-12)
    out = np.zeros(prog.b_ub.size, dtype=bool)
    idx = np.flatnonzero(binds)
    if idx.size:
        r = np.random.default_rng(0).random((aux.shape[1], 2))
        key = np.column_stack([aux[idx] @ r, prog.b_ub[idx]])
        out[idx[np.unique(key, axis=0, return_index=True)[1]]] = True
    return out


def new_highs(ipm: bool = False):
    """A quiet HiGHS instance with the tolerances the re-audit needs."""
    from ..solvers import quiet_highs

    h = quiet_highs()
    h.setOptionValue("primal_feasibility_tolerance", 1e-10)
    h.setOptionValue("dual_feasibility_tolerance", 1e-10)
    if ipm:
        h.setOptionValue("solver", "ipm")
    return h


def solve_cvxpy(prog: Program, problem, solver: str, options: dict | None = None) -> RawSolution:
    """The same program (plus conic notions) through cvxpy with the named solver and options
    (`solvers.BACKENDS` holds each backend's)."""
    import cvxpy as cp

    from ..solvers import c_output

    z = cp.Variable(prog.n)
    vec_q = z[: prog.d * prog.m] if prog.lift is None else prog.lift @ z
    q = cp.reshape(vec_q, (prog.d, prog.m), order="C")
    finite_lb, finite_ub = np.isfinite(prog.lb), np.isfinite(prog.ub)
    ub_rows = prog.A_ub @ z <= prog.b_ub
    eq_rows = prog.A_eq @ z == prog.b_eq
    cons = [ub_rows, eq_rows, z[finite_lb] >= prog.lb[finite_lb], z[finite_ub] <= prog.ub[finite_ub]]
    for notion in prog.conic:
        cons += notion.conic(problem, q)
    scale = 2.0 ** cost_scale(prog.c)                  # exact; the duals are mapped back below
    model = cp.Problem(cp.Minimize((scale * prog.c) @ z), cons)
    # a solver library's own prints (SCS's errors reach the C stdout) go into the attempt's
    # message, not into the user's terminal or `--json` document
    try:
        with c_output() as printed:
            model.solve(solver=solver, **(options or {}))
    except cp.error.SolverError as e:
        return RawSolution("failed", None, None, None, f"{solver}: {e}" + _said(printed))
    except Exception as e:  # a crash inside the solver library: this attempt failed, the chain goes on
        return RawSolution("failed", None, None, None, f"{solver} crashed: {e}" + _said(printed))
    if model.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        return RawSolution("infeasible", None, None, None, model.status + _said(printed))
    if model.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or z.value is None:
        return RawSolution("failed", None, None, None, str(model.status) + _said(printed))
    y_ub = -np.asarray(ub_rows.dual_value) / scale if ub_rows.dual_value is not None else None
    y_eq = -np.asarray(eq_rows.dual_value) / scale if eq_rows.dual_value is not None else None
    status = "optimal" if model.status == cp.OPTIMAL else "inaccurate"
    return RawSolution(status, np.asarray(z.value), y_ub, y_eq, str(model.status) + _said(printed))


def _said(printed: list[str]) -> str:
    """What a solver printed (`solvers.c_output`), as a suffix of its message: one line, cut to
    SAID_CHARS."""
    text = " ".join("".join(printed).split())
    if not text:
        return ""
    return f" (it printed: {text[:SAID_CHARS]}{'...' if len(text) > SAID_CHARS else ''})"


SAID_CHARS = 300
"""The most characters of a solver's own printed output kept in its attempt's message."""
