"""Hamming under LIP and ID-LDP on the most probable outputs (`methods.top_outputs`): the
reduced LP's channel and bound against the whole LP (the truth: closed forms off), its pricing
against every vertex of the LIP box and against scipy's LP over the pairwise ID-LDP polytope,
its bound for arbitrary multipliers, and sweeps against fresh solves point by point."""

import itertools
import math

import numpy as np
import pytest

import channelopt as co
from channelopt.methods import parametric
from channelopt.methods import top_outputs as T
from conftest import JumpingClock


def hamming(P, eps, **kw):
    return co.Problem(prior=P, privacy=[co.LIP(eps)], utility=co.Distortion("hamming"), **kw)


def lp(p):
    return co.solve(p, closed_forms=False)


def random_prior(rng, d):
    return rng.dirichlet(np.full(d, rng.choice([0.2, 1.0, 5.0])))


def vertices(P, eps):
    """Every vertex of {e^-eps P <= v <= min(e^eps P, 1), sum v = 1}, by brute force: one free
    coordinate, the others at a bound."""
    lo, hi = math.exp(-eps) * P, np.minimum(math.exp(eps) * P, 1.0)
    out = []
    for i in range(P.size):
        rest = [x for x in range(P.size) if x != i]
        for bits in itertools.product([0, 1], repeat=P.size - 1):
            v = np.empty(P.size)
            v[rest] = np.where(bits, hi[rest], lo[rest])
            v[i] = 1.0 - v[rest].sum()
            if lo[i] - 1e-12 <= v[i] <= hi[i] + 1e-12:
                out.append(v)
    return np.array(out)


@pytest.mark.parametrize("seed", range(4))
def test_equals_the_whole_lp_with_a_bound_that_certifies_it(seed):
    rng = np.random.default_rng(100 + seed)
    taken = 0
    for _ in range(15):
        d = int(rng.integers(3, 36))
        P, eps = random_prior(rng, d), float(np.exp(rng.uniform(np.log(0.05), np.log(5.0))))
        p = hamming(P, eps)
        r, ref = co.solve(p), lp(p)
        assert r.status == ref.status == "optimal"
        assert r.objective == pytest.approx(ref.objective, abs=1e-9), (P, eps)
        if r.method == "top-outputs":
            taken += 1
            assert r.certificate.method == "posterior-dual"
            assert r.certificate.bound <= ref.objective + 1e-12       # a valid bound ...
            assert r.certificate.gap <= 1e-9                          # ... that closes the gap
            assert co.audit(p, r.full_channel).ok
    assert taken >= 8


def test_pricing_is_the_maximum_over_every_vertex_of_the_lip_box():
    rng = np.random.default_rng(7)
    for _ in range(30):
        d = int(rng.integers(2, 9))
        P, eps = random_prior(rng, d), float(rng.uniform(0.05, 4.0))
        alpha = P * rng.normal(0.3, 0.5, d)
        V = vertices(P, eps)
        G = np.eye(d) - (alpha / P)[None, :]
        brute = (G @ V.T).max(axis=1)
        assert T._LIPShape(P, eps).terms(alpha, False) == pytest.approx(brute, abs=1e-12)
        extra = T._LIPShape(P, eps).terms(alpha, True)[-1]
        assert extra == pytest.approx((-(alpha / P) @ V.T).max(), abs=1e-12)


def test_the_bound_holds_for_any_row_multipliers():
    """1 - (sum(alpha) + max_y term_y) is below the least distortion whatever alpha is (weak
    duality), and reaches it at the reduced LP's multipliers."""
    rng = np.random.default_rng(8)
    for _ in range(20):
        d = int(rng.integers(2, 12))
        P, eps = random_prior(rng, d), float(rng.uniform(0.1, 3.0))
        best = lp(hamming(P, eps)).objective
        for scale in (0.0, 0.1, 1.0):
            alpha = P * (1 + scale * rng.normal(size=d))
            bound = 1.0 - (alpha.sum() + T._LIPShape(P, eps).terms(alpha, False).max())
            assert bound <= best + 1e-12


def test_inputs_outside_the_outputs_share_one_row_and_the_channel_passes_the_audit():
    P = np.random.default_rng(3).dirichlet(np.ones(40))
    p = hamming(P, 1.0)
    q, bound, info = T.top_outputs(p)
    S = np.flatnonzero(q.sum(axis=0) > 0)
    out = np.setdiff1d(np.arange(40), S)
    assert info["outputs"] < 10 and np.array_equal(S, np.sort(np.argsort(-P)[:S.size]))   # the most probable
    assert np.allclose(q[out], q[out[0]], atol=0)                                           # one merged row
    report = co.audit(p, q)
    assert report.ok and report.leakage["lip"] <= 1.0 + 1e-9
    assert p.utility.evaluate(p, q) == pytest.approx(lp(p).objective, abs=1e-10)


