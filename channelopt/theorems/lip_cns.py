"""LIP-CNS (004): "Context-aware Data Aggregation with Localized Information Privacy" — the binary
closed forms (Theorem 2, Eq 21, Propositions 3-4, Eq 24) and the M-ary LDP GRR baseline."""

from __future__ import annotations

import numpy as np

from ..estimators import grr
from ..notions import LDP, LIP
from ..problem import Problem
from ..utility import Bayes, Distortion
from . import Theorem
from .check import certified_optimum, channel_claim, value_claim
from .grids import binary_p1, dims, eps_grid
from .lip_tdsc import rr_condition, rr_lip

CITE = "004_1938e4f2f6d11c6b.txt"


def eq21(P1: float, eps: float) -> float:
    """004 Eq 21 per user: P1 (1 - P1)(2 e^-eps - e^-2eps)."""
    return P1 * (1 - P1) * (2 * np.exp(-eps) - np.exp(-2 * eps))


def eq24(P1: float, eps: float) -> float:
    """004 Eq 24 per user: P1(1-P1) - [P1(1-P1)(1-e^eps)]^2 / ((1-P1+P1 e^eps)(e^eps - P1 e^eps + P1))."""
    e, v = np.exp(eps), P1 * (1 - P1)
    return v - (v * (1 - e)) ** 2 / ((1 - P1 + P1 * e) * (e - P1 * e + P1))


def _binary_cases(quick: bool) -> list[dict]:
    return [{"prior": [1 - p, p], "epsilon": eps} for p in binary_p1(quick) for eps in eps_grid(quick)]


def _p1_eps(inputs):
    return (inputs["prior"][1], inputs["epsilon"])


def _problem(inputs, notion, utility) -> Problem:
    return Problem(prior=inputs["prior"], privacy=[notion], utility=utility)


def _thm2(inputs):
    return channel_claim(inputs, _problem(inputs, LIP(inputs["epsilon"]), Bayes("bayes-mse")),
                         rr_lip(inputs["prior"], inputs["epsilon"]))


def _eq21(inputs):
    r = certified_optimum(_problem(inputs, LIP(inputs["epsilon"]), Bayes("bayes-mse")))
    return value_claim(inputs, eq21(inputs["prior"][1], inputs["epsilon"]), r.objective,
                       optimum={"channel": r.channel.tolist(), "objective": r.objective})


def _prop3(inputs):
    return channel_claim(inputs, _problem(inputs, LIP(inputs["epsilon"]), Distortion("mae")),
                         rr_lip(inputs["prior"], inputs["epsilon"]))


def _prop4(inputs):
    return channel_claim(inputs, _problem(inputs, LDP(inputs["epsilon"]), Bayes("bayes-mse")),
                         grr(2, inputs["epsilon"]))     # 004 Prop 4: q0 = q1 = 1/(e^eps + 1)


def _eq24(inputs):
    r = certified_optimum(_problem(inputs, LDP(inputs["epsilon"]), Bayes("bayes-mse")))
    return value_claim(inputs, eq24(inputs["prior"][1], inputs["epsilon"]), r.objective,
                       optimum={"channel": r.channel.tolist(), "objective": r.objective})


def _grr_cases(quick: bool) -> list[dict]:
    return [{"prior": [1.0 / d] * d, "epsilon": eps} for d in dims(quick) for eps in eps_grid(quick)]


def _grr(inputs):
    d = len(inputs["prior"])
    return channel_claim(inputs, _problem(inputs, LDP(inputs["epsilon"]), Distortion("hamming")),
                         grr(d, inputs["epsilon"]))


_RR = ("e^eps - (1 - P_m) <= P_m e^(2 eps) for both symbols", rr_condition)

THEOREMS = [
    Theorem("cns-thm2", f"{CITE} Theorem 2", "binary RR-LIP q0 = P1/e^eps, q1 = (1-P1)/e^eps minimizes the MMSE "
            "under eps-LIP", _binary_cases, _thm2, axes=("P1", "epsilon"), coords=_p1_eps, candidates=(_RR,)),
    Theorem("cns-eq21", f"{CITE} Eq 21", "optimal binary LIP MSE = P1(1-P1)(2e^-eps - e^-2eps)", _binary_cases, _eq21,
            axes=("P1", "epsilon"), coords=_p1_eps, candidates=(_RR,)),
    Theorem("cns-prop3", f"{CITE} Proposition 3", "the Theorem 2 channel also minimizes the MAE E|X - Y| under "
            "eps-LIP", _binary_cases, _prop3, axes=("P1", "epsilon"), coords=_p1_eps, candidates=(_RR,)),
    Theorem("cns-prop4", f"{CITE} Proposition 4", "binary RR with q0 = q1 = 1/(e^eps+1) minimizes the MMSE under "
            "eps-LDP", _binary_cases, _prop4, axes=("P1", "epsilon"), coords=_p1_eps),
    Theorem("cns-eq24", f"{CITE} Eq 24", "optimal binary LDP MSE of Proposition 4", _binary_cases, _eq24,
            axes=("P1", "epsilon"), coords=_p1_eps),
    Theorem("ldp-grr-hamming", f"{CITE} §IV (M-ary LDP GRR; 000 §5.1.5 ref. [10])", "GRR minimizes the expected "
            "Hamming distortion under eps-LDP for a uniform prior", _grr_cases, _grr,
            conditions="uniform prior"),
]
