"""Curator-side estimators and a seeded Monte-Carlo simulator of N users (000 §3-4, 004 §IV).

- MMSE estimate of h(X) from Y: E[h(X) | Y = y] = post_y . h; its per-user MSE is the
  `bayes-mse` utility, and over N independent users the MSEs add (000 Theorem 1).
- Context-free unbiased frequency estimator for any invertible channel: the empirical output
  frequencies times q^{-1} (for GRR this is the usual (n_y/n - b)/(a - b)).
"""

from __future__ import annotations

import numpy as np

from .errors import ProblemError


def posteriors(prior: np.ndarray, q: np.ndarray) -> np.ndarray:
    """post[y, x] = Pr(X=x | Y=y) (rows of unused outputs are the prior)."""
    joint = prior[:, None] * q
    lam = joint.sum(axis=0)
    post = np.where(lam[None, :] > 0, joint / np.where(lam > 0, lam, 1.0)[None, :], prior[:, None])
    return post.T


def mmse_estimates(prior, q, h) -> np.ndarray:
    """E[h(X) | Y = y] for every output y."""
    return posteriors(np.asarray(prior, float), np.asarray(q, float)) @ np.asarray(h, float)


def mmse_mse(prior, q, h) -> float:
    """Per-user MSE of the MMSE estimate: E[h^2] - sum_y lam_y E[h | y]^2."""
    prior, q, h = (np.asarray(a, float) for a in (prior, q, h))
    lam = prior @ q
    return float(prior @ h ** 2 - lam @ mmse_estimates(prior, q, h) ** 2)


def unbiased_frequencies(counts, q) -> np.ndarray:
    """Context-free unbiased estimate of the input frequencies from output counts (q square, invertible)."""
    q = np.asarray(q, float)
    if q.shape[0] != q.shape[1]:
        raise ProblemError(f"the unbiased estimator needs a square channel, got shape {q.shape}")
    counts = np.asarray(counts, float)
    return np.linalg.solve(q.T, counts / counts.sum())


def simulate_sum(priors, channels, values, repetitions: int, seed: int) -> np.ndarray:
    """Errors of the curator's MMSE estimate of sum_i a_{X_i} over `repetitions` runs.

    priors[i], channels[i]: user i's prior and channel (arrays of shape N x d and N x d x m, or a
    single prior / channel shared by all users with `priors` of shape (N, d)).
    """
    rng = np.random.default_rng(seed)
    priors = np.asarray(priors, float)
    channels = np.asarray(channels, float)
    N, d = priors.shape
    if channels.ndim == 2:
        channels = np.broadcast_to(channels, (N,) + channels.shape)
    values = np.asarray(values, float)
    est = np.stack([mmse_estimates(p, q, values) for p, q in zip(priors, channels)])   # N x m
    cum_p = np.cumsum(priors, axis=1)
    errors = np.empty(repetitions)
    for r in range(repetitions):
        x = np.minimum((rng.random((N, 1)) > cum_p).sum(axis=1), d - 1)
        rows = channels[np.arange(N), x]                       # N x m
        y = np.minimum((rng.random((N, 1)) > np.cumsum(rows, axis=1)).sum(axis=1), rows.shape[1] - 1)
        errors[r] = est[np.arange(N), y].sum() - values[x].sum()
    return errors