def test_extra_outputs_are_priced_too():
    P = np.random.default_rng(4).dirichlet(np.ones(12))
    p = hamming(P, 0.8, output_size=14)
    r, ref = co.solve(p), lp(p)
    assert r.method == "top-outputs" and r.objective == pytest.approx(ref.objective, abs=1e-10)
    assert r.full_channel.shape == (12, 14)


@pytest.mark.parametrize("case", ["latent secret", "two notions", "ldp", "mae"])
def test_not_applied_outside_its_setting(case):
    kw = {"prior": np.array([0.4, 0.3, 0.2, 0.06, 0.04]), "privacy": [co.LIP(0.5)], "utility": co.Distortion("hamming")}
    if case == "latent secret":
        kw["prior"] = np.array([0.3, 0.25, 0.15, 0.15, 0.15])
        kw["latent"] = {"prior": [0.5, 0.5], "conditional": [[0.4, 0.3, 0.1, 0.1, 0.1], [0.2, 0.2, 0.2, 0.2, 0.2]]}
    elif case == "two notions":
        kw["privacy"] = [co.LIP(0.5), co.LDP(2.0)]
    elif case == "ldp":
        kw["privacy"] = [co.LDP(0.5)]
    elif case == "mae":
        kw["utility"] = co.Distortion("mae")
    p = co.Problem(**kw)
    assert not T.applies(p)
    assert co.solve(p).method != "top-outputs"


def test_a_sweep_reuses_its_outputs_and_equals_fresh_lps_point_by_point():
    P = np.random.default_rng(5).dirichlet(np.ones(48))
    eps = np.r_[np.linspace(0.3, 3.0, 12), np.linspace(3.0, 0.3, 12)]      # up, then back down
    sw = co.sweep(hamming(P, 1.0), epsilon=eps)
    assert all(r.method == "top-outputs" and r.status == "optimal" for r in sw)
    for e, r in zip(eps, sw):
        assert r.objective == pytest.approx(lp(hamming(P, float(e))).objective, abs=1e-10)
    sizes = [r.certificate["outputs"] for r in sw]
    assert sizes[11] > sizes[0] and sizes[-1] < sizes[12]                   # S follows eps both ways


def test_map_under_lip_goes_through_the_reduced_lp_and_equals_vertex_enumeration():
    P = np.random.default_rng(9).dirichlet(np.ones(9))
    p = co.Problem(prior=P, privacy=[co.LIP(0.7)], utility=co.Bayes("map"))
    fast, slow = co.solve(p), co.solve(p, bayes_options={"posterior": "enumerate"})
    assert fast.certificate["algorithm"] == "map-hamming-top-outputs"
    assert fast.status == slow.status == "optimal"
    assert fast.objective == pytest.approx(slow.objective, abs=1e-10)


def id_problem(P, levels, rng, combine="min", **kw):
    return co.Problem(prior=P, privacy=[co.IDLDP(epsilons=rng.choice(levels, size=P.size), combine=combine)],
                      utility=co.Distortion("hamming"), **kw)


@pytest.mark.parametrize("combine", ["min", "avg", "max"])
def test_id_ldp_pricing_is_the_lp_maximum_over_the_pairwise_polytope(combine):
    """The ray-and-threshold pricing against scipy's LP over u with every pair constraint
    `u_x <= e^{r(eps_x, eps_x')} u_x'` written out, `P . u = 1`."""
    from scipy.optimize import linprog

    rng = np.random.default_rng(11)
    for _ in range(12):
        d, K = int(rng.integers(2, 9)), int(rng.integers(1, T.MAX_LEVELS + 1))
        P = random_prior(rng, d)
        p = id_problem(P, np.sort(rng.uniform(0.2, 2.5, K)), rng, combine)
        shape = T._shape(p)
        R = np.exp(p.privacy[0].pair_budgets())
        i, j = np.nonzero(~np.eye(d, dtype=bool))
        A = np.zeros((i.size, d))
        A[np.arange(i.size), i] = 1.0
        A[np.arange(i.size), j] = -R[i, j]
        alpha = P * rng.normal(0.4, 0.5, d)
        got = shape.terms(alpha, True)
        for y in range(d + 1):
            c = -alpha + (P * np.eye(d)[y] if y < d else 0.0)
            lp_max = -linprog(-c, A_ub=A, b_ub=np.zeros(i.size), A_eq=P[None, :], b_eq=[1.0], method="highs").fun
            assert got[y] == pytest.approx(lp_max, abs=1e-11), (d, K, y)


