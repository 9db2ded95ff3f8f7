"""The shape bound on separable Bayes gains under LDP (channelopt.methods.relaxed), against the
vertex-enumeration LP, brute force over every vertex, and the uniform prior's orbit optimum."""

import math
import time

import numpy as np
import pytest
from scipy.optimize import linprog

import channelopt as co
from channelopt.methods.relaxed import _Intervals, shape_bound
from truths import ldp_vertices

F = {"histogram-mse": lambda v: v * v,
     "mutual-information": lambda v: np.where(v > 0, v * np.log(np.where(v > 0, v, 1.0)), 0.0)}


def enumeration_optimum(P, eps, kind):
    """max sum_v w_v phi(v) s.t. sum_v w_v v = P, w >= 0, over every LDP vertex (scipy's HiGHS)."""
    V = ldp_vertices(P, eps)
    res = linprog(-F[kind](V).sum(axis=1), A_eq=V.T, b_eq=P, bounds=(0, None), method="highs")
    assert res.status == 0
    return -res.fun


@pytest.mark.parametrize("kind", ["histogram-mse", "mutual-information"])
def test_shape_bound_is_above_the_vertex_enumeration_optimum(kind):
    rng = np.random.default_rng(5)
    for d in (6, 9, 12):
        for alpha in (0.3, 1.0, 5.0):
            for eps in (0.5, 1.5, 4.0, 12.0):
                P = rng.dirichlet(np.full(d, alpha))
                P = np.maximum(P, 1e-4)
                P /= P.sum()
                bound, mu = shape_bound(P, eps, kind)
                assert mu.shape == P.shape
                assert bound >= enumeration_optimum(P, eps, kind) - 1e-13
                assert bound <= (1.0 if kind == "histogram-mse" else 0.0) + 1e-9   # sum v^2 <= 1, -H <= 0


def test_interval_relaxation_bounds_every_vertex_at_any_dual_point():
    """At random dual points (not the searched one), the branch and bound over tau is above
    mu . P + max_v phi(v) - mu . v over all 4,096 vertices, and below the bound of its first
    intervals (refining never loosens it)."""
    rng = np.random.default_rng(8)
    d = 12
    for kind in ("histogram-mse", "mutual-information"):
        for eps in (0.3, 1.0, 3.0):
            P = rng.dirichlet(np.ones(d))
            V = ldp_vertices(P, eps)
            for _ in range(3):
                mu = rng.normal(size=d) * (0.3 if kind == "histogram-mse" else 2.0)
                brute = float(mu @ P + (F[kind](V).sum(axis=1) - V @ mu).max())
                T = np.geomspace(1.0, 1.0 + math.expm1(eps), 9)
                T[0], T[-1] = 1.0, 1.0 + math.expm1(eps)
                box = _Intervals(P, eps, F[kind], T[:-1], T[1:])
                first = float(box.bounds(mu)[0].max())
                assert brute - 1e-13 <= box.refined(mu) <= first


@pytest.mark.parametrize("d,eps", [(64, 3.0), (256, 1.0), (1000, 0.5)])
def test_shape_bound_is_within_1e4_of_the_uniform_orbit_optimum(d, eps):
    """Uniform prior, histogram-MSE: the optimum is max_k sum v^2 over sets of size k (the orbit
    argument, derived by hand); the bound is above it and, every symbol being light, close."""
    c = math.expm1(eps)
    best = max((k * (1 + c) ** 2 + (d - k)) / (d + c * k) ** 2 for k in range(1, d))
    bound, _ = shape_bound(np.full(d, 1.0 / d), eps, "histogram-mse")
    assert best <= bound <= best * (1 + 1e-4)


def test_a_stopped_ldp_histogram_solve_reports_a_close_valid_bound():
    """d = 256 stopped after 3 s: the bound (the shape bound's, or the level method's from its
    dual point) is below randomized response's MSE and leaves a gap far under what the pricing
    alone reached (> 0.05)."""
    P = np.random.default_rng(1).dirichlet(np.ones(256))
    p = co.Problem(prior=P, privacy=[co.LDP(1.0)], utility=co.Bayes("histogram-mse"))
    r = co.solve(p, time_limit=3)
    assert r.status == "local"
    assert r.certificate.bound <= r.objective
    assert r.certificate.gap < 1e-3
    e = math.exp(1.0)
    grr = np.full((256, 256), 1.0 / (e + 255)) + np.eye(256) * (e - 1) / (e + 255)   # written by hand
    assert p.utility.evaluate(p, grr) >= r.certificate.bound - 1e-12


