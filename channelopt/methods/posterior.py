"""Certified global optima for Bayes utilities: the posterior-space LP (docs/spec.md §4).

For a column-homogeneous notion, `C q[:, y] <= 0` is equivalent to `C diag(1/P) post_y <= 0`
(substitute q[x,y] = post_y[x] lam[y] / P[x]; lam[y] > 0 cancels), so the admissible posteriors
form a polytope K in the simplex. A channel is a way of writing P = sum_y lam[y] post_y with
post_y in K, and the utility sum_y lam[y] phi(post_y) with phi convex is maximized at vertices of
K: the problem is the LP

    maximize sum_v w_v phi(v)   subject to   sum_v w_v v = P,  w >= 0,

over the vertex set of K. Its optimum is the global optimum over all channels (of any output
size), it uses at most d outputs (LIP-TDSC Lemma 4), and the LP dual gives the certificate: for any
mu, sum_v w_v phi(v) <= mu . P + max_v (phi(v) - mu . v) (because sum_v w_v = 1), evaluated
here over every vertex, independently of the solver.

Vertices are enumerated with Qhull (scipy.spatial.HalfspaceIntersection) in the (d-1)-dimensional
coordinates of the simplex's affine hull, from the interior point P (strictly inside K for every
notion whose budget is positive, since post = P means Y independent of X), and each vertex is
checked against the constraints before use.
"""

from __future__ import annotations


import numpy as np
import scipy.sparse as sp
from scipy.linalg import null_space

from ..errors import ProblemError, SolverError
from .lp import load_program, new_highs
from .result import ROW_TOL, PosteriorSolution, reported_bound
from .structured import SLOPE

VERTEX_TOL = 1e-9
"""A vertex from Qhull is kept if it violates no constraint by more than this (then projected);
one that does is first raised onto its two-term rows (`snap`)."""


def posterior_rows(problem) -> np.ndarray:
    """A (r x d) with A @ post <= 0 for every admissible posterior; ProblemError if some notion is
    not homogeneous in the columns of q."""
    blocks = []
    for notion in problem.privacy:
        if not notion.homogeneous:
            raise ProblemError(f"notion {notion.name!r} is not homogeneous in the columns of q: "
                               "the posterior-space LP does not apply")
        C = notion.column_rows(problem)
        C = C.toarray() if sp.issparse(C) else np.asarray(C, dtype=float)
        top = np.abs(C).max(axis=1, keepdims=True)   # rows scaled first: e^700 / 1e-9 would overflow
        blocks.append(np.divide(C, top, out=np.zeros_like(C), where=top > 0) / problem.prior[None, :])
    A = np.vstack(blocks) if blocks else np.zeros((0, problem.d))
    norms = np.linalg.norm(A, axis=1)
    A = A[norms > 0] / norms[norms > 0, None]
    if not A.size:
        return A
    # duplicates are found on rows rounded to 1e-14, but the rows kept are the exact ones: the
    # rounded rows had replaced a coefficient of 4.550198e-10 (LIP, an input of prior 4.3e-9) by
    # 4.5502e-10, which moved that input's vertex coordinates by 2e-6 relative, past the audit
    _, first = np.unique(np.round(A, 14), axis=0, return_index=True)
    return A[np.sort(first)]


def vertices(A: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Vertices of K = {post >= 0, sum post = 1, A post <= 0} (rows of the result).

    Enumerated first in u = post / P coordinates (the prior is u = 1). Prior entries of 1e-9 and
    below would otherwise sit under Qhull's absolute precision. If Qhull fails there, the
    posterior coordinates are tried next. Every vertex is checked against the constraints.
    """
    try:
        return _vertices_scaled(A, P, P)
    except ProblemError:
        return _vertices_scaled(A, P, np.ones(P.size))


def _vertices_scaled(A: np.ndarray, P: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Qhull in coordinates y with post = s * y: (A diag s) y <= 0, -y <= 0 on s.y = 1, rows of
    the constraint matrix scaled to unit norm; the prior is y0 = P / s."""
    cut = _Halfspaces(A, P, s)
    return cut.vertices(cut.intersections())


class _Halfspaces:
    """K in the (d - 1)-dimensional coordinates z of the simplex's affine hull, for Qhull: the
    halfspaces `H z + h <= 0` with y = y0 + B z and post = s * y, and an interior point."""

    def __init__(self, A: np.ndarray, P: np.ndarray, s: np.ndarray):
        As = A * s[None, :] if A.size else A
        if As.size:
            As = As / np.maximum(np.linalg.norm(As, axis=1, keepdims=True), 1e-300)
        self.As, self.s = As, s
        self.B = null_space(s[None, :])                  # d x (d-1), directions with s.dy = 0
        self.y0 = P / s
        # halfspaces in z (y = y0 + B z): -y <= 0 and As y <= 0, as  H z + h <= 0
        self.H = np.vstack([-self.B, As @ self.B])
        self.h = np.concatenate([-self.y0, As @ self.y0])
        self.interior = _interior_point(self.H, self.h)

    def intersections(self) -> np.ndarray:
        """The vertices in z (Qhull; ProblemError where it fails)."""
        if self.H.shape[1] == 1:
            return _interval_ends(self.H[:, 0], self.h)[:, None]
        return _qhull(self.H, self.h, self.interior)

    def vertices(self, Z: np.ndarray) -> np.ndarray:
        """The posteriors of the vertices Z (`intersections`), without duplicates, checked."""
        s = self.s
        Y = self.y0[None, :] + Z @ self.B.T
        Y = np.clip(Y, 0.0, None)
        Y /= (Y @ s)[:, None]
        colscale = np.maximum(np.abs(Y).max(axis=0), 1e-300)   # duplicates: equal to 1e-12 per coordinate
        _, first = np.unique(np.round(Y / colscale, 12), axis=0, return_index=True)
        Y = Y[np.sort(first)]
        viol = (Y @ self.As.T).max(axis=1) if self.As.size else np.zeros(len(Y))
        if np.any(viol > VERTEX_TOL):              # tiny coordinates off their ratio rows: raised onto them
            off = viol > VERTEX_TOL
            Y[off] = snap(Y[off], self.As)
            Y[off] /= (Y[off] @ s)[:, None]
            viol = (Y @ self.As.T).max(axis=1)
        if np.any(viol > VERTEX_TOL):
            raise ProblemError(f"vertex enumeration produced a point violating the constraints by {viol.max():.2e}")
        return Y * s[None, :]


def _qhull(H: np.ndarray, h: np.ndarray, interior: np.ndarray) -> np.ndarray:
    from scipy.spatial import HalfspaceIntersection, QhullError  # (here, not at the top: a lighter import)

    try:
        return HalfspaceIntersection(np.hstack([H, h[:, None]]), interior).intersections
    except QhullError as e:  # nearly degenerate input: the caller falls back
        raise ProblemError("vertex enumeration failed (Qhull: " + str(e).strip().splitlines()[0] + ")") from e


BESIDE_MAX_D, BESIDE_MEMORY = 14, 2 << 30
"""`Beside` runs for ENUMERATE_MAX_D < d <= BESIDE_MAX_D, its child's memory capped at BESIDE_MEMORY
bytes more than the parent's (BP-LIP, three priors, d = 13: 17,850 vertices, 40 s, 0.5 GB)."""


def _enumerate_child(send, H: np.ndarray, h: np.ndarray, interior: np.ndarray, extra: int) -> None:
    """The child process of `Beside`: default signal handlers (a handler the parent installed in
    Python, like the CLI's for SIGTERM, would never run inside Qhull's C code), its address space
    capped at its current size plus `extra` bytes (Linux), then Qhull; sends ("ok", intersections)
    or ("error", message)."""
    import resource
    import signal

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)
    try:
        with open("/proc/self/statm") as f:
            size = int(f.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (size + extra, resource.getrlimit(resource.RLIMIT_AS)[1]))
    except (OSError, ValueError):
        pass
    try:
        out: tuple = ("ok", _qhull(H, h, interior))
    except BaseException as e:              # (MemoryError past the cap among them)
        out = ("error", f"{type(e).__name__}: {e}")
    send.send(out)
    send.close()


