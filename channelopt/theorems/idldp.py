"""ID-LDP (002): "Providing Input-Discriminative Protection for Local Differential Privacy" —
the OUE baseline of §III-C (its parameters and variance)."""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar

from ..estimators import ue_count_variance
from . import Theorem
from .check import value_claim
from .grids import eps_grid

CITE = "002_dc5a5ac02f569faf.txt"


def ue_ldp_leakage(p: float, q: float) -> float:
    """Exact LDP leakage of symmetric unary encoding: two inputs differ in exactly two bits, so the
    worst output ratio is (p/q) * ((1-q)/(1-p)) (or its inverse), the other bits cancelling."""
    return abs(float(np.log(p * (1 - q) / (q * (1 - p)))))


def ue_variance(p, q):
    """Per-user variance of the UE unbiased count of an absent symbol: q(1-q)/(p-q)^2."""
    return ue_count_variance(1, 0, p, q)


def best_ue(eps: float) -> tuple[float, float, float]:
    """Global minimum of q(1-q)/(p-q)^2 over 0 < q < p < 1 with p(1-q)/(q(1-p)) <= e^eps.

    For fixed q the objective decreases in p on p > q, so the privacy constraint binds:
    p(q) = e q / (1 - q + e q), which is < 1 for every q < 1. What remains is a smooth function of
    one variable on (0, 1): a 20,001-point grid locates the basin, a bounded Brent search refines
    it, and the grid minimum bounds the refinement from above.
    """
    e = np.exp(eps)
    p_of = lambda q: e * q / (1 - q + e * q)    # noqa: E731
    f = lambda q: ue_variance(p_of(q), q)        # noqa: E731
    grid = np.linspace(1e-6, 1 - 1e-6, 20001)
    vals = f(grid)
    i = int(np.argmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    r = minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
    q = r.x if r.fun <= vals[i] else grid[i]
    return p_of(q), q, float(f(q))


def _cases(quick: bool) -> list[dict]:
    return [{"epsilon": eps} for eps in eps_grid(quick)]


def _oue(inputs):
    eps = inputs["epsilon"]
    p, q = 0.5, 1 / (np.exp(eps) + 1)
    claimed_value = 4 * np.exp(eps) / (np.exp(eps) - 1) ** 2
    leak = ue_ldp_leakage(p, q)
    bp, bq, best = best_ue(eps)
    o = value_claim(inputs, claimed_value, best, {"parameters": {"p": p, "q": q}, "exact_variance": ue_variance(p, q)},
                    {"parameters": {"p": bp, "q": bq}, "objective": best})
    o.leakage_of_claim = leak
    if leak > eps * (1 + 1e-6):
        o.kind, o.gap = "infeasible", leak - eps
    elif abs(ue_variance(p, q) - claimed_value) > 1e-6 * claimed_value:
        o.kind, o.gap = "infeasible", abs(ue_variance(p, q) - claimed_value)
    return o


THEOREMS = [
    Theorem("idldp-oue", f"{CITE} §III-C (OUE)", "OUE p = 1/2, q = 1/(e^eps+1) is eps-LDP and attains the minimum "
            "UE count variance 4 e^eps / (e^eps - 1)^2 per user", _cases, _oue),
]
