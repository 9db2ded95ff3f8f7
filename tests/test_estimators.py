"""Estimators and the simulator against the analytic MSE (seeded Monte-Carlo)."""

import math

import numpy as np
import pytest

import channelopt as co
from channelopt.estimators import mmse_mse, simulate_sum, unbiased_frequencies


def test_simulated_sum_mse_matches_the_certified_bayes_mse():
    P = np.array([0.2, 0.3, 0.5])
    values = np.array([0.0, 1.0, 3.0])
    p = co.Problem(prior=P, values=values, privacy=[co.LIP(1.0)], utility=co.Bayes("bayes-mse"))
    r = co.solve(p)
    N, reps = 200, 4000
    err = simulate_sum(np.tile(P, (N, 1)), r.channel, values, reps, seed=11)
    analytic = N * r.objective                                  # 000 Theorem 1: per-user MSEs add
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
    channels = [co.solve(co.Problem(prior=p, values=values, privacy=[co.LIP(1.0)], utility=co.Bayes("bayes-mse"))).channel
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
