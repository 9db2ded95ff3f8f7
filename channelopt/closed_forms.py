"""Closed-form mechanisms and bounds of the source papers, as library functions.

The theorem checks (`channelopt.theorems`) judge these formulas against certified optima and
exact audits; figures and `analyze` use them as the papers' curves. Papers: LIP-TDSC (000),
CA-LIP (001), LIP-CNS (004); each docstring cites its result.
"""

from __future__ import annotations

import numpy as np


# ---- LIP-TDSC (000) ----------------------------------------------------------------------------

def rr_lip(prior, eps: float) -> np.ndarray:
    """RR-LIP (000 Theorem 3; 004 Theorem 2 for d = 2; 001 Eq 19):
    q[m, m] = 1 - (1 - P_m) / e^eps,  q[m, k] = P_k / e^eps (k != m)."""
    P = np.asarray(prior, float)
    e = np.exp(eps)
    q = np.tile(P / e, (P.size, 1))
    np.fill_diagonal(q, 1 - (1 - P) / e)
    return q


def rr_latent_binary(P1: float, t_upper: float, t_lower: float, eps: float) -> np.ndarray:
    """000 Theorem 2: binary X with a binary latent G; t = Pr(X=1 | G=g), upper/lower over g.
    q0 = Pr(Y=1|X=0), q1 = Pr(Y=0|X=1) as printed (needs t_lower < P1 < t_upper)."""
    e = np.exp(eps)
    q0 = max(0.0, (t_upper - P1 * e) / ((e + 1) * (t_upper - P1)), (P1 - t_lower * e) / ((e + 1) * (P1 - t_lower)))
    q1 = max(0.0, (1 + t_upper * e - e - P1) / ((e + 1) * (t_upper - P1)),
             (1 + P1 * e - e - t_lower) / ((e + 1) * (P1 - t_lower)))
    return np.array([[1 - q0, q0], [q1, 1 - q1]])


def bp_lip_binary(a: float, b: float, eps: float) -> np.ndarray:
    """000 Proposition 2: Pr(X=1) in [a, b]; q01 = b/(b - a + e^eps), q10 = (1 - a)/(b - a + e^eps)."""
    den = b - a + np.exp(eps)
    q01, q10 = b / den, (1 - a) / den
    return np.array([[1 - q01, q01], [q10, 1 - q10]])


# ---- CA-LIP (001) -------------------------------------------------------------------------------

def prop1_bound(P, eps: float) -> float:
    """001 Prop 1: eps-LIP implies min{2 eps, ln((e^eps - 1 + P_min)/P_min)}-LDP."""
    pmin = float(np.min(P))
    return float(min(2 * eps, np.log((np.exp(eps) - 1 + pmin) / pmin)))


def ldp_to_lip(pmin: float, eps: float) -> float:
    """001 Thm 1 (converse) / Thm 2: eps-LDP implies ln(P_min + e^eps (1 - P_min))-LIP."""
    return float(np.log(pmin + np.exp(eps) * (1 - pmin)))


def thm4_bound(pmin: float, eps_list, pmin_omega: float | None = None) -> float:
    """001 Thm 4 (Cor 4 with pmin = min P_min^bp and pmin_omega = max P_min^bp; Cor 5 with
    pmin = min of the joint and per-release P_min^k):
    ln(P_min + exp(sum_k min{2 eps_k, ln((e^eps_k - 1 + P_min)/P_min)}) (1 - P_min))."""
    po = np.atleast_1d(pmin if pmin_omega is None else pmin_omega)
    eps = np.asarray(eps_list, float)
    po = np.broadcast_to(po, eps.shape)
    omega = np.minimum(2 * eps, np.log((np.exp(eps) - 1 + po) / po)).sum()
    return float(np.log(pmin + np.exp(omega) * (1 - pmin)))


def example1(P: float, q: float) -> dict:
    """001 Example 1's printed leakages of the binary symmetric channel (flip probability q, P = Pr(X=1))."""
    y1 = P * (1 - q) + (1 - P) * q
    y0 = 1 - y1
    return {
        "ldp": float(np.log(max(q / (1 - q), (1 - q) / q))),
        "lip": float(max(y1 / q, y1 / (1 - q), y0 / q, y0 / (1 - q))),
        "mil": float(np.log(2 * max(1 - q, q))),
        "mip": float(P * (1 - q) * np.log((1 - q) / y1) + P * q * np.log(q / y0)
                     + (1 - P) * (1 - q) * np.log((1 - q) / y0) + (1 - P) * q * np.log(q / y1)),
    }


# ---- LIP-CNS (004) ------------------------------------------------------------------------------

def eq21(P1: float, eps: float) -> float:
    """004 Eq 21 per user: P1 (1 - P1)(2 e^-eps - e^-2eps)."""
    return P1 * (1 - P1) * (2 * np.exp(-eps) - np.exp(-2 * eps))


def eq24(P1: float, eps: float) -> float:
    """004 Eq 24 per user: P1(1-P1) - [P1(1-P1)(1-e^eps)]^2 / ((1-P1+P1 e^eps)(e^eps - P1 e^eps + P1))."""
    e, v = np.exp(eps), P1 * (1 - P1)
    return v - (v * (1 - e)) ** 2 / ((1 - P1 + P1 * e) * (e - P1 * e + P1))
