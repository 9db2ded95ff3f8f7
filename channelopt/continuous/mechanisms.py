"""Continuous-valued LIP mechanisms (CA-LIP §IV-C): sampling (Eq 20-21, Prop 2), the context-aware
Gaussian mechanism (Thm 5, Cor 10, Remark 2) with the LDP baselines (vanilla bound, Eq 24), and the
context-aware Laplace mechanism (Thm 6).

Two readings of (eps, delta)-LIP appear in CA-LIP and differ by a factor e^eps on one side:
  "def5": Def 5 / Eq 3, Pr(Y in S) <= e^eps Pr(Y in S | x) + delta and
          e^-eps Pr(Y in S | x) - delta <= Pr(Y in S), i.e. E_{e^eps}(f_Y || f_{Y|x}) <= delta and
          e^-eps E_{e^eps}(f_{Y|x} || f_Y) <= delta;
  "cor9": Cor 9 / Eq 22, E_{e^eps}(f_{Y|x} || f_Y) <= delta and E_{e^eps}(f_Y || f_{Y|x}) <= delta.
"cor9" is the stronger one; Thm 5 and Cor 10 are stated with it, Prop 2 matches "def5".
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.stats import norm

from ..errors import ProblemError
from . import egamma


def check_eps_delta(eps, delta) -> tuple[float, float]:
    if not (isinstance(eps, (int, float, np.floating)) and np.isfinite(eps) and eps > 0):
        raise ProblemError(f"epsilon must be a finite number > 0, got {eps!r}")
    if not (isinstance(delta, (int, float, np.floating)) and 0 <= delta < 1):
        raise ProblemError(f"delta must be in [0, 1), got {delta!r}")
    return float(eps), float(delta)


def _sigma(name, s):
    if not (isinstance(s, (int, float, np.floating)) and np.isfinite(s) and s > 0):
        raise ProblemError(f"{name} must be a finite number > 0, got {s!r}")
    return float(s)


# ---- sampling mechanism ------------------------------------------------------------------------

def sampling_lambda(eps: float, delta: float) -> float:
    """CA-LIP Prop 2: lambda = min{delta e^eps, 1 - e^-eps + delta e^-eps}."""
    eps, delta = check_eps_delta(eps, delta)
    return float(min(delta * np.exp(eps), 1 - np.exp(-eps) + delta * np.exp(-eps)))


def sampling_deltas(lam: float, eps: float) -> dict:
    """Exact deltas of the sampling mechanism Y = X w.p. lambda, else an independent draw from f_X
    (continuous f_X): f_{Y|x} = lambda delta_x + (1 - lambda) f_X and f_Y = f_X, so
    E_{e^eps}(f_{Y|x} || f_Y) = lambda (the atom) and E_{e^eps}(f_Y || f_{Y|x}) = max(0, 1 - e^eps (1 - lambda))."""
    fwd = lam
    back = max(0.0, 1 - np.exp(eps) * (1 - lam))
    return {"def5": max(back, np.exp(-eps) * fwd), "cor9": max(back, fwd)}


def sampling_mae(lam: float, pair_mae: float) -> float:
    """Eq 21 with D = |.|: E|X - Y| = (1 - lambda) E|X - X'| (X' an independent copy)."""
    return float((1 - lam) * pair_mae)


def pair_mae(kind: str, **p) -> float:
    """E|X - X'| for two independent copies: Gaussian 2 sigma / sqrt(pi); uniform (b - a)/3; Beta by
    quadrature of 2 int F(1 - F)."""
    from scipy import integrate
    from scipy.stats import beta
    if kind == "gaussian":
        return 2 * p["sigma"] / np.sqrt(np.pi)
    if kind == "uniform":
        return (p["b"] - p["a"]) / 3
    if kind == "beta":
        F = beta(p["a"], p["b"]).cdf
        return 2 * integrate.quad(lambda x: F(x) * (1 - F(x)), 0, 1)[0]
    raise ProblemError(f"unknown distribution {kind!r}")


# ---- Gaussian mechanism ------------------------------------------------------------------------

def gaussian_deltas(x: float, sigma_n: float, mu_x: float, sigma_x: float, eps: float) -> tuple[float, float]:
    """(E_{e^eps}(N(x, s_n^2) || f_Y), E_{e^eps}(f_Y || N(x, s_n^2))) with f_Y = N(mu_x, s_x^2 + s_n^2)."""
    sy = np.hypot(sigma_x, sigma_n)
    g = np.exp(eps)
    return egamma.gaussian(x, sigma_n, mu_x, sy, g), egamma.gaussian(mu_x, sy, x, sigma_n, g)


def gaussian_delta(sigma_n: float, mu_x: float, sigma_x: float, eps: float, lo: float, hi: float,
                   form: str = "cor9") -> tuple[float, float]:
    """CA-LIP Thm 5: delta(sigma_n) = sup over x in [lo, hi] of the larger E_gamma (form "cor9"; "def5"
    scales the first by e^-eps). Returns (delta, argmax x). The data must be bounded: as |x| grows the
    first divergence tends to 1. The sup is found on an 81-point grid (ends included) refined by a
    bounded Brent search around each of the three best grid points (both E_gamma are smooth in x)."""
    sigma_n, sigma_x = _sigma("sigma_N", sigma_n), _sigma("sigma_X", sigma_x)
    scale = np.exp(-eps) if form == "def5" else 1.0

    def d(x):
        a, b = gaussian_deltas(x, sigma_n, mu_x, sigma_x, eps)
        return max(scale * a, b)

    xs = np.linspace(lo, hi, 81)
    vals = np.array([d(x) for x in xs])
    i = int(np.argmax(vals))
    best_x, best = float(xs[i]), float(vals[i])
    for i in np.argsort(vals)[-3:]:
        a_, b_ = xs[max(i - 1, 0)], xs[min(i + 1, xs.size - 1)]
        if b_ > a_:
            r = minimize_scalar(lambda x: -d(x), bounds=(a_, b_), method="bounded", options={"xatol": 1e-9})
            if -r.fun > best:
                best_x, best = float(r.x), float(-r.fun)
    return best, best_x


def gaussian_sigma(x: float, mu_x: float, sigma_x: float, eps: float, delta: float, form: str = "cor9",
                   hi: float = 1e6) -> float:
    """CA-LIP Cor 10: the smallest sigma_N with both E_gamma <= delta at the data point x. Both
    divergences decrease as sigma_N grows (f_{Y|x} and f_Y merge), so the constraint has one
    crossing; it is bracketed on a log grid and found by Brent's method."""
    eps, delta = check_eps_delta(eps, delta)
    scale = np.exp(-eps) if form == "def5" else 1.0

    def excess(log_s):
        a, b = gaussian_deltas(x, np.exp(log_s), mu_x, sigma_x, eps)
        return max(scale * a, b) - delta

    grid = np.linspace(np.log(1e-4 * sigma_x), np.log(hi), 60)
    vals = np.array([excess(v) for v in grid])
    ok = np.nonzero(vals <= 0)[0]
    if not ok.size:
        raise ProblemError(f"no sigma_N up to {hi:g} meets delta = {delta} at x = {x}")
    k = ok[0]
    if k == 0:
        return float(np.exp(grid[0]))
    return float(np.exp(brentq(excess, grid[k - 1], grid[k], xtol=1e-12)))


