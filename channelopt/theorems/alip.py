"""ALIP: "Asymmetric Local Information Privacy and the Watchdog Mechanism" — Propositions 1-2."""

from __future__ import annotations

import numpy as np

from ..audit import audit
from ..notions import ALIP
from ..problem import Joint, Problem
from ..utility import Bayes, Distortion
from . import Outcome, Theorem
from .check import bound_claim, certified_optimum
from .grids import clean, dims, priors

CITE = "ALIP"


PAIRS = ((0.1, 0.5), (0.5, 0.5), (1.0, 0.2), (0.3, 2.0))


def _joints(quick: bool) -> list[list]:
    """Random Pr(S, X) with |S| in {2, 3}, |X| in {3, 5} (Dirichlet(1) cells; seeded)."""
    rng = np.random.default_rng(31)
    shapes = ((2, 3), (3, 5)) if quick else ((2, 3), (2, 5), (3, 4), (3, 5))
    return [rng.dirichlet(np.ones(a * b)).reshape(a, b).tolist() for a, b in shapes for _ in range(1 if quick else 2)]


def _cases(quick: bool) -> list[dict]:
    pairs = PAIRS if not quick else PAIRS[::2]
    out = [{"prior": clean(P), "epsilon_lower": lo, "epsilon_upper": up}
           for d in dims(quick) for P in priors(d, quick) for lo, up in pairs]
    out += [{"joint": J, "epsilon_lower": lo, "epsilon_upper": up} for J in _joints(quick) for lo, up in pairs]
    return out


def _problem(inputs, utility) -> Problem:
    lo, up = inputs["epsilon_lower"], inputs["epsilon_upper"]
    if "joint" in inputs:
        J = np.asarray(inputs["joint"])
        PS = J.sum(axis=1)
        return Problem(prior=J.sum(axis=0), latent=Joint(PS, J / PS[:, None]), privacy=[ALIP(lo, up)], utility=utility)
    return Problem(prior=inputs["prior"], privacy=[ALIP(lo, up)], utility=utility)


def _prop1(inputs):
    """(eps_l, eps_u)-ALIP implies (eps_l + eps_u)-LDP w.r.t. the secret, and I(S;Y), maximal leakage,
    alpha-lift, Sibson and Arimoto MI (alpha = 2) <= eps_u: measured on the certified ALIP optima for
    Hamming, MAP and mutual information and on random mixtures of them (all ALIP-feasible: the
    constraints are linear in q)."""
    lo, up = inputs["epsilon_lower"], inputs["epsilon_upper"]
    worst = None
    rng = np.random.default_rng(0)
    chans = []
    for utility in (Distortion("hamming"), Bayes("map"), Bayes("mutual-information")):
        problem = _problem(inputs, utility)
        chans.append(certified_optimum(problem).channel)
    m_out = max(c.shape[1] for c in chans)
    chans = [np.pad(c, ((0, 0), (0, m_out - c.shape[1]))) for c in chans]
    chans += [sum(w * c for w, c in zip(rng.dirichlet(np.ones(3)), chans)) for _ in range(3)]
    for q in chans:
        m = audit(problem, q).measures
        checks = [("LDP w.r.t. the secret", m["secret_ldp"], lo + up)]
        checks += [(k, m[f"secret_{k}"], up) for k in ("mutual_information", "maximal_leakage", "alpha_lift",
                                                         "sibson", "arimoto")]
        for name, measured, bound in checks:
            o = bound_claim(inputs, float(measured), bound, {"implied": f"{name} <= {bound:.6g}", "channel": q.tolist()})
            if worst is None or o.gap > worst.gap:
                worst = o
    return worst


def _prop2_cases(quick: bool) -> list[dict]:
    from ..watchdog import random_joint
    rng = np.random.default_rng(32)
    out = []
    for n_s, n_x in (((3, 8),) if quick else ((2, 6), (3, 8), (5, 17))):
        for _ in range(2 if quick else 4):
            J = random_joint(n_s, n_x, rng)
            for lo, up in PAIRS[:2] if quick else PAIRS:
                out.append({"joint": J.tolist(), "epsilon_lower": lo, "epsilon_upper": up})
    return out


def _prop2(inputs):
    """ALIP Prop 2: X-invariant randomization (complete merging) of the high-risk set minimizes the
    leakage there: every randomization R of X_H has an output with max log-lift >= the merged one's
    and an output with min log-lift <= the merged one's. Checked on 200 random randomizations
    (Dirichlet rows, 2 to 6 outputs) per case; the claim is a bound, so a randomization below the
    merged value would refute it."""
    from ..watchdog import watchdog
    J = np.asarray(inputs["joint"])
    w = watchdog(J, inputs["epsilon_lower"], inputs["epsilon_upper"], repair=False)
    if len(w.high) < 2:
        return Outcome("holds", inputs, {"high_risk": w.high}, None, None, 0.0, "fewer than 2 high-risk symbols")
    up, low = w.merged_lifts
    rng = np.random.default_rng(1)
    H = J[:, w.high]
    ps = J.sum(axis=1)
    worst_up, worst_low = np.inf, -np.inf
    for _ in range(200):
        R = rng.dirichlet(np.ones(int(rng.integers(2, 7))) * 0.5, size=len(w.high))      # |X_H| x outputs
        out = H @ R                                                                      # Pr(s, y)
        with np.errstate(divide="ignore", invalid="ignore"):
            ll = np.log(out / out.sum(axis=0)) - np.log(ps)[:, None]
        used = out.sum(axis=0) > 0
        worst_up = min(worst_up, ll[:, used].max())
        worst_low = max(worst_low, ll[:, used].min())
    measured = max(up - worst_up, worst_low - low)       # > 0 would mean some R beats merging
    return bound_claim(inputs, float(measured), 0.0, {"merged_log_lifts": [up, low],
                                                      "best_randomized": [float(worst_up), float(worst_low)]})


THEOREMS = [
    Theorem("alip-prop1", f"{CITE} Proposition 1", "(eps_l, eps_u)-ALIP implies (eps_l + eps_u)-LDP w.r.t. the "
            "secret; MI, maximal leakage, alpha-lift, Sibson and Arimoto MI are at most eps_u", _cases, _prop1),
    Theorem("alip-prop2", f"{CITE} Proposition 2", "complete merging of the high-risk symbols attains the smallest "
            "max log-lift and the largest min log-lift of any randomization of X_H", _prop2_cases, _prop2),
]
