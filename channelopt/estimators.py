"""Curator-side estimators and a seeded Monte-Carlo simulator of N users (LIP-TDSC §3-4, LIP-CNS §IV).

- MMSE estimate of h(X) from Y: E[h(X) | Y = y] = post_y . h; its per-user MSE is the
  `bayes-mse` utility, and over N independent users the MSEs add (LIP-TDSC Theorem 1).
- Context-free unbiased estimators, which treat X as an instance: for any invertible channel
  the output frequencies times q^{-1} (for GRR the usual (n_y/n - b)/(a - b)); the sum
  estimator of LIP-TDSC Eq 40 / LIP-CNS Eq 41 and its MSE (Eq 41 / Eq 42); unary encoding (UE) counts.
"""

from __future__ import annotations

import numpy as np

from .errors import ProblemError


def posteriors(prior: np.ndarray, q: np.ndarray) -> np.ndarray:
    """post[..., y, x] = Pr(X=x | Y=y) (rows of unused outputs are the prior).

    prior (..., d) and q (..., d, m) may carry leading user axes (one prior and channel per user).
    """
    prior, q = np.asarray(prior, float), np.asarray(q, float)
    joint = prior[..., :, None] * q
    lam = joint.sum(axis=-2, keepdims=True)
    post = np.where(lam > 0, joint / np.where(lam > 0, lam, 1.0), prior[..., :, None])
    return np.swapaxes(post, -1, -2)


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


def unbiased_scores(q, values) -> np.ndarray:
    """g(y) with E[g(Y) | X = x] = a_x for every x: g = q^{-1} a (context-free, prior-free).

    Summing g(Y_i) over users is the unbiased estimator of sum_i a_{X_i}; for binary GRR with
    values (0, 1) it is LIP-TDSC Eq 40 / LIP-CNS Eq 41.
    """
    q = np.asarray(q, float)
    if q.ndim != 2 or q.shape[0] != q.shape[1]:
        raise ProblemError(f"the unbiased estimator needs a square channel, got shape {q.shape}")
    return np.linalg.solve(q, np.asarray(values, float))


def unbiased_sum_mse(prior, q, values) -> float:
    """Exact per-user MSE of the unbiased sum estimator when X ~ prior:
    E[(g(Y) - a_X)^2] = E[g(Y)^2] - E[a_X^2] (the cross term is E[a_X E[g(Y)|X]] = E[a_X^2])."""
    prior, q, values = (np.asarray(a, float) for a in (prior, q, values))
    g = unbiased_scores(q, values)
    return float(prior @ (q @ g ** 2) - prior @ values ** 2)


def grr(d: int, eps: float) -> np.ndarray:
    """Generalized randomized response: keep with e^eps/(e^eps+d-1), else each other symbol."""
    e = np.exp(eps)
    q = np.full((d, d), 1.0 / (e + d - 1))
    np.fill_diagonal(q, e / (e + d - 1))
    return q


def grr_count_mse(n: int, d: int, eps: float) -> float:
    """LIP-TDSC Eq 41 (LIP-CNS Eq 42 for d = 2): N (d - 2 + e^eps) / (e^eps - 1)^2, the variance of GRR's
    unbiased count of one symbol. Exact when no user holds that symbol; with n_v holders the exact
    variance is grr_count_variance(n, n_v, d, eps)."""
    e = np.exp(eps)
    return n * (d - 2 + e) / (e - 1) ** 2


def grr_count_variance(n: int, n_v: int, d: int, eps: float) -> float:
    """Exact variance of GRR's unbiased count of a symbol held by n_v of n users."""
    q = grr(d, eps)
    p, r = q[0, 0], q[0, 1]
    return (n_v * p * (1 - p) + (n - n_v) * r * (1 - r)) / (p - r) ** 2


