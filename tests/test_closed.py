"""Closed forms first: taken only with a bound that certifies them, equal to the LP where taken,
never taken where their condition fails. The LP (solver named, closed forms off) is the truth."""

import dataclasses
import importlib
import math
from pathlib import Path

import numpy as np
import pytest

import channelopt as co
from channelopt.closed_forms import rr_lip_hamming, subset_rr
from channelopt.io import load_problem

PROBLEMS = Path(__file__).parent.parent / "problems"


def hamming(P, notion, **kw):
    return co.Problem(prior=P, privacy=[notion], utility=co.Distortion("hamming"), **kw)


def lp(p):
    return co.solve(p, closed_forms=False)


def random_prior(rng, d):
    return rng.dirichlet(np.full(d, rng.choice([0.2, 1.0, 5.0])))


@pytest.mark.parametrize("seed", range(4))
def test_ldp_hamming_takes_subset_rr_and_it_equals_the_lp_for_any_prior(seed):
    rng = np.random.default_rng(seed)
    for _ in range(10):
        d = int(rng.integers(2, 40))
        P, eps = random_prior(rng, d), float(np.exp(rng.uniform(np.log(0.05), np.log(6.0))))
        p = hamming(P, co.LDP(eps))
        r, ref = co.solve(p), lp(p)
        assert (r.method, r.solver, r.status) == ("closed-form", "subset-rr", "optimal")
        assert ref.method == "lp" and ref.status == "optimal"
        assert r.objective == pytest.approx(ref.objective, abs=1e-9)
        assert co.audit(p, r.channel).ok and r.leakage["ldp"] <= eps * (1 + 1e-9)
        assert r.certificate["lower_bound"] <= ref.objective + 1e-9       # the bound is valid
        assert r.certificate.gap <= 1e-9


def test_subset_rr_by_hand_uniform_prior_is_grr_and_a_dominant_symbol_is_k1():
    r = co.solve(load_problem(PROBLEMS / "ldp_uniform_grr.toml"))          # problem file's expected value
    assert r.method == "closed-form" and r.certificate["k"] == 4
    assert r.objective == pytest.approx(3 / (math.e + 3), abs=1e-15)
    # P = (0.9, 0.05, 0.05), eps = 1: k = 1 gives 0.9 accuracy, k = 2 gives e 0.95/(e+1) = 0.6945,
    # k = 3 gives e/(e+2) = 0.5761: always report symbol 0, error 0.1
    cf = subset_rr([0.9, 0.05, 0.05], 1.0)
    assert cf.details["k"] == 1 and np.allclose(cf.channel[:, 0], 1.0) and cf.loss_bound == pytest.approx(0.1)


@pytest.mark.parametrize("seed", range(3))
def test_lip_hamming_takes_rr_lip_exactly_where_it_is_feasible(seed):
    rng = np.random.default_rng(10 + seed)
    taken = skipped = 0
    for _ in range(25):
        d = int(rng.integers(2, 8))
        P, eps = random_prior(rng, d), float(rng.uniform(0.3, 3.0))
        p = hamming(P, co.LIP(eps))
        r, ref = co.solve(p), lp(p)
        feasible = P.min() >= 1 / (math.exp(eps) + 1)                       # RR-LIP's condition (by hand)
        assert (r.method == "closed-form") == feasible, (P, eps)
        assert r.objective == pytest.approx(ref.objective, abs=1e-9)
        taken, skipped = taken + feasible, skipped + (not feasible)
    assert taken and skipped


def test_rr_lip_is_declined_only_where_the_audit_rejects_it():
    """`LIP.closed_form` skips RR-LIP from its largest lift alone, with a margin of twice the
    audit's tolerance: at budgets near the feasibility boundary P_min = 1 / (e^eps + 1), on either
    side, it never declines a channel the audit accepts (the audit stays the gate), and it declines
    every budget more than 1e-6 (relative) below the boundary."""
    from channelopt.closed_forms import rr_lip

    rng = np.random.default_rng(21)
    declined = kept = 0
    for _ in range(400):
        P = random_prior(rng, int(rng.integers(2, 8)))
        boundary = math.log(1 / P.min() - 1)
        if boundary <= 0:
            continue
        eps = boundary * (1 + float(rng.choice([-1e-3, -1e-6, -1e-7, -3e-8, -1e-8, 0.0, 1e-8, 1e-6])))
        p = hamming(P, co.LIP(eps))
        audit_ok = co.audit(p, rr_lip(P, eps), with_measures=False).ok
        offered = co.LIP(eps).closed_form(p) is not None
        assert offered or not audit_ok, (P, eps)
        if eps < boundary * (1 - 1e-6):
            assert not offered, (P, eps)
        declined, kept = declined + (not offered), kept + audit_ok
    assert declined > 20 and kept > 20


def test_the_hamming_bounds_are_valid_even_where_the_form_is_not_optimal():
    rng = np.random.default_rng(5)
    for _ in range(20):
        P, eps = random_prior(rng, int(rng.integers(2, 7))), float(rng.uniform(0.1, 3.0))
        assert rr_lip_hamming(P, eps).loss_bound <= lp(hamming(P, co.LIP(eps))).objective + 1e-9