def test_level_point_is_the_projection_on_the_models_level_set_shifted_to_a_zero_reduced_cost():
    """_level_point against the same projection solved by cvxpy (an independent modelling of the
    QP): min ||mu - centre|| s.t. mu . P + gain_i - mu . v_i <= level for every master column."""
    import cvxpy as cp

    from channelopt.methods.colgen import Master, _level_point

    rng = np.random.default_rng(4)
    d = 10
    P = rng.dirichlet(np.ones(d))
    V = ldp_vertices(P, 1.0)[rng.choice(2 ** d, 60, replace=False)]
    master = Master(P)
    master.add(V, F["histogram-mse"](V).sum(axis=1))
    w, duals = master.solve()
    low = float(master.gains @ w)
    centre = 2 * P + rng.normal(size=d) * 0.05
    level = low + 0.2 * 0.01
    x, active = _level_point(master, centre, level, duals)
    assert np.max(master.gains - master.V @ x) == pytest.approx(0.0, abs=1e-12)
    mu = cp.Variable(d)
    cp.Problem(cp.Minimize(cp.sum_squares(mu - centre)),
               [(P[None, :] - master.V) @ mu <= level - master.gains]).solve(solver=cp.CLARABEL)
    shift = x - mu.value                                  # the projection, moved along 1 only
    assert np.ptp(shift) < 1e-6
    assert float(mu.value @ P + np.max(master.gains - master.V @ mu.value)) <= level + 1e-9
    # the cuts called active carry the projection: on them alone it is the same point, and without
    # them it is not (the level set is then larger and holds a point nearer the centre)
    assert 0 < active.size < len(V)
    one = cp.Variable(d)
    cp.Problem(cp.Minimize(cp.sum_squares(one - centre)),
               [(P[None, :] - master.V[active]) @ one <= level - master.gains[active]]).solve(solver=cp.CLARABEL)
    assert np.abs(one.value - mu.value).max() < 1e-6
    # the point meets its level to rounding, also just above the master's own value (a thin set
    # that a QP solved to its tolerance can miss), where it is still the projection
    model = lambda m: float(m @ P + np.max(master.gains - master.V @ m))   # noqa: E731
    assert model(x) <= level + 1e-14
    thin = low + 1e-9
    x0, _ = _level_point(master, centre, thin, duals)
    assert model(x0) <= thin + 1e-14
    near = cp.Variable(d)
    cp.Problem(cp.Minimize(cp.sum_squares(near - centre)),
               [(P[None, :] - master.V) @ near <= thin - master.gains]).solve(solver=cp.CLARABEL)
    assert np.ptp(x0 - near.value) < 1e-6


def _vertex_rows(seed: int, d: int, eps: float):
    """(G, h, centre) of a level point's QP on every LDP vertex of a random prior, the level above
    the enumeration LP's value."""
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(d))
    V = ldp_vertices(P, eps)
    gains = F["histogram-mse"](V).sum(axis=1)
    G, h = P[None, :] - V, enumeration_optimum(P, eps, "histogram-mse") + 0.01 - gains
    return G, h, rng.normal(size=d)


@pytest.mark.parametrize("seed,d,eps", [(7, 12, 1.5), (8, 9, 0.3), (9, 11, 4.0)])
def test_least_distance_is_the_projection_with_its_multipliers(seed, d, eps):
    """colgen._least_distance (least distance programming through NNLS) against cvxpy's
    projection on every row, and its multipliers against the KKT conditions: x - centre =
    -G' z with z >= 0, z zero off the rows that bind."""
    import cvxpy as cp

    from channelopt.methods.colgen import _least_distance

    G, h, centre = _vertex_rows(seed, d, eps)
    x, z = _least_distance(G, h, centre)
    mu = cp.Variable(d)
    cp.Problem(cp.Minimize(cp.sum_squares(mu - centre)), [G @ mu <= h]).solve(solver=cp.CLARABEL)
    assert np.abs(x - mu.value).max() < 1e-6
    assert np.sum((x - centre) ** 2) <= np.sum((mu.value - centre) ** 2) + 1e-12   # the exact one
    assert np.max(G @ x - h) < 1e-12
    assert np.all(z >= 0) and 0 < np.count_nonzero(z) < len(G)
    assert np.abs(x - centre + G.T @ z).max() < 1e-10 * np.abs(x - centre).max()
    assert np.abs(z * (G @ x - h)).max() < 1e-12
    inside = G @ centre <= h                                  # a centre inside is its own projection
    assert not inside.all()
    x0, z0 = _least_distance(G, h + np.maximum(G @ centre - h, 0.0) + 1e-9, centre)
    assert np.array_equal(x0, centre) and not z0.any()


