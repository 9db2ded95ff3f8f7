"""Encoded mechanisms: exact audits against enumeration / the dense channel, estimators against
seeded Monte-Carlo, designs against brute force and the papers' published numbers."""

import itertools

import numpy as np
import pytest

from channelopt import LDP, LIP, Problem
from channelopt.audit import audit
from channelopt.encoded import hashing, idue, itemset, ue_lip, unary
from channelopt.errors import ProblemError


def _outputs(a, b):
    """All 2^d outputs of UE as a dense d x 2^d channel (brute force)."""
    d = a.size
    ys = np.array(list(itertools.product([0, 1], repeat=d)))               # 2^d x d
    pr1 = np.where(ys == 1, b, 1 - b)                                       # bits under input 0
    base = pr1.prod(axis=1)
    own = np.where(ys == 1, a, 1 - a) / pr1                                 # swap bit x to 'one'
    return base[None, :] * own.T


@pytest.mark.parametrize("seed", range(6))
def test_ue_leakage_matches_enumeration(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 7))
    a, b = rng.uniform(0.05, 0.95, d), rng.uniform(0.05, 0.95, d)
    prior = rng.dirichlet(np.ones(d) * 0.5)
    q = _outputs(a, b)
    assert np.allclose(q.sum(axis=1), 1)
    ratios = q[:, None, :] / q[None, :, :]
    assert unary.ldp_leakage(a, b) == pytest.approx(np.log(ratios.max()), rel=1e-12)
    lam = prior @ q
    lip = np.abs(np.log(q[prior > 0] / lam)).max()
    assert unary.lip_leakage(a, b, prior) == pytest.approx(lip, rel=1e-12)
    # and the toolkit's general audit of the dense channel agrees
    assert audit(Problem(prior, LIP(10.0)), q).leakage["lip"] == pytest.approx(lip, rel=1e-9)


def test_ue_lip_constraint_is_an_ldp_ratio_limit():
    prior = np.array([0.05, 0.15, 0.3, 0.5])
    for eps in (0.3, 1.0, 2.5):
        T = unary.lip_budget_ratio(prior.min(), eps)
        for q in (0.05, 0.2, 0.4):
            p = T * q / (1 + (T - 1) * q)                                   # ratio exactly T
            assert unary.lip_leakage(p, q, prior) == pytest.approx(eps, rel=1e-12)
            p2 = 1.01 * T * q / (1 + (1.01 * T - 1) * q)
            assert unary.lip_leakage(p2, q, prior) > eps


def test_oue_rappor_leakage_and_table_i_baselines():
    eps = np.log(4)
    for a, b in (unary.oue(eps), unary.rappor(eps)):
        assert unary.ldp_leakage(a, b, 5) == pytest.approx(eps, rel=1e-12)
    # ID-LDP Table I: RAPPOR 2n per item (10n), OUE 1.78n + c_i (9.9n in total)
    a, b = unary.rappor(eps)
    assert unary.variance(1, 0, a, b)[0] == pytest.approx(2.0)
    a, b = unary.oue(eps)
    assert round(float(unary.variance(1, 0, a, b)[0]), 2) == 1.78
    assert round(float(5 * unary.variance(1, 0, a, b)[0] + 1), 1) == 9.9          # printed to one decimal


def test_ue_estimator_unbiased_and_variance_matches():
    rng = np.random.default_rng(7)
    d, n, R = 6, 400, 3000
    x = rng.integers(0, d, size=n)
    true = np.bincount(x, minlength=d)
    a = np.array([0.5, 0.55, 0.6, 0.7, 0.75, 0.8])
    b = np.array([0.2, 0.25, 0.3, 0.1, 0.15, 0.2])
    est = np.array([unary.estimate(unary.randomize(x, a, b, d, rng).sum(axis=0), n, a, b) for _ in range(R)])
    var = unary.variance(n, true, a, b)
    assert np.all(np.abs(est.mean(axis=0) - true) < 4 * np.sqrt(var / R))
    # sample variance of R draws: relative standard error ~ sqrt(2/R) = 2.6 %
    assert np.all(np.abs(est.var(axis=0, ddof=1) / var - 1) < 4 * np.sqrt(2 / R))


