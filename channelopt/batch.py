"""One optimal channel per user, each for the user's own prior, for very many users.

    out = channelopt.solve_batch(priors, template, out="results.npz", n_jobs=2)

`template` is a Problem giving the notions, the utility and the values; its prior is replaced by
each user's. Users are processed in chunks (memory stays flat); each chunk's results are streamed
into a temporary `.npz` (arrays below) that replaces the output by a rename at the end.

Methods, per user:

"critical-region" (Bayes utilities with one LIP or LDP notion, G = X): the posterior-space LP
    (docs/spec.md §4) has the admissible-posterior vertices in closed form (LIP: box vertices; LDP:
    P (1 + (e^eps - 1) 1_S) normalized), computed for all users at once. The LP's optimal basis is
    constant over regions of priors, so an optimal basis (d vertex patterns) found for one user
    gives the closed-form solution for every user of its region. For each user the region test is
    vectorized and is itself the certificate: the weights w from the basis must be >= 0 and
    reproduce the prior (primal feasibility), and the dual mu that makes the basis tight must give
    mu.P + max_v (phi(v) - mu.v) = the primal gain (weak duality: this is an upper bound on the
    gain of *every* channel for that prior, since every channel's posteriors average to P with
    weights summing to 1). A user no basis in the pool certifies gets its own LP (HiGHS), whose
    basis joins the pool. Users find their bases through a route key (`route_keys`), most used
    first, in one vectorized test per round.
"solve" everything else: `channelopt.solve` per user (its own certificate or local status); for LP
    problems one HiGHS instance per chunk, each user warm-started from the previous user's basis.

Every returned channel is re-audited (row-stochastic, nonnegative, exact leakage within the
budget, and for the critical-region method its own gain, computed from the channel, equal to the
certified bound) before it counts as optimal.

Arrays of the .npz: channel (N, d, m), objective (N,), bound (N,) (the certified bound on the
objective, NaN when none), status (N,) int8 into `status_names`, method (N,) int8 into
`method_names`, leakage (N, k) one column per leakage number, named in `leakage_keys`: a privacy
table's key (`audit.leakage_keys`), or `key.part` for a notion whose leakage has parts (ALIP:
`alip.lower`, `alip.upper`).
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

from .audit import audit, leakage_keys
from .blas import one_thread
from .errors import ChannelOptError, ProblemError
from .notions.base import BatchVertices, within
from .problem import SUM_TOL, Problem
from .sweep import MAX_JOBS
from .utility import Bayes

STATUS = ("optimal", "local", "inaccurate", "infeasible", "solver-failed")
METHODS = ("critical-region", "solve")
MAX_PATTERNS = 6000          # closed-form vertex candidates per user (LIP d <= 10, LDP d <= 12)
PRIMAL_TOL = 1e-10           # |V_S^T w - P| and -w
GAP_TOL = 1e-9               # certified relative gap of the region test
ROUTE_TRIES = 4              # entries tried per user in the vectorized routing step
SCAN_ROWS = 20_000           # (user, entry) pairs per batched region test when scanning the pool
SCAN_ENTRIES = 8             # pool entries per scanning round (most used first)
DENSE_SHARE = 0.75           # a region test of at least this share of the chunk tests every user in place


# --- input ------------------------------------------------------------------------------------

def leakage_columns(template: Problem) -> list[tuple[str, str | None]]:
    """The batch's leakage columns: (key, part) per number of a result's `leakage`, part None for
    a notion whose leakage is one number (ALIP's has two, `lower` and `upper`). Read off the audit
    of the constant channel, whose leakage has the same layout as every channel's."""
    q = np.zeros((template.d, template.m))
    q[:, 0] = 1.0
    leakage = audit(template, q, with_measures=False).leakage
    cols: list[tuple[str, str | None]] = []
    for key in leakage_keys(template.privacy):
        value = leakage[key]
        cols += [(key, part) for part in value] if isinstance(value, dict) else [(key, None)]
    return cols


def check_priors(priors, d: int, key: str = "priors") -> np.ndarray:
    """(N, d) array of priors: finite, > 0, rows summing to 1 within SUM_TOL (row numbers 1-based)."""
    P = np.asarray(priors, dtype=float) if not isinstance(priors, np.ndarray) else priors.astype(float, copy=False)
    if P.ndim != 2 or P.shape[0] == 0:
        raise ProblemError(f"{key} must be a non-empty table with one row per user, got shape {P.shape}")
    if P.shape[1] != d:
        raise ProblemError(f"{key}: rows must have {d} entries (one per input symbol), got {P.shape[1]}")
    for bad, rule in ((~np.isfinite(P).all(axis=1), "entries must be finite numbers"),
                      ((P <= 0).any(axis=1), "entries must be > 0"),
                      (np.abs(P.sum(axis=1) - 1) > SUM_TOL, f"entries must sum to 1 (tolerance {SUM_TOL:g})")):
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ProblemError(f"{key} row {i + 1}: {rule}, got {P[i].tolist()}")
    return P


def read_priors(path) -> np.ndarray:
    """Priors from a CSV (one user per row, no header) or a .npy file; bad rows named by number."""
    path = Path(path)
    if not path.is_file():
        raise ProblemError(f"--priors {str(path)!r}: no such file")
    if path.suffix == ".npy":
        try:
            return np.load(path, allow_pickle=False)
        except (ValueError, OSError) as e:
            raise ProblemError(f"--priors {str(path)!r}: not a readable .npy array ({e})") from None
    try:
        return np.loadtxt(path, delimiter=",", ndmin=2, comments="#")
    except (ValueError, UnicodeDecodeError):
        pass
    import csv

    try:
        with open(path, newline="", encoding="utf-8") as f:
            width = None
            for n, row in enumerate(csv.reader(f), start=1):
                if not row or row[0].lstrip().startswith("#"):
                    continue
                width = len(row) if width is None else width
                if len(row) != width:
                    raise ProblemError(f"--priors row {n}: expected {width} entries, got {len(row)}")
                for v in row:
                    try:
                        float(v)
                    except ValueError:
                        raise ProblemError(f"--priors row {n}: {v.strip()!r} is not a number") from None
    except UnicodeDecodeError:
        raise ProblemError(f"--priors {str(path)!r}: not a text CSV file") from None
    raise ProblemError(f"--priors {str(path)!r}: not a CSV of numbers")


# --- the critical-region method -----------------------------------------------------------------

def fast_path(template: Problem) -> bool:
    """Whether the closed-form vertex sets apply: one notion that gives them in closed form for
    at most MAX_PATTERNS candidates (`Notion.batch_vertices`: LIP d <= 10, LDP d <= 12), with a
    vectorized audit, G = X, and a Bayes utility."""
    if template.latent is not None or len(template.privacy) != 1 or not isinstance(template.utility, Bayes):
        return False
    n, P = template.privacy[0], template.prior[None, :]
    return n.batch_vertices(P, MAX_PATTERNS) is not None and n.batch_leakage(P, np.eye(template.d)[None]) is not None


def candidate_vertices(notion, P: np.ndarray) -> BatchVertices:
    """Every closed-form vertex candidate of every user in u = post / P coordinates, factored
    (`Notion.batch_vertices`), and which candidates are vertices for that user.

    u-coordinates keep tiny prior entries well scaled: every admissible u lies in
    [e^-eps, e^eps]^d, so the region test below has relative accuracy in every row of q.
    """
    return notion.batch_vertices(P, MAX_PATTERNS)


def phi_batch(template: Problem, V: np.ndarray) -> np.ndarray:
    """phi of every posterior in V (..., d)."""
    shape = V.shape[:-1]
    return template.utility.phi(template, V.reshape(-1, V.shape[-1])).reshape(shape)


PHI_BLOCK = 2_000
"""Users whose candidates are built at once to evaluate a utility that is not a function of one
linear functional (all but bayes-mse)."""


def phi_vertices(template: Problem, X: BatchVertices, P: np.ndarray) -> np.ndarray:
    """phi of every candidate posterior P * u of every user (N, nv). bayes-mse's phi is
    (t . post)^2 = (U . (P t))^2: one `BatchVertices.dot`; the others by blocks of users."""
    util = template.utility
    if util.kind == "bayes-mse":
        return X.dot(P * util.target(template)[None, :]) ** 2
    out = np.empty(X.valid.shape)
    for a in range(0, P.shape[0], PHI_BLOCK):
        rows = np.arange(a, min(a + PHI_BLOCK, P.shape[0]))
        out[rows] = phi_batch(template, X.full(rows) * P[rows, None, :])
    return out


def _solve(A: np.ndarray, b: np.ndarray):
    """Batched solutions of the square systems A x = b (A: (n, r, r), b: (n, r)).

    Returns (x, ok): members that are numerically singular get ok = False (their x is
    meaningless); the others are solved by one batched LU.
    """
    try:                 # one batched LU; an exactly singular member fails the whole batch
        x = np.linalg.solve(A, b[..., None])[..., 0]
        return x, np.isfinite(x).all(axis=1)
    except np.linalg.LinAlgError:
        pass
    scale = np.abs(A).max(axis=(1, 2))
    ok = np.abs(np.linalg.det(A)) > 1e-12 * np.maximum(scale, 1e-300) ** A.shape[1]
    x = np.zeros(b.shape)
    if ok.any():
        x[ok] = np.linalg.solve(A[ok], b[ok][..., None])[..., 0]
    return x, ok


def region_test(basis, rows, X, Phi, m):
    """Which users `rows` one pool entry (a basis of d patterns) certifies (`region_test_rows`
    with the same basis for every row)."""
    return region_test_rows(rows, np.broadcast_to(basis, (rows.size, len(basis))), X, Phi, m)


def region_test_rows(rows, T, X: BatchVertices, Phi, m: int):
    """Which users `rows` their bases certify: row i is tested against the d patterns T[i]
    (an array (n, d): one basis per user, or the same for all). Phi (N, nv): phi of every
    candidate of every user of the chunk, -inf where the candidate is not a vertex for the user.

    In u = post / P coordinates, with U_T the (d, d) matrix of the basis's vertices (rows)
    (docs/spec.md §4). Primal: w = U_T^-T 1 solves
    sum_j w_j u_{T_j} = 1; it is a channel when w >= 0 (checked with its residual, a relative
    error per row of q) and has at most m nonzero columns. Dual: nu (= mu * P) = U_T^-1 phi_T
    makes every basis vertex tight, so w.phi_T = sum(nu) (complementary slackness), and
    bound = sum(nu) + max_v (phi(v) - nu.u_v) over the user's valid vertices is an upper bound on
    the gain of every channel (weak duality; the check does not trust nu). Certified when
    bound - w.phi_T <= GAP_TOL (relative).
    Returns (positions in `rows` of the certified users, their channels' columns in u
    coordinates C (n, d, d) with C[i, j] = w_j u_{T_j} (q[x, j] = C[i, j, x]; the nonzero
    columns first), gain, bound).
    """
    valid = X.valid
    N, given = valid.shape[0], rows
    pos = np.flatnonzero(valid[rows[:, None], T].all(axis=1))
    # (nearly) every user, each once: test them all in place, without gathering their rows
    dense = pos.size >= DENSE_SHARE * N and bool(np.all(rows[1:] > rows[:-1]))
    if dense:
        good = np.zeros(N, dtype=bool)
        good[rows[pos]] = True
        T_all = np.broadcast_to(T[pos[:1]], (N, T.shape[1])).copy()
        T_all[rows] = T
        rows, T, at = np.arange(N), T_all, slice(None)
    else:
        rows, T = rows[pos], T[pos]
    UT = X.take(rows[:, None], T)                                        # (n, d, d)
    w, ok = _solve(np.swapaxes(UT, 1, 2), np.ones(T.shape))
    resid = np.abs(np.einsum("nkd,nk->nd", UT, w) - 1.0).max(axis=1)
    primal = ok & (w.min(axis=1) >= -PRIMAL_TOL) & (resid <= PRIMAL_TOL)
    np.clip(w, 0.0, None, out=w)
    if m < T.shape[1]:
        primal &= (w > 0).sum(axis=1) <= m
    if dense:
        good &= primal
    else:
        pos, rows, T, w, UT = pos[primal], rows[primal], T[primal], w[primal], UT[primal]
        at = rows
    if not rows.size:
        return pos, UT, np.zeros(0), np.zeros(0)
    PhiT = Phi[rows[:, None], T]
    nu, ok = _solve(UT, PhiT)
    slack = X.dot(nu, None if dense else rows)
    np.subtract(Phi[at], slack, out=slack)           # phi(v) - nu.u_v (Phi itself is left as it is)
    bound = nu.sum(axis=1) + slack.max(axis=1)                  # Phi is -inf off the user's vertices
    gain = np.einsum("nk,nk->n", w, PhiT)
    ok &= bound - gain <= GAP_TOL * np.maximum(1.0, np.abs(gain))
    if dense:
        ok &= good
    C, w = UT[ok], w[ok]
    C *= w[:, :, None]
    if m < T.shape[1]:   # the columns in use first
        C = np.take_along_axis(C, np.argsort(w <= 0, axis=1, kind="stable")[:, :, None], axis=1)
    pos = np.searchsorted(given, np.flatnonzero(ok)) if dense else pos[ok]
    return pos, C, gain[ok], bound[ok]


def route_keys(P: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """A key per user (rows of a uint8 array) that users sharing an optimal basis tend to share:
    the order of the prior's masses and which candidate patterns are vertices (which caps of the
    posterior box bind). Only a routing hint: the region test certifies every routed user."""
    order = np.argsort(P, axis=1, kind="stable").astype(np.uint8)
    return np.ascontiguousarray(np.hstack([order, np.packbits(valid, axis=1)]))


def new_entry(U_u, valid_u, Phi_u, P_u):
    """Solve one user's posterior LP (HiGHS) and return a basis for it: d linearly independent
    patterns, the support first, then the most nearly tight (None when the user's vertices do
    not span: its user goes to `solve`). The region test, not this choice, certifies."""
    from .methods.posterior import master_lp

    idx = np.flatnonzero(valid_u)
    V = U_u[idx] * P_u
    w, mu = master_lp(V, Phi_u[idx], P_u)
    S = idx[w > 1e-12]
    red = Phi_u[idx] - V @ mu
    # greedy, while the rank grows: the support, then the other vertices from the most nearly
    # tight (a degenerate optimum has fewer than d tight vertices; the region test decides)
    order = idx[np.argsort(-red, kind="stable")]
    basis: list = []
    for t in np.r_[S, order[~np.isin(order, S)]]:
        if np.linalg.matrix_rank(U_u[basis + [t]], tol=1e-10) == len(basis) + 1:
            basis.append(t)
        if len(basis) == U_u.shape[1]:
            return np.array(basis, dtype=int)
    return None


class Routes:
    """Which pool entries certified users of each route key (`route_keys`), and how often: a table
    of (key, entry, hits) rows, read per chunk as each key's entries ranked by hits (`ranked`)
    and credited in one vectorized step per routing round."""

    def __init__(self) -> None:
        self.ids: dict = {}                     # key bytes -> key id
        self.pairs: dict = {}                   # (key id, entry) -> table row
        self.key = np.zeros(0, dtype=np.int64)
        self.entry = np.zeros(0, dtype=np.int64)
        self.hits = np.zeros(0, dtype=np.int64)

    def key_ids(self, key_bytes: list) -> np.ndarray:
        """Each key's id, -1 for a key no route has been recorded for (only those get one, so
        the table grows with the keys that certified users, not with every key ever seen)."""
        return np.array([self.ids.get(k, -1) for k in key_bytes], dtype=np.int64)

    def ranked(self, kid: np.ndarray, tries: int) -> np.ndarray:
        """(len(kid), tries) table rows: key kid[i]'s entries, most hits first (-1: none)."""
        R = np.full((kid.size, tries), -1, dtype=np.int64)
        local = np.full(len(self.ids), -1, dtype=np.int64)
        local[kid] = np.arange(kid.size)
        on = np.flatnonzero(local[self.key] >= 0)
        order = on[np.lexsort((-self.hits[on], local[self.key[on]]))]
        k = local[self.key[order]]
        rank = np.arange(order.size) - np.searchsorted(k, k)          # position within the key's run
        keep = rank < tries
        R[k[keep], rank[keep]] = order[keep]
        return R

    def credit(self, keys: list, counts: np.ndarray, entry: int) -> None:
        """counts[i] hits of pool entry `entry` by users of key keys[i] (bytes), new keys and
        pairs added."""
        ids = np.array([self.ids.setdefault(k, len(self.ids)) for k in keys], dtype=np.int64)
        rows = np.array([self.pairs.setdefault((k, entry), len(self.pairs)) for k in ids.tolist()], dtype=np.int64)
        fresh = rows >= self.key.size                 # new pairs get the next rows, in order
        if fresh.any():
            self.key = np.r_[self.key, ids[fresh]]
            self.entry = np.r_[self.entry, np.full(int(fresh.sum()), entry)]
            self.hits = np.r_[self.hits, np.zeros(int(fresh.sum()), dtype=np.int64)]
        np.add.at(self.hits, rows, counts)


_POOLS: dict = {}  # per worker process: pools of entries by template, reused across chunks


def _pool_for(template: Problem) -> tuple[list, Routes]:
    """The worker's (pool of [basis, hits], routes) for a template."""
    key = (repr(template.privacy[0].to_table()), template.d, template.m, template.utility,
           template.values.tobytes())
    return _POOLS.setdefault(key, ([], Routes()))


def critical_region_chunk(template: Problem, P: np.ndarray):
    """A chunk of users through the pool of optimal bases (new bases found on the way).

    First a vectorized routing step: each user is tested against the entries its route key
    (`route_keys`) led to before, most used by that key first (up to ROUTE_TRIES, one round per
    rank), all users of a round in one batched region test. The users left are tested against
    every pool entry at once (all pairs, in blocks of SCAN_ROWS), then get their own LP; the
    entries that certify them become their keys' routes.

    Returns (certified mask, q (N, d, m), certified gain bound); users not certified are left for
    `solve`.
    """
    N, d = P.shape
    m = template.m
    X = candidate_vertices(template.privacy[0], P)
    valid = X.valid
    Phi = phi_vertices(template, X, P)
    Phi[~valid] = -np.inf            # candidates that are not vertices never bind the dual check
    pool, routes = _pool_for(template)
    q = np.zeros((N, d, m))
    bound = np.full(N, np.nan)
    done = np.zeros(N, dtype=bool)
    left = np.zeros(N, dtype=bool)   # to `solve`: their own basis did not certify them
    raw = route_keys(P, valid)
    keys, inverse = np.unique(raw.view(np.dtype((np.void, raw.shape[1]))).ravel(), return_inverse=True)
    inverse = inverse.reshape(-1)
    key_bytes = [k.tobytes() for k in keys]
    kid = routes.key_ids(key_bytes)[inverse]               # each user's key id (-1: no route yet)
    cols = min(d, m)

    def record(hit, C, b, entry=None):
        q[hit, :, :cols] = np.swapaxes(C[:, :cols], 1, 2)                    # q[x, j] = w_j u_j[x]
        bound[hit] = b
        done[hit] = True
        if entry is not None:
            ks, counts = np.unique(inverse[hit], return_counts=True)
            routes.credit([key_bytes[k] for k in ks], counts, entry)
            pool[entry][1] += hit.size

    # the routing step: each user is tested against its key's r-th entry, all users of a round
    # in one batched region test
    if pool:
        bases = np.array([it[0] for it in pool])
        present = np.unique(kid[kid >= 0])
        R = np.vstack([routes.ranked(present, ROUTE_TRIES), np.full((1, ROUTE_TRIES), -1)])
        rank_of = np.where(kid >= 0, np.searchsorted(present, kid), present.size)   # each user's row of R
        for r in range(ROUTE_TRIES):
            route = R[rank_of, r]                                            # each user's table row
            rows = np.flatnonzero((route >= 0) & ~done)
            if not rows.size:
                break
            entry = routes.entry[route[rows]]
            pos, C, _, b = region_test_rows(rows, bases[entry], X, Phi, m)
            if pos.size:
                record(rows[pos], C, b)
                np.add.at(routes.hits, route[rows[pos]], 1)
                for j, c in zip(*np.unique(entry[pos], return_counts=True)):
                    pool[j][1] += int(c)

    # the users no route certified: the pool's entries, most used first, SCAN_ENTRIES at a time
    # (every remaining user against each entry of the block in one batched test); a user leaves at
    # its first certifying entry
    order = sorted(range(len(pool)), key=lambda j: -pool[j][1])
    for at in range(0, len(order), SCAN_ENTRIES):
        group = order[at:at + SCAN_ENTRIES]
        rest = np.flatnonzero(~done)
        if not rest.size:
            break
        T_all = np.array([pool[j][0] for j in group])
        per_block = max(1, SCAN_ROWS // len(group))
        for start in range(0, rest.size, per_block):
            users = rest[start:start + per_block]
            rows = np.repeat(users, len(group))
            which = np.tile(np.arange(len(group)), users.size)
            pos, C, _, b = region_test_rows(rows, T_all[which], X, Phi, m)
            first = np.unique(rows[pos], return_index=True)[1]        # each user's first certifying entry
            for j in np.unique(which[pos[first]]):
                sel = first[which[pos[first]] == j]
                record(rows[pos[sel]], C[sel], b[sel], group[j])

    while True:
        rest = np.flatnonzero(~done & ~left)
        if not rest.size:
            break
        u = rest[0]
        try:
            basis = new_entry(X.full(u), valid[u], Phi[u], P[u])
        except ChannelOptError:  # the user's own LP failed: `solve` reports it
            basis = None
        if basis is not None:
            pos, C, _, b = region_test(basis, rest, X, Phi, m)
            if pos.size:
                pool.append([basis, 0])
                record(rest[pos], C, b, len(pool) - 1)
        if not done[u]:
            left[u] = True
    return done, q, bound


# --- vectorized audit and utility ---------------------------------------------------------------

def audit_batch(template: Problem, P: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Exact leakage of each user's channel under the (single) notion (N,), vectorized
    (`Notion.batch_leakage`)."""
    return template.privacy[0].batch_leakage(P, q)


def gain_batch(template: Problem, P: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The Bayes gain sum_y lam[y] phi(post_y) of each user's channel, from the channel itself (N,)."""
    lam = np.einsum("nd,ndm->nm", P, q)
    with np.errstate(divide="ignore", invalid="ignore"):
        post = np.where(lam[:, None, :] > 0, P[:, :, None] * q / lam[:, None, :], 0.0)
    ph = phi_batch(template, np.swapaxes(post, 1, 2))
    return np.where(lam > 0, lam * ph, 0.0).sum(axis=1)


# --- driver -------------------------------------------------------------------------------------

def process_chunk(template: Problem, P: np.ndarray) -> dict:
    """All results for one chunk of users (the unit of parallel work), with one BLAS thread (its
    products are batches of d x d systems: threads cost more than they save)."""
    with one_thread():
        return _process_chunk(template, P)


def _process_chunk(template: Problem, P: np.ndarray) -> dict:
    N, d = P.shape
    m, columns = template.m, leakage_columns(template)
    k = len(columns)
    out = {"channel": np.zeros((N, d, m)), "objective": np.full(N, np.nan), "bound": np.full(N, np.nan),
           "status": np.full(N, STATUS.index("solver-failed"), dtype=np.int8),
           "method": np.full(N, METHODS.index("solve"), dtype=np.int8), "leakage": np.full((N, k), np.nan)}
    done = np.zeros(N, dtype=bool)   # certified and re-audited by the critical-region method
    if fast_path(template):
        certified, q, bound = critical_region_chunk(template, P)
        rows = np.flatnonzero(certified)
        qq = q[rows]
        leak = audit_batch(template, P[rows], qq)
        stochastic = (np.abs(qq.sum(axis=2) - 1) <= 1e-9).all(axis=1) & (qq >= 0).all(axis=(1, 2))
        # the gain of the channel itself, not the region test's, must meet the certified bound
        # (and not exceed it: a bound below a channel's own gain is not a bound)
        own = gain_batch(template, P[rows], qq)
        tight = np.abs(bound[rows] - own) <= GAP_TOL * np.maximum(1.0, np.abs(own))
        good = stochastic & tight & within(leak, template.privacy[0].budget())
        rows, qq, leak, own = rows[good], qq[good], leak[good], own[good]
        done[rows] = True
        out["channel"][rows] = qq
        out["objective"][rows] = template.utility.from_gain(template, own, prior=P[rows])
        out["bound"][rows] = template.utility.from_gain(template, bound[rows], prior=P[rows])
        out["status"][rows] = STATUS.index("optimal")
        out["method"][rows] = METHODS.index("critical-region")
        out["leakage"][rows, 0] = leak
    from .methods import method_for
    from .sweep import solve_points

    rest = np.flatnonzero(~done)
    # one HiGHS instance for the chunk, each user's simplex warm-started from the previous basis
    warm = method_for(template) == "lp" and template.solver in ("auto", "HIGHS")
    results = solve_points([dataclasses.replace(template, prior=P[i]) for i in rest], None, warm, False)
    for i, r in zip(rest, results):
        if r.channel is not None:
            # over all m outputs in their places (`Result.channel` drops the unused ones: stored
            # from column 0, a distortion's outputs were relabelled)
            out["channel"][i] = r.full_channel
            out["objective"][i] = r.objective
            out["leakage"][i] = [np.nan if key not in r.leakage else r.leakage[key] if part is None
                                 else r.leakage[key][part] for key, part in columns]
        b = r.certificate.bound if r.certificate else None
        out["bound"][i] = np.nan if b is None else b
        out["status"][i] = STATUS.index(r.status) if r.status in STATUS else STATUS.index("solver-failed")
    return out


@dataclasses.dataclass
class BatchResult:
    """Summary of a batch; the arrays are in `arrays` (in memory) or in the .npz at `path`."""

    n_users: int
    counts: dict
    methods: dict
    time_s: float
    path: Path | None = None
    arrays: dict | None = None


class _Sink:
    """The .npz written chunk after chunk (memory stays flat): the channel array, the bulk of the
    output, streams straight into its entry of a temporary zip beside the output; the per-user
    scalars go to .npy files in a temporary directory and join the zip at the end, which then
    replaces the output (a rename: no partial file under the output's name)."""

    SHAPES = {"channel": np.float64, "objective": np.float64, "bound": np.float64, "status": np.int8,
              "method": np.int8, "leakage": np.float64}

    def __init__(self, out: Path, N: int, d: int, m: int, k: int):
        self.out = out
        from .io import temp_prefix

        self.dir = tempfile.mkdtemp(prefix=temp_prefix(out), dir=out.parent)
        shapes = {"channel": (N, d, m), "objective": (N,), "bound": (N,), "status": (N,), "method": (N,),
                  "leakage": (N, k)}
        self.zip = zipfile.ZipFile(os.path.join(self.dir, "out.npz"), "w", zipfile.ZIP_STORED, allowZip64=True)
        self.files = {}
        for name, shape in shapes.items():
            f = self.zip.open("channel.npy", "w", force_zip64=True) if name == "channel" else \
                open(os.path.join(self.dir, name + ".npy"), "wb")
            np.lib.format.write_array_header_2_0(
                f, {"descr": np.dtype(self.SHAPES[name]).str, "fortran_order": False, "shape": shape})
            self.files[name] = f

    def put(self, start: int, part: dict):  # chunks arrive in order
        for name, arr in part.items():
            self.files[name].write(np.ascontiguousarray(arr, dtype=self.SHAPES[name]).tobytes())

    def close(self, extra: dict):
        for f in self.files.values():
            f.close()
        names = [name for name in self.files if name != "channel"]
        for name, value in extra.items():
            np.save(os.path.join(self.dir, name + ".npy"), value)
            names.append(name)
        for name in names:
            self.zip.write(os.path.join(self.dir, name + ".npy"), arcname=name + ".npy")
        self.zip.close()
        os.replace(os.path.join(self.dir, "out.npz"), self.out)
        self.abort()

    def abort(self):
        import shutil

        for f in self.files.values():
            f.close()
        self.zip.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def solve_batch(priors, template: Problem, *, out=None, chunk_size: int = 20000, n_jobs: int = 1,
                progress: bool = False) -> BatchResult:
    """Optimal channel for every user's prior (rows of `priors`), streamed to `out` (.npz) if given.

    n_jobs: joblib workers over chunks (-1: all cores). Inside `joblib.parallel_backend("dask")`
    the chunks run on a Dask cluster instead (see docs/batch.md).

    Parameters
    ----------
    priors : array_like, shape (N, d)
        One prior per user (rows > 0, summing to 1).
    template : Problem
        The notions, the utility and the values; its prior only fixes d.
    out : str or Path, optional
        Stream the arrays to this .npz (through a temporary file).
    chunk_size : int, optional
        Users per chunk.
    n_jobs : int, optional
        joblib workers (-1: all cores).
    progress : bool, optional
        A tqdm bar over the chunks.

    Returns
    -------
    BatchResult
        Counts per status and method, the time, and the arrays (in memory, or the path).

    Raises
    ------
    ProblemError
        If the priors, the template or the options are invalid (nothing is written).
    """
    from joblib import Parallel, delayed
    from tqdm import tqdm

    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1 or n_jobs > MAX_JOBS:
        raise ProblemError(f"n_jobs must be an integer from 1 to {MAX_JOBS} or -1 (all cores), got {n_jobs!r}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ProblemError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    if template.utility is None:
        raise ProblemError("the template problem needs a utility")
    if template.latent is not None:
        raise ProblemError("solve_batch replaces the prior of X; a template with a latent secret is not supported")
    P = check_priors(priors, template.d)
    if out is not None:
        from .io import check_writable

        out = check_writable(out, "out")
    columns = leakage_columns(template)
    N, d, m, k = P.shape[0], template.d, template.m, len(columns)
    t0 = time.perf_counter()
    starts = list(range(0, N, chunk_size))
    sink = _Sink(out, N, d, m, k) if out is not None else None
    mem: dict[str, np.ndarray] = {} if sink else {
        "channel": np.zeros((N, d, m)), "objective": np.zeros(N), "bound": np.zeros(N),
        "status": np.zeros(N, np.int8), "method": np.zeros(N, np.int8), "leakage": np.zeros((N, k))}
    counts = np.zeros(len(STATUS), dtype=np.int64)
    mcounts = np.zeros(len(METHODS), dtype=np.int64)
    try:
        jobs = (delayed(process_chunk)(template, P[s:s + chunk_size]) for s in starts)
        parts = Parallel(n_jobs=n_jobs, return_as="generator")(jobs) if n_jobs != 1 else (
            process_chunk(template, P[s:s + chunk_size]) for s in starts)
        for s, part in tqdm(zip(starts, parts), total=len(starts), disable=not progress, desc="batch", unit="chunk"):
            counts += np.bincount(part["status"], minlength=len(STATUS))
            mcounts += np.bincount(part["method"], minlength=len(METHODS))
            if sink:
                sink.put(s, part)
            else:
                for name, arr in part.items():
                    mem[name][s:s + len(part["objective"])] = arr
        extra = {"status_names": np.array(STATUS), "method_names": np.array(METHODS),
                 "leakage_keys": np.array([key if part is None else f"{key}.{part}" for key, part in columns])}
        if sink:
            sink.close(extra)
        else:
            mem.update(extra)
    except BaseException:
        if sink:
            sink.abort()
        raise
    return BatchResult(N, dict(zip(STATUS, counts.tolist())), dict(zip(METHODS, mcounts.tolist())),
                       time.perf_counter() - t0, out, None if sink else mem)
