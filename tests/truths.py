"""Independent truths: closed derivations that do not use channelopt's solvers or constraint code.

Binary input, two outputs, Hamming distortion. Every column-homogeneous notion on a binary input
constrains only the likelihood ratio r = q[1, y] / q[0, y] of each used column, to an interval
[r_lo, r_hi] cut out by inequalities a + b r >= 0. The feasible (q00, q10) form a polygon whose
vertices are (0, 0), (1, 1) and the two points where both columns sit at extreme ratios; the
Hamming error P0 (1 - q00) + P1 q10 is linear, so its minimum is at one of them.
"""

import itertools
import math

import numpy as np
from scipy.optimize import brentq


def ratio_interval(halfplanes):
    """[r_lo, r_hi] of {r > 0 : a + b r >= 0 for every (a, b)}."""
    lo, hi = 0.0, math.inf
    for a, b in halfplanes:
        if b > 0:
            lo = max(lo, -a / b)
        elif b < 0:
            hi = min(hi, -a / b)
        elif a < 0:
            return None
    return (lo, hi) if lo <= hi else None


def lift_halfplanes(p1, eps_up, eps_low=None):
    """e^-eps_low <= q[x, y] / lam[y] <= e^eps_up for x = 0, 1 (G = X binary, Pr(X=1) = p1),
    written in r with lam / q0 = p0 + p1 r."""
    eps_low = eps_up if eps_low is None else eps_low
    p0 = 1 - p1
    eu, el = math.exp(eps_up), math.exp(-eps_low)
    return [
        (eu * p0 - 1, eu * p1),     # q0 <= e^eu lam
        (1 - el * p0, -el * p1),    # e^-el lam <= q0
        (eu * p0, eu * p1 - 1),     # q1 <= e^eu lam
        (-el * p0, 1 - el * p1),    # e^-el lam <= q1
    ]


def di_halfplanes(p1, eps):
    """P0 q0 <= e^eps P1 q1 and P1 q1 <= e^eps P0 q0."""
    p0 = 1 - p1
    return [(-p0, math.exp(eps) * p1), (math.exp(eps) * p0, -p1)]


def ldp_halfplanes(eps):
    return [(-1.0, math.exp(eps)), (math.exp(eps), -1.0)]


def binary_hamming_optimum(p1, halfplanes):
    """Minimum Pr(Y != X) over 2 x 2 channels whose used columns have ratio in the interval."""
    p0 = 1 - p1
    best = min(p0, p1)  # vertices (0, 0) and (1, 1): a constant output
    iv = ratio_interval(halfplanes)
    if iv is None:
        return best
    lo, hi = iv
    if lo < 1 < hi and math.isfinite(hi):
        for a, b in ((lo, hi), (hi, lo)):  # column 0 at ratio a, column 1 at ratio b
            q00 = (b - 1) / (b - a)
            best = min(best, p0 * (1 - q00) + p1 * a * q00)
    return best


def binary_entropy(p):
    return 0.0 if p in (0, 1) else -(p * math.log(p) + (1 - p) * math.log(1 - p))


def mip_uniform_binary_hamming(eps):
    """Rate-distortion of a uniform binary source: I >= ln 2 - H(D), so min D = H^-1(ln 2 - eps)."""
    if eps >= math.log(2):
        return 0.0
    return brentq(lambda D: binary_entropy(D) - (math.log(2) - eps), 1e-15, 0.5)


def mil_uniform_binary_hamming(eps):
    """sum_y max_x q[x, y] <= e^eps; for e^eps <= 2 the best is a + b = 2 - e^eps, error (a+b)/2."""
    return max(0.0, 1 - math.exp(eps) / 2)


def grr_hamming(d, eps):
    """Generalized randomized response for a uniform prior: error 1 - e^eps / (e^eps + d - 1)."""
    return (d - 1) / (math.exp(eps) + d - 1)


def lip_vertices(P, eps, lower=None):
    """Every vertex of {e^-eps P <= v <= min(e^eps P, 1), sum v = 1} (e^-lower P below, for ALIP):
    all coordinates at a bound but one, which the sum fixes (written from the definition)."""
    d = P.size
    lo, hi = math.exp(-(eps if lower is None else lower)) * P, np.minimum(math.exp(eps) * P, 1.0)
    out = []
    for j in range(d):
        rest = [x for x in range(d) if x != j]
        for bits in itertools.product((0, 1), repeat=d - 1):
            v = np.empty(d)
            v[rest] = np.where(np.array(bits, bool), hi[rest], lo[rest])
            v[j] = 1.0 - v[rest].sum()
            if lo[j] - 1e-12 <= v[j] <= hi[j] + 1e-12:
                out.append(v)
    return np.array(out)


def ldp_vertices(P, eps):
    """Every vertex of eps-LDP's admissible posteriors, `P * (1 + (e^eps - 1) 1_S)` normalized, for
    every subset S (rows; S = {} and S = X both give the prior), from the definition."""
    S = np.array(list(itertools.product((0, 1), repeat=P.size)), float)
    V = P * (1 + math.expm1(eps) * S)
    return V / V.sum(axis=1, keepdims=True)