def test_ue_lip_optimum_is_certified_against_a_dense_search():
    prior = np.array([0.1, 0.2, 0.3, 0.4])
    eps = 1.5
    o = ue_lip.optimum(prior, eps)
    assert o.gap <= 1e-8
    assert unary.lip_leakage(o.p, o.q, prior) <= eps + 1e-12
    # brute force over a fine grid of the whole feasible square (not only the curve)
    qs, ps = np.meshgrid(np.linspace(1e-4, 1 - 1e-4, 1201), np.linspace(1e-4, 1 - 1e-4, 1201))
    T = unary.lip_budget_ratio(prior.min(), eps)
    t = ps * (1 - qs) / (qs * (1 - ps))
    ok = (t <= T) & (t >= 1 / T)
    vals = ue_lip.explained(prior, ps[ok], qs[ok])
    assert vals.max() <= o.bound + 1e-12
    assert vals.max() >= o.value - 1e-4
    # Theorem 4 is feasible but never better than the certified optimum
    p4, q4 = ue_lip.theorem4(prior, eps)
    assert unary.lip_leakage(p4, q4, prior) == pytest.approx(eps, rel=1e-12)
    assert ue_lip.explained(prior, p4, q4) <= o.bound


def test_ue_lip_minimax_over_priors_uses_the_smallest_pmin():
    priors = np.array([[0.25, 0.25, 0.25, 0.25], [0.05, 0.35, 0.3, 0.3]])
    o = ue_lip.optimum(priors, 1.0)
    for P in priors:
        assert unary.lip_leakage(o.p, o.q, P) <= 1.0 + 1e-12
    assert o.T == pytest.approx(unary.lip_budget_ratio(0.05, 1.0))


def test_idue_table_i():
    """ID-LDP Table I: eps_1 = ln 4 (1 item), eps_2..5 = ln 6 (4 items), MinID-LDP, opt0."""
    L = idue.Levels.make([np.log(4), np.log(6)], [1, 4])
    r = idue.design(L, "opt0")
    assert idue.pair_excess(L, r.a, r.b) <= 1e-12
    assert np.round(1 - r.a, 2).tolist() == [0.41, 0.33]
    assert np.round(r.b, 2).tolist() == [0.33, 0.28]
    # the table's variance coefficients: the bit-0 terms of the two-decimal design (3.27; 1.33 where
    # the table prints 1.32) and the c_i terms 0.31 / 0.13
    a2, b2 = 1 - np.round(1 - r.a, 2), np.round(r.b, 2)
    assert idue.pair_excess(L, a2, b2) <= 0                     # the printed design is feasible
    coef_n = b2 * (1 - b2) / (a2 - b2) ** 2
    coef_c = (1 - a2 - b2) / (a2 - b2)
    assert round(float(coef_n[0]), 2) == 3.27
    assert np.round(coef_c, 2).tolist() == [0.31, 0.13]
    # totals: the certified optimum's range [sum m g + min c-coef, sum m g + max c-coef] is below
    # the table's 8.68n ~ 8.86n (the printed design is not the optimum of Eq 8), and above the bound
    base = L.sizes @ (r.b * (1 - r.b) / (r.a - r.b) ** 2)
    h = (1 - r.a - r.b) / (r.a - r.b)
    assert round(float(base + h.max()), 2) == round(r.value, 2) < 8.86
    assert idue.worst_case(L, a2, b2) >= r.bound
    # opt0 is certified: its lower bound is below every feasible design and within 1e-5 relative
    assert r.bound <= r.value and (r.value - r.bound) / r.value < 1e-4


def _brute_opt0(L, n=41):
    """Dense grid over the 2t-dimensional (u, w) box, keeping Eq 5-feasible points."""
    top = np.where(L.pairs, L.R, np.inf).min(axis=1)
    axes = [np.linspace(0, top[i], n)[1:] for i in range(L.t)] * 2
    G = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 2 * L.t)
    u, w = G[:, :L.t], G[:, L.t:]
    ok = np.all((u[:, :, None] + w[:, None, :] <= L.R + 1e-12) | ~L.pairs, axis=(1, 2))
    u, w = u[ok], w[ok]
    f = (L.sizes * idue.g(u, w)).sum(axis=1) + idue.h(u, w).max(axis=1)
    return f.min()


@pytest.mark.parametrize("eps,sizes,combine", [((0.5, 1.0), (3, 5), "min"), ((1.0, 2.0), (1, 9), "avg"),
                                                ((2.0, 2.4), (4, 4), "min")])
def test_idue_models_ordered_and_opt0_global(eps, sizes, combine):
    L = idue.Levels.make(eps, sizes, combine)
    r0, r1, r2 = idue.design(L, "opt0"), idue.design(L, "opt1"), idue.design(L, "opt2")
    for r in (r0, r1, r2):
        assert idue.pair_excess(L, r.a, r.b) <= 1e-12
        assert r.value == pytest.approx(idue.worst_case(L, r.a, r.b))
    assert r0.bound <= r1.value and r0.bound <= r2.value
    assert r0.value <= min(r1.value, r2.value) + 1e-12
    brute = _brute_opt0(L)
    assert r0.bound <= brute + 1e-9          # the bound is valid
    assert r0.value <= brute + 1e-9          # and the design is at least as good as the grid


