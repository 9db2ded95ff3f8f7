"""Continuous mechanisms: closed forms against quadrature and a discretized audit."""

import numpy as np
import pytest
from scipy.stats import norm

from channelopt.continuous import audit, egamma, gmm
from channelopt.continuous import mechanisms as C
from channelopt.errors import ProblemError


def test_egamma_closed_form_matches_quadrature_and_prop3():
    rng = np.random.default_rng(0)
    for k in range(40):
        m1, m2 = rng.normal(0, 3, 2)
        s1, s2 = rng.uniform(0.3, 4, 2)
        if k % 4 == 0:
            s2 = s1                                                   # equal variances: a half-line
        g = float(np.exp(rng.uniform(-3, 3)))
        f1, f2 = (lambda y: norm.pdf(y, m1, s1)), (lambda y: norm.pdf(y, m2, s2))
        lo, hi = min(m1, m2) - 40 * max(s1, s2), max(m1, m2) + 40 * max(s1, s2)
        quad = egamma.numerical(f1, f2, g, lo, hi)
        assert egamma.gaussian(m1, s1, m2, s2, g) == pytest.approx(quad, abs=1e-9)
        if s1 > s2:
            try:
                assert egamma.lemma4(m1, s1, m2, s2, g) == pytest.approx(quad, abs=1e-9)
            except ProblemError:
                pass                                                  # no crossing points
        eps = abs(np.log(g))
        rhs = egamma.prop3_rhs(egamma.numerical(f2, f1, np.exp(-eps), lo, hi), eps)
        assert egamma.numerical(f1, f2, np.exp(eps), lo, hi) == pytest.approx(rhs, abs=1e-9)


def test_designed_sigma_meets_delta_in_the_discretized_audit():
    xg = np.linspace(-60, 60, 1201)
    w = norm.pdf(xg, 0, 5)
    yg = np.linspace(-200, 200, 12001)
    for x in (0.0, 7.0):
        s = C.gaussian_sigma(x, 0.0, 5.0, 1.0, 1e-3)
        d = audit.deltas(xg, w, audit.gaussian_cond(s), yg, 1.0, [x])[0]
        assert d.max() <= 1e-3 * (1 + 1e-3)
        assert audit.deltas(xg, w, audit.gaussian_cond(0.97 * s), yg, 1.0, [x])[0].max() > 1e-3
    # Thm 5 on a bounded range: the sup is at least the value at every grid point
    d, xbest = C.gaussian_delta(10.0, 0.0, 5.0, 1.0, -10.0, 10.0)
    for x in np.linspace(-10, 10, 21):
        assert max(C.gaussian_deltas(x, 10.0, 0.0, 5.0, 1.0)) <= d + 1e-12


def test_sampling_lambda_is_the_def5_boundary():
    for eps in (0.5, 1.0, 3.0):
        for delta in (0.0, 0.01, 0.2, 0.8):
            lam = C.sampling_lambda(eps, delta)
            dl = C.sampling_deltas(lam, eps)
            assert dl["def5"] == pytest.approx(delta, abs=1e-12)          # binds
            assert C.sampling_deltas(min(lam + 1e-6, 1.0), eps)["def5"] > delta or lam >= 1 - 1e-9
            if 0 < delta and lam == pytest.approx(delta * np.exp(eps)):
                assert dl["cor9"] > delta                                 # Cor 9's reading is violated
    rng = np.random.default_rng(1)
    x = rng.normal(0, 1, 200_000)
    y = np.where(rng.random(x.size) < 0.3, x, rng.normal(0, 1, x.size))
    assert np.abs(x - y).mean() == pytest.approx(C.sampling_mae(0.3, C.pair_mae("gaussian", sigma=1.0)), rel=0.01)


def test_laplace_indep_scale_passes_the_audit_and_ldp_scale_too():
    P, vals = np.array([1 / 3 + 0.1, 1 / 3, 1 / 3 - 0.1]), np.array([0.0, 1.0, 2.0])
    for eps in (0.5, 1.0, 2.0):
        b = C.laplace_indep(P, 2.0, eps)
        assert C.laplace_lip_leakage(P, vals, [b] * 3, -4, 6) <= eps
        assert b <= 2.0 / eps + 1e-12                                      # never more noise than LDP's Delta/eps


def test_gmm_recovers_a_known_mixture():
    rng = np.random.default_rng(2)
    x = np.r_[rng.normal(45, 10, 6000), rng.normal(95, 15, 4000)]
    w, mu, sd = gmm.fit(x)
    assert w == pytest.approx([0.6, 0.4], abs=0.02)
    assert mu == pytest.approx([45, 95], abs=1.0)
    assert sd == pytest.approx([10, 15], abs=1.0)


@pytest.mark.parametrize("call,match", [
    (lambda: egamma.gaussian(0, -1, 0, 1, 1.0), "sigma_1"),
    (lambda: C.sampling_lambda(1.0, 1.0), "delta must be in"),
    (lambda: C.sampling_lambda(0.0, 0.1), "epsilon must be"),
    (lambda: C.gaussian_delta(0.0, 0, 1, 1, -1, 1), "sigma_N"),
    (lambda: C.gaussian_delta(1.0, 0, 0.0, 1, -1, 1), "sigma_X"),
    (lambda: gmm.fit(np.ones(10)), "positive variance"),
])
def test_bad_input(call, match):
    with pytest.raises(ProblemError, match=match):
        call()
