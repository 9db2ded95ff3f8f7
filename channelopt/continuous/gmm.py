"""Two-or-more-component 1-D Gaussian mixture fitted by expectation-maximization (CA-LIP Remark 2)."""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp
from scipy.stats import norm

from ..errors import ProblemError


def fit(x, k: int = 2, iters: int = 500, tol: float = 1e-10, seed: int = 0):
    """(weights, means, sigmas) maximizing the likelihood of x, from a quantile start; EM iterations
    until the mean log-likelihood improves by less than tol."""
    x = np.asarray(x, float).ravel()
    if x.size < 2 * k or np.std(x) == 0:
        raise ProblemError(f"GMM fit needs at least {2 * k} samples with positive variance")
    w = np.full(k, 1 / k)
    mu = np.quantile(x, (np.arange(k) + 0.5) / k)
    sd = np.full(k, np.std(x) / k)
    last = -np.inf
    for _ in range(iters):
        logp = np.log(w) + norm.logpdf(x[:, None], mu, sd)                 # n x k
        ll = logsumexp(logp, axis=1)
        r = np.exp(logp - ll[:, None])
        nk = r.sum(axis=0)
        w = nk / x.size
        mu = (r * x[:, None]).sum(axis=0) / nk
        sd = np.sqrt((r * (x[:, None] - mu) ** 2).sum(axis=0) / nk)
        sd = np.maximum(sd, 1e-9 * np.std(x))
        if ll.mean() - last < tol:
            break
        last = ll.mean()
    order = np.argsort(mu)
    return w[order], mu[order], sd[order]


def pdf(y, weights, means, sigmas):
    y = np.asarray(y, float)
    return sum(w * norm.pdf(y, m, s) for w, m, s in zip(weights, means, sigmas))