@pytest.mark.parametrize("combine", ["min", "avg"])
def test_idue_audited_pair_leakage_reaches_the_pair_budget(combine):
    """The exact per-item audit (unary.pair_leakage, all 2^d outputs implicitly) never exceeds
    r(eps_i, eps_j) and meets it on some pair: the designed mechanism uses its whole budget."""
    L = idue.Levels.make([0.7, 1.0, 1.6], [1, 2, 3], combine)
    eps_items = L.expand(L.epsilons)
    r_items = idue.COMBINE[combine](eps_items[:, None], eps_items[None, :])
    off = ~np.eye(eps_items.size, dtype=bool)
    for model in ("opt0", "opt1", "opt2"):
        a, b = idue.design(L, model).per_item()
        ratio = unary.pair_leakage(a, b)[off] / r_items[off]
        assert ratio.max() <= 1 + 1e-9
        assert ratio.max() == pytest.approx(1.0, abs=1e-6)


def test_idue_uniform_budget_reduces_to_ldp_and_oue():
    """One level: MinID-LDP is eps-LDP; opt2 is OUE (b = 1/(e^eps + 1))."""
    L = idue.Levels.make([1.0], [6])
    r2 = idue.opt2(L)
    assert r2.b[0] == pytest.approx(1 / (np.e + 1), rel=1e-6)
    r1 = idue.opt1(L)
    assert r1.a[0] == pytest.approx(unary.rappor(1.0)[0], rel=1e-6)
    r0 = idue.design(L)
    assert unary.ldp_leakage(*r0.per_item()) <= 1.0 + 1e-12


def test_itemset_pair_ratio_is_exact():
    rng = np.random.default_rng(3)
    for _ in range(50):
        K = int(rng.integers(2, 8))
        a, b = rng.uniform(0.4, 0.95, K), rng.uniform(0.02, 0.4, K)
        pi = rng.dirichlet(np.ones(K)) * (rng.random(K) < 0.7)
        pi2 = rng.dirichlet(np.ones(K)) * (rng.random(K) < 0.7)
        if not (pi.sum() and pi2.sum()):
            continue
        rho = np.stack([(1 - a) / (1 - b), a / b], 1)
        best = max((pi * rho[np.arange(K), y]).sum() / (pi2 * rho[np.arange(K), y]).sum()
                   for y in itertools.product([0, 1], repeat=K))
        assert itemset.pair_ratio(pi, pi2, a, b) == pytest.approx(best, rel=1e-12)


def test_idue_ps_sampling_and_estimator():
    """PS probabilities match Algorithm 1 by simulation; the l-scaled estimator is unbiased for
    the number of holders when every set has at most l items."""
    rng = np.random.default_rng(11)
    m, l = 5, 3
    sets = [np.array(s) for s in ([0], [0, 1], [1, 2, 3], [0, 2, 3, 4], [4])]
    sets = itemset.check_sets(sets, m)
    draws = np.array([itemset.pad_and_sample(sets, m, l, rng, validate=False) for _ in range(20000)])
    for u, s in enumerate(sets):
        freq = np.bincount(draws[:, u], minlength=m + l) / draws.shape[0]
        assert np.abs(freq - itemset.sampling(s, m, l)).max() < 0.015
    users = itemset.check_sets([sets[i % 3] for i in range(300)], m)         # all of size <= l
    true = np.bincount(np.concatenate(users), minlength=m)
    a, b = np.full(m + l, 0.5), np.full(m + l, 0.2)
    est = np.array([itemset.estimate(itemset.counts_of(itemset.pad_and_sample(users, m, l, rng, False), a, b, rng),
                                     len(users), a, b, m, l) for _ in range(2000)])
    se = est.std(axis=0) / np.sqrt(est.shape[0])
    assert np.all(np.abs(est.mean(axis=0) - true) < 4 * se + 1e-9)


def test_idue_ps_theorem4_on_a_small_domain():
    eps_items = np.array([np.log(4), np.log(6), np.log(6), np.log(6)])
    L = idue.Levels.make([np.log(4), np.log(6)], [1, 3])
    r = idue.design(L)
    a, b = r.per_item()
    for l in (1, 2, 3):
        aa, bb = np.r_[a, np.full(l, r.a[0])], np.r_[b, np.full(l, r.b[0])]
        res = itemset.audit_sets(aa, bb, 4, l, eps_items, eps_items.min())
        assert res["budget_excess"] <= 1e-12 and res["lemma2_excess"] <= 1e-12