def test_least_distance_says_none_where_no_point_meets_the_rows():
    """x <= -1 and x >= 1: no feasible point (NNLS fits e exactly, r[n] = 0)."""
    from channelopt.methods.colgen import _least_distance

    assert _least_distance(np.array([[1.0], [-1.0]]), np.array([-1.0, -1.0]), np.zeros(1)) == (None, None)


@pytest.mark.parametrize("nnls", ["raises", "wrong"])
def test_projection_falls_back_to_the_qp_where_nnls_gives_no_point(monkeypatch, nnls):
    """Where scipy's NNLS stops at its iteration limit, or returns a point that misses a row, the
    projection is Clarabel's (`_projection_qp`): still the projection."""
    import cvxpy as cp

    from channelopt.methods import colgen

    def fake(A, b):
        if nnls == "raises":
            raise RuntimeError("Maximum number of iterations reached.")
        return np.full(A.shape[1], 1e-3), 0.0

    monkeypatch.setattr("scipy.optimize.nnls", fake)
    G, h, centre = _vertex_rows(7, 12, 1.5)
    assert colgen._least_distance(G, h, centre) == (None, None)
    x, _ = colgen._projection(G, h, centre, np.inf)
    mu = cp.Variable(12)
    cp.Problem(cp.Minimize(cp.sum_squares(mu - centre)), [G @ mu <= h]).solve(solver=cp.CLARABEL)
    assert np.abs(x - mu.value).max() < 1e-6


def test_projection_by_working_set_equals_the_projection_on_every_row():
    """colgen._projection_qp adds rows as the last point violates them: on every LDP vertex of a
    d = 12 prior (4,096 rows, 24 in the first working set) its point is cvxpy's projection on
    all rows at once, and meets every row."""
    import cvxpy as cp

    from channelopt.methods.colgen import _projection_qp as _projection

    rng = np.random.default_rng(7)
    d = 12
    P = rng.dirichlet(np.ones(d))
    V = ldp_vertices(P, 1.5)
    gains = F["histogram-mse"](V).sum(axis=1)
    G, h = P[None, :] - V, enumeration_optimum(P, 1.5, "histogram-mse") + 0.01 - gains   # above the LP's value
    centre = rng.normal(size=d)
    x, z = _projection(G, h, centre, np.inf)
    mu = cp.Variable(d)
    cp.Problem(cp.Minimize(cp.sum_squares(mu - centre)), [G @ mu <= h]).solve(solver=cp.CLARABEL)
    assert np.abs(x - mu.value).max() < 1e-6
    assert np.max(G @ x - h) < 1e-9
    assert 0 < np.count_nonzero(z) < len(V)                  # multipliers on the working set only


def test_level_method_certifies_the_vertex_enumeration_optimum(monkeypatch):
    """The level method from the first flat round (LEVEL_FLAT = 0) on LDP histogram-MSE, d = 12:
    the column generation ends certified at the enumeration LP's optimum, through level points."""
    from channelopt.methods import colgen
    from channelopt.methods.structured import family_for

    monkeypatch.setitem(colgen.LEVEL, ("ldp", "histogram-mse"), (0, 0.2))
    calls = []
    real = colgen._level_point
    monkeypatch.setattr(colgen, "_level_point", lambda *a: calls.append(1) or real(*a))
    rng = np.random.default_rng(12)
    for eps in (0.7, 2.0):
        P = rng.dirichlet(np.ones(12))
        p = co.Problem(prior=P, privacy=[co.LDP(eps)], utility=co.Bayes("histogram-mse"))
        _, _, g, b, info = colgen.column_generation(p, family_for(p), time_limit=60)
        best = enumeration_optimum(P, eps, "histogram-mse")
        assert "stopped" not in info
        assert g == pytest.approx(best, rel=1e-9)
        assert best - 1e-12 <= b <= g + 2e-9
    assert calls


