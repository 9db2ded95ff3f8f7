"""Context-aware notions on the secret G (G = X unless a latent model is given):
eps-LIP, eps-BP-LIP, eps-WC-LIP, (eps_l, eps_u)-ALIP, (eps, delta)-LIP.

Throughout, `lift[g, y] = Pr(Y=y | G=g) / Pr(Y=y) = Pr(G=g | Y=y) / Pr(G=g)` with
`Pr(Y=y | G=g) = sum_x T[g, x] q[x, y]` (LIP-TDSC Eq 9).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from ..closed_forms import rr_lip_hamming
from ..errors import ProblemError
from ..problem import Joint, as_prior_rows, as_vector
from .base import AUDIT_TOL, BatchVertices, LinearBlock, Notion, bit_patterns, floor_rows, per_column, within

MAX_BOX_DIM = 20
"""Largest alphabet whose prior box is reduced to vertices (d * 2^(d-1) candidates)."""


def lip_rows(joint: Joint, eps_upper: float, eps_lower: float) -> np.ndarray:
    """C with C q_y <= 0 <=> e^-eps_lower <= lift[g, y] <= e^eps_upper for every g (LIP-TDSC Eq 9)."""
    T, P = joint.conditional, joint.prior_x
    ones_P = np.ones((T.shape[0], 1)) * P[None, :]
    return np.vstack([T - upper_factor(joint, eps_upper)[:, None] * ones_P, np.exp(-eps_lower) * ones_P - T])


def upper_factor(joint: Joint, eps_upper: float) -> np.ndarray:
    """Per secret g, min(e^eps, 1 / Pr(g)): the upper lift constraint Pr(y|g) <= e^eps Pr(y)
    always holds once e^eps >= 1 / Pr(g) (Pr(y) >= Pr(g) Pr(y|g)), and with the factor capped it
    is still always true; the feasible set is unchanged, the rows keep their number (warm starts
    along a sweep) and coefficients like e^40 never reach a solver."""
    with np.errstate(divide="ignore"):
        return np.minimum(np.exp(eps_upper), 1.0 / joint.prior)


def lift_block(joint: Joint, m: int, eps_upper: float, eps_lower: float) -> LinearBlock:
    """The same constraint as `lip_rows` with the output marginal as a variable (sparse form).

    Auxiliaries: lam[y] = P @ q[:, y] (equality rows) and, unless T is the identity,
    c[g, y] = T[g] @ q[:, y]; then e^-eps_lower lam[y] <= c[g, y] <= e^eps_upper lam[y] has two
    nonzeros per row: O((k + d + nnz(T)) m) nonzeros instead of 2 k d m for `lip_rows`.
    """
    T, P = joint.conditional, joint.prior_x
    k, d = T.shape
    direct = k == d and np.array_equal(T, np.eye(d))
    if direct:   # built entry by entry (no sparse products): the sweep rebuilds it at every point
        return _direct_lift_block(P, m, upper_factor(joint, eps_upper), float(np.exp(-eps_lower)))
    I_m = sp.identity(m, format="csr")
    n_aux = m + k * m
    # equality rows: lam - (P kron I) q = 0 and c - (T kron I) q = 0
    E_q = [-sp.kron(P[None, :], I_m, format="csr"), -sp.kron(sp.csr_matrix(T), I_m, format="csr")]
    E_aux = [sp.hstack([I_m, sp.csr_matrix((m, n_aux - m))], format="csr"),
             sp.hstack([sp.csr_matrix((k * m, m)), sp.identity(k * m)], format="csr")]
    spread = sp.kron(np.ones((k, 1)), I_m, format="csr")  # lam[y] at row g*m + y
    up = sp.diags(np.repeat(upper_factor(joint, eps_upper), m)) @ spread
    A_q = sp.csr_matrix((2 * k * m, d * m))
    c_part = sp.vstack([sp.identity(k * m), -sp.identity(k * m)], format="csr")
    A_aux = sp.hstack([sp.vstack([-up, np.exp(-eps_lower) * spread]), c_part], format="csr")
    return LinearBlock(A_q, np.zeros(A_q.shape[0]), A_aux, np.zeros(n_aux), np.ones(n_aux),
                       sp.vstack(E_q, format="csr"), sp.vstack(E_aux, format="csr"), np.zeros(m + k * m))


def _direct_lift_block(P: np.ndarray, m: int, up: np.ndarray, low: float) -> LinearBlock:
    """`lift_block` with G = X: rows q[x, y] - up[x] lam[y] <= 0 and the floor
    -q[x, y] + low lam[y] <= 0, lam[y] = P @ q[:, y] (one auxiliary per output)."""
    d = P.size
    dm = d * m
    A_q, A_aux = floor_rows(d, m, 1.0, -up, low)
    # lam[y] - sum_x P[x] q[x, y] = 0, row y
    E_q = sp.csr_matrix((np.tile(-P, m), (np.arange(d)[None, :] * m + np.arange(m)[:, None]).ravel(),
                         np.arange(0, dm + 1, d)), shape=(m, dm))
    return LinearBlock(A_q, np.zeros(2 * dm), A_aux, np.zeros(m), np.ones(m), E_q, sp.identity(m, format="csr"),
                       np.zeros(m), floor=dm, floor_scale=low)


def stack_blocks(blocks: list[LinearBlock]) -> LinearBlock:
    """Blocks side by side: shared q, each its own auxiliaries."""
    n_aux = sum(b.n_aux for b in blocks)
    def place(mats, rows_of):
        out, off = [], 0
        for b, M in zip(blocks, mats):
            r = rows_of(b)
            out.append(sp.hstack([sp.csr_matrix((r, off)), M if M is not None else sp.csr_matrix((r, b.n_aux)),
                                  sp.csr_matrix((r, n_aux - off - b.n_aux))], format="csr"))
            off += b.n_aux
        return sp.vstack(out, format="csr")
    return LinearBlock(
        sp.vstack([b.A_q for b in blocks], format="csr"), np.concatenate([b.b for b in blocks]),
        place([b.A_aux for b in blocks], lambda b: b.n_rows),
        np.concatenate([b.aux_lower for b in blocks]), np.concatenate([b.aux_upper for b in blocks]),
        sp.vstack([b.E_q for b in blocks], format="csr"), place([b.E_aux for b in blocks], lambda b: b.n_eq),
        np.concatenate([b.e for b in blocks]))


def lift_extremes(joint: Joint, q: np.ndarray) -> tuple[float, float]:
    """(max log(1/lift), max log lift) over every secret g and every output y that can occur.

    An output with Pr(Y=y) = 0 under this joint but Pr(Y=y|G=g) > 0 for some g (possible only
    for a scenario on the boundary of the simplex) has an unbounded lift: it is the limit of
    interior scenarios, so the leakage is +inf (CA-LIP Lemma 1.3 convention).
    """
    cond = joint.given(q)
    lam = joint.prior_x @ q
    top, bottom = cond.max(axis=0), cond.min(axis=0)   # a column's extreme lifts are its extremes / lam
    used = (lam > 0) | (top > 0)
    if not used.any():
        return 0.0, 0.0
    lam, top, bottom = lam[used], top[used], bottom[used]
    seen = lam > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        hi_lift = np.where(seen, top / lam, np.inf)
        # lam = 0 < top: 0 / 0 is an output this secret and Y never take (lift 1), the rest inf
        lo_lift = np.where(seen, bottom / lam, np.where(bottom > 0, np.inf, 1.0))
        lo, hi = float(np.log(lo_lift.min())), float(np.log(hi_lift.max()))
    return max(0.0, -lo), max(0.0, hi)                 # 0.0 first: never -0.0


def lift_box_vertices(problem, lower: float, upper: float, limit: int):
    """The vertices of the posteriors whose lift lies in [e^-lower, e^upper] with G = X: the box
    e^-lower P <= post <= min(e^upper P, 1) cut by the simplex (`box_vertices`), or None (a latent
    secret, more than `limit` candidates, or d past MAX_BOX_DIM)."""
    d = problem.d
    if problem.latent is not None or d * 2 ** (d - 1) > limit or d > MAX_BOX_DIM:
        return None
    P = problem.prior
    return box_vertices(np.exp(-lower) * P, np.minimum(np.exp(upper) * P, 1.0))


@dataclass(frozen=True)
class LIP(Notion):
    """eps-LIP for the problem's prior (and latent secret): e^-eps <= lift <= e^eps
    (LIP-CNS Def 3, Eq 7; LIP-TDSC Def 6, Eq 9).

    With G = X the lift of output y for input x is q[x, y] / Pr(Y=y); with a latent secret G
    it is Pr(Y=y | G=g) / Pr(Y=y) for every secret g. With Hamming distortion and G = X, RR-LIP
    (LIP-TDSC Thm 3) is optimal wherever it is feasible (`closed_forms.rr_lip_hamming`).

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
    name: ClassVar[str] = "lip"
    budget_free: ClassVar[bool] = True

    def column_rows(self, problem):
        return lip_rows(problem.secret, self.epsilon, self.epsilon)

    def linear(self, problem):
        return lift_block(problem.secret, problem.m, self.epsilon, self.epsilon)

    def posterior_vertices(self, problem, limit):
        """With G = X the admissible posteriors are the box e^-eps P <= post <= e^eps P cut by the
        simplex; its vertices have every coordinate but one at a bound (`box_vertices`)."""
        return lift_box_vertices(problem, self.epsilon, self.epsilon, limit)

    def posterior_family(self, problem):
        return ("lip-box", self.epsilon) if problem.latent is None else None

    def closed_form(self, problem):
        """Hamming distortion with G = X: RR-LIP (`closed_forms.rr_lip_hamming`); its bound
        certifies it wherever it is feasible (P_min >= 1 / (e^eps + 1))."""
        if problem.latent is None and problem.utility.plain_hamming(problem):
            # RR-LIP's largest lift is its diagonal's, (1 - (1 - P_min) / e^eps) / P_min (Pr(Y) = P):
            # where that is beyond what the audit accepts, RR-LIP is not tried (a sweep skips
            # building its d x d multipliers at every infeasible point)
            P_min, e = float(problem.prior.min()), float(np.exp(self.epsilon))
            if P_min <= 0 or np.log((1 - (1 - P_min) / e) / P_min) > self.epsilon + 2 * AUDIT_TOL * max(1.0, self.epsilon):
                return None
            return rr_lip_hamming(problem.prior, self.epsilon, problem.m)
        return None

    def batch_vertices(self, P, limit):
        """`box_vertices` of every prior's box at once in u = post / P coordinates: u in
        [e^-eps, min(e^eps, 1/P)] with P . u = 1; coordinate i free, the others at a bound."""
        N, d = P.shape
        if d * 2 ** (d - 1) > limit:
            return None
        e = np.exp(self.epsilon)
        lo, hi = np.full_like(P, 1.0 / e), np.minimum(e, 1.0 / P)
        bits = bit_patterns(d - 1)
        B = bits.shape[0]
        free = np.repeat(np.arange(d), B)                    # vertex j has coordinate free[j] free
        at_hi = np.zeros((d * B, d))                         # the others at hi where set, else at lo
        for i in range(d):
            at_hi[i * B:(i + 1) * B, np.delete(np.arange(d), i)] = bits
        # P . u over the fixed coordinates, for every vertex of every prior, as (N, d, B): block i
        # holds the vertices whose free coordinate is i (one product, then broadcasts)
        # (in place: five passes over N x d x B numbers instead of nine)
        u = (((hi - lo) * P) @ at_hi.T).reshape(N, d, B)
        u += (lo * (1.0 - P))[:, :, None]
        np.subtract(1.0, u, out=u)
        u /= P[:, :, None]                                   # the free coordinate's value
        lo_f, hi_f = lo[:, :, None], hi[:, :, None]
        ok = u >= lo_f * (1 - 1e-12)
        ok &= u <= hi_f * (1 + 1e-12)
        np.maximum(u, lo_f, out=u)                           # clipped (np.clip is slower here)
        np.minimum(u, hi_f, out=u)
        u -= lo_f
        extra = u
        return BatchVertices(lo, hi - lo, at_hi, ok.reshape(N, d * B), extra=extra.reshape(N, d * B),
                             F=np.eye(d)[free])

    def batch_leakage(self, P, q):
        """Only for G = X (the batch templates); the largest |log lift| per channel, from the
        extreme lifts (two logs per channel; an output no input takes has lift 1)."""
        lam = np.einsum("nd,ndm->nm", P, q)[:, None, :]
        lift = np.divide(q, lam, out=np.ones_like(q), where=lam > 0)
        with np.errstate(divide="ignore"):
            return np.maximum(np.log(lift.max(axis=(1, 2))), -np.log(lift.min(axis=(1, 2))))

    def leakage(self, problem, q):
        return max(lift_extremes(problem.secret, q))