def test_rr_lip_bound_in_linear_time_equals_the_dense_multipliers():
    """`rr_lip_hamming` finds each row's largest reduced cost in O(d) where no multiplier is
    clipped (off the diagonal C[x, y] = P_x kappa_y); against the d x m reduced costs written from
    its docstring's multipliers (lam[y, x] = max(alpha_x + P_x Lambda_y / e^eps, 0)) and the
    Lagrangian bound taken row by row, on priors with zeros, extra outputs and budgets where
    multipliers clip (the dense path then runs)."""
    r = np.random.default_rng(8)
    for _ in range(300):
        d = int(r.integers(2, 30))
        P = r.dirichlet(np.ones(d) * float(r.choice([0.2, 1.0, 50.0])))
        if r.random() < 0.2:
            P[r.integers(d)] = 0.0
            P /= P.sum()
        eps = float(r.choice([r.uniform(0.01, 1), r.uniform(1, 8), r.uniform(8, 30)]))
        m = d if r.random() < 0.7 else d + int(r.integers(1, 4))
        e = math.exp(eps)
        A = 1.0 - (1.0 - P @ P) / e
        Lam = (A - P) / (1.0 - 1.0 / e)
        alpha = P * (1.0 - Lam / e)
        C = np.full((d, m), 0.0) - alpha[:, None]
        for y in range(d):
            lam = [max(alpha[x] + P[x] * Lam[y] / e, 0.0) if x != y and P[x] > 0 else 0.0 for x in range(d)]
            for x in range(d):
                C[x, y] += -P[x] * sum(lam) / e + lam[x] + (P[x] if x == y else 0.0)
        dense = 1.0 - (alpha.sum() + np.maximum(C.max(axis=1), 0.0).sum())
        assert rr_lip_hamming(P, eps, m).loss_bound == pytest.approx(dense, rel=1e-13, abs=1e-15)


def test_hamming_evaluate_and_floor_without_the_matrix_equal_the_matrix_forms():
    """Hamming's `evaluate`, `floor` and best response never write 1 - I; against the distortion
    matrix itself (`kind = 'distortion'`) with fewer and more outputs than inputs."""
    from channelopt.methods.closed import best_response

    r = np.random.default_rng(4)
    for d, m in ((5, 5), (6, 3), (3, 7)):
        P = r.dirichlet(np.ones(d))
        q = r.dirichlet(np.ones(m), size=d)
        D = np.ones((d, m))
        D[np.arange(min(d, m)), np.arange(min(d, m))] = 0.0
        ham = co.Problem(prior=P, privacy=[co.LIP(1.0)], utility=co.Distortion("hamming"), output_size=m)
        mat = co.Problem(prior=P, privacy=[co.LIP(1.0)], utility=co.Distortion("distortion", matrix=D), output_size=m)
        assert ham.utility.evaluate(ham, q) == mat.utility.evaluate(mat, q)            # the same sums
        near = np.eye(d, m) * (1 - 1e-13) + (1 - np.eye(d, m)) * 1e-13 / max(m - 1, 1)
        near /= near.sum(axis=1, keepdims=True)      # q[x, x] near 1: no cancellation either
        assert ham.utility.evaluate(ham, near) == mat.utility.evaluate(mat, near)
        assert ham.utility.floor(ham) == mat.utility.floor(mat)
        assert np.array_equal(best_response(ham)[0], best_response(mat)[0])


def test_direct_release_is_returned_when_every_notion_allows_it():
    p = load_problem(PROBLEMS / "pufferfish_direct_release.toml")
    r = co.solve(p)
    assert (r.method, r.solver, r.objective) == ("closed-form", "best-response", 0.0)
    assert np.array_equal(r.channel, np.eye(3)) and r.certificate.method == "distortion-minimum"
    assert lp(p).objective == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("case", ["mae utility", "two notions", "latent secret", "prior set", "named solver",
                                  "fewer outputs", "bayes utility"])
def test_not_taken_where_the_condition_fails(case):
    P = np.array([0.4, 0.3, 0.2, 0.1])
    kw = {"prior": P, "privacy": [co.LDP(1.0)], "utility": co.Distortion("hamming")}
    options = {}
    if case == "mae utility":
        kw["utility"] = co.Distortion("mae")
    elif case == "two notions":
        kw["privacy"] = [co.LDP(1.0), co.LIP(0.8)]
    elif case == "latent secret":
        kw["privacy"] = [co.LIP(0.3)]           # direct release leaks more than 0.3 here
        kw["latent"] = {"prior": [0.5, 0.5], "conditional": [[0.5, 0.3, 0.1, 0.1], [0.3, 0.3, 0.3, 0.1]]}
    elif case == "prior set":
        kw["utility"] = co.Distortion("hamming", priors=[P, P[::-1]])
    elif case == "named solver":
        options["solver"] = "HIGHS"
    elif case == "fewer outputs":
        kw["output_size"] = 3
    else:
        kw["utility"] = co.Bayes("map")
    r = co.solve(co.Problem(**kw), **options)
    assert r.method != "closed-form" and r.status == "optimal"


