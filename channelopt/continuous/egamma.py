"""The E_gamma (hockey-stick) divergence E_gamma(f || g) = sup_S f(S) - gamma g(S)
= integral of (f - gamma g)^+ (CA-LIP Def 8), in closed form for two Gaussians (CA-LIP Lemma 4) and
by quadrature for any pair of densities.

Gaussian case. The set {f >= gamma g} is where the quadratic
    h(y) = (y - mu2)^2 / (2 s2^2) - (y - mu1)^2 / (2 s1^2) + ln(s2 / s1) - ln(gamma)
is >= 0: outside its roots [y_l, y_u] when s1 > s2 (Lemma 4's case), between them when s1 < s2,
a half-line when s1 = s2 (or everything / nothing). Roots come from the numerically stable form of
the quadratic formula, and each piece is a difference of Gaussian tail probabilities taken on the
side where they are small (norm.sf / norm.cdf), so values near 0 or 1 keep their digits.
"""

from __future__ import annotations

import numpy as np
from scipy import integrate
from scipy.stats import norm

from ..errors import ProblemError


def _check(name, v, positive=True):
    if not (isinstance(v, (int, float, np.floating)) and np.isfinite(v) and (v > 0 if positive else True)):
        raise ProblemError(f"{name} must be a finite number{' > 0' if positive else ''}, got {v!r}")
    return float(v)


def _roots(a: float, b: float, c: float) -> tuple[float, float] | None:
    """Real roots of a y^2 + b y + c (a != 0), sorted; None if there are none."""
    disc = b * b - 4 * a * c
    if disc < 0:
        return None
    sq = np.sqrt(disc)
    qv = -0.5 * (b + np.copysign(sq, b)) if b != 0 else -0.5 * sq
    r1 = qv / a
    r2 = c / qv if qv != 0 else -r1
    return (min(r1, r2), max(r1, r2))


def _mass(mu, s, lo, hi) -> float:
    """P(lo <= Y <= hi) for N(mu, s^2), accurate in both tails."""
    if hi <= lo:
        return 0.0
    zl, zh = (lo - mu) / s, (hi - mu) / s
    if zl > 0:
        return float(norm.sf(zl) - norm.sf(zh))
    if zh < 0:
        return float(norm.cdf(zh) - norm.cdf(zl))
    return float(1.0 - norm.cdf(zl) - norm.sf(zh))


def gaussian(mu1: float, s1: float, mu2: float, s2: float, gamma: float) -> float:
    """E_gamma(N(mu1, s1^2) || N(mu2, s2^2)) for gamma >= 0."""
    s1, s2 = _check("sigma_1", s1), _check("sigma_2", s2)
    mu1, mu2 = _check("mu_1", mu1, False), _check("mu_2", mu2, False)
    if not (np.isfinite(gamma) and gamma >= 0):
        raise ProblemError(f"gamma must be a finite number >= 0, got {gamma!r}")
    if gamma == 0:
        return 1.0
    a = 1 / (2 * s2 ** 2) - 1 / (2 * s1 ** 2)
    b = -mu2 / s2 ** 2 + mu1 / s1 ** 2
    c = mu2 ** 2 / (2 * s2 ** 2) - mu1 ** 2 / (2 * s1 ** 2) + np.log(s2 / s1) - np.log(gamma)
    inf = np.inf
    if abs(a) < 1e-15 * max(1 / s1 ** 2, 1 / s2 ** 2):           # equal variances: linear b y + c >= 0
        if b == 0:
            pieces = [(-inf, inf)] if c >= 0 else []
        else:
            y0 = -c / b
            pieces = [(y0, inf)] if b > 0 else [(-inf, y0)]
    else:
        r = _roots(a, b, c)
        if a > 0:                                              # s1 > s2: outside the roots
            pieces = [(-inf, inf)] if r is None else [(-inf, r[0]), (r[1], inf)]
        else:                                                  # s1 < s2: between the roots
            pieces = [] if r is None else [(r[0], r[1])]
    val = sum(_mass(mu1, s1, lo, hi) - gamma * _mass(mu2, s2, lo, hi) for lo, hi in pieces)
    return float(min(max(val, 0.0), 1.0))


def lemma4(mu1: float, s1: float, mu2: float, s2: float, gamma: float) -> float:
    """CA-LIP Lemma 4 as printed (s1 >= s2, roots y_l <= y_u of f = gamma g):
    1 + Q((y_u - mu1)/s1) - Q((y_l - mu1)/s1) - gamma [1 + Q((y_u - mu2)/s2) - Q((y_l - mu2)/s2)]."""
    a = 1 / (2 * s2 ** 2) - 1 / (2 * s1 ** 2)
    b = -mu2 / s2 ** 2 + mu1 / s1 ** 2
    c = mu2 ** 2 / (2 * s2 ** 2) - mu1 ** 2 / (2 * s1 ** 2) + np.log(s2 / s1) - np.log(gamma)
    r = _roots(a, b, c) if a != 0 else None
    if r is None:
        raise ProblemError("Lemma 4 needs s1 > s2 and two crossing points")
    yl, yu = r
    Q = norm.sf
    return float(1 + Q((yu - mu1) / s1) - Q((yl - mu1) / s1) - gamma * (1 + Q((yu - mu2) / s2) - Q((yl - mu2) / s2)))


def numerical(f, g, gamma: float, lo: float, hi: float, points=None, n: int = 20001) -> float:
    """integral over [lo, hi] of max(f - gamma g, 0) (f, g: vectorized pdfs), independent of the
    closed form: the sign changes of f - gamma g are located on an n-point grid and refined by
    Brent's method, then f - gamma g (smooth there) is integrated by adaptive quadrature on each
    interval where it is positive."""
    from scipy.optimize import brentq
    h = lambda y: f(y) - gamma * g(y)          # noqa: E731
    y = np.linspace(lo, hi, n)
    if points is not None:
        y = np.unique(np.concatenate([y, np.asarray(points, float)]))
    v = h(y)
    pos = v > 0
    total = 0.0
    k = 0
    while k < y.size:
        if not pos[k]:
            k += 1
            continue
        j = k
        while j + 1 < y.size and pos[j + 1]:
            j += 1
        a = y[k] if k == 0 else brentq(h, y[k - 1], y[k], xtol=1e-14)
        b = y[j] if j == y.size - 1 else brentq(h, y[j], y[j + 1], xtol=1e-14)
        total += integrate.quad(h, a, b, limit=200, epsabs=1e-14, epsrel=1e-12)[0]
        k = j + 1
    return float(max(total, 0.0))


def prop3_rhs(E_inv: float, eps: float) -> float:
    """CA-LIP Prop 3: E_{e^eps}(f_{Y|X} || f_Y) = e^eps E_{e^-eps}(f_Y || f_{Y|X}) - e^eps + 1."""
    return float(np.exp(eps) * E_inv - np.exp(eps) + 1)