@dataclass(frozen=True)
class BPLIP(Notion):
    """eps-BP-LIP: eps-LIP for every scenario of a prior set (LIP-TDSC Def 6, CA-LIP Def 6).

    The set is one of
      priors = [[...], ...]               a finite list (priors of X, or of G for a latent problem,
                                          combined with the problem's conditional Pr(X|G));
      prior_lower = [...], prior_upper = [...]
                                          a box intersected with the simplex, reduced to its
                                          vertices (the LIP constraint is linear in the prior for
                                          a fixed channel, so the vertices are the binding ones);
      scenarios = [{prior, conditional}]  full joints (G, X).

    Parameters
    ----------
    epsilon : float
        The budget in nats, finite and > 0.
    priors : array_like, shape (n, d) or (n, k), optional
        A finite prior set.
    prior_lower, prior_upper : array_like, optional
        A box of priors (intersected with the simplex).
    scenarios : list of Joint or dict, optional
        Full joints (G, X).

    Raises
    ------
    ProblemError
        If the budget or the set is invalid, or none / more than one form of the set is given.
    """

    epsilon: float
    priors: Any = None
    prior_lower: Any = None
    prior_upper: Any = None
    scenarios: Any = None
    name: ClassVar[str] = "bp-lip"
    keys: ClassVar[tuple[str, ...]] = ("epsilon", "priors", "prior_lower", "prior_upper", "scenarios")

    def __post_init__(self):
        super().__post_init__()
        given = [k for k in ("priors", "scenarios") if getattr(self, k) is not None]
        if self.prior_lower is not None or self.prior_upper is not None:
            given.append("prior_lower/prior_upper")
        if len(given) != 1:
            raise ProblemError("needs exactly one of priors, prior_lower + prior_upper, scenarios; "
                               f"got {given or 'none'}")

    def validate(self, problem, key):
        self.scenarios_for(problem, key)

    def scenarios_for(self, problem, key: str = "bp-lip") -> list[Joint]:
        d = problem.d
        if self.scenarios is not None:
            if not isinstance(self.scenarios, (list, tuple)) or not self.scenarios:
                raise ProblemError(f"{key}.scenarios must be a non-empty list of {{prior, conditional}} tables")
            return [Joint.parse(f"{key}.scenarios[{i}]", s, d) for i, s in enumerate(self.scenarios)]
        base = problem.latent.conditional if problem.latent is not None else np.eye(d)
        k = base.shape[0]
        if self.priors is not None:
            P = as_prior_rows(f"{key}.priors", self.priors, k)
        else:
            P = box_vertices(as_vector(f"{key}.prior_lower", self.prior_lower, k),
                             as_vector(f"{key}.prior_upper", self.prior_upper, k), key)
        return [Joint(p, base) for p in P]

    @classmethod
    def example(cls, d, epsilon, rng, latent_k=None):
        return {"notion": cls.name, "epsilon": epsilon,
                "priors": rng.dirichlet(np.ones(latent_k or d), size=int(rng.integers(1, 4))).tolist()}

    def binding_scenarios(self, problem) -> list[Joint]:
        """The scenarios without the dominated priors (for constraints; audits use them all).

        For a fixed channel the lift constraint of a prior p, e^-eps p.q_y <= q[x, y] <= e^eps p.q_y
        (or T[g].q_y against p.q_y with a shared Pr(X|G)), is linear in p; so a prior that is a
        convex combination of the others is implied by them and is dropped.
        """
        scen = self.scenarios_for(problem)
        if self.scenarios is not None:
            return scen
        keep = extreme_points(np.array([s.prior for s in scen]))
        return [scen[i] for i in keep]

    def column_rows(self, problem):
        return np.vstack([lip_rows(s, self.epsilon, self.epsilon) for s in self.binding_scenarios(problem)])

    def linear(self, problem):
        return stack_blocks([lift_block(s, problem.m, self.epsilon, self.epsilon)
                             for s in self.binding_scenarios(problem)])

    def leakage(self, problem, q):
        return max(max(lift_extremes(s, q)) for s in self.scenarios_for(problem))

    def to_table(self):
        out = {"notion": self.name, "epsilon": self.epsilon}
        for k in ("priors", "prior_lower", "prior_upper", "scenarios"):
            v = getattr(self, k)
            if v is not None:
                out[k] = [Joint.table(s) for s in v] if k == "scenarios" else np.asarray(v).tolist()
        return out