@pytest.mark.parametrize("seed", range(3))
def test_id_ldp_equals_the_whole_lp_with_a_bound_that_certifies_it(seed):
    rng = np.random.default_rng(200 + seed)
    taken = 0
    for _ in range(12):
        d, K = int(rng.integers(T.ID_MIN_D, T.ID_MIN_D + 40)), int(rng.integers(1, T.MAX_LEVELS + 1))
        P = random_prior(rng, d)
        p = id_problem(P, np.sort(rng.uniform(0.1, 3.0, K)), rng, str(rng.choice(["min", "avg", "max"])))
        r, ref = co.solve(p), lp(p)
        assert r.status == ref.status == "optimal"
        assert r.objective == pytest.approx(ref.objective, abs=1e-9)
        if r.method == "top-outputs":
            taken += 1
            assert r.certificate.bound <= ref.objective + 1e-12 and r.certificate.gap <= 1e-9
            assert co.audit(p, r.full_channel).ok
    assert taken >= 6


def test_a_minid_scale_sweep_equals_fresh_lps_point_by_point():
    from channelopt import bench

    d = T.ID_MIN_D
    P = np.random.default_rng(6).dirichlet(np.ones(d))
    base = co.Problem(prior=P, privacy=[co.IDLDP(epsilons=bench.instance("minid-ldp", d).budgets)],
                      utility=co.Distortion("hamming"))
    scale = np.linspace(0.3, 2.5, 10)
    sw = co.sweep(base, scale=scale)
    assert all(r.method == "top-outputs" and r.status == "optimal" for r in sw)
    for s, r in zip(scale, sw):
        fresh = co.Problem(prior=P, privacy=[co.IDLDP(epsilons=s * base.privacy[0].epsilons)], utility=base.utility)
        assert r.objective == pytest.approx(lp(fresh).objective, abs=1e-10)


def test_a_four_level_scale_sweep_equals_fresh_lps_point_by_point():
    """Four budget levels (the most the reduced LP takes) along a warm sweep, from ID_MIN_D inputs."""
    rng = np.random.default_rng(17)
    d = T.ID_MIN_D + 8
    P = rng.dirichlet(np.ones(d))
    e = np.array([0.5, 0.8, 1.2, 2.0])[rng.choice(4, size=d, p=[0.1, 0.1, 0.2, 0.6])]
    base = co.Problem(prior=P, privacy=[co.IDLDP(epsilons=e)], utility=co.Distortion("hamming"))
    scale = np.linspace(0.4, 2.2, 8)
    sw = co.sweep(base, scale=scale)
    assert all(r.method == "top-outputs" and r.status == "optimal" for r in sw)
    for s, r in zip(scale, sw):
        fresh = co.Problem(prior=P, privacy=[co.IDLDP(epsilons=s * e)], utility=base.utility)
        assert r.objective == pytest.approx(lp(fresh).objective, abs=1e-10)


def test_pair_budgets_on_levels_take_the_reduced_lp():
    """MinID given as its pair budgets (`pair_epsilons`, d = 128): the same levels, the same path
    and optimum as its per-input budgets."""
    from channelopt import bench

    d = T.ID_MIN_D
    P = np.random.default_rng(15).dirichlet(np.ones(d))
    e = bench.instance("minid-ldp", d).budgets
    R = np.minimum(e[:, None], e[None, :])
    pairs = co.Problem(prior=P, privacy=[co.IDLDP(pair_epsilons=R)], utility=co.Distortion("hamming"))
    r, ref = co.solve(pairs), lp(co.Problem(prior=P, privacy=[co.IDLDP(epsilons=e)], utility=co.Distortion("hamming")))
    assert r.method == "top-outputs" and r.status == "optimal"
    assert r.objective == pytest.approx(ref.objective, abs=1e-10)


def test_id_ldp_with_more_levels_unstructured_pair_budgets_or_few_inputs_takes_the_lp():
    rng = np.random.default_rng(12)
    d = T.ID_MIN_D
    P = random_prior(rng, d)
    five = id_problem(P, np.array([0.5, 1.0, 1.5, 2.0, 2.5]), rng)
    R = rng.uniform(0.5, 2.0, (d, d))
    pairs = co.Problem(prior=P, privacy=[co.IDLDP(pair_epsilons=(R + R.T) / 2)], utility=co.Distortion("hamming"))
    small = id_problem(P[:8] / P[:8].sum(), np.array([0.5, 1.0]), rng)
    for p in (five, pairs, small):
        assert not T.applies(p)
    assert co.solve(small).method == co.solve(five).method == "lp"


