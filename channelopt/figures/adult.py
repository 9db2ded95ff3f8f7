"""Real data, LIP-TDSC §5.2.2: release the work class of Adult (4 groups) while protecting income.

Prior Pr(X) and correlation Pr(X | G) are estimated from `adult.csv`; the BP-LIP set is the
joints of B bootstrap resamples (resampling rows = multinomial counts over the 2 x 4 cells).
Utility: histogram MSE per user (the curator estimates the work-class histogram, LIP-TDSC Eq 39).
"""

from __future__ import annotations

import numpy as np

from ..data import adult_workclass_income, data_file
from ..notions import BPLIP, LDP, LIP, Pufferfish
from ..problem import Joint
from . import Figure
from .common import certified, grid, mse_problem

BOOTSTRAP = 20
SEED = 5


def bootstrap_joints(joint: Joint, n: int, B: int, seed: int) -> list[Joint]:
    """Joints of B bootstrap resamples of n rows from the empirical joint."""
    rng = np.random.default_rng(seed)
    cells = (joint.prior[:, None] * joint.conditional).ravel()
    out = []
    for _ in range(B):
        c = rng.multinomial(n, cells).reshape(joint.conditional.shape).astype(float)
        g = c.sum(axis=1)
        out.append(Joint(g / n, c / g[:, None]))
    return out


def fig_adult(quick: bool) -> Figure:
    path = data_file("adult.csv")
    joint = adult_workclass_income(path)
    n = 30162
    f = Figure("adult-workclass", "LIP-TDSC §5.2.2 on Adult: work class released, income (<=50K / >50K) protected",
               "epsilon", "histogram MSE per user")
    P = joint.prior_x
    scen = bootstrap_joints(joint, n, 8 if quick else BOOTSTRAP, SEED)
    panel = f"prior {np.round(P, 4).tolist()}"
    for eps in grid(0.25, 3, 0.25, quick):
        for label, notion in (("eps-LIP", LIP(eps)), ("eps-BP-LIP (bootstrap set)", BPLIP(eps, scenarios=scen)),
                              ("eps-Pufferfish", Pufferfish(eps)), ("eps-LDP", LDP(eps))):
            f.add(panel, label, eps, certified(mse_problem(P, [notion], latent=joint, kind="histogram-mse")))
        f.add(panel, "no observation", eps, float(1 - P @ P))
    f.notes.append(f"BP-LIP over {len(scen)} bootstrap joints (seed {SEED}). LIP and Pufferfish protect income; "
                   "LDP protects the work class itself. Nobody 'Without-pay' earns >50K, so direct release is never "
                   "LIP at any eps (zero lift).")
    return f


FIGURES = {"adult-workclass": fig_adult}