def extreme_points(P: np.ndarray) -> np.ndarray:
    """Indices of the rows of P that are not convex combinations of the other rows (duplicates
    keep their first copy): one LP feasibility test per row."""
    _, first = np.unique(P, axis=0, return_index=True)
    idx = np.sort(first)
    if idx.size <= 2:
        return idx
    from scipy.optimize import linprog

    keep = []
    for i in idx:
        others = P[idx[idx != i]]
        res = linprog(np.zeros(len(others)), A_eq=np.vstack([others.T, np.ones(len(others))]),
                      b_eq=np.r_[P[i], 1.0], bounds=(0, None), method="highs")
        if res.status != 0:  # infeasible: P[i] is extreme
            keep.append(i)
    return np.array(keep, dtype=int)


def box_vertices(lower: np.ndarray, upper: np.ndarray, key: str = "bp-lip") -> np.ndarray:
    """Vertices of {lower <= p <= upper, sum p = 1}.

    At a vertex at most one coordinate lies strictly inside its bounds; so every vertex is found
    by choosing the free coordinate i, putting every other coordinate at a bound (2^(d-1)
    patterns) and keeping the patterns whose p_i = 1 - rest lands inside [lower_i, upper_i].
    """
    d = lower.size
    if np.any(lower < 0) or np.any(upper > 1) or np.any(lower > upper):
        raise ProblemError(f"{key}: need 0 <= prior_lower <= prior_upper <= 1 entrywise, "
                           f"got lower {lower.tolist()} upper {upper.tolist()}")
    if lower.sum() > 1 + 1e-12 or upper.sum() < 1 - 1e-12:
        raise ProblemError(f"{key}: the prior box is empty: need sum(prior_lower) <= 1 <= sum(prior_upper), "
                           f"got {lower.sum()!r} and {upper.sum()!r}")
    if d > MAX_BOX_DIM:
        raise ProblemError(f"{key}: prior_lower/prior_upper supported up to {MAX_BOX_DIM} symbols, got {d}; "
                           "give the vertices as priors instead")
    bits = bit_patterns(d - 1)
    found = []
    for i in range(d):
        others = np.delete(np.arange(d), i)
        rest = np.where(bits, upper[others], lower[others])
        pi = 1.0 - rest.sum(axis=1)
        ok = (pi >= lower[i] - 1e-12) & (pi <= upper[i] + 1e-12)
        V = np.zeros((ok.sum(), d))
        V[:, others] = rest[ok]
        V[:, i] = np.clip(pi[ok], lower[i], upper[i])
        found.append(V)
    V = np.vstack(found)
    # duplicates compared relative to each coordinate's scale (entries can be 1e-12 and smaller)
    scale = np.where(upper > 0, upper, 1.0)
    _, first = np.unique(np.round(V / scale, 12), axis=0, return_index=True)
    return V[np.sort(first)]