@pytest.mark.parametrize("rule", [np.minimum, np.maximum, lambda a, b: (a + b) / 2])
def test_the_level_rays_are_every_vertex_of_the_levels_polytope(rule):
    """Every LP optimum over {a_l <= b_l <= e^{r(l, l')} a_l', sum = 1} (scipy, random directions)
    is reached at one of the rays found. Budgets up to 10 nats: with 30, the reference LP's own
    optima break `a_l <= b_l` by 3e-8 (coefficients e^30) and overshoot the rays by 1e-8."""
    from scipy.optimize import linprog

    rng = np.random.default_rng(13)
    for _ in range(6):
        K = int(rng.integers(1, T.MAX_LEVELS + 1))
        levels = np.sort(rng.uniform(0.05, 10.0, K))
        R = np.exp(rule(levels[:, None], levels[None, :]))
        rays = T._level_rays(np.log(R))
        A = [np.r_[np.eye(K)[i], -np.eye(K)[i]] for i in range(K)]
        A += [np.r_[-R[i, j] * np.eye(K)[j], np.eye(K)[i]] for i in range(K) for j in range(K)]
        for _ in range(40):
            c = rng.normal(size=2 * K)
            best = -linprog(-c, A_ub=np.array(A), b_ub=np.zeros(len(A)), A_eq=np.ones((1, 2 * K)), b_eq=[1.0],
                            method="highs").fun
            assert (rays @ c).max() == pytest.approx(best, abs=1e-10)


@pytest.mark.parametrize("rule", [np.minimum, np.maximum, lambda a, b: (a + b) / 2])
def test_the_level_rays_are_the_vertices_qhull_finds(rule):
    """The rays against qhull's vertex enumeration of the same section `sum(a, b) = 1` (scipy's
    HalfspaceIntersection), both ways: every vertex is a ray and every ray a vertex."""
    from scipy.spatial import HalfspaceIntersection

    rng = np.random.default_rng(16)
    for _ in range(8):
        K = int(rng.integers(2, T.MAX_LEVELS + 1))       # (qhull needs a section of dimension 2 at least)
        RL = rule(*np.meshgrid(*[np.sort(rng.uniform(0.1, 4.0, K))] * 2, indexing="ij"))
        rays = T._level_rays(RL)
        F = [np.r_[np.eye(K)[i], -np.eye(K)[i]] for i in range(K)]
        F += [np.r_[-np.exp(RL[i, j]) * np.eye(K)[j], np.eye(K)[i]] for i in range(K) for j in range(K)]
        F = np.array(F)                                  # F v <= 0; v = (x, 1 - sum x)
        halfspaces = np.hstack([F[:, :-1] - F[:, -1:], F[:, -1:]])
        inner = np.r_[np.ones(K), np.full(K, (1.0 + np.exp(RL.min())) / 2)]
        inner /= inner.sum()
        hs = HalfspaceIntersection(halfspaces, inner[:-1])
        V = np.hstack([hs.intersections, 1.0 - hs.intersections.sum(axis=1, keepdims=True)])
        near = np.abs(V[:, None, :] - rays[None, :, :]).max(axis=2)
        assert near.min(axis=1).max() < 1e-9 and near.min(axis=0).max() < 1e-9, K


def test_a_prior_sweep_keeps_its_outputs_lean_and_equals_fresh_lps():
    """Each prior's top outputs differ: the union of every earlier point's S would soon pass 3/4 of
    the outputs and send every later point to the whole LP."""
    rng = np.random.default_rng(14)
    priors = rng.dirichlet(np.ones(64), size=12)
    sw = co.sweep(hamming(priors[0], 1.5), priors=priors)
    assert all(r.method == "top-outputs" and r.status == "optimal" for r in sw)
    for P, r in zip(priors, sw):
        assert r.objective == pytest.approx(lp(hamming(P, 1.5)).objective, abs=1e-10)


# ---- any other distortion (MAE, squared error, a matrix) under LIP, ID-LDP and LDP ----

def some_notion(rng, kind, d, eps):
    if kind == "lip":
        return co.LIP(eps)
    if kind == "ldp":
        return co.LDP(eps)
    return co.IDLDP(epsilons=eps * rng.choice([1.0, 1.6, 2.5], size=d))


def distortion(rng, P, notion, kind):
    d = P.size
    if kind == "matrix":                        # a user matrix, with more outputs than inputs
        m = d + int(rng.integers(1, 9))
        return co.Problem(prior=P, privacy=[notion], output_size=m,
                          utility=co.Distortion("distortion", matrix=rng.uniform(0.0, 1.0, (d, m))))
    return co.Problem(prior=P, privacy=[notion], values=np.sort(rng.normal(0, 3, d)), utility=co.Distortion(kind))


