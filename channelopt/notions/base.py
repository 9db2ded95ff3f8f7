"""What every privacy notion provides, and the shared pieces to build and audit one.

A notion *declares* its constraints on the channel `q` (d x m, row-stochastic) and *audits* a
given channel; how a solver receives the constraints is the solver module's job.

Constraint forms, from most to least structured:

- `column_rows(problem)` -> C (r x d): the notion is linear and homogeneous in each column,
  `C @ q[:, y] <= 0` for every output y (docs/spec.md §2, §4). The posterior-space method relies on it.
- `linear(problem)` -> LinearBlock over `vec(q)` (row-major, index x*m + y) plus the notion's
  own auxiliary variables. The default is `C` applied to every column; notions with a smaller
  equivalent formulation override it.
- `conic(problem, q)` -> cvxpy constraints, for notions that are convex but not linear (MIP).

`leakage(problem, q)` computes the smallest parameter with which `q` satisfies the notion,
directly from its definition (ratios of probabilities), independently of the constraint rows.
"""

from __future__ import annotations

import dataclasses
import functools
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

import numpy as np
import scipy.sparse as sp

from ..errors import ProblemError, did_you_mean

AUDIT_TOL = 1e-7
"""A notion holds if its audited leakage is at most `budget + AUDIT_TOL * max(1, budget)`.

Leakages are in nats (log-ratios), deltas are probabilities, ID-LDP reports a ratio to the budget.
"""


def within(leakage, budget: float, tol: float = AUDIT_TOL):
    """Whether leakage (a number, or an array of them) is within budget up to AUDIT_TOL."""
    ok = np.asarray(leakage) <= budget + tol * max(1.0, abs(budget))
    return bool(ok) if ok.ndim == 0 else ok