def test_lh_lip_composite_audit_equals_hashed_audit():
    rng = np.random.default_rng(5)
    prior = rng.dirichlet(np.ones(8))
    h = hashing.draw(8, 3, rng)
    eps = 1.0
    qh = hashing.rr_lip(hashing.hashed_prior(prior, h, 3), eps)
    q = hashing.composite(h, qh)
    ph = hashing.hashed_prior(prior, h, 3)
    keep = ph > 0
    a_x = audit(Problem(prior, LIP(eps)), q).leakage["lip"]
    a_h = audit(Problem(ph[keep], LIP(eps)), qh[keep]).leakage["lip"]
    assert a_x == pytest.approx(a_h, rel=1e-12)
    # Eq 28: the curator's posterior given (y, h) is the Bayes posterior of the composite channel
    y = 1
    post = prior * q[:, y] / (prior @ q[:, y])
    assert np.allclose(hashing.posterior(prior, h, qh, y), post)


def test_olh_ldp_and_estimator():
    eps = 1.0
    g = hashing.olh_size(eps)
    assert g == 4
    rng = np.random.default_rng(2)
    d, n, R = 6, 500, 1500
    x = rng.integers(0, d, n)
    true = np.bincount(x, minlength=d)
    h = np.arange(d) % g                                                     # distinct hash values exist
    assert audit(Problem(np.ones(d) / d, LDP(eps)), hashing.olh(h, g, eps)).leakage["ldp"] == pytest.approx(eps)
    est = []
    for _ in range(R):
        H = hashing.draw(d, g, rng, size=n)
        est.append(hashing.olh_estimate(hashing.randomize(x, H, g, eps, rng), H, g, eps))
    est = np.array(est)
    var = hashing.olh_variance(n, true, g, eps)
    assert np.all(np.abs(est.mean(axis=0) - true) < 4 * np.sqrt(var / R))
    assert np.all(np.abs(est.var(axis=0, ddof=1) / var - 1) < 4 * np.sqrt(2 / R))


def test_histogram_mse_of_ue_per_bit_objective():
    """Eq 30 as a sum over bits equals a Monte-Carlo of the per-bit MMSE estimator."""
    rng = np.random.default_rng(9)
    prior = np.array([0.1, 0.3, 0.6])
    p, q = 0.6, 0.2
    N = 200000
    x = rng.choice(3, size=N, p=prior)
    bits = unary.randomize(x, p, q, 3, rng)
    lam1 = prior * p + (1 - prior) * q
    est = np.where(bits, prior * p / lam1, prior * (1 - p) / (1 - lam1))
    err = ((np.eye(3)[x] - est) ** 2).sum(axis=1)
    assert abs(err.mean() - ue_lip.mse(prior, p, q)) < 4 * err.std() / np.sqrt(N)


@pytest.mark.parametrize("call,match", [
    (lambda: idue.Levels.make([1.0, -1.0], [1, 2]), "epsilons\\[1\\]"),
    (lambda: idue.Levels.make([1.0, 2.0], [1]), "one length"),
    (lambda: itemset.sampling([0], 3, 0), "padding length l"),
    (lambda: itemset.check_sets([[0, 1], []], 3), "user 1 is empty"),
    (lambda: itemset.check_sets([[0, 7, 9]], 5), "outside the domain 0..4: \\[7, 9\\]"),
    (lambda: hashing.draw(5, 1, np.random.default_rng()), "hash range g"),
    (lambda: unary.ldp_leakage(0.5, 1.2, 3), "b\\[0\\] must be in"),
    (lambda: ue_lip.optimum([0.5, 0.5], 0.0), "epsilon must be > 0"),
])
def test_bad_input(call, match):
    with pytest.raises(ProblemError, match=match):
        call()


def test_theorem4_is_beaten_by_a_plain_grid_search():
    """The finding behind tdsc-thm4: at a uniform prior over 5 symbols and eps = 3, a brute-force
    grid over LIP-feasible (p, q) (exact audit, no optimizer) beats Theorem 4's q10 = 1/2 design."""
    prior, eps = np.full(5, 0.2), 3.0
    p4, q4 = ue_lip.theorem4(prior, eps)
    best = -1.0
    for p in np.linspace(0.5, 0.99, 50):
        for q in np.linspace(0.01, 0.5, 50):
            if p > q and unary.lip_leakage(p, q, prior) <= eps:
                best = max(best, float(ue_lip.explained(prior, p, q)))
    assert best > ue_lip.explained(prior, p4, q4) + 0.05