@pytest.mark.parametrize("seed", range(3))
def test_any_distortion_equals_the_whole_lp_with_a_bound_that_certifies_it(seed, monkeypatch):
    """MAE, squared error and random matrices under LIP, MinID-LDP and LDP (which `solve` sends
    here only with `LDP_ANY`): the whole LP's optimum, a bound below it that closes the gap, and
    the audit's leakage within the budget."""
    monkeypatch.setattr(T, "LDP_ANY", True)
    rng = np.random.default_rng(300 + seed)
    taken = 0
    for _ in range(8):
        d = int(rng.integers(46, 72))
        P, eps = random_prior(rng, d), float(rng.uniform(0.3, 3.0))
        n = str(rng.choice(["lip", "ldp", "minid"]))
        p = distortion(rng, P, some_notion(rng, n, d, eps), str(rng.choice(["mae", "squared", "matrix"])))
        assert T.applies(p)
        r, ref = co.solve(p), lp(p)
        assert r.status == ref.status == "optimal"
        assert r.objective == pytest.approx(ref.objective, rel=1e-9, abs=1e-12), (n, eps)
        if r.method == "top-outputs":
            taken += 1
            assert r.certificate.bound <= ref.objective * (1 + 1e-12) + 1e-12       # a valid bound ...
            assert r.certificate.gap <= 1e-9 * max(1.0, abs(ref.objective))      # ... that closes the gap
            assert co.audit(p, r.full_channel).ok
            assert r.certificate["outputs"] < p.m / 2
    assert taken >= 6


@pytest.mark.parametrize("kind", ["lip", "ldp", "minid"])
def test_any_distortion_pricing_is_the_maximum_over_every_admissible_posterior(kind):
    """`support` of arbitrary rows g: the largest g . post over the admissible posteriors, against
    scipy's LP over the posterior ratios u with every constraint written out (LIP: the box
    e^-eps <= u <= e^eps; LDP and ID-LDP: every pair u_x <= e^{r(x, x')} u_x'), P . u = 1; and the
    posteriors returned reach it."""
    from scipy.optimize import linprog

    rng = np.random.default_rng(15)
    for _ in range(15):
        d = int(rng.integers(2, 10))
        P, eps = random_prior(rng, d), float(rng.uniform(0.1, 3.0))
        p = co.Problem(prior=P, privacy=[some_notion(rng, kind, d, eps)], utility=co.Distortion("mae"))
        if kind == "minid" and p.privacy[0].levels is None:
            continue
        shape = T._shape(p)
        G = rng.normal(size=(6, d)) / P[None, :]
        got, V = shape.support(G)
        assert np.allclose(V.sum(axis=1), 1.0) and np.allclose(np.einsum("ij,ij->i", G, V), got, atol=1e-9)
        i, j = np.nonzero(~np.eye(d, dtype=bool))
        if kind == "lip":
            A, b, bounds = None, None, [(math.exp(-eps), math.exp(eps))] * d
        else:
            R = np.exp(p.privacy[0].pair_budgets()) if kind == "minid" else np.full((d, d), math.exp(eps))
            A = np.zeros((i.size, d))
            A[np.arange(i.size), i] = 1.0
            A[np.arange(i.size), j] = -R[i, j]
            b, bounds = np.zeros(i.size), [(0, None)] * d
        for g, value in zip(G, got):
            best = -linprog(-(P * g), A_ub=A, b_ub=b, A_eq=P[None, :], b_eq=[1.0], bounds=bounds, method="highs",
                            options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}).fun
            # to `priced`'s float allowance (a prior entry of 5e-10 puts 5e8 into g)
            assert value == pytest.approx(best, abs=1e-9 * max(1.0, abs(best)) + 8 * d * np.finfo(float).eps * np.abs(g).max())


@pytest.mark.parametrize("kind", ["lip", "ldp", "minid"])
def test_any_distortion_bound_holds_for_any_row_multipliers(kind):
    """`priced`'s bound is below the least expected distortion whatever beta is (weak duality)."""
    rng = np.random.default_rng(16)
    for _ in range(12):
        d = int(rng.integers(3, 10))
        P, eps = random_prior(rng, d), float(rng.uniform(0.2, 3.0))
        p = distortion(rng, P, some_notion(rng, kind, d, eps), str(rng.choice(["mae", "matrix"])))
        if kind == "minid" and p.privacy[0].levels is None:
            continue
        best = lp(p).objective
        D = p.utility.matrix_for(p)
        for scale in (0.0, 0.3, 1.0):
            beta = P * (D.min(axis=1) + scale * rng.normal(size=d))
            assert T.priced(T._shape(p), D, beta)[0] <= best + 1e-12


def test_an_mae_sweep_takes_the_reduced_lp_and_equals_fresh_lps_point_by_point(monkeypatch):
    """Along a LIP MAE sweep (up and down in eps) the reduced LP's model is the previous point's,
    its budget changed in place (`Warm.model`), not built again at each point: one model for the
    whole sweep (16 when each point built its own; 3 when a point whose outputs outgrew those used
    built a lean one instead of dropping the unused ones), and every point equals a fresh whole LP."""
    built = []
    init = T._OutputsLP.__init__
    monkeypatch.setattr(T._OutputsLP, "__init__", lambda self, *a: (built.append(1), init(self, *a))[1])
    rng = np.random.default_rng(17)
    P = rng.dirichlet(np.ones(64))
    base = co.Problem(prior=P, privacy=[co.LIP(1.0)], utility=co.Distortion("mae"))
    eps = np.r_[np.linspace(0.3, 2.0, 8), np.linspace(2.0, 0.3, 8)]
    sw = co.sweep(base, epsilon=eps)
    assert all(r.method == "top-outputs" and r.status == "optimal" for r in sw)
    assert len(built) == 1
    for e, r in zip(eps, sw):
        assert r.objective == pytest.approx(lp(co.Problem(prior=P, privacy=[co.LIP(float(e))],
                                                           utility=co.Distortion("mae"))).objective, rel=1e-10)