def bit_patterns(n: int) -> np.ndarray:
    """All 2^n subsets of n items as rows of a boolean (2^n, n) array, in binary order."""
    return ((np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1).astype(bool)


@dataclass(frozen=True)
class BatchVertices:
    """Closed-form vertex candidates of N priors' admissible posteriors in u = post / P
    coordinates, kept factored over nv fixed patterns instead of as an (N, nv, d) array:

        U[n, j, x] = scale[n, j] * (base[n, x] + step[n, x] * B[j, x] + extra[n, j] * F[j, x])

    (LIP: base = lo, step = hi - lo, B = which fixed coordinates are at hi, F = the free one,
    extra its offset from lo; LDP: base = 1, step = e^eps - 1, B = the set S, scale = 1 / P.ray).
    Products with one vector per prior are two small matrix products (`dot`); single vertices are
    built only where they are needed (`take`). `valid[n, j]`: candidate j is a vertex for prior n.
    """

    base: np.ndarray                 # (N, d)
    step: np.ndarray                 # (N, d)
    B: np.ndarray                    # (nv, d) float 0/1
    valid: np.ndarray                # (N, nv) bool
    scale: np.ndarray | None = None  # (N, nv), 1 when None
    extra: np.ndarray | None = None  # (N, nv), along F
    F: np.ndarray | None = None      # (nv, d) float 0/1

    def dot(self, c: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """U[n, j] . c[n] for every candidate j of the priors `rows` (all when None): (n, nv)."""
        sel = slice(None) if rows is None else rows
        out = (self.step[sel] * c) @ self.B.T
        out += (self.base[sel] * c).sum(axis=1)[:, None]
        if self.extra is not None and self.F is not None:
            along = c @ self.F.T
            along *= self.extra[sel]
            out += along
        if self.scale is not None:
            out *= self.scale[sel]
        return out

    @functools.cached_property
    def _bits(self) -> np.ndarray:
        return self.B.astype(bool)

    @functools.cached_property
    def _free(self) -> np.ndarray | None:
        """Each candidate's single coordinate along F, when every row of F has one (LIP)."""
        if self.F is None or not np.all(self.F.sum(axis=1) == 1):
            return None
        return self.F.argmax(axis=1)

    def take(self, rows: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """U[rows, idx] for broadcastable index arrays: shape broadcast(rows, idx).shape + (d,)."""
        base = self.base[rows]
        U = np.where(self._bits[idx], base + self.step[rows], base)      # B is 0/1: a choice, not a product
        if self.extra is not None and self.F is not None:
            extra = self.extra[rows, idx]
            if self._free is None:
                U += extra[..., None] * self.F[idx]
            else:                               # one coordinate per candidate moves: add it there
                at = np.broadcast_to(self._free[idx][..., None], U.shape[:-1] + (1,))
                np.put_along_axis(U, at, np.take_along_axis(U, at, axis=-1) + extra[..., None], axis=-1)
        return U if self.scale is None else U * self.scale[rows, idx][..., None]

    def full(self, rows: np.ndarray) -> np.ndarray:
        """Every candidate of the priors `rows`: (n, nv, d)."""
        rows = np.asarray(rows)
        return self.take(rows[..., None], np.arange(self.B.shape[0]))


@dataclass(frozen=True)
class LinearBlock:
    """`A_q @ vec(q) + A_aux @ aux <= b` and `E_q @ vec(q) + E_aux @ aux = e`,
    with `aux_lower <= aux <= aux_upper`."""

    A_q: sp.csr_matrix
    b: np.ndarray
    A_aux: sp.csr_matrix | None = None
    aux_lower: np.ndarray = field(default_factory=lambda: np.zeros(0))
    aux_upper: np.ndarray = field(default_factory=lambda: np.zeros(0))
    E_q: sp.csr_matrix | None = None
    E_aux: sp.csr_matrix | None = None
    e: np.ndarray = field(default_factory=lambda: np.zeros(0))
    floor: int | None = None
    """When set, rows floor .. floor + d*m - 1 are `-q[x, y] + a * aux[g(x) * m + y] <= 0` with
    g = `floor_group` (default all 0) and a = `floor_scale`: a per-output floor that the LP
    substitutes away (`lp.build`)."""
    floor_group: np.ndarray | None = None
    floor_scale: float = 1.0

    @property
    def n_aux(self) -> int:
        return 0 if self.A_aux is None else self.A_aux.shape[1]

    @property
    def n_rows(self) -> int:
        return self.A_q.shape[0]

    @property
    def n_eq(self) -> int:
        return 0 if self.E_q is None else self.E_q.shape[0]


def per_column(C, m: int, b: float | np.ndarray = 0.0) -> LinearBlock:
    """Apply the row block C (r x d) to every column of q: rows indexed i*m + y."""
    C = sp.csr_matrix(C)
    A = sp.kron(C, sp.identity(m, format="csr"), format="csr")
    return LinearBlock(A, np.broadcast_to(np.asarray(b, dtype=float), (A.shape[0],)).copy())


def ones_per_column(d: int, m: int) -> sp.csr_matrix:
    """The (d*m) x m matrix that maps a per-output vector u to u[y] at every row x*m + y."""
    return sp.csr_matrix((np.ones(d * m), np.tile(np.arange(m), d), np.arange(d * m + 1)), shape=(d * m, m))


def floor_rows(d: int, m: int, q_sign: float, aux_top, aux_bottom) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Two row blocks over the entries of q with one auxiliary lam[y] per output, built entry by
    entry: row x*m + y reads `q_sign q[x, y] + aux_top[x] lam[y]`, row dm + x*m + y reads
    `-q_sign q[x, y] + aux_bottom[x] lam[y]` (aux_* scalars or per-input arrays). The second
    block is a per-output floor when it reads `-q + a lam` (LIP's e^-eps Pr(Y = y), LDP's column
    minimum). Returns (A_q, A_aux)."""
    dm = d * m
    ramp = np.arange(2 * dm + 1)                  # one entry of q and one auxiliary per row
    A_q = sp.csr_matrix((np.r_[np.full(dm, q_sign), np.full(dm, -q_sign)], np.tile(np.arange(dm), 2), ramp),
                        shape=(2 * dm, dm))
    aux = np.r_[np.repeat(np.broadcast_to(aux_top, (d,)), m), np.repeat(np.broadcast_to(aux_bottom, (d,)), m)]
    A_aux = sp.csr_matrix((aux.astype(float), np.tile(np.arange(m), 2 * d), ramp), shape=(2 * dm, m))
    return A_q, A_aux


def ratio_rows(d: int, pairs_i: np.ndarray, pairs_j: np.ndarray, weight_i, weight_j) -> sp.csr_matrix:
    """Rows `weight_i[k] e_{i_k} - weight_j[k] e_{j_k}` (one per pair k), as a sparse r x d block."""
    r = pairs_i.size
    rows = np.concatenate([np.arange(r), np.arange(r)])
    cols = np.concatenate([pairs_i, pairs_j])
    vals = np.concatenate([np.broadcast_to(weight_i, (r,)), -np.broadcast_to(weight_j, (r,))])
    return sp.csr_matrix((vals, (rows, cols)), shape=(r, d))


def distinct_pairs(d: int) -> tuple[np.ndarray, np.ndarray]:
    """All ordered pairs (x, x') with x != x'."""
    i, j = np.nonzero(~np.eye(d, dtype=bool))
    return i, j


def max_log_ratio(num: np.ndarray, den: np.ndarray) -> float:
    """max log(num/den) over entries with num > 0; +inf where num > 0 and den == 0; -inf if none."""
    num = np.asarray(num, dtype=float)
    den = np.broadcast_to(np.asarray(den, dtype=float), num.shape)
    pos = num > 0
    if not pos.any():
        return -np.inf
    if np.any(den[pos] <= 0):
        return np.inf
    return float(np.max(np.log(num[pos]) - np.log(den[pos])))


def column_spread(q: np.ndarray) -> float:
    """max over used columns of log(max_x q[x,y] / min_x q[x,y]) (LDP-style leakage)."""
    hi = q.max(axis=0)
    used = hi > 0
    if not used.any():
        return 0.0
    return max(max_log_ratio(hi[used], q.min(axis=0)[used]), 0.0)


def two_sided_lift(cond_y: np.ndarray, lam: np.ndarray) -> tuple[float, float]:
    """(max log(1/lift), max log lift) of lift = cond_y / lam over columns with lam > 0.

    cond_y[g, y] = Pr(Y=y | G=g). A lift of 0 makes the first entry infinite (CA-LIP Lemma 1.3).
    """
    used = lam > 0
    c, l = cond_y[:, used], lam[used]
    upper = max_log_ratio(c, l[None, :])
    lower = max_log_ratio(np.broadcast_to(l[None, :], c.shape), c)
    return max(lower, 0.0), max(upper, 0.0)


class NotHomogeneous(ProblemError):
    """The notion is not linear and homogeneous in each column of q, so it has no column rows
    and the posterior-space LP does not apply to it (approx-lip, mil, mip)."""


class Notion(ABC):
    """The contract every privacy notion implements.

    Subclasses are frozen dataclasses holding the notion's parameters and set the class
    attributes below. Everything else in channelopt (the methods, the audit, sweeps, batches,
    relations, the benchmark and the fuzz tests) reaches a notion only through these methods,
    never by its concrete type or an attribute name, so a new notion is one module plus one
    entry in `notions.NOTIONS`.

    Attributes
    ----------
    name : str
        The problem-file name (`notion = "..."`).
    keys : tuple of str
        The problem-file keys the notion accepts (besides `notion`).
    budget_keys : tuple of str
        Scalar budgets in nats, validated once by `__post_init__` (finite, > 0; >= 0 when
        `zero_budget`), reported by `budgets()` and varied by `with_budget` (sweeps).
    homogeneous : bool
        `column_rows` exists: the notion is `C @ q[:, y] <= 0` for every output y.
    linear_form : bool
        `linear` exists; otherwise `conic` and `smooth` describe the (convex) constraint.
    budget_free : bool
        The notion's leakage needs no parameter but its budgets, so `measure` reports it for
        every audited channel (the `measures` object of the JSON contract).
    infinite_stays : bool
        An infinite leakage (a zero probability against a positive one) is infinite at every
        budget the notion accepts: the audit of a channel that failed so need not run again when
        only the budgets change (the best response along a sweep, `closed._best_response_along`).
    """

    name: ClassVar[str]
    keys: ClassVar[tuple[str, ...]] = ("epsilon",)
    budget_keys: ClassVar[tuple[str, ...]] = ("epsilon",)
    zero_budget: ClassVar[bool] = False
    homogeneous: ClassVar[bool] = True
    linear_form: ClassVar[bool] = True
    budget_free: ClassVar[bool] = False
    infinite_stays: ClassVar[bool] = False

    def __post_init__(self):
        from ..problem import as_epsilon

        for k in self.budget_keys:
            object.__setattr__(self, k, as_epsilon(k, getattr(self, k), allow_zero=self.zero_budget))

    # ---- problem file -------------------------------------------------------------------------

    @classmethod
    def parse(cls, table: dict, key: str) -> Notion:
        """The notion from its `[[privacy]]` table; errors name `key` and the offending entry.

        Default: the table's keys are the dataclass fields; the fields without a default and the
        budgets are required.
        """
        check_keys(table, cls.keys, key)
        fields = {f.name: f for f in dataclasses.fields(cast(Any, cls))}      # every notion is a dataclass
        required = [k for k in cls.keys if k in cls.budget_keys or (
            k in fields and fields[k].default is dataclasses.MISSING
            and fields[k].default_factory is dataclasses.MISSING)]
        for k in required:
            require(table, k, key)
        return cls(**{k: v for k, v in table.items() if k != "notion"})

    def to_table(self) -> dict:
        """The notion as a `[[privacy]]` table (`parse(to_table())` is an equal notion)."""
        return {"notion": self.name, **{k: getattr(self, k) for k in self.budget_keys}}

    def validate(self, problem, key: str) -> None:
        """Checks that need the problem (dimensions, secrets). Raise ProblemError naming `key`."""

    # ---- budgets --------------------------------------------------------------------------------

    def budgets(self) -> dict:
        """The notion's privacy parameters in nats, by name: scalars, or arrays for per-input
        budgets. Used by sweeps (`with_budget`) and by the conditioning hints of failed audits."""
        return {k: getattr(self, k) for k in self.budget_keys}

    def with_budget(self, **values) -> Notion:
        """The same notion with some budgets replaced (validated as in the problem file)."""
        unknown = sorted(set(values) - set(self.budgets()))
        if unknown:
            raise ProblemError(f"notion {self.name!r} has no budget {unknown[0]!r} "
                               f"(budgets: {', '.join(self.budgets()) or 'none'})")
        return dataclasses.replace(cast(Any, self), **values)

    # ---- constraints ----------------------------------------------------------------------------

    def column_rows(self, problem):
        """C (r x d, dense or sparse) with `C @ q[:, y] <= 0` for every output y, exactly the
        notion; raise NotHomogeneous when the notion has no such form."""
        raise NotHomogeneous(f"notion {self.name!r} is not homogeneous in the columns of q: "
                             "the posterior-space LP does not apply")

    def linear(self, problem) -> LinearBlock | None:
        """The notion as sparse rows over vec(q) and the notion's own auxiliaries (the LP).

        Default: `column_rows` applied to every column. None for a notion that is not linear.
        """
        if not self.linear_form:
            return None
        return per_column(self.column_rows(problem), problem.m)

    def conic(self, problem, q) -> list:
        """cvxpy constraints on the channel variable q, for a convex notion that is not linear."""
        return []

    def smooth(self, problem) -> list:
        """Smooth constraints g(q) >= 0 (callables of the d x m channel) for the local method,
        for a notion that is not linear; the linear ones reach it through `linear`."""
        if self.linear_form:
            return []
        raise NotImplementedError(f"notion {self.name!r} gives no smooth form for the local method")

    def infeasibility(self, problem) -> str:
        """A structural proof that no channel satisfies the notion for this problem ("" if none
        is known); `infeasible` is reported only with such a proof or a checked Farkas ray."""
        return ""

    # ---- closed forms (optional) ----------------------------------------------------------------

    def posterior_vertices(self, problem, limit: int):
        """Vertices of the admissible-posterior polytope in closed form, if known and at most
        `limit` of them; None otherwise (then they are enumerated numerically)."""
        return None

    def posterior_family(self, problem):
        """The closed-form shape of the admissible posteriors for the structured pricing of the
        posterior-space LP, as (shape, eps) with shape "lip-box" or "ldp-cone"; None if none."""
        return None

    def batch_vertices(self, P: np.ndarray, limit: int):
        """`BatchVertices` for a batch of priors P (N x d): every closed-form vertex candidate of
        every prior's admissible posteriors in u = post / P coordinates, and which candidates are
        vertices for that prior; None when not known in closed form or nv > limit."""
        return None

    def closed_form(self, problem):
        """A closed-form channel that is optimal for this notion alone and the problem's utility,
        as a `closed_forms.ClosedForm` carrying its own bound; None when none is known. The
        caller audits the channel and accepts it only when the bound certifies it."""
        return None

    # ---- audit ----------------------------------------------------------------------------------

    @abstractmethod
    def leakage(self, problem, q: np.ndarray) -> Any:
        """The smallest parameter with which the channel q satisfies the notion, computed from the
        definition (probability ratios), independently of the constraint rows."""

    def batch_leakage(self, P: np.ndarray, q: np.ndarray):
        """`leakage` of many channels q (N, d, m) under priors P (N, d), vectorized; None when
        the notion has no vectorized audit (then each channel is audited on its own)."""
        return None

    def satisfied(self, leakage: Any, tol: float = AUDIT_TOL) -> bool:
        """Whether an audited leakage is within the budget (up to `tol`, relative)."""
        return within(leakage, self.budget(), tol)

    def budget(self) -> Any:
        """The notion's allowed leakage, in the same shape as `leakage`."""
        return self.budgets()["epsilon"]

    @classmethod
    def measure(cls, problem, q: np.ndarray) -> Any:
        """The budget-free leakage of q (`audit.measures`), or None unless `budget_free`."""
        if not cls.budget_free:
            return None
        return cls(**{k: 1.0 for k in cls.budget_keys}).leakage(problem, q)

    # ---- examples -------------------------------------------------------------------------------

    @classmethod
    def example(cls, d: int, epsilon: float, rng: np.random.Generator, latent_k: int | None = None) -> dict:
        """A representative `[[privacy]]` table for an alphabet of d symbols (and a latent secret
        of latent_k values, if any), drawn with rng: what the fuzz tests and the benchmark use
        for a notion they have no hand-written case for."""
        return {"notion": cls.name, **{k: epsilon for k in cls.budget_keys}}


def check_keys(table: dict, allowed, key: str) -> None:
    unknown = sorted(set(table) - set(allowed) - {"notion"})
    if unknown:
        raise ProblemError(f"{key}: unknown key {unknown[0]!r}{did_you_mean(unknown[0], allowed)} for notion {table.get('notion')!r} "
                           f"(allowed: {', '.join(sorted(allowed))})")


def require(table: dict, name: str, key: str) -> Any:
    if name not in table:
        raise ProblemError(f"{key}.{name} is required for notion {table.get('notion')!r}")
    return table[name]
