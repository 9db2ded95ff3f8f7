"""The shape bound on separable Bayes gains under LDP (channelopt.methods.relaxed), against the
vertex-enumeration LP, brute force over every vertex, and the uniform prior's orbit optimum."""

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import linprog

import channelopt as co
from channelopt.methods.relaxed import _Intervals, shape_bound

F = {"histogram-mse": lambda v: v * v,
     "mutual-information": lambda v: np.where(v > 0, v * np.log(np.where(v > 0, v, 1.0)), 0.0)}


def ldp_vertices(P, eps):
    """P * (1 + (e^eps - 1) 1_S) / normalization for every subset S (from the definition)."""
    S = np.array(list(itertools.product((0, 1), repeat=P.size)), float)
    V = P * (1 + math.expm1(eps) * S)
    return V / V.sum(axis=1, keepdims=True)


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


def test_a_stopped_ldp_histogram_solve_reports_the_shape_bound():
    """d = 256 stopped after 3 s: the bound comes from the shape bound, is below the objective of
    randomized response's, and leaves a gap far under the pricing's own (> 0.05)."""
    P = np.random.default_rng(1).dirichlet(np.ones(256))
    p = co.Problem(prior=P, privacy=[co.LDP(1.0)], utility=co.Bayes("histogram-mse"))
    r = co.solve(p, time_limit=3)
    assert r.status == "local"
    assert r.certificate["bound"] == "shape"
    assert r.certificate.bound <= r.objective
    assert r.certificate.gap < 1e-3
    e = math.exp(1.0)
    grr = np.full((256, 256), 1.0 / (e + 255)) + np.eye(256) * (e - 1) / (e + 255)   # written by hand
    assert p.utility.evaluate(p, grr) >= r.certificate.bound - 1e-12
