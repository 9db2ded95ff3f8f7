"""ALIP (003): "Asymmetric Local Information Privacy and the Watchdog Mechanism" — Proposition 1."""

from __future__ import annotations

import numpy as np

from ..audit import audit
from ..notions import ALIP
from ..problem import Problem
from ..utility import Bayes, Distortion
from . import Theorem
from .check import bound_claim, certified_optimum
from .grids import clean, dims, priors

CITE = "003_47b679c903fb9faa.txt"


def _cases(quick: bool) -> list[dict]:
    pairs = ((0.1, 0.5), (0.5, 0.5), (1.0, 0.2), (0.3, 2.0)) if not quick else ((0.1, 0.5), (1.0, 0.2))
    return [{"prior": clean(P), "epsilon_lower": lo, "epsilon_upper": up}
            for d in dims(quick) for P in priors(d, quick) for lo, up in pairs]


def _prop1(inputs):
    """(eps_l, eps_u)-ALIP implies (eps_l + eps_u)-LDP and I(X;Y) <= eps_u, on the certified ALIP
    optima for Hamming, MAP and mutual information (G = X)."""
    lo, up = inputs["epsilon_lower"], inputs["epsilon_upper"]
    worst = None
    for utility in (Distortion("hamming"), Bayes("map"), Bayes("mutual-information")):
        problem = Problem(prior=inputs["prior"], privacy=[ALIP(lo, up)], utility=utility)
        q = certified_optimum(problem).channel
        m = audit(problem, q).measures
        for name, measured, bound in (("ldp", m["ldp"], lo + up), ("mutual information", m["mip"], up)):
            o = bound_claim(inputs, float(measured), bound, {"implied": f"{name} <= {bound:.6g}", "channel": q.tolist()})
            if worst is None or o.gap > worst.gap:
                worst = o
    return worst


THEOREMS = [
    Theorem("alip-prop1", f"{CITE} Proposition 1", "(eps_l, eps_u)-ALIP implies (eps_l + eps_u)-LDP and "
            "I(X;Y) <= eps_u", _cases, _prop1),
]