@pytest.mark.parametrize("case", ["minimax priors", "small", "ldp"])
def test_any_distortion_not_applied_outside_its_setting(case):
    rng = np.random.default_rng(18)
    d = 48
    P = random_prior(rng, d)
    kw = {"prior": P, "privacy": [co.LIP(1.0)], "utility": co.Distortion("mae")}
    if case == "minimax priors":
        kw["utility"] = co.Distortion("mae", priors=rng.dirichlet(np.ones(d), size=2))
    elif case == "small":
        kw["prior"] = P[:20] / P[:20].sum()
    else:
        kw["privacy"] = [co.LDP(1.0)]
    p = co.Problem(**kw)
    assert not T.applies(p)
    assert co.solve(p).method == "lp"


def test_a_minid_mae_sweep_keeps_the_warm_whole_lp_and_a_fresh_solve_takes_the_reduced_one():
    rng = np.random.default_rng(19)
    d = 48
    P = random_prior(rng, d)
    base = co.Problem(prior=P, privacy=[co.IDLDP(epsilons=rng.choice([1.0, 1.6, 2.5], size=d))],
                      utility=co.Distortion("mae"))
    scales = [0.5, 0.8, 1.2]
    sw = co.sweep(base, scale=scales)
    assert [r.method for r in sw] == ["lp"] * 3
    for s, r in zip(scales, sw):
        p = co.Problem(prior=P, privacy=[co.IDLDP(epsilons=s * base.privacy[0].epsilons)], utility=co.Distortion("mae"))
        fresh = co.solve(p)
        assert fresh.method == "top-outputs" and r.objective == pytest.approx(fresh.objective, rel=1e-10)


