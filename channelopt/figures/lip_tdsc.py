"""LIP-TDSC §5.1: Fig 7, 8, 9, 11 (synthetic data, |X| = 5 unless binary).

The MSE curves are per user (the paper's totals over N users are N times these, LIP-TDSC Theorem 1).
"""

from __future__ import annotations

import numpy as np

from ..estimators import grr, unbiased_sum_mse
from ..notions import BPLIP, LDP, LIP, Pufferfish
from ..problem import Problem
from ..closed_forms import rr_lip
from ..utility import Distortion
from . import Figure
from .common import certified, closed_form_point, correlated, grid, mse_problem, note_closed_form

VALUES = np.arange(5.0)
THETA1 = np.full(5, 0.2)
THETA2 = np.array([0.025, 0.025, 0.025, 0.025, 0.9])
"""The paper prints theta_2 = {0.025, 0.025, 0.025, 0.025, 0.02}, which does not sum to 1; the
last entry is taken as 0.9 (the only completion of the four 0.025s)."""
FIG8_PRIOR = np.array([0.1, 0.15, 0.2, 0.25, 0.3])


def fig7(quick: bool) -> Figure:
    f = Figure("tdsc-fig7", "LIP-TDSC Fig 7: prior-aware vs prior-free, X = G, values 0..4",
               "epsilon", "MSE per user", logy=True)
    for pname, P in (("theta1 (uniform)", THETA1), ("theta2 (skewed)", THETA2)):
        for eps in grid(1, 5, 0.5, quick):
            lip = mse_problem(P, [LIP(eps)], values=VALUES)
            f.add(pname, "eps-LIP certified optimum", eps, certified(lip))
            obj, ok, leak = closed_form_point(lip, rr_lip(P, eps))
            f.add(pname, "eps-LIP closed form (LIP-TDSC Thm 3)", eps, obj, feasible=ok, leakage=leak)
            f.add(pname, "eps-LDP certified optimum (MMSE)", eps, certified(mse_problem(P, [LDP(eps)], values=VALUES)))
            f.add(pname, "context-free LDP (GRR, unbiased, Eq 40)", eps, unbiased_sum_mse(P, grr(5, eps), VALUES))
    note_closed_form(f)
    return f


def fig8(quick: bool) -> Figure:
    f = Figure("tdsc-fig8", "LIP-TDSC Fig 8: correlation between X and the secret G (eps-LIP w.r.t. G)",
               "epsilon", "MSE per user")
    for rho in (1.0, 0.7, 0.3):
        for eps in grid(0.5, 5, 0.5, quick):
            p = mse_problem(FIG8_PRIOR, [LIP(eps)], latent=correlated(FIG8_PRIOR, rho), values=VALUES)
            f.add("prior [0.1, 0.15, 0.2, 0.25, 0.3]", f"rho = {rho}", eps, certified(p))
    f.notes.append("Correlation built as Pr(X|G) = rho [X = G] + (1 - rho) P_X (same marginals, corr = rho); "
                   "the paper does not give its T_GX. Direct release (MSE 0) becomes feasible once eps reaches "
                   "max |log Pr(g|x)/Pr(g)|, i.e. earlier for weaker correlation.")
    return f


def fig9(quick: bool) -> Figure:
    f = Figure("tdsc-fig9", "LIP-TDSC Fig 9: bounded correlation set rho in {0.5, 0.7, 0.9}, true rho = 0.7",
               "epsilon", "MSE per user")
    P = FIG8_PRIOR
    scen = [correlated(P, r) for r in (0.5, 0.7, 0.9)]
    true = correlated(P, 0.7)
    panel = "prior [0.1, 0.15, 0.2, 0.25, 0.3]"
    var = float(P @ VALUES ** 2 - (P @ VALUES) ** 2)
    for eps in grid(0.5, 5, 0.5, quick):
        for label, notion in (("eps-BP-LIP", BPLIP(eps, scenarios=scen)), ("eps/2-BP-LIP", BPLIP(eps / 2, scenarios=scen)),
                              ("eps-Pufferfish", Pufferfish(eps, scenarios=scen)), ("eps-LDP", LDP(eps))):
            f.add(panel, label, eps, certified(mse_problem(P, [notion], latent=true, values=VALUES)))
        f.add(panel, "no observation (Var X)", eps, var)
    f.notes.append("BP-LIP and Pufferfish use the three correlation scenarios; the curator's MSE is evaluated at "
                   "the true joint (rho = 0.7). The paper does not give its sets.")
    return f


def fig11(quick: bool) -> Figure:
    f = Figure("tdsc-fig11", "LIP-TDSC Fig 11: Hamming distortion, LIP vs LDP", "epsilon", "expected Hamming distortion")
    for pmax in (0.1, 0.3):
        panel = f"(a) binary, P1 in [0.01, {pmax}], true P1 = {pmax / 2}"
        prior = [1 - pmax / 2, pmax / 2]
        for eps in grid(0.5, 5, 0.5, quick):
            bp = BPLIP(eps, prior_lower=[1 - pmax, 0.01], prior_upper=[0.99, pmax])
            f.add(panel, "eps-BP-LIP", eps, certified(Problem(prior=prior, privacy=[bp], utility=Distortion("hamming"))))
            f.add(panel, "eps-LDP", eps, certified(Problem(prior=prior, privacy=[LDP(eps)], utility=Distortion("hamming"))))
    for pname, P in (("(b) |X| = 5, uniform", THETA1), ("(b) |X| = 5, skewed theta2", THETA2)):
        for eps in grid(0.5, 5, 0.5, quick):
            for label, notion in (("eps-LIP", LIP(eps)), ("eps-LDP", LDP(eps))):
                f.add(pname, label, eps, certified(Problem(prior=P, privacy=[notion], utility=Distortion("hamming"))))
    return f


FIGURES = {"tdsc-fig7": fig7, "tdsc-fig8": fig8, "tdsc-fig9": fig9, "tdsc-fig11": fig11}
