"""Estimators and the simulator against the analytic MSE (seeded Monte-Carlo)."""

import math

import numpy as np
import pytest

import channelopt as co
from channelopt import estimators
from channelopt.estimators import mmse_mse, simulate_sum, unbiased_frequencies


def test_simulated_sum_mse_matches_the_certified_bayes_mse():
    P = np.array([0.2, 0.3, 0.5])
    values = np.array([0.0, 1.0, 3.0])
    p = co.Problem(prior=P, values=values, privacy=[co.LIP(1.0)], utility=co.Bayes("bayes-mse"))
    r = co.solve(p)
    N, reps = 200, 4000
    err = simulate_sum(np.tile(P, (N, 1)), r.channel, values, reps, seed=11)
    analytic = N * r.objective                                  # LIP-TDSC Theorem 1: per-user MSEs add
    assert mmse_mse(P, r.channel, values) == pytest.approx(r.objective, abs=1e-12)
    mse = np.mean(err ** 2)
    se = np.std(err ** 2, ddof=1) / math.sqrt(reps)
    assert abs(mse - analytic) < 4 * se
    assert abs(err.mean()) < 4 * np.std(err) / math.sqrt(reps)   # the MMSE estimate is unbiased for the sum


def test_local_priors_simulation_matches_sum_of_per_user_mse():
    rng = np.random.default_rng(5)
    N, d = 50, 3
    priors = rng.dirichlet(np.ones(d), size=N)
    values = np.array([0.0, 1.0, 2.0])
    channels = [co.solve(co.Problem(prior=p, values=values, privacy=[co.LIP(1.0)], utility=co.Bayes("bayes-mse"))).full_channel
                for p in priors]
    analytic = sum(mmse_mse(p, q, values) for p, q in zip(priors, channels))
    err = simulate_sum(priors, np.stack(channels), values, 3000, seed=2)
    se = np.std(err ** 2, ddof=1) / math.sqrt(3000)
    assert abs(np.mean(err ** 2) - analytic) < 4 * se


def test_unbiased_frequency_estimator_is_unbiased_for_grr():
    d, eps, n = 4, 1.0, 2000
    e = math.exp(eps)
    q = np.full((d, d), 1 / (e + d - 1))
    np.fill_diagonal(q, e / (e + d - 1))
    truth = np.array([0.1, 0.2, 0.3, 0.4])
    rng = np.random.default_rng(0)
    est = []
    for _ in range(2000):
        x = rng.choice(d, size=n, p=truth)
        counts = np.zeros(d)
        for i in range(d):
            k = int((x == i).sum())
            counts += rng.multinomial(k, q[i])
        est.append(unbiased_frequencies(counts, q))
    est = np.array(est)
    se = est.std(axis=0, ddof=1) / math.sqrt(len(est))
    assert np.all(np.abs(est.mean(axis=0) - truth) < 4 * se)


def _mse_within_ci(samples, analytic, z=4.0):
    se = np.std(samples, ddof=1) / math.sqrt(len(samples))
    return abs(np.mean(samples) - analytic) < z * se


@pytest.mark.parametrize("P1,eps", [(0.1, 0.5), (0.5, 1.0), (0.9, 3.0)])
def test_unbiased_binary_sum_mse_is_004_eq42_for_every_prior(P1, eps):
    e = math.exp(eps)
    p = e / (e + 1)
    eq42 = p * (1 - p) / (1 - 2 * p) ** 2          # per user
    assert estimators.unbiased_sum_mse([1 - P1, P1], estimators.grr(2, eps), [0, 1]) == pytest.approx(eq42, rel=1e-12)


def test_unbiased_sum_estimator_simulation_matches_its_exact_mse():
    P, values, eps, N, reps = np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.0, 1.0, 2.0, 5.0]), 1.0, 100, 4000
    q = estimators.grr(4, eps)
    err = estimators.simulate_sum(np.tile(P, (N, 1)), q, values, reps, seed=3, estimator="unbiased")
    assert abs(err.mean()) < 4 * err.std() / math.sqrt(reps)                         # unbiased
    assert _mse_within_ci(err ** 2, N * estimators.unbiased_sum_mse(P, q, values))
    # the prior-aware MMSE estimate on the same channel is never worse (it is the Bayes estimator)
    assert mmse_mse(P, q, values) <= estimators.unbiased_sum_mse(P, q, values)


def test_eq41_is_the_count_variance_of_an_absent_symbol_and_underestimates_a_present_one():
    n, d, eps = 300, 5, 1.0
    assert estimators.grr_count_mse(n, d, eps) == pytest.approx(estimators.grr_count_variance(n, 0, d, eps), rel=1e-12)
    rng = np.random.default_rng(8)
    x = np.r_[np.zeros(150, int), rng.integers(1, d, 150)]               # symbol 0 held by half the users
    q = estimators.grr(d, eps)
    counts = np.array([np.bincount(estimators._draw(np.eye(d)[x], np.broadcast_to(q, (n, d, d)), rng)[1],
                                   minlength=d) for _ in range(4000)])
    est = counts[:, 0] - n * q[0, 1]
    est = est / (q[0, 0] - q[0, 1])
    assert abs(est.mean() - 150) < 4 * est.std() / math.sqrt(len(est))
    exact = estimators.grr_count_variance(n, 150, d, eps)
    assert _mse_within_ci((est - 150) ** 2, exact)
    assert exact > estimators.grr_count_mse(n, d, eps)


def test_oue_counts_are_unbiased_with_the_stated_variance():
    d, eps, n = 6, 1.0, 400
    p, q = 0.5, 1 / (math.exp(eps) + 1)
    assert estimators.ue_count_variance(n, 0, p, q) == pytest.approx(n * 4 * math.exp(eps) / (math.exp(eps) - 1) ** 2)
    rng = np.random.default_rng(4)
    x = rng.choice(d, size=n, p=[0.4, 0.3, 0.1, 0.1, 0.1, 0.0])
    truth = np.bincount(x, minlength=d)
    est = np.array([estimators.ue_counts(estimators.simulate_ue(x, d, p, q, rng), n, p, q) for _ in range(3000)])
    se = est.std(axis=0, ddof=1) / math.sqrt(len(est))
    assert np.all(np.abs(est.mean(axis=0) - truth) < 4 * se)
    for v in range(d):
        assert _mse_within_ci((est[:, v] - truth[v]) ** 2, estimators.ue_count_variance(n, truth[v], p, q))


def test_histogram_simulation_matches_the_certified_histogram_mse():
    P, N, reps = np.array([0.5, 0.3, 0.2]), 150, 3000
    r = co.solve(co.Problem(prior=P, privacy=[co.LDP(1.0)], utility=co.Bayes("histogram-mse")))
    sq = estimators.simulate_histogram(np.tile(P, (N, 1)), r.channel, reps, seed=9)
    assert _mse_within_ci(sq, N * r.objective)


def test_estimator_bad_input():
    with pytest.raises(co.ProblemError, match="square"):
        estimators.unbiased_scores(np.ones((2, 3)) / 3, [0, 1])
    with pytest.raises(co.ProblemError, match="p > q"):
        estimators.ue_counts([1, 2], 3, 0.2, 0.5)
    with pytest.raises(co.ProblemError, match="estimator"):
        estimators.simulate_sum(np.tile([0.5, 0.5], (2, 1)), np.eye(2), [0, 1], 1, 0, estimator="bogus")