@pytest.mark.parametrize("seed", range(3))
def test_the_eps_free_lip_blocks_solve_the_program_lp_build_writes(seed, monkeypatch):
    """`_OutputsLP` on the same outputs S, in eps-free form (`_LIPBlock`) and block by block as
    `lp.build` writes it (forced by MAX_TOP = 0): the same optimum, a channel of the problem that
    passes the audit, and each bound from its multipliers below the whole LP's optimum; then the
    eps-free model moved to other budgets in place (`set_budget`) against a model built there."""
    rng = np.random.default_rng(500 + seed)
    d = int(rng.integers(20, 40))
    P = random_prior(rng, d)
    p = distortion(rng, P, co.LIP(float(rng.uniform(0.3, 2.5))), str(rng.choice(["mae", "squared", "matrix"])))
    D = p.utility.matrix_for(p)
    S = np.sort(rng.choice(p.m, size=min(p.m, 12), replace=False))
    shape = T._shape(p)

    def solved(problem, blocks, eps_free):
        if not eps_free:
            monkeypatch.setattr(parametric, "MAX_TOP", 0.0)
        model = T._OutputsLP(problem, D)
        monkeypatch.undo()
        assert model.eps_free == eps_free
        for part in blocks:
            model.add(part)
        return model, model.solve(np.inf)

    blocks = np.array_split(S, 3)
    held, (q, beta, objective) = solved(p, blocks, True)
    _, (q_ref, _, objective_ref) = solved(p, blocks, False)
    assert objective == pytest.approx(objective_ref, rel=1e-9, abs=1e-12)
    assert q[:, np.setdiff1d(np.arange(p.m), S)].max() == 0.0
    assert p.utility.evaluate(p, q) == pytest.approx(objective, rel=1e-9, abs=1e-12)
    assert co.audit(p, q / q.sum(axis=1, keepdims=True)).ok
    assert T.priced(shape, D, beta)[0] <= lp(p).objective + 1e-12
    for eps in (0.2, 1.7, 3.1):
        moved = co.Problem(prior=P, privacy=[co.LIP(eps)], values=p.values, output_size=p.m, utility=p.utility)
        held.set_budget(eps)
        got, _, got_objective = held.solve(np.inf)
        _, (_, _, fresh_objective) = solved(moved, blocks, True)
        assert got_objective == pytest.approx(fresh_objective, rel=1e-9, abs=1e-12), eps
        assert moved.utility.evaluate(moved, got) == pytest.approx(got_objective, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("d, kind, budgets", [(64, "mae", (2.0, 1.5, 0.5)), (96, "mae", (2.0, 1.5, 0.5)),
                                              (96, "squared", (1.5, 1.0, 0.4))])
def test_dropping_unused_outputs_keeps_the_held_basis_optimal(d, kind, budgets):
    """After a sweep down from a large budget most held outputs are unused. `drop` deletes the ones
    whose columns and rows hold as many basic variables as they have rows: the basis HiGHS is
    given back is optimal for the smaller model as it is (a rerun makes no pivot and keeps the
    objective), the outputs in use all stay, and a model built afresh on the outputs kept has the
    same optimum."""
    rng = np.random.default_rng(d)
    P = rng.dirichlet(np.ones(d))
    warm = T.Warm()
    for eps in budgets:
        p = co.Problem(prior=P, privacy=[co.LIP(eps)], utility=co.Distortion(kind))
        assert T.top_outputs(p, warm) is not None
    model, h = warm.model, warm.model.h
    before = h.getInfo().objective_function_value
    unused = np.setdiff1d(model.outputs(), warm.used)
    gone = model.drop(unused)
    assert gone.size > 0 and np.isin(gone, unused).all()
    kept = model.outputs()
    assert np.isin(warm.used, kept).all() and kept.size + gone.size == unused.size + warm.used.size
    assert h.getNumCol() == 1 + kept.size * (d + 1) and h.getNumRow() == d + 1 + kept.size * (d + 1)
    assert h.getBasis().valid
    h.run()
    assert h.getInfo().simplex_iteration_count == 0
    assert h.getInfo().objective_function_value == pytest.approx(before, rel=1e-12, abs=1e-15)
    q, _, objective = model.solve(np.inf)
    assert np.all(q[:, np.setdiff1d(np.arange(d), kept)] == 0)
    fresh = T._OutputsLP(p, p.utility.matrix_for(p))
    fresh.add(kept)
    assert fresh.solve(np.inf)[2] == pytest.approx(objective, rel=1e-10)
    assert objective == pytest.approx(lp(p).objective, rel=1e-10)


@pytest.mark.parametrize("d, kind, seed", [(64, "squared", 1), (96, "squared", 0), (96, "mae", 0), (128, "mae", 1)])
def test_a_fresh_solve_deletes_held_unused_outputs_once_each_and_keeps_the_optimum(d, kind, seed, monkeypatch):
    """A fresh solve on the top outputs (LIP, eps-free) that holds more than `DROP_HELD` times the
    outputs in use deletes unused ones between its rounds, never the same output twice, and still
    ends certified at the whole LP's optimum with an audited channel."""
    deleted = []
    drop = T._OutputsLP.drop

    def counted(self, outputs):
        gone = drop(self, outputs)
        deleted.extend(gone.tolist())
        return gone

    monkeypatch.setattr(T._OutputsLP, "drop", counted)
    P = np.random.default_rng([d, seed]).dirichlet(np.ones(d))
    p = co.Problem(prior=P, privacy=[co.LIP(1.0)], utility=co.Distortion(kind))
    r = co.solve(p)
    assert r.status == "optimal" and r.method == "top-outputs"
    assert len(deleted) > 0 and len(set(deleted)) == len(deleted)
    assert co.audit(p, r.full_channel).ok
    assert r.objective == pytest.approx(lp(p).objective, rel=1e-10)


def test_the_held_model_is_not_taken_by_another_prior_distortion_or_a_budget_past_max_top():
    """`takes` declines another prior or distortion, and a budget past `MAX_TOP` builds the model
    as `lp.build` writes it; along a sweep over priors and one across MAX_TOP every point still
    equals a fresh whole LP."""
    rng = np.random.default_rng(22)
    P = rng.dirichlet(np.ones(48))
    p = co.Problem(prior=P, privacy=[co.LIP(1.0)], utility=co.Distortion("mae"))
    D = p.utility.matrix_for(p)
    model = T._OutputsLP(p, D)
    assert model.takes(p, D)
    other = co.Problem(prior=rng.dirichlet(np.ones(48)), privacy=[co.LIP(1.0)], utility=co.Distortion("mae"))
    squared = co.Problem(prior=P, privacy=[co.LIP(1.0)], utility=co.Distortion("squared"))
    past = co.Problem(prior=P, privacy=[co.LIP(8.5)], utility=co.Distortion("mae"))
    assert not model.takes(other, D)
    assert not model.takes(squared, squared.utility.matrix_for(squared))
    assert not model.takes(past, D) and not T._OutputsLP(past, D).eps_free
    priors = [P, other.prior, rng.dirichlet(np.ones(48)), P]
    for r, prior in zip(co.sweep(p, priors=priors), priors):
        assert r.method == "top-outputs"
        assert r.objective == pytest.approx(lp(co.Problem(prior=prior, privacy=[co.LIP(1.0)],
                                                           utility=co.Distortion("mae"))).objective, rel=1e-10)
    eps = [7.6, 7.9, 8.2, 8.5, 7.8]
    for r, e in zip(co.sweep(p, epsilon=eps), eps):
        assert r.status == "optimal"
        assert r.objective == pytest.approx(lp(co.Problem(prior=P, privacy=[co.LIP(e)],
                                                           utility=co.Distortion("mae"))).objective, rel=1e-9, abs=1e-12)


def test_a_sweep_hands_larger_budgets_to_the_whole_lp_once_the_outputs_outgrow_their_share(monkeypatch):
    """Squared error under LIP, eps rising to 3: once S outgrows MAX_SHARE of the outputs, every
    later point with a budget at least as large takes the whole LP at once (`Warm.outgrown`: no
    reduced LP solved at them), and a smaller budget after them tries the reduced LP again; every
    point equals a fresh whole LP."""
    solved_at = []
    solve = T._OutputsLP.solve
    monkeypatch.setattr(T._OutputsLP, "solve", lambda self, deadline: (solved_at.append(self.eps), solve(self, deadline))[1])
    rng = np.random.default_rng(23)
    P = rng.dirichlet(np.ones(64))
    base = co.Problem(prior=P, privacy=[co.LIP(1.0)], utility=co.Distortion("squared"))
    eps = np.r_[np.linspace(1.5, 3.0, 12), 0.5]
    sw = co.sweep(base, epsilon=eps)
    methods = [r.method for r in sw]
    first = methods.index("lp")
    assert methods[:first] == ["top-outputs"] * first and first < len(eps) - 2
    assert all(m == "lp" for m, e in zip(methods[first:-1], eps[first:-1]) if e >= eps[first])
    assert methods[-1] == "top-outputs"
    assert max(solved_at[:-1]) <= eps[first] and solved_at[-1] == 0.5
    for e, r in zip(eps, sw):
        assert r.status == "optimal"
        assert r.objective == pytest.approx(lp(co.Problem(prior=P, privacy=[co.LIP(float(e))],
                                                           utility=co.Distortion("squared"))).objective, rel=1e-10)


def test_a_point_whose_reduced_lp_fails_leaves_no_model_to_the_next():
    """A point that runs out of time in the reduced LP (a deadline already past) returns None and
    drops the held model, so the next point builds its own and still equals the whole LP."""
    rng = np.random.default_rng(24)
    P = rng.dirichlet(np.ones(48))
    warm = T.Warm()

    def at(eps):
        return co.Problem(prior=P, privacy=[co.LIP(eps)], utility=co.Distortion("mae"))

    assert T.top_outputs(at(1.0), warm) is not None and warm.model is not None
    assert T.top_outputs(at(1.2), warm, time_limit=1e-12) is None and warm.model is None
    q, bound, _ = T.top_outputs(at(1.4), warm)
    assert warm.model is not None
    best = lp(at(1.4)).objective
    assert at(1.4).utility.evaluate(at(1.4), q) == pytest.approx(best, rel=1e-9) and bound <= best + 1e-12


@pytest.mark.parametrize("kind, notion", [("mae", "lip"), ("squared", "lip"), ("mae", "minid"), ("hamming", "minid")])
def test_out_of_time_after_a_round_returns_that_rounds_channel_and_a_bound_on_the_whole_problem(kind, notion,
                                                                                               monkeypatch):
    """A reduced LP stopped by the time limit after its first round hands back that round's
    channel (audited here: it is a channel of the whole problem) and its exact-pricing bound,
    checked against the whole LP's optimum (closed forms off: another path), not None; along a
    sweep (a `Warm` given) it still gives up. (The Hamming case needs a second round: MinID-LDP on
    budgets 2 and 4, which takes three.)"""
    d = 96
    P = np.random.default_rng(1).dirichlet(np.ones(d))
    if notion == "lip":
        privacy = co.LIP(1.0)
    else:
        privacy = co.IDLDP(epsilons=np.where(np.arange(d) % 2 == 0, 2.0, 4.0) if kind == "hamming"
                           else np.where(np.arange(d) < d // 2, 1.0, 2.0))
    p = co.Problem(prior=P, privacy=[privacy], utility=co.Distortion(kind))
    assert T.applies(p) and T.top_outputs(p, None)[2]["rounds"] > 1
    best = lp(p)
    assert best.status == "optimal"
    monkeypatch.setattr(T, "time", JumpingClock())
    found = T.top_outputs(p, None, time_limit=10.0)
    assert found is not None
    q, bound, details = found
    assert details["stopped"] == "time_limit" and details["rounds"] == 1
    assert co.audit(p, q).ok
    objective = p.utility.evaluate(p, q)
    tol = 1e-9 * max(1.0, abs(best.objective))
    assert bound <= best.objective + tol <= objective + 2 * tol
    assert objective > best.objective + tol or bound < best.objective - tol      # not a certificate after one round
    monkeypatch.setattr(T, "time", JumpingClock())
    assert T.top_outputs(p, T.Warm(), time_limit=10.0) is None
