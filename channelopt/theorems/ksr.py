"""Kalantari, Sankar and Sarwate, "Robust privacy-utility tradeoffs under differential privacy and
Hamming distortion", IEEE TIFS 13(11), 2018 (KSR): the optimal eps-LDP channel for Hamming
distortion reports one of the k most probable symbols (subset randomized response).

The registered claim is the one `solve` takes as a fast path (`closed_forms.subset_rr`, with its
own dual certificate); here it is judged against the LP solved without closed forms.
"""

from __future__ import annotations

import numpy as np

from ..closed_forms import subset_rr
from ..notions import LDP
from ..problem import Problem
from ..utility import Distortion
from . import Theorem
from .check import channel_claim
from .grids import dims, eps_grid, priors

CITE = "KSR"
RANDOM_SEED = 2018


def _cases(quick: bool) -> list[dict]:
    """The grid priors, plus seeded Dirichlet priors (concentrations 0.3, 1 and 5) at each d."""
    rng = np.random.default_rng(RANDOM_SEED)
    out = []
    for d in dims(quick):
        ps = priors(d, quick) + [rng.dirichlet(np.full(d, a)) for a in (0.3, 1.0, 5.0)]
        out += [{"prior": p.tolist(), "epsilon": eps} for p in ps for eps in eps_grid(quick)]
    return out


def _check(inputs):
    P, eps = np.asarray(inputs["prior"]), inputs["epsilon"]
    cf = subset_rr(P, eps)
    problem = Problem(prior=P, privacy=[LDP(eps)], utility=Distortion("hamming"))
    return channel_claim(inputs, problem, cf.channel, {"k": cf.details["k"]})


THEOREMS = [
    Theorem("ksr-subset-rr", f"{CITE} (subset randomized response)", "for every prior, reporting one of the k most "
            "probable symbols (truthfully w.p. e^eps/(e^eps+k-1), best k) minimizes the Hamming distortion under "
            "eps-LDP; k = d (GRR) for a uniform prior", _cases, _check,
            axes=("min prior", "epsilon"), coords=lambda i: (min(i["prior"]), i["epsilon"])),
]