@dataclass(frozen=True)
class WCLIP(BPLIP):
    """eps-WC-LIP: eps-LIP for every prior of X (LIP-TDSC Def 6).

    Compiled from its definition: the prior set is the whole simplex, reduced to its vertices
    (point masses). CA-LIP Corollary 2 says this equals eps-LDP; the test suite checks that
    against the separate LDP formulation rather than assuming it here.

    Parameters
    ----------
    epsilon : float
        The budget in nats, finite and > 0.

    Raises
    ------
    ProblemError
        If epsilon is not a finite positive number within range.
    """

    epsilon: Any = None
    name: ClassVar[str] = "wc-lip"
    keys: ClassVar[tuple[str, ...]] = ("epsilon",)

    def __post_init__(self):
        Notion.__post_init__(self)  # no prior set to check: it is the whole simplex

    @classmethod
    def example(cls, d, epsilon, rng, latent_k=None):
        return Notion.example.__func__(cls, d, epsilon, rng, latent_k)

    def scenarios_for(self, problem, key: str = "wc-lip"):
        return [Joint.identity(v) for v in np.eye(problem.d)]

    def linear(self, problem):
        # at a point-mass prior e_v the marginal is q[v, :] itself: no auxiliary needed
        return per_column(self.column_rows(problem), problem.m)

    def to_table(self):
        return Notion.to_table(self)


