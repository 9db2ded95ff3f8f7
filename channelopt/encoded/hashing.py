"""Local hashing: each user draws a hash h: {0..d-1} -> {0..g-1}, perturbs X' = h(X) with a
channel on g symbols and releases (Y, h).

LH-LIP (LIP-TDSC §4.3.1, Prop 3): the hashed prior is P'[x'] = sum_{h(x) = x'} P[x] and the
channel on X' is RR-LIP for that prior, q'[x', x'] = 1 - (1 - P'_x')/e^eps, q'[x', y] = P'_y/e^eps.
Because h is deterministic and known to the curator, Pr(X=x)/Pr(X=x|Y=y,h) = P'_h(x)/Pr(X'=h(x)|Y=y)
(Eq 27): the composite channel q[x, y] = q'[h(x), y] has exactly the LIP leakage of q' under P'.
OLH (LDP, Wang et al. as used by LIP-TDSC §5.1.4): g = round(e^eps + 1) and GRR on the hashed value.

Hash functions are drawn uniformly from all maps {0..d-1} -> {0..g-1} (a universal family: two
distinct inputs collide with probability exactly 1/g).
"""

from __future__ import annotations

import numpy as np

from ..errors import ProblemError
from ..estimators import grr


def _check_g(g: int) -> int:
    if not (float(g).is_integer() and g >= 2):
        raise ProblemError(f"hash range g must be an integer >= 2, got {g!r}")
    return int(g)


def draw(d: int, g: int, rng, size: int | None = None) -> np.ndarray:
    """Random hash functions as lookup tables (size x d, or d), values in 0..g-1."""
    g = _check_g(g)
    shape = (d,) if size is None else (size, d)
    return rng.integers(0, g, size=shape)


def hashed_prior(prior, h, g: int) -> np.ndarray:
    """P'[x'] = sum_{x: h(x) = x'} P[x] (LIP-TDSC §4.3.1)."""
    return np.bincount(np.asarray(h), weights=np.asarray(prior, float), minlength=_check_g(g))


def rr_lip(prior_hashed, eps: float) -> np.ndarray:
    """LIP-TDSC Prop 3 (Theorem 3 applied to the hashed prior): g x g channel on X'."""
    P = np.asarray(prior_hashed, float)
    q = np.tile(P / np.exp(eps), (P.size, 1))
    np.fill_diagonal(q, 1 - (1 - P) / np.exp(eps))
    return q


def composite(h, q_hashed) -> np.ndarray:
    """d x g channel Pr(Y | X) = q'[h(X), Y] for a known hash h."""
    return np.asarray(q_hashed)[np.asarray(h)]


def lh_lip(prior, h, g: int, eps: float) -> np.ndarray:
    """Composite LH-LIP channel of one hash function (Prop 3)."""
    return composite(h, rr_lip(hashed_prior(prior, h, g), eps))


def olh_size(eps: float) -> int:
    """OLH's hash range g = round(e^eps + 1) (at least 2)."""
    return max(2, int(round(np.exp(eps) + 1)))


def olh(h, g: int, eps: float) -> np.ndarray:
    """Composite OLH channel: GRR on g hashed values."""
    return composite(h, grr(_check_g(g), eps))


def posterior(prior, h, q_hashed, y: int) -> np.ndarray:
    """Pr(X = x | Y = y, h) = P_x q'[h(x), y] / lambda_y (LIP-TDSC Eq 28; E[X|Y,h] = sum_x x * this)."""
    w = np.asarray(prior, float) * np.asarray(q_hashed)[np.asarray(h), y]
    return w / w.sum()


def randomize(x, hashes, g: int, eps: float, rng) -> np.ndarray:
    """OLH reports: y_u = GRR_g(h_u(x_u)) for users with hash tables `hashes` (n x d)."""
    x = np.asarray(x)
    v = hashes[np.arange(x.size), x]
    p = np.exp(eps) / (np.exp(eps) + g - 1)
    keep = rng.random(x.size) < p
    other = (v + rng.integers(1, g, size=x.size)) % g
    return np.where(keep, v, other)


def olh_estimate(reports, hashes, g: int, eps: float) -> np.ndarray:
    """Unbiased OLH counts: (#{u: h_u(x) = y_u} - n/g) / (p - 1/g), p = e^eps/(e^eps + g - 1)."""
    reports = np.asarray(reports)
    support = (hashes == reports[:, None]).sum(axis=0)
    p = np.exp(eps) / (np.exp(eps) + g - 1)
    n = reports.size
    return (support - n / g) / (p - 1 / g)


def olh_variance(n: int, n_x, g: int, eps: float):
    """Exact variance of the OLH count of a value held by n_x of n users (hashes uniform over all
    maps): each holder supports x with prob p, each other user with prob exactly 1/g."""
    p = np.exp(eps) / (np.exp(eps) + g - 1)
    n_x = np.asarray(n_x, float)
    return (n_x * p * (1 - p) + (n - n_x) * (1 / g) * (1 - 1 / g)) / (p - 1 / g) ** 2