def ue_counts(bit_counts, n: int, p: float, q: float) -> np.ndarray:
    """Unbiased counts from unary-encoded reports: (B_v - n q) / (p - q), with p = Pr(bit 1 | 1),
    q = Pr(bit 1 | 0) (symmetric UE: RAPPOR, OUE; ID-LDP §III-C; LIP-TDSC §4.3.2)."""
    if not p > q:
        raise ProblemError(f"unary encoding needs p > q, got p={p!r} q={q!r}")
    return (np.asarray(bit_counts, float) - n * q) / (p - q)


def ue_count_variance(n: int, n_v, p: float, q: float):
    """Exact variance of the UE unbiased count of a symbol held by n_v of n users; with n_v = 0 and
    OUE (p = 1/2, q = 1/(e^eps+1)) it is n 4 e^eps / (e^eps - 1)^2 (LIP-CNS §V-A3)."""
    n_v = np.asarray(n_v, float)
    return (n_v * p * (1 - p) + (n - n_v) * q * (1 - q)) / (p - q) ** 2


def simulate_ue(x, d: int, p: float, q: float, rng) -> np.ndarray:
    """Bit counts B_v of N unary-encoded reports of the inputs x (one draw per bit, seeded rng)."""
    x = np.asarray(x)
    bits = rng.random((x.size, d)) < q
    bits[np.arange(x.size), x] = rng.random(x.size) < p
    return bits.sum(axis=0)


def _draw(priors: np.ndarray, channels: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
    """One input and one output per user (inverse-CDF sampling, vectorized over users)."""
    N, d = priors.shape
    x = np.minimum((rng.random((N, 1)) > np.cumsum(priors, axis=1)).sum(axis=1), d - 1)
    rows = channels[np.arange(N), x]
    y = np.minimum((rng.random((N, 1)) > np.cumsum(rows, axis=1)).sum(axis=1), rows.shape[1] - 1)
    return x, y


def _users(priors, channels):
    priors = np.asarray(priors, float)
    channels = np.asarray(channels, float)
    if channels.ndim == 2:
        channels = np.broadcast_to(channels, (priors.shape[0],) + channels.shape)
    return priors, channels


def simulate_sum(priors, channels, values, repetitions: int, seed: int, estimator: str = "mmse") -> np.ndarray:
    """Errors (estimate - truth) of the curator's estimate of sum_i a_{X_i} over `repetitions` runs.

    priors: N x d (user i's prior); channels: N x d x m, or one d x m channel shared by all users.
    estimator: "mmse" (E[a_X | Y] per user, uses the prior) or "unbiased" (q^{-1} a, prior-free;
    needs square channels).
    """
    rng = np.random.default_rng(seed)
    priors, channels = _users(priors, channels)
    values = np.asarray(values, float)
    if estimator == "mmse":
        est = mmse_estimates(priors, channels, values)                       # N x m
    elif estimator == "unbiased":
        est = np.stack([unbiased_scores(q, values) for q in channels])
    else:
        raise ProblemError(f"estimator must be 'mmse' or 'unbiased', got {estimator!r}")
    users = np.arange(priors.shape[0])
    errors = np.empty(repetitions)
    for r in range(repetitions):
        x, y = _draw(priors, channels, rng)
        errors[r] = est[users, y].sum() - values[x].sum()
    return errors


def simulate_histogram(priors, channels, repetitions: int, seed: int) -> np.ndarray:
    """Squared errors ||H - H_hat||^2 of the MMSE histogram estimate (sum of user posteriors,
    LIP-TDSC Eq 39) of H = sum_i e_{X_i}, over `repetitions` runs."""
    rng = np.random.default_rng(seed)
    priors, channels = _users(priors, channels)
    N, d = priors.shape
    post = posteriors(priors, channels)                                        # N x m x d
    users = np.arange(N)
    out = np.empty(repetitions)
    for r in range(repetitions):
        x, y = _draw(priors, channels, rng)
        H = np.bincount(x, minlength=d)
        out[r] = float(np.sum((post[users, y].sum(axis=0) - H) ** 2))
    return out