@dataclass(frozen=True)
class ALIP(Notion):
    """(eps_l, eps_u)-ALIP: e^-eps_l <= lift <= e^eps_u for every secret and output (ALIP Def 1).

    Leakage is {"lower": max log(1/lift), "upper": max log lift}.

    Parameters
    ----------
    epsilon_lower, epsilon_upper : float
        The budgets on the min-lift and the max-lift in nats, finite and >= 0.

    Raises
    ------
    ProblemError
        If a budget is not a finite nonnegative number within range.
    """

    epsilon_lower: float
    epsilon_upper: float
    name: ClassVar[str] = "alip"
    keys: ClassVar[tuple[str, ...]] = ("epsilon_lower", "epsilon_upper")
    budget_keys: ClassVar[tuple[str, ...]] = ("epsilon_lower", "epsilon_upper")
    zero_budget: ClassVar[bool] = True
    budget_free: ClassVar[bool] = True

    def column_rows(self, problem):
        return lip_rows(problem.secret, self.epsilon_upper, self.epsilon_lower)

    def linear(self, problem):
        return lift_block(problem.secret, problem.m, self.epsilon_upper, self.epsilon_lower)

    def leakage(self, problem, q):
        lower, upper = lift_extremes(problem.secret, q)
        return {"lower": lower, "upper": upper}

    def satisfied(self, leakage, tol=None):
        kw = {} if tol is None else {"tol": tol}
        return (within(leakage["lower"], self.epsilon_lower, **kw)
                and within(leakage["upper"], self.epsilon_upper, **kw))

    def budget(self):
        return {"lower": self.epsilon_lower, "upper": self.epsilon_upper}

    def posterior_vertices(self, problem, limit):
        """With G = X the admissible posteriors are the box e^-eps_l P <= post <= e^eps_u P cut by
        the simplex (LIP's with its two sides apart, `LIP.posterior_vertices`)."""
        return lift_box_vertices(problem, self.epsilon_lower, self.epsilon_upper, limit)

    def posterior_family(self, problem):
        """With G = X, LIP's box with its two sides apart (`structured.LIPBox` with eps =
        (eps_l, eps_u)): the structured pricing of `lip`."""
        return ("lip-box", (self.epsilon_lower, self.epsilon_upper)) if problem.latent is None else None