class Beside:
    """`vertices` in a child process while the column generation runs (2 cores: the second one).

    Past ENUMERATE_MAX_D the vertex count and Qhull's time grow fast but unevenly (BP-LIP with three
    priors: 2,463 vertices in 0.2 s at d = 10, 9,421 in 9.4 s at d = 12), while the generic pricing's
    branch and bound rarely proves a separable utility's optimum there (BP-LIP mutual information,
    d = 10: 1e-4 from its bound after 30 s). When the child finishes first, the LP over every vertex
    is exact. Only the halfspaces go to the child (forked: Qhull alone runs there) and only Qhull's
    intersections come back through a pipe; `close` kills it (SIGKILL), so no process is left
    behind whatever it was doing."""

    def __init__(self, A: np.ndarray, P: np.ndarray):
        import multiprocessing

        self.cut = _Halfspaces(A, P, P)
        ctx = multiprocessing.get_context("fork")
        self.recv, send = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=_enumerate_child, daemon=True,
                                args=(send, self.cut.H, self.cut.h, self.cut.interior, BESIDE_MEMORY))
        self.proc.start()
        send.close()                        # (the child's end: EOF here once it exits)

    @staticmethod
    def start(A: np.ndarray, P: np.ndarray) -> Beside | None:
        """A running enumeration, or None where processes cannot be forked or K has no interior."""
        import multiprocessing

        if "fork" not in multiprocessing.get_all_start_methods():
            return None
        try:
            return Beside(A, P)
        except (ProblemError, OSError):
            return None

    def ready(self) -> bool:
        """Whether the child has answered (or ended)."""
        return self.recv.poll()

    def vertices(self) -> np.ndarray | None:
        """The vertex set once the child has answered (None while it runs, or if it failed: Qhull's
        error, its memory past BESIDE_MEMORY, or its end without an answer)."""
        if not self.ready():
            return None
        try:
            status, Z = self.recv.recv()
            return self.cut.vertices(Z) if status == "ok" else None
        except (EOFError, OSError, ProblemError):
            return None

    def close(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()
        self.recv.close()


def _interior_point(H, h) -> np.ndarray:
    """z = 0 (post = P) when it is strictly inside; otherwise the Chebyshev centre, if K has volume."""
    from scipy.optimize import linprog

    if np.all(h < -1e-12):
        return np.zeros(H.shape[1])
    norms = np.linalg.norm(H, axis=1)
    n = H.shape[1]
    res = linprog(np.r_[np.zeros(n), -1.0], A_ub=np.hstack([H, norms[:, None]]), b_ub=-h,
                  bounds=[(None, None)] * n + [(0, None)], method="highs")
    if res.status != 0 or res.x[-1] < 1e-10:
        raise ProblemError("the admissible posteriors have no interior (a budget of 0, or constraints that force "
                           "Y to be independent of X); the posterior-space LP needs a full-dimensional set")
    return res.x[:n]


def _interval_ends(a, h) -> np.ndarray:
    """Ends of {z : a z + h <= 0} in one dimension."""
    lo, hi = -np.inf, np.inf
    for ai, hi_ in zip(a, h):
        if ai > 0:
            hi = min(hi, -hi_ / ai)
        elif ai < 0:
            lo = max(lo, -hi_ / ai)
    return np.array([lo, hi])


MASTER_RETRIES: tuple[dict, ...] = ({}, {"simplex_strategy": 4}, {"solver": "ipm"})
"""`master_lp` runs HiGHS on its LP from scratch with these options set in turn until it ends
optimal: its default (dual) simplex, the primal simplex, the interior point method (with crossover). Over the 4,094 LDP vertices
of a 12-symbol prior on three levels (bayes-mse, eps = 3.28), the dual simplex stopped after 26
iterations with status Unknown at -2.66 where the optimum is -0.725; the other two solve it."""


def master_lp(V: np.ndarray, gains: np.ndarray, P: np.ndarray):
    """maximize gains . w subject to V^T w = P, w >= 0. Returns (w, mu) with mu the equality duals.

    The equality rows are scaled by 1/P (u = post / P coordinates, where every admissible
    posterior of LIP / LDP has entries within [e^-eps, e^eps]): the solver's absolute tolerance
    then bounds the *relative* error of each row of the channel q[x, y] = w_y v_y[x] / P[x], so
    priors with entries down to 1e-12 still give row-stochastic channels. mu is returned in the
    original scaling (any mu gives a valid bound in `upper_bound`). w is `polish`ed.
    """
    import highspy

    n, d = V.shape
    h = new_highs()
    load_program(h, -np.asarray(gains, dtype=float), sp.csr_matrix((0, n)), np.zeros(0),
                 sp.csr_matrix(V.T / P[:, None]), np.ones(d), np.zeros(n), np.full(n, np.inf))
    for options in MASTER_RETRIES:
        for key, value in options.items():
            h.setOptionValue(key, value)
        h.clearSolver()                                  # (each try from scratch)
        h.run()
        if h.getModelStatus() == highspy.HighsModelStatus.kOptimal:
            break
    else:
        raise SolverError(f"the posterior-space LP failed (HiGHS: {h.modelStatusToString(h.getModelStatus())})")
    sol = h.getSolution()
    mu = -np.asarray(sol.row_dual) / P
    # HiGHS's duals meet its absolute tolerance in the scaled rows, so mu_x carries an error of
    # about tol / P_x: with P_x = 3.5e-6 (a status fuzz problem, d = 5) the bound stood 8.4e-7 above
    # the vertex LP's optimum. The basis's own duals, phi(v) = mu . v on its d basic columns
    # solved in the original scaling, do not divide by P; the lower of the two bounds is kept
    basic = np.flatnonzero(np.asarray(h.getBasis().col_status) == highspy.HighsBasisStatus.kBasic)
    if basic.size == d:
        with np.errstate(all="ignore"):
            try:
                exact = np.linalg.solve(V[basic], np.asarray(gains, dtype=float)[basic])
            except np.linalg.LinAlgError:
                exact = None
        if exact is not None and np.all(np.isfinite(exact)) and \
                upper_bound(exact, P, V, gains) < upper_bound(mu, P, V, gains):
            mu = exact
    return polish(V, np.asarray(sol.col_value), P, P), mu


def basic_weights(V: np.ndarray, gains: np.ndarray, P: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weights on at most d of the columns V that keep `sum_i w_i v_i = P` and the gain of the
    given weights w, which must be optimal for `master_lp`'s LP over V (as the orbit LP's spread
    over its shifts is): HiGHS's crossover from w to a basic solution, `polish`ed. Where that does
    not give at most d columns meeting every row to 1e-10 of its P_x with w's gain (to 1e-9),
    `master_lp` solves the LP afresh.

    The crossover runs on the LP in sparse form: each row x less its least entry b_x over the
    columns (u = v / P), which LIP's and LDP's vertices share at every symbol at their lower
    bound, and `b_x s` for `s = sum_i w_i` (one more column, and the row that defines it). Three
    prior levels, LIP, mutual information: d = 256 (427 columns) 0.03 s; d = 1000 (2,654 columns,
    2.65 million entries, 0.80 million in this form) 8.3 s against 31.7 s on the dense rows, whose
    crossover HiGHS reports optimal where this one it reports imprecise, with the same columns'
    gain within 3e-11 and the rows within 3e-14: the checks above are channelopt's, not HiGHS's."""
    import highspy

    n, d = V.shape
    U = V / P[None, :]
    b = U.min(axis=0)
    D = U - b[None, :]
    D[D <= 1e-15 * max(1.0, float(np.abs(U).max()))] = 0.0
    A = sp.vstack([sp.hstack([sp.csr_matrix(D.T), sp.csr_matrix(b[:, None])]),
                   sp.csr_matrix(np.r_[np.ones(n), -1.0][None, :])], format="csr")
    h = new_highs()
    load_program(h, np.r_[-np.asarray(gains, dtype=float), 0.0], sp.csr_matrix((0, n + 1)), np.zeros(0), A,
                 np.r_[np.ones(d), 0.0], np.zeros(n + 1), np.full(n + 1, np.inf))
    # (HiGHS 1.16's crossover crashes the process on an instance that has never run: a run
    # stopped before its first iteration sets up what it needs)
    h.setOptionValue("simplex_iteration_limit", 0)
    h.setOptionValue("presolve", "off")
    h.run()
    h.setOptionValue("simplex_iteration_limit", np.iinfo(np.int32).max)
    start = np.r_[w, w.sum()]
    given = highspy.HighsSolution()
    given.col_value, given.row_value, given.value_valid = list(start), list(A @ start), True
    given.col_dual, given.row_dual, given.dual_valid = [0.0] * (n + 1), [0.0] * (d + 1), False
    if h.crossover(given) in (highspy.HighsStatus.kOk, highspy.HighsStatus.kWarning):
        x = polish(V, np.maximum(np.asarray(h.getSolution().col_value)[:n], 0.0), P, P)
        gain, target = float(gains @ x), float(gains @ w)
        if np.count_nonzero(x) <= d and (np.abs(x @ V - P) / P).max() <= 1e-10 \
                and gain >= target - 1e-9 * max(1.0, abs(target)):
            return x
    return master_lp(V, gains, P)[0]


def upper_bound(mu: np.ndarray, P: np.ndarray, V: np.ndarray, gains: np.ndarray) -> float:
    """mu . P + max_v (phi(v) - mu . v): an upper bound on the gain of every channel (weak duality)."""
    return float(mu @ P + np.max(gains - V @ mu))


def channel_from_weights(V: np.ndarray, w: np.ndarray, P: np.ndarray, m: int | None = None,
                         tol: float = 1e-12) -> np.ndarray:
    """q[x, y] = v_y[x] w_y / P[x] for the used vertices (w_y > tol), padded to m columns."""
    used = w > tol
    q = (V[used] * w[used, None]).T / P[:, None]
    if m is not None and m > q.shape[1]:
        q = np.hstack([q, np.zeros((q.shape[0], m - q.shape[1]))])
    return q


ROW_RESCALE = 1e-6
"""`stochastic_channel` divides each row of a posterior-space channel by its sum where its weights,
`polish`ed, still leave a row off by more than `result.ROW_TOL` but at most this."""
POLISH_MAX_ENTRIES = 1 << 21
"""`stochastic_channel` polishes weights whose columns in use hold at most this many entries
(d x columns; its least-squares step is dense, O(d k^2)), and only divides rows by their sums past it."""


def stochastic_channel(V: np.ndarray, w: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, str]:
    """`channel_from_weights`, with rows that sum to 1, and a note of what was done ("" when nothing).

    The weights of a master LP meet `sum_i w_i v_i = P` to its solver's tolerance, after its own
    scaling: relative to a small prior entry that can be more than `result.ROW_TOL`, which `clean`
    rejects, and the frontend then returned the constant channel (LDP histogram-MSE, d = 256,
    eps = 4, stopped at its time limit: a row at 1 + 1.3e-8). Such weights are first `polish`ed
    relative to P; rows still off by at most ROW_RESCALE are then divided by their sums. Either way
    the result is a channel like any other: audited (and `repair`ed) before it is returned, its
    objective computed from it, and the LP's bound holds for every channel, so the gap reported
    is the true one. Rows off by more are left as they are (for `clean` to reject)."""
    q = channel_from_weights(V, w, P)
    off = float(np.abs(q.sum(axis=1) - 1.0).max(initial=0.0))
    if off <= ROW_TOL:
        return q, ""
    small = np.count_nonzero(w > 0) * P.size <= POLISH_MAX_ENTRIES
    fixed = channel_from_weights(V, polish(V, w, P, P), P) if small else q
    sums = fixed.sum(axis=1)
    left = float(np.abs(sums - 1.0).max(initial=0.0))
    what = f"the LP's weights met the prior only to {off:.2g} of an entry"
    if left <= ROW_TOL:
        return fixed, what + "; corrected by least squares"
    if left <= ROW_RESCALE:
        return fixed / sums[:, None], what + f"; each row of the channel divided by its sum (off by up to {left:.2g})"
    return q, ""


# --- column generation with certified pricing ------------------------------------------------
#
# The master LP may use any admissible posteriors as columns, not only vertices. Pricing asks for
# max_{v in K} phi(v) - mu . v, a convex maximization. Every phi here is psi(L v) with psi a sum
# of convex functions of the coordinates of s = L v (bayes-mse: L = h^T, psi = s^2; histogram:
# L = I, psi = sum s_j^2; mutual information: L = I, psi = sum s_j log s_j). On a box
# lo <= s <= hi the concave envelope of psi is the sum of the chords, so
#     max { sum_j chord_j(s_j) - mu . v : v in K, s = L v, lo <= s <= hi }
# (one LP) bounds the pricing problem from above on that box, and its solution is an admissible
# posterior whose true value bounds it from below. Branch and bound on the boxes closes the gap:
# the pricing optimum is certified to PRICING_TOL, and with it the whole problem
# (gain <= master value + pricing optimum). MAP (phi = max_x v_x) prices exactly with d LPs.
# For the separable utilities (HEURISTIC), a round first tries `ascend` (successive linearization,
# one LP a step): while it finds columns the branch and bound waits (at most ASCENT_RUN rounds),
# and a search that finds a column worth PRICING_RATIO of its open bound stops there. Every
# priced round's bound holds, and the lowest is kept. BP-LIP (three priors, eps = 1), 30 s: mutual information at
# d = 16 ended 0.264 (gap 1.08) and now 0.447 (gap 0.072); histogram-MSE 0.769 (gap 0.19), now
# 0.7235 (gap 3.6e-3); at d = 12 the loop reaches the LP optimum over every vertex (Qhull's).

PRICING_TOL = 1e-10
GAP_TOL = 1e-9
"""The loop stops once the bound is within GAP_TOL of the gain relative to the natural objective
(the MSE, I(X;Y) or accuracy `Bayes.from_gain` gives), as the structured loop does
(`colgen._natural_gap`), and prices to a quarter of that where it is below PRICING_TOL. With the
gap relative to max(1, gain) and PRICING_TOL alone, latent-G LIP bayes-mse at d = 32 (Dirichlet,
eps = 1) stopped 3.1e-9 from its MSE."""
MAX_ROUNDS = 500
MAX_NODES = 2000
NODE_MEMORY = 1.5e9
"""A search that gives up without a column or a proof is run again with 4x the nodes, up to the
budget whose open nodes fit in this many bytes."""
MAX_NEW_COLUMNS = 25
TIME_LIMIT = 60.0
ASCENT_STEPS, ASCENT_RUN = 20, 10
"""`ascend`'s most linearization steps from a seed, and the most rounds in a row priced by it alone
(then a branch and bound round moves the bound)."""
PRICING_RATIO = 0.5
"""A branch and bound pricing may stop once its best column reaches this fraction of its open bound."""
HEURISTIC = frozenset({"histogram-mse", "mutual-information"})
"""Utilities priced by `ascend` first and by searches that stop at PRICING_RATIO. BP-LIP (three
priors, d = 16, 30 s; neither / ascent / ratio / both): histogram-MSE gaps 1.7e-1 / 5.4e-3 /
1.2e-2 / 5.4e-3, mutual information 2.08 / 0.24 / 0.25 / 0.25. bayes-mse prices one functional
s = h . v, whose branch and bound is cheap and exact, and both slowed it: BP-LIP at d = 32, three
seeds, 5.1-6.0 s / 13.6-17.3 s / 7.3-9.0 s / 14.4-18.9 s."""


class Pricing:
    """Pricing LPs over K with a box on s = L v, kept in one HiGHS model (warm-started).

    The model's variables are u = v / P (and s), as for vertex enumeration: every admissible u of
    LIP / LDP lies in [e^-eps, e^eps], so HiGHS's absolute tolerance is a relative error in each
    coordinate of v. In v itself, an input of prior 5e-9 came out at 0 (its share below the
    tolerance), its channel row broke LIP's lower ratio (leakage inf), and `solve` returned the
    constant channel (LIP, d = 15, histogram-MSE: MSE 0.83 against the optimum 0.19)."""

    def __init__(self, A: np.ndarray, L: np.ndarray, P: np.ndarray):
        import highspy

        self.hp = highspy
        d, k = A.shape[1], L.shape[0]
        self.d, self.k = d, k
        self.P = np.asarray(P, dtype=float)
        AP = A * self.P[None, :]
        AP = AP / np.maximum(np.abs(AP).max(axis=1, keepdims=True), 1e-300) if AP.size else AP
        A_ub = sp.hstack([sp.csr_matrix(AP), sp.csr_matrix((A.shape[0], k))])
        A_eq = sp.vstack([sp.hstack([sp.csr_matrix(self.P[None, :]), sp.csr_matrix((1, k))]),
                          sp.hstack([sp.csr_matrix(L * self.P[None, :]), -sp.identity(k)])])
        h = new_highs()
        load_program(h, np.zeros(d + k), A_ub, np.zeros(A.shape[0]), A_eq, np.r_[1.0, np.zeros(k)],
                     np.concatenate([np.zeros(d), np.full(k, -np.inf)]), np.full(d + k, np.inf))
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self.h = h

    def solve(self, cost_v, cost_s, lo, hi):
        """max cost_v . v + cost_s . s over v in K with lo <= s <= hi: (value, v, s), or None when
        that box holds no admissible posterior. Any other outcome is tried again from scratch, then
        from scratch by the primal simplex, then raised (SolverError): a box whose LP failed must
        not be dropped as if empty. (LDP, d = 16, eps = 18.5, after the starting columns: HiGHS
        called the warm program unbounded, where it is bounded, u <= 1 / P. DI, d = 6, eps = 19.4,
        prior entries 1.9e-4..0.85, rows spanning 1e9: HiGHS's dual simplex stopped "Not Set"
        from scratch, with or without presolve, on three of the six starting columns' LPs; its
        primal simplex solves all six.)"""
        h, d, k = self.h, self.d, self.k
        idx = np.arange(d + k, dtype=np.int32)
        h.changeColsCost(d + k, idx, np.concatenate([np.asarray(cost_v, dtype=float) * self.P, cost_s]))
        h.changeColsBounds(k, idx[d:], np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
        status = self.hp.HighsModelStatus
        for attempt in ("warm", "cold", "primal"):
            if attempt != "warm":
                h.clearSolver()
            if attempt == "primal":
                h.setOptionValue("simplex_strategy", 4)
            h.run()
            if attempt == "primal":
                h.setOptionValue("simplex_strategy", 1)                  # HiGHS's default, the dual simplex
            if h.getModelStatus() == status.kOptimal:
                x = np.asarray(h.getSolution().col_value)
                return h.getInfo().objective_function_value, x[:d] * self.P, x[d:]
            if h.getModelStatus() == status.kInfeasible:
                return None
        raise SolverError(f"a pricing LP over the admissible posteriors failed (HiGHS: {h.modelStatusToString(h.getModelStatus())})")


def _psi_parts(utility, problem):
    """(L, f, f') with phi(v) = sum_j f((L v)_j); (None, None, None) for MAP, which prices exactly."""
    d = problem.d
    square, twice = (lambda s: s * s), SLOPE["histogram-mse"]
    if utility.kind == "bayes-mse":
        return utility.target(problem)[None, :], square, twice
    if utility.kind == "histogram-mse":
        return np.eye(d), square, twice
    if utility.kind == "mutual-information":
        return (np.eye(d), (lambda s: np.where(s > 0, s * np.log(np.maximum(s, 1e-300)), 0.0)),
                SLOPE["mutual-information"])
    return None, None, None


def price(pricing: Pricing, f, mu: np.ndarray, s_lo: np.ndarray, s_hi: np.ndarray, phi,
          tol: float = PRICING_TOL, max_nodes: int = MAX_NODES, deadline: float = np.inf, ratio: float = np.inf,
          interrupt=None):
    """Certified max_{v in K} phi(v) - mu . v by branch and bound on boxes of s = L v.

    Returns (best value, best v, upper bound, candidate columns, nodes). The upper bound is valid
    for the whole of K (unexplored boxes keep their LP bound). The search may stop once its best
    value exceeds tol and `ratio` times the largest open bound (a column worth adding, found), and
    stops, as out of time, once `interrupt()` is true.
    """
    import heapq
    import time

    def bound(lo, hi):
        width = hi - lo
        safe = np.where(width > 0, width, 1.0)
        slope = np.where(width > 0, (f(hi) - f(lo)) / safe, 0.0)
        const = float(np.sum(f(lo) - slope * lo))
        out = pricing.solve(-mu, slope, lo, hi)
        if out is None:
            return None
        value, v, s = out
        return value + const, v, s

    best_val, best_v, cands = -np.inf, None, []
    first = bound(s_lo, s_hi)
    if first is None:
        raise SolverError("the pricing LP over the admissible posteriors failed (HiGHS)")
    heap = [(-first[0], 0, s_lo, s_hi, first[1], first[2])]
    counter, nodes = 1, 0
    while heap:
        neg_ub, _, lo, hi, v, s = heapq.heappop(heap)
        ub = -neg_ub
        v, val = _posterior_value(v, phi, mu)
        if val > best_val:
            best_val, best_v = val, v
        if val > tol:
            cands.append((val, v))
        out_of_time = time.perf_counter() > deadline or (interrupt is not None and interrupt())
        enough = best_val > tol and best_val >= ratio * ub
        if ub <= best_val + tol or nodes >= max_nodes or out_of_time or enough:
            if nodes >= max_nodes or out_of_time or enough:
                heap.append((neg_ub, 0, lo, hi, v, s))
                break
            continue
        nodes += 1
        slope_gap = _envelope_gap(f, lo, hi, s)
        j = int(np.argmax(slope_gap))
        cut = s[j] if lo[j] + 1e-12 < s[j] < hi[j] - 1e-12 else 0.5 * (lo[j] + hi[j])
        for a, b in ((lo[j], cut), (cut, hi[j])):
            lo2, hi2 = lo.copy(), hi.copy()
            lo2[j], hi2[j] = a, b
            child = bound(lo2, hi2)
            if child is not None and child[0] > best_val + tol:
                heapq.heappush(heap, (-child[0], counter, lo2, hi2, child[1], child[2]))
                counter += 1
    # (a box pruned at `ub <= best + tol` may hold up to best + tol)
    upper = max([best_val + tol] + [-h[0] for h in heap])
    cands.sort(key=lambda t: -t[0])
    return best_val, best_v, upper, [v for _, v in cands[:MAX_NEW_COLUMNS]], nodes


def _posterior_value(v: np.ndarray, phi, mu: np.ndarray) -> tuple[np.ndarray, float]:
    """A pricing LP's point as a posterior (clipped at 0, normalized) and its phi(v) - mu . v."""
    v = np.clip(v, 0.0, None)
    v = v / v.sum()
    return v, float(phi(v[None, :])[0] - mu @ v)


def ascend(pricing: Pricing, L: np.ndarray, slope, mu: np.ndarray, seeds: np.ndarray, phi,
           steps: int = ASCENT_STEPS) -> np.ndarray:
    """Admissible posteriors reached from the rows of `seeds` by successive linearization of the
    convex `phi(v) - mu . v` (phi = sum f(L v), f' = `slope`): v <- argmax_{v in K} grad . v (one
    warm pricing LP) never lowers it (convexity) and ends at a vertex that is a local maximum of
    the linearization. A heuristic pricing: columns, no bound."""
    free = (np.full(pricing.k, -np.inf), np.full(pricing.k, np.inf))
    zero = np.zeros(pricing.k)
    out = []
    for v in np.atleast_2d(seeds):
        value = float(phi(v[None, :])[0] - mu @ v)
        for _ in range(steps):
            try:
                found = pricing.solve(L.T @ slope(L @ v) - mu, zero, *free)
            except SolverError:          # (a heuristic: its failed LP only ends the climb)
                found = None
            if found is None:
                break
            w, new = _posterior_value(found[1], phi, mu)
            if new <= value + 1e-15 * max(1.0, abs(value)):
                break
            v, value = w, new
        out.append(v)
    return np.array(out)


def _envelope_gap(f, lo, hi, s):
    width = hi - lo
    safe = np.where(width > 0, width, 1.0)
    chord = np.where(width > 0, f(lo) + (f(hi) - f(lo)) / safe * (s - lo), f(s))
    return chord - f(s)


def initial_columns(pricing: Pricing, d: int) -> list[np.ndarray]:
    """P-independent starting columns: for each x, the admissible posterior with the most mass on x."""
    cols = []
    free = (np.full(pricing.k, -np.inf), np.full(pricing.k, np.inf))
    for x in range(d):
        c = np.zeros(d)
        c[x] = 1.0
        out = pricing.solve(c, np.zeros(pricing.k), *free)
        if out is not None:
            cols.append(out[1])
    return cols


def star_columns(A: np.ndarray, P: np.ndarray) -> list[np.ndarray]:
    """For each x, the admissible posterior farthest from the prior toward e_x on the segment
    [P, e_x]: v_x = (1 - t_x) P + t_x e_x with the largest t_x in [0, 1] that keeps A v_x <= 0
    (P admissible). The posteriors with t_x > 0, weighted by P_x / t_x (normalized; with the prior
    as the rest), average to P: a channel that reports x itself with some probability (a randomized
    response toward the prior), so the master LP starts from one that releases something.

    Without them, BP-LIP (three priors, d = 32) with mutual information kept the prior alone, at
    I(X; Y) = 0, through 14 rounds and 20 s: the priced posteriors never held P in their hull,
    while GRR is admissible there (I = 0.028)."""
    AP = A @ P
    D = A - AP[:, None]                     # row r, column x: A_r . (e_x - P)
    with np.errstate(divide="ignore", invalid="ignore"):
        T = np.where(D > 0, -AP[:, None] / D, np.inf)
    t = np.clip(T.min(axis=0, initial=np.inf), 0.0, 1.0) * (1.0 - 1e-12)
    V = (1.0 - t)[:, None] * P[None, :] + np.diag(t)
    return list(V[t > 0])


ROUNDOFF = 16 * np.finfo(float).eps
"""`roundoff`'s unit: a reduced cost over d coordinates is trusted to d of these times its size."""


def noise(V: np.ndarray, gains: np.ndarray, mu: np.ndarray) -> float:
    """The largest reduced cost `phi(v) - mu . v` of a master's own columns (rows of V, their
    gains) at its duals mu, 0 if none is positive: the least pricing tolerance of both column
    generations (`roundoff`; the structured one's in `colgen._generate`). At an optimum every one
    is <= 0 up to HiGHS's dual tolerance and the round-off of `V @ mu`; what they show above 0 is
    that noise, and a priced column worth no more than it is no better than theirs (HiGHS would not
    let it enter either). LDP bayes-mse, d = 64, eps = 15 (structured): the columns in use showed
    9.1e-14 against a pricing tolerance of 1.1e-14, so each round priced them again, added them as
    new, and the loop ran out its time limit with the master unchanged (and returned the trivial
    bound). Over the columns in use alone (basic, so exactly 0 at the optimum) the floor is lower,
    but two of 32 runs at eps 8..20 (bayes-mse, d = 64 / 256) then ran out their 30 s (LIP,
    eps = 8: 1.3e-9; LDP, eps = 15: 1.1e-3) where over every column they end in 0.3 s; it costs two
    runs that closed to 9.2e-10 / 9.5e-10 their last digits (1.0e-9 / 1.3e-9, LIP, eps = 8)."""
    return float(np.max(gains - V @ mu, initial=0.0))


def roundoff(V: np.ndarray, gains: np.ndarray, mu: np.ndarray, P: np.ndarray) -> float:
    """The least pricing tolerance in gain units at the master's duals mu: the round-off of the
    bound `mu . P + max_v phi(v) - mu . v` (d ROUNDOFF times its size, 1 + max |phi| + |mu| . P),
    or more where the master's own columns (V, gains) show more (`noise`). Below
    it the branch and bound cannot close: BP-LIP bayes-mse, d = 5, eps = 31 (a status fuzz
    problem, MSE 2e-18) had its root bound 3.6e-15 above its best against a tolerance of 1e-15,
    searched 4x deeper each round, and ran out its 30 s time limit. (|mu| . P, not max |mu|: with
    a prior entry of 7e-9 (DI, 18 nats), mu_x reaches 8e7 on a coordinate that weighs 0.6 in it.)"""
    size = 1.0 + float(np.abs(gains).max(initial=0.0)) + float(np.abs(mu) @ P)
    return max(P.size * ROUNDOFF * size, noise(V, gains, mu))


def column_generation(problem, A: np.ndarray, max_rounds: int = MAX_ROUNDS, time_limit: float = TIME_LIMIT,
                      progress=None, beside: Beside | None = None):
    """Certified posterior-space LP by column generation. Returns (V, w, gain, gain bound, info).

    The bound is always valid; it meets the gain (to GAP_TOL) unless the round, node or time
    limit stops the search first, in which case info["stopped"] says which and the gap shows it.
    With `beside` (an enumeration running in a child process), the LP over every vertex replaces
    the loop as soon as the vertices are there (info["algorithm"] = "vertex-enumeration").
    """
    import time

    t_start = time.perf_counter()
    utility, P, d = problem.utility, problem.prior, problem.d

    def phi(V):
        return utility.phi(problem, V)

    L, f, slope = _psi_parts(utility, problem)
    exact_map = L is None
    separable = utility.kind in HEURISTIC
    pricing = Pricing(A, np.eye(d) if exact_map else L, P)
    cols = [P.copy()] + initial_columns(pricing, d) + star_columns(A, P)
    if not exact_map:
        s_lo = np.empty(pricing.k)
        s_hi = np.empty(pricing.k)
        free = (np.full(pricing.k, -np.inf), np.full(pricing.k, np.inf))
        for j in range(pricing.k):
            e = np.zeros(pricing.k)
            e[j] = 1.0
            s_hi[j] = pricing.solve(np.zeros(d), e, *free)[0]
            s_lo[j] = -pricing.solve(np.zeros(d), -e, *free)[0]
    # the natural objective (MSE, I(X;Y) or accuracy) is affine in the gain: its change per unit
    per_gain = abs(utility.from_gain(problem, 1.0) - utility.from_gain(problem, 0.0))
    nodes_total, nodes, node_budget, ascents, run = 0, 0, MAX_NODES, 0, 0
    node_cap = max(MAX_NODES, int(NODE_MEMORY / (8 * (3 * pricing.k + d) + 240)))   # (a node: lo, hi, s, v)
    bound, last = np.inf, np.zeros((0, d))
    for rounds in range(1, max_rounds + 1):
        if beside is not None and beside.ready():
            every = beside.vertices()
            beside = None                  # (where it failed, the loop goes on alone)
            if every is not None:
                try:
                    solved = enumerate_and_solve(problem, A, every)
                except (ProblemError, SolverError):
                    solved = None
                if solved is not None:
                    solved.info.update(algorithm="vertex-enumeration", rounds=rounds - 1)
                    return solved
        V = np.array(cols)
        gains = phi(V)
        w, mu = master_lp(V, gains, P)
        value = float(gains @ w)
        objective = abs(utility.from_gain(problem, value))
        # to a quarter of the gap target, in gain units (below PRICING_TOL where the objective is
        # small), never below the round-off of a reduced cost (`roundoff`)
        tol = max(min(PRICING_TOL, 0.25 * GAP_TOL * objective / max(per_gain, 1e-300)), roundoff(V, gains, mu, P))
        new: list = []
        if separable and run < ASCENT_RUN:
            # the cheap heuristic first, from the columns in use and the last ones added
            cand = ascend(pricing, L, slope, mu, np.vstack([V[w > 0], last]), phi)
            reduced = phi(cand) - cand @ mu
            keep = np.flatnonzero(reduced > tol)
            keep = keep[np.argsort(-reduced[keep])]
            if keep.size:
                _, first = np.unique(np.round(cand[keep], 13), axis=0, return_index=True)
                new = list(cand[keep[np.sort(first)]])
                ascents, run = ascents + 1, run + 1
        if not new:
            run = 0
            if exact_map:
                best, new = -np.inf, []
                free = (np.full(d, -np.inf), np.full(d, np.inf))
                for x in range(d):
                    e = np.zeros(d)
                    e[x] = 1.0
                    out = pricing.solve(-mu, e, *free)
                    if out is not None:
                        v, val = _posterior_value(out[1], phi, mu)
                        best = max(best, val)
                        if val > PRICING_TOL:
                            new.append(v)
                upper = best
            else:
                _, _, upper, new, nodes = price(pricing, f, mu, s_lo, s_hi, phi, tol=tol, max_nodes=node_budget,
                                                deadline=t_start + time_limit, ratio=PRICING_RATIO if separable else np.inf,
                                                interrupt=beside.ready if beside is not None else None)
                nodes_total += nodes
            # every round's duals give a bound (weak duality): the lowest one stands
            bound = min(bound, value + max(upper, 0.0))
        # relative to the objective, to the bound as reported (with its round-off allowance)
        gap = per_gain * (reported_bound(bound, d) - value) / max(objective, 1e-12)
        if progress is not None and np.isfinite(gap):
            progress(rounds, gap)
        if beside is not None and beside.ready():
            continue                       # (the vertices are there: the next round solves over them)
        if not new and gap > GAP_TOL and nodes >= node_budget and node_budget < node_cap \
                and time.perf_counter() - t_start < time_limit:
            node_budget = min(4 * node_budget, node_cap)   # the search gave up without a column or a proof: search deeper
            continue
        if gap <= GAP_TOL or not new:
            info: dict = {"rounds": rounds, "ascent_rounds": ascents, "columns": len(cols), "pricing_nodes": nodes_total}
            if gap > GAP_TOL:          # no column above the pricing tolerance, yet its bound stays open
                info["stopped"] = ("time_limit" if time.perf_counter() - t_start > time_limit
                                   else "pricing found no improving column")
            return PosteriorSolution(V, w, value, bound, info)
        cols.extend(new)
        last = np.array(new)
        if time.perf_counter() - t_start > time_limit:
            break
    else:
        rounds = max_rounds
    info = {"rounds": rounds, "ascent_rounds": ascents, "columns": len(cols), "pricing_nodes": nodes_total,
            "stopped": "time_limit" if rounds < max_rounds else "max_rounds"}
    if not np.isfinite(bound):       # stopped in a run of heuristic rounds: the root LP's bound at the last duals
        upper = price(pricing, f, mu, s_lo, s_hi, phi, max_nodes=0)[2] if not exact_map else np.inf
        bound = value + max(upper, 0.0)
    return PosteriorSolution(V, w, value, bound, info)


CLOSED_FORM_LIMIT = 300_000
"""Largest closed-form vertex set used directly (an LP with that many columns and d rows)."""


def closed_form_vertices(problem):
    """The vertex set from the notion itself when there is a single notion that knows it."""
    if len(problem.privacy) != 1:
        return None
    return problem.privacy[0].posterior_vertices(problem, CLOSED_FORM_LIMIT)


def enumerate_and_solve(problem, A: np.ndarray, V: np.ndarray | None = None):
    """Certified posterior-space LP over the full vertex set. Returns (V, w, gain, gain bound, info).

    V: the vertex set when the caller already has it in closed form (checked here); else Qhull.
    """
    P = problem.prior
    if V is not None:
        viol = (V @ A.T).max() if A.size else 0.0
        if viol > VERTEX_TOL:
            raise ProblemError(f"closed-form vertices violate the constraints by {viol:.2e}")
    else:
        V = vertices(A, P)
    gains = problem.utility.phi(problem, V)
    w, mu = master_lp(V, gains, P)
    return PosteriorSolution(V, w, float(gains @ w), upper_bound(mu, P, V, gains), {"vertices": len(V)})


def snap(V: np.ndarray, A: np.ndarray) -> np.ndarray:
    """Each posterior (row of V) with the coordinates its two-term rows hold too low raised until
    every such row holds exactly: a row a v_i + b v_j <= 0 (a > 0 > b) that v breaks raises v_j to
    (a / -b) v_i, repeated until none is broken (at most d passes: longest paths in log v, as
    Bellman-Ford finds them), then normalized. A pricing LP's or Qhull's point meets its rows to an
    absolute tolerance, so its smallest coordinates may sit at 0 or far below the ratio the audit
    measures: DI at 19.4 nats on a prior spanning 4,470 (rows spanning 1e9) missed the audit, and
    the constant-channel repair cost I(X; Y) 3e-5 and the certificate. Raised, a coordinate meets
    its binding lower bound to a few ulps. A posterior still broken after d passes, or broken by
    more than before (relative to the rows' terms), is kept as it is; rows of more than two terms
    (BP-LIP, Pufferfish, LIP) are not used.

    Parameters
    ----------
    V : ndarray, shape (k, d)
        Admissible posteriors, up to a solver's tolerance (K = {post >= 0, sum post = 1, A post <= 0}).
    A : ndarray, shape (r, d)
        The rows of K (`posterior_rows`).

    Returns
    -------
    ndarray, shape (k, d)
        V with the posteriors that could be raised replaced.
    """
    V = np.array(V, dtype=float)
    two = np.flatnonzero((A != 0).sum(axis=1) == 2)
    if not two.size:
        return V
    B = A[two]
    i, j = (np.sort(np.argsort(B == 0, axis=1, kind="stable")[:, :2], axis=1)).T       # the two columns
    a, b = B[np.arange(two.size), i], B[np.arange(two.size), j]
    low, high = np.where(a < 0, i, j), np.where(a < 0, j, i)     # the row reads v[low] >= ratio v[high]
    with np.errstate(over="ignore", divide="ignore"):   # (both branches are evaluated; kept where finite)
        ratio = -np.where(a < 0, b / a, a / b)
    keep = (a * b < 0) & np.isfinite(ratio)
    low, high, ratio = low[keep], high[keep], ratio[keep]

    def broken(v):
        return np.max((A @ v) / np.maximum(np.abs(A) @ v, 1e-300), initial=0.0)

    for k, v in enumerate(V):
        u = np.maximum(v, 0.0)
        for _ in range(V.shape[1] + 1):
            need = ratio * u[high]
            short = need > u[low]
            if not short.any():
                break
            np.maximum.at(u, low[short], need[short])
        else:
            continue
        u /= u.sum()
        if np.all(np.isfinite(u)) and broken(u) < broken(v):
            V[k] = u
    return V


def snapped_channel(V: np.ndarray, w: np.ndarray, P: np.ndarray, A: np.ndarray) -> np.ndarray:
    """The channel of the posteriors in use `snap`ped onto their vertices, their weights `polish`ed
    back onto the prior (`channel_from_weights`)."""
    used = w > 1e-12
    Vs = snap(V[used], A)
    return channel_from_weights(Vs, polish(Vs, w[used], P, P), P)


def polish(V: np.ndarray, w: np.ndarray, P: np.ndarray, scale: np.ndarray | float = 1.0) -> np.ndarray:
    """w with its weights in use refined by one least-squares correction of the residual of
    `sum_i w_i v_i = P`, each row divided by `scale` (P: relative to each prior entry); kept only if
    still >= 0 (a weight the correction leaves below 0 by round-off, within 1e-12 of the largest, is
    0) and closer, else w as it is. (A weight of 2.3e-14 corrected to -5e-18 had dropped the
    correction of a basic solution of the orbit LP 3.5e-10 from its rows, and `basic_weights`
    solved the LP afresh: four levels, d = 256, LIP mutual information, eps = 2, 0.76 s against
    0.04 s.) HiGHS meets its rows to a tolerance after its own scaling: LIP at eps = 14 (u from 8e-7
    to 1.25e6, d = 8, bayes-mse) left the row of an input of prior 1.6e-9 at 1 + 8.0e-7, past the
    audit's 1e-8, and the channel was replaced by the constant one (its MSE 3.1e8 against 496)."""
    used = np.flatnonzero(w > 0)
    if not used.size:
        return w
    A = (V[used] / scale).T
    residual = A @ w[used] - P / scale
    better = w[used] + np.linalg.lstsq(A, -residual, rcond=None)[0]
    better[(better < 0) & (better >= -1e-12 * w[used].max())] = 0.0     # below 0 by round-off only
    if better.min() < 0 or np.abs(A @ better - P / scale).max() >= np.abs(residual).max():
        return w
    w = w.copy()
    w[used] = better
    return w