def test_pruning_keeps_the_priors_column_so_the_master_stays_feasible():
    """Master.prune drops unused columns, but never the prior's own (u = 1): with it the master is
    feasible exactly (w = e_prior), whatever the columns in use. Found by the benchmark: a d = 64
    LDP histogram-MSE solve pruned it, and HiGHS later called the warm master infeasible."""
    from channelopt.methods.colgen import Master

    rng = np.random.default_rng(8)
    P = rng.dirichlet(np.ones(10))
    V = ldp_vertices(P, 1.0)
    master = Master(P)
    master.add(V, F["histogram-mse"](V).sum(axis=1))
    w, mu = master.solve()
    prior = np.all(np.abs(V - P) <= 1e-15, axis=1)       # S = {} and S = X (to rounding)
    assert prior.sum() == 2 and not np.any(w[prior])
    master.prune(mu, w, 0)                               # every unused column goes but those
    assert len(master.V) == np.count_nonzero(w > 0) + 2
    master.prune(mu, np.zeros(len(master.V)), 0)         # nothing in use: the prior's columns alone
    assert np.abs(master.V - P).max() <= 1e-15 and len(master.V) == 2
    w, _ = master.solve()
    assert w.sum() == pytest.approx(1.0)


def test_a_master_that_fails_mid_search_returns_its_last_optimum_with_a_valid_bound(monkeypatch):
    """HiGHS failing on the master after some rounds ends the search at the last optimum (a channel
    far better than the constant one the frontend falls back to), status local, the bound valid
    (above the vertex-enumeration optimum) and the reason in the message."""
    from channelopt.errors import SolverError
    from channelopt.methods import colgen

    real, calls = colgen.Master.solve, []

    def failing(self, deadline=np.inf):
        calls.append(1)
        if len(calls) == 6:
            raise SolverError("the posterior-space master LP failed (HiGHS: Infeasible)")
        return real(self, deadline)

    monkeypatch.setattr(colgen.Master, "solve", failing)
    P = np.random.default_rng(9).dirichlet(np.ones(12))
    p = co.Problem(prior=P, privacy=[co.LDP(1.0)], utility=co.Bayes("histogram-mse"))
    r = co.solve(p, bayes_options={"posterior": "structured"}, time_limit=60, progress=False)
    best = enumeration_optimum(P, 1.0, "histogram-mse")              # max sum_y Pr(y) |post_y|^2
    assert len(calls) == 6 and r.status == "local" and all(r.satisfied.values())
    assert "master LP failed" in r.message
    gain = 1.0 - r.objective                                         # histogram-MSE = 1 - gain
    assert gain > float(P @ P) + 1e-3                                # well above the constant channel
    assert gain <= best + 1e-12 and 1.0 - r.certificate.bound >= best - 1e-12


def test_projection_takes_the_qp_where_nnls_would_be_too_large_or_late(monkeypatch):
    """Past NNLS_MAX_ENTRIES, or where NNLS would not end before the deadline, the projection is
    the working-set QP's (it stops at the deadline); NNLS is not called."""
    import cvxpy as cp

    from channelopt.methods import colgen

    G, h, centre = _vertex_rows(7, 12, 1.5)
    calls = []
    real = colgen._least_distance
    monkeypatch.setattr(colgen, "_least_distance", lambda *a: calls.append(1) or real(*a))
    mu = cp.Variable(12)
    cp.Problem(cp.Minimize(cp.sum_squares(mu - centre)), [G @ mu <= h]).solve(solver=cp.CLARABEL)
    x, _ = colgen._projection(G, h, centre, np.inf)
    assert calls == [1] and np.abs(x - mu.value).max() < 1e-6
    monkeypatch.setattr(colgen, "NNLS_MAX_ENTRIES", G.size)              # (rows x (d + 1) is past it)
    x, _ = colgen._projection(G, h, centre, np.inf)
    assert calls == [1] and np.abs(x - mu.value).max() < 1e-6
    monkeypatch.setattr(colgen, "NNLS_MAX_ENTRIES", 1 << 24)
    monkeypatch.setattr(colgen, "NNLS_S_PER_ENTRY", 1.0)                 # (would take hours)
    x, _ = colgen._projection(G, h, centre, time.perf_counter() + 60.0)
    assert calls == [1] and np.abs(x - mu.value).max() < 1e-6