def test_an_eps_sweep_takes_the_closed_form_at_every_point_and_matches_fresh_lps():
    P = np.random.default_rng(3).dirichlet(np.ones(12))
    eps = np.linspace(0.1, 4.0, 9)
    sw = co.sweep(hamming(P, co.LDP(1.0)), epsilon=eps)
    for e, r in zip(eps, sw):
        assert r.method == "closed-form"
        assert r.objective == pytest.approx(lp(hamming(P, co.LDP(float(e)))).objective, abs=1e-9)


def test_a_sweep_keeps_the_best_responses_leakage_and_judges_it_at_each_budget():
    """LIP about a latent secret, MAE: direct release leaks a finite L about G, so it is the
    optimum exactly from eps = L on. Along the sweep its leakage is computed once; each point's
    budget must still decide, as fresh solves do, on both sides of L."""
    latent = {"prior": [0.5, 0.3, 0.2], "conditional": [[0.5, 0.3, 0.1, 0.1], [0.2, 0.3, 0.3, 0.2],
                                                         [0.1, 0.1, 0.3, 0.5]]}
    base = co.Problem(prior=[0.33, 0.26, 0.2, 0.21], latent=latent, privacy=[co.LIP(1.0)],
                      utility=co.Distortion("mae"))
    L = co.audit(base, np.eye(4)).leakage["lip"]
    assert 0 < L < np.inf
    eps = L * np.array([0.5, 0.9, 1.0 - 1e-6, 1.0 + 1e-6, 1.5, 0.7, 3.0])
    sw = co.sweep(base, epsilon=eps)
    for e, r in zip(eps, sw):
        fresh = co.solve(dataclasses.replace(base, privacy=(co.LIP(float(e)),)))
        assert r.ok and r.status == "optimal"
        assert (r.solver == "best-response") == (fresh.solver == "best-response") == (e >= L * (1 + 1e-7))
        assert r.objective == pytest.approx(fresh.objective, abs=1e-9)


def test_verify_judges_the_subset_rr_claim_against_the_lp():
    from channelopt.theorems import get, verify

    rep = verify.run([get("ksr-subset-rr")], quick=True, progress=False)[0]
    assert not rep.errors and rep.verdict == "holds" and len(rep.outcomes) >= 50


def test_a_minid_scale_sweep_audits_its_infinitely_leaking_best_response_once(monkeypatch):
    """MinID-LDP, MAE: the best response (each input its own output) leaks infinitely under ID-LDP
    at any budgets (`IDLDP.infinite_stays`). Along a scale sweep it is audited at the first point
    only; each later point's report is the one `audit` gives there, and every point equals a fresh
    solve. A best response that leaks nothing (an output best for every input) is not taken for
    one that fails: it is returned at every scale."""
    closed_module = importlib.import_module("channelopt.methods.closed")
    audited = []
    real = closed_module.audit
    monkeypatch.setattr(closed_module, "audit", lambda p, q, **kw: (audited.append(q), real(p, q, **kw))[1])
    rng = np.random.default_rng(5)
    d = 24
    P = rng.dirichlet(np.ones(d))
    E = np.where(rng.random(d) < 0.3, 0.6, 1.4)
    base = co.Problem(prior=P, privacy=[co.IDLDP(epsilons=E)], utility=co.Distortion("mae"))
    scales = [0.5, 1.0, 2.0, 0.7, 3.0]
    sw = co.sweep(base, scale=scales)
    brs = [q for q in audited if np.array_equal(q, closed_module.best_response(base)[0])]
    assert len(brs) == 1
    for s, r in zip(scales, sw):
        fresh = co.solve(dataclasses.replace(base, privacy=(co.IDLDP(epsilons=s * E),)))
        assert r.status == fresh.status == "optimal"
        assert r.objective == pytest.approx(fresh.objective, rel=1e-9, abs=1e-12)
    warm = closed_module.top_outputs.Warm()
    for s in (1.0, 2.5):
        p = dataclasses.replace(base, privacy=(co.IDLDP(epsilons=s * E),))
        q, bound, report = closed_module._best_response_along(p, warm)
        assert np.array_equal(q, closed_module.best_response(p)[0]) and bound == closed_module.best_response(p)[1]
        direct = real(p, q, with_measures=False)
        assert not report.ok and report.leakage == direct.leakage and report.satisfied == direct.satisfied
    D = 1.0 + np.abs(np.subtract.outer(np.arange(d), np.arange(d)))
    D[:, 3] = 0.0                                     # output 3 costs nothing for every input
    free = co.Problem(prior=P, privacy=[co.IDLDP(epsilons=E)], utility=co.Distortion("distortion", matrix=D))
    for r in co.sweep(free, scale=[0.5, 1.0, 2.0]):
        assert (r.solver, r.objective, r.status) == ("best-response", 0.0, "optimal")
