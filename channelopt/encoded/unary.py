"""Unary encoding (UE): each input x in {0..d-1} becomes the one-hot vector e_x and bit k is
flipped independently, Pr(y_k = 1 | bit 1) = a_k, Pr(y_k = 1 | bit 0) = b_k (ID-LDP §V-B;
symmetric UE a_k = p, b_k = q: RAPPOR and OUE, ID-LDP §III-C; UE-LIP, LIP-TDSC §4.3.2).

Exact leakage without enumerating the 2^d outputs. Write rho_k(1) = a_k / b_k and
rho_k(0) = (1 - a_k) / (1 - b_k). Then Pr(y | x) = B(y) rho_x(y_x) with B(y) = prod_k Pr(y_k | 0)
common to all inputs, so
  * LDP: Pr(y|i) / Pr(y|j) = rho_i(y_i) / rho_j(y_j), maximized by choosing y_i and y_j
    separately: max rho_i / min rho_j (ID-LDP Eq 5 when a > b);
  * LIP (prior P, G = X): Pr(y|x) / Pr(y) = rho_x(y_x) / sum_k P_k rho_k(y_k); for a fixed x and
    y_x the other bits enter only the denominator, one term each, so its extremes take every
    other bit at its smaller (for the largest ratio) or larger (for the smallest) rho.
Both are O(d) per input after two prefix sums. `_enumerate_*` in the tests checks them against all
2^d outputs.
"""

from __future__ import annotations

import numpy as np

from ..errors import ProblemError


def _bits(a, b, d: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    if d is not None:
        a, b = np.broadcast_to(a, (d,)), np.broadcast_to(b, (d,))
    a, b = np.broadcast_arrays(np.atleast_1d(a), np.atleast_1d(b))
    for name, v in (("a", a), ("b", b)):
        bad = ~((v > 0) & (v < 1))
        if bad.any():
            k = int(np.argmax(bad))
            raise ProblemError(f"{name}[{k}] must be in (0, 1), got {v[k]!r}")
    if np.any(a == b):
        k = int(np.argmax(a == b))
        raise ProblemError(f"bit {k}: a = b = {a[k]!r} carries no information (need a != b)")
    return a.astype(float), b.astype(float)


def rappor(eps: float) -> tuple[float, float]:
    """Symmetric RAPPOR: a = e^{eps/2} / (e^{eps/2} + 1), b = 1 - a (ID-LDP §III-C)."""
    h = np.exp(eps / 2)
    return h / (h + 1), 1 / (h + 1)


def oue(eps: float) -> tuple[float, float]:
    """Optimized UE: a = 1/2, b = 1 / (e^eps + 1) (ID-LDP §III-C; LIP-TDSC §4.4)."""
    return 0.5, 1 / (np.exp(eps) + 1)


def _rho(a, b):
    return np.stack([(1 - a) / (1 - b), a / b], axis=-1)              # d x 2: rho_k(0), rho_k(1)


def pair_leakage(a, b, d: int | None = None) -> np.ndarray:
    """L[i, j] = max_y ln Pr(y|i)/Pr(y|j) for i != j (diagonal 0): ln(max rho_i / min rho_j)."""
    a, b = _bits(a, b, d)
    rho = _rho(a, b)
    L = np.log(rho.max(axis=1))[:, None] - np.log(rho.min(axis=1))[None, :]
    np.fill_diagonal(L, 0.0)
    return L


def ldp_leakage(a, b, d: int | None = None) -> float:
    """Exact LDP leakage of UE over d >= 2 inputs."""
    L = pair_leakage(a, b, d)
    if L.shape[0] < 2:
        raise ProblemError("unary encoding needs d >= 2 inputs")
    return float(L.max())


def lip_ratios(a, b, prior) -> tuple[np.ndarray, np.ndarray]:
    """(hi, lo): per input x, the largest and smallest Pr(y|x)/Pr(y) over all outputs y."""
    prior = np.asarray(prior, float)
    a, b = _bits(a, b, prior.size)
    rho = _rho(a, b)
    lo_k, hi_k = prior * rho.min(axis=1), prior * rho.max(axis=1)
    rest_lo = lo_k.sum() - lo_k                                        # other bits at their minimum
    rest_hi = hi_k.sum() - hi_k
    num = rho                                                          # d x 2 choices of y_x
    hi = (num / (prior[:, None] * num + rest_lo[:, None])).max(axis=1)
    lo = (num / (prior[:, None] * num + rest_hi[:, None])).min(axis=1)
    return hi, lo


def lip_leakage(a, b, prior) -> float:
    """Exact eps-LIP leakage (G = X) of UE under `prior`: max over x with P_x > 0 and all y of
    |ln Pr(y|x)/Pr(y)| (LIP-TDSC Eq 32)."""
    prior = np.asarray(prior, float)
    hi, lo = lip_ratios(a, b, prior)
    pos = prior > 0
    return float(max(np.log(hi[pos]).max(), -np.log(lo[pos]).min()))


def lip_budget_ratio(p_min: float, eps: float) -> float:
    """Symmetric UE (p > q) is eps-LIP under a prior with smallest mass P_min (0 < P_min <= 1/2,
    d >= 2) iff its LDP ratio t = p(1-q) / (q(1-p)) <= (e^eps - P_min) / (1 - P_min).

    From `lip_ratios`: the two extreme outputs are y = e_x (ratio rho1 / (P rho1 + (1-P) rho0))
    and y = 1 - e_x (ratio rho0 / ((1-P) rho1 + P rho0)) at the least likely x; both conditions are
    linear in t = rho1/rho0, giving t <= (e^eps - P)/(1-P) and t (1 - e^eps P) <= e^eps (1-P), and
    the first is the smaller by P (e^eps - 1)^2 >= 0 after cross-multiplying."""
    return (np.exp(eps) - p_min) / (1 - p_min)


def randomize(x, a, b, d: int, rng) -> np.ndarray:
    """N x d perturbed bit vectors of the inputs x (Algorithm of ID-LDP §V-B), seeded rng."""
    x = np.asarray(x)
    a, b = _bits(a, b, d)
    u = rng.random((x.size, d))
    bits = u < b
    rows = np.arange(x.size)
    bits[rows, x] = u[rows, x] < a[x]
    return bits


def estimate(bit_counts, n: int, a, b) -> np.ndarray:
    """Unbiased counts c_k = (C_k - n b_k) / (a_k - b_k) (ID-LDP Eq 6, Theorem 3)."""
    bit_counts = np.asarray(bit_counts, float)
    a, b = _bits(a, b, bit_counts.size)
    return (bit_counts - n * b) / (a - b)


def variance(n: int, counts, a, b) -> np.ndarray:
    """Var[c_k] = (c_k a_k (1-a_k) + (n - c_k) b_k (1-b_k)) / (a_k - b_k)^2 (ID-LDP Eq 7)."""
    counts = np.asarray(counts, float)
    a, b = _bits(a, b, counts.size)
    return (counts * a * (1 - a) + (n - counts) * b * (1 - b)) / (a - b) ** 2