@dataclass(frozen=True)
class ApproxLIP(Notion):
    """(eps, delta)-LIP (CA-LIP Def 5).

    form = "pointwise": e^-eps Pr(y|g) - delta <= Pr(y) <= e^eps Pr(y|g) + delta (CA-LIP Eq 4).
    form = "set": the hockey-stick form of CA-LIP Corollary 9,
        sum_y max(0, Pr(y|g) - e^eps Pr(y)) <= delta and sum_y max(0, Pr(y) - e^eps Pr(y|g)) <= delta,
    written with one auxiliary variable per (g, y) and side.
    Neither is homogeneous in a column (delta is absolute). Leakage is the smallest delta that
    holds at this epsilon.

    Parameters
    ----------
    epsilon : float
        The budget in nats, finite and > 0.
    delta : float
        The additive slack, in [0, 1).
    form : {"pointwise", "set"}, optional
        Which definition (default "pointwise").

    Raises
    ------
    ProblemError
        If a parameter is invalid.
    """

    epsilon: float
    delta: float
    form: str = "pointwise"
    name: ClassVar[str] = "approx-lip"
    keys: ClassVar[tuple[str, ...]] = ("epsilon", "delta", "form")
    homogeneous: ClassVar[bool] = False

    def __post_init__(self):
        super().__post_init__()
        delta = self.delta
        if isinstance(delta, bool) or not isinstance(delta, (int, float, np.floating)) or not 0 <= delta < 1:
            raise ProblemError(f"delta must be a number in [0, 1), got {delta!r}")
        object.__setattr__(self, "delta", float(delta))
        if self.form not in ("pointwise", "set"):
            raise ProblemError(f"form must be 'pointwise' or 'set', got {self.form!r}")

    def _sides(self, problem):
        T, P = problem.secret.conditional, problem.secret.prior_x
        ones_P = np.ones((T.shape[0], 1)) * P[None, :]
        e = np.exp(self.epsilon)
        return T, ones_P, e

    def linear(self, problem) -> LinearBlock:
        T, ones_P, e = self._sides(problem)
        m = problem.m
        if self.form == "pointwise":
            return per_column(np.vstack([T / e - ones_P, ones_P - e * T]), m, self.delta)
        k = T.shape[0]
        blocks_q, blocks_aux, b = [], [], []
        sum_rows = sp.kron(sp.identity(k), np.ones((1, m)), format="csr")
        for side, C in enumerate((T - e * ones_P, ones_P - e * T)):
            excess = per_column(C, m).A_q
            aux = sp.hstack([sp.csr_matrix((k * m, side * k * m)), -sp.identity(k * m),
                             sp.csr_matrix((k * m, (1 - side) * k * m))], format="csr")
            sums = sp.hstack([sp.csr_matrix((k, side * k * m)), sum_rows,
                              sp.csr_matrix((k, (1 - side) * k * m))], format="csr")
            blocks_q += [excess, sp.csr_matrix((k, excess.shape[1]))]
            blocks_aux += [aux, sums]
            b += [np.zeros(k * m), np.full(k, self.delta)]
        n_aux = 2 * k * m
        return LinearBlock(sp.vstack(blocks_q, format="csr"), np.concatenate(b),
                           sp.vstack(blocks_aux, format="csr"), np.zeros(n_aux), np.ones(n_aux))

    def leakage(self, problem, q):
        T, P = problem.secret.conditional, problem.secret.prior_x
        cond, lam = T @ q, (P @ q)[None, :]
        e = np.exp(self.epsilon)
        if self.form == "pointwise":
            return max(float(np.max(cond / e - lam)), float(np.max(lam - e * cond)), 0.0)
        up = np.maximum(cond - e * lam, 0).sum(axis=1)
        down = np.maximum(lam - e * cond, 0).sum(axis=1)
        return float(max(up.max(), down.max(), 0.0))

    def satisfied(self, leakage, tol=None):
        return within(leakage, self.delta) if tol is None else within(leakage, self.delta, tol)

    def budget(self):
        return self.delta

    @classmethod
    def example(cls, d, epsilon, rng, latent_k=None):
        return {"notion": cls.name, "epsilon": epsilon, "delta": float(rng.uniform(0, 0.2)),
                "form": str(rng.choice(["pointwise", "set"]))}

    def to_table(self):
        return {"notion": self.name, "epsilon": self.epsilon, "delta": self.delta, "form": self.form}