def vanilla_delta(eps: float, sigma_n: float, sensitivity: float) -> float:
    """Vanilla Gaussian LDP bound: delta <= 1.25 exp(-eps^2 sigma_N^2 / (2 Delta^2)) (CA-LIP §IV-C)."""
    return float(1.25 * np.exp(-eps ** 2 * sigma_n ** 2 / (2 * sensitivity ** 2)))


def analytic_delta(eps: float, sigma_n: float, sensitivity: float) -> float:
    """CA-LIP Eq 24 (analytic Gaussian LDP): Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D)."""
    D, s = sensitivity, sigma_n
    return float(norm.cdf(D / (2 * s) - eps * s / D) - np.exp(eps) * norm.cdf(-D / (2 * s) - eps * s / D))


def gmm_sigma(weights, means, sigmas, eps: float, delta: float, lo: float, hi: float, form: str = "cor9") -> float:
    """Remark 2 + Lemma 2 (modular property): a sigma_N that is (eps, delta)-LIP for every component's
    Gaussian prior over [lo, hi] is (eps, delta)-LIP for the mixture; the largest per-component
    instance-independent sigma is returned (found by bisection on Thm 5's delta, decreasing in sigma)."""
    out = 0.0
    for m, s in zip(means, sigmas):
        f = lambda ls, m=m, s=s: gaussian_delta(np.exp(ls), m, s, eps, lo, hi, form)[0] - delta     # noqa: E731
        a, b = np.log(1e-3 * s), np.log(1e4 * (hi - lo + s))
        if f(a) <= 0:
            out = max(out, float(np.exp(a)))
            continue
        out = max(out, float(np.exp(brentq(f, a, b, xtol=1e-10))))
    return out


# ---- Laplace mechanism -------------------------------------------------------------------------

def laplace_indep(P, sensitivity: float, eps: float) -> float:
    """CA-LIP Thm 6, Eq 25: b = Delta / ln((e^eps - P_min)/(1 - P_min)) if eps < ln(1/P_min), else Delta / eps."""
    pmin = float(np.min(P))
    if eps < np.log(1 / pmin):
        return float(sensitivity / np.log((np.exp(eps) - pmin) / (1 - pmin)))
    return float(sensitivity / eps)


def laplace_dep(P, sensitivity: float, eps: float, alpha: float) -> np.ndarray:
    """CA-LIP Thm 6, Eq 26: b(x) = Delta / (alpha_eps P_X(x) + eps)."""
    return sensitivity / (alpha * np.asarray(P, float) + eps)


def truncated_laplace(values, scales, lo: float, hi: float, y: np.ndarray) -> np.ndarray:
    """Densities f(y | x) on [lo, hi] of Y = X + Lap(0, b(x)) conditioned on Y in [lo, hi] (rows: x)."""
    v = np.asarray(values, float)[:, None]
    b = np.broadcast_to(np.asarray(scales, float), (v.shape[0],))[:, None]
    Z = b * (2 - np.exp(-(v - lo) / b) - np.exp(-(hi - v) / b))
    return np.exp(-np.abs(y[None, :] - v) / b) / Z


def laplace_lip_leakage(P, values, scales, lo: float, hi: float, n: int = 20001) -> float:
    """LIP leakage max |ln f(y|x)/f(y)| of the truncated Laplace mechanism with a discrete prior P on
    `values`: on [lo, hi] each log-ratio is piecewise (linear minus log-sum-exp), so a fine grid that
    contains every breakpoint (lo, hi, the values) is refined by a bounded search around its best
    point."""
    P = np.asarray(P, float)
    y = np.unique(np.concatenate([np.linspace(lo, hi, n), np.asarray(values, float)]))
    f = truncated_laplace(values, scales, lo, hi, y)
    fy = P @ f
    L = np.abs(np.log(f) - np.log(fy))
    i, j = (int(k) for k in np.unravel_index(np.argmax(L), L.shape))
    best = float(L[i, j])
    a, b = y[max(j - 1, 0)], y[min(j + 1, y.size - 1)]

    def neg(t):
        ft = truncated_laplace(values, scales, lo, hi, np.array([t]))[:, 0]
        return -abs(np.log(ft[i]) - np.log(P @ ft))

    r = minimize_scalar(neg, bounds=(a, b), method="bounded", options={"xatol": 1e-12})
    return max(best, float(-r.fun))


def laplace_alpha(P, values, sensitivity: float, eps: float, lo: float, hi: float) -> float:
    """The largest alpha_eps in Eq 26 for which the instance-dependent mechanism is eps-LIP by the
    numerical audit (the paper leaves alpha_eps implicit): bisection on alpha in [0, 50]."""
    def ok(alpha):
        return laplace_lip_leakage(P, values, laplace_dep(P, sensitivity, eps, alpha), lo, hi, 4001) <= eps
    if not ok(0.0):
        return 0.0
    a, b = 0.0, 50.0
    if ok(b):
        return b
    for _ in range(40):
        m = (a + b) / 2
        a, b = (m, b) if ok(m) else (a, m)
    return a
