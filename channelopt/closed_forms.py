"""Closed-form mechanisms and bounds of the source papers, as library functions.

The theorem checks (`channelopt.theorems`) judge these formulas against certified optima and
exact audits; figures and `analyze` use them as the papers' curves. Papers: LIP-TDSC,
CA-LIP, LIP-CNS; each docstring cites its result.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


# ---- LIP-TDSC ----------------------------------------------------------------------------

def rr_lip(prior, eps: float) -> np.ndarray:
    """RR-LIP (LIP-TDSC Theorem 3; LIP-CNS Theorem 2 for d = 2; CA-LIP Eq 19):
    q[m, m] = 1 - (1 - P_m) / e^eps,  q[m, k] = P_k / e^eps (k != m).

    Parameters
    ----------
    prior : array_like, shape (d,)
        Pr(X = x).
    eps : float
        The budget in nats.

    Returns
    -------
    ndarray, shape (d, d)
        The RR-LIP channel (LIP-feasible iff every P_m >= 1/(e^eps + 1)).
    """
    P = np.asarray(prior, float)
    e = np.exp(eps)
    q = np.tile(P / e, (P.size, 1))
    np.fill_diagonal(q, 1 - (1 - P) / e)
    return q


def rr_latent_binary(P1: float, t_upper: float, t_lower: float, eps: float) -> np.ndarray:
    """LIP-TDSC Theorem 2: binary X with a binary latent G; t = Pr(X=1 | G=g), upper/lower over g.
    q0 = Pr(Y=1|X=0), q1 = Pr(Y=0|X=1) as printed (needs t_lower < P1 < t_upper).

    Parameters
    ----------
    P1 : float
        Pr(X = 1).
    t_upper, t_lower : float
        The largest and smallest Pr(X = 1 | G = g).
    eps : float
        The budget in nats.

    Returns
    -------
    ndarray, shape (2, 2)
        The channel as printed (verify judges it: tdsc-thm2).
    """
    e = np.exp(eps)
    q0 = max(0.0, (t_upper - P1 * e) / ((e + 1) * (t_upper - P1)), (P1 - t_lower * e) / ((e + 1) * (P1 - t_lower)))
    q1 = max(0.0, (1 + t_upper * e - e - P1) / ((e + 1) * (t_upper - P1)),
             (1 + P1 * e - e - t_lower) / ((e + 1) * (P1 - t_lower)))
    return np.array([[1 - q0, q0], [q1, 1 - q1]])


def bp_lip_binary(a: float, b: float, eps: float) -> np.ndarray:
    """LIP-TDSC Proposition 2: Pr(X=1) in [a, b]; q01 = b/(b - a + e^eps), q10 = (1 - a)/(b - a + e^eps).

    Parameters
    ----------
    a, b : float
        The interval of Pr(X = 1).
    eps : float
        The budget in nats.

    Returns
    -------
    ndarray, shape (2, 2)
        The channel as printed (verify: tdsc-prop2).
    """
    den = b - a + np.exp(eps)
    q01, q10 = b / den, (1 - a) / den
    return np.array([[1 - q01, q01], [q10, 1 - q10]])


# ---- CA-LIP -------------------------------------------------------------------------------

def prop1_bound(P, eps: float) -> float:
    """CA-LIP Prop 1: eps-LIP implies min{2 eps, ln((e^eps - 1 + P_min)/P_min)}-LDP.

    Parameters
    ----------
    prior : array_like, shape (d,)
        Pr(X = x).
    eps : float
        The budget in nats.

    Returns
    -------
    float
        The implied LDP budget in nats.
    """
    pmin = float(np.min(P))
    return float(min(2 * eps, np.log((np.exp(eps) - 1 + pmin) / pmin)))


def ldp_to_lip(pmin: float, eps: float) -> float:
    """CA-LIP Thm 1 (converse) / Thm 2: eps-LDP implies ln(P_min + e^eps (1 - P_min))-LIP.

    Parameters
    ----------
    pmin : float
        The smallest prior mass.
    eps : float
        The budget in nats.

    Returns
    -------
    float
        The implied LIP budget in nats.
    """
    return float(np.log(pmin + np.exp(eps) * (1 - pmin)))


def thm4_bound(pmin: float, eps_list, pmin_omega: float | None = None) -> float:
    """CA-LIP Thm 4 (Cor 4 with pmin = min P_min^bp and pmin_omega = max P_min^bp; Cor 5 with
    pmin = min of the joint and per-release P_min^k):
    ln(P_min + exp(sum_k min{2 eps_k, ln((e^eps_k - 1 + P_min)/P_min)}) (1 - P_min)).

    Parameters
    ----------
    pmin : float
        P_min of the joint (or the smallest over the set).
    eps_list : sequence of float
        The budgets of the releases.
    pmin_omega : float, optional
        The P_min used inside the sum (Cor 4: the largest P_min over the set).

    Returns
    -------
    float
        The bound on the composed LIP leakage in nats.
    """
    po = np.atleast_1d(pmin if pmin_omega is None else pmin_omega)
    eps = np.asarray(eps_list, float)
    po = np.broadcast_to(po, eps.shape)
    omega = np.minimum(2 * eps, np.log((np.exp(eps) - 1 + po) / po)).sum()
    return float(np.log(pmin + np.exp(omega) * (1 - pmin)))


def example1(P: float, q: float) -> dict:
    """CA-LIP Example 1's printed leakages of the binary symmetric channel (flip probability q, P = Pr(X=1)).

    Parameters
    ----------
    P : float
        Pr(X = 1).
    q : float
        The flip probability.

    Returns
    -------
    dict
        ldp, lip, mil, mip as printed in the paper (verify: calip-ex1 judges them).
    """
    y1 = P * (1 - q) + (1 - P) * q
    y0 = 1 - y1
    return {
        "ldp": float(np.log(max(q / (1 - q), (1 - q) / q))),
        "lip": float(max(y1 / q, y1 / (1 - q), y0 / q, y0 / (1 - q))),
        "mil": float(np.log(2 * max(1 - q, q))),
        "mip": float(P * (1 - q) * np.log((1 - q) / y1) + P * q * np.log(q / y0)
                     + (1 - P) * (1 - q) * np.log((1 - q) / y0) + (1 - P) * q * np.log(q / y1)),
    }


# ---- LIP-CNS ------------------------------------------------------------------------------

def eq21(P1: float, eps: float) -> float:
    """LIP-CNS Eq 21 per user: P1 (1 - P1)(2 e^-eps - e^-2eps).

    Parameters
    ----------
    P1 : float
        Pr(X = 1).
    eps : float
        The budget in nats.

    Returns
    -------
    float
        The per-user MSE as printed (verify: cns-eq21).
    """
    return P1 * (1 - P1) * (2 * np.exp(-eps) - np.exp(-2 * eps))


def eq24(P1: float, eps: float) -> float:
    """LIP-CNS Eq 24 per user: P1(1-P1) - [P1(1-P1)(1-e^eps)]^2 / ((1-P1+P1 e^eps)(e^eps - P1 e^eps + P1)).

    Parameters
    ----------
    P1 : float
        Pr(X = 1).
    eps : float
        The budget in nats.

    Returns
    -------
    float
        The per-user MSE as printed (verify: cns-eq24).
    """
    e, v = np.exp(eps), P1 * (1 - P1)
    return v - (v * (1 - e)) ** 2 / ((1 - P1 + P1 * e) * (e - P1 * e + P1))


# ---- Hamming-optimal channels with their dual certificates ------------------------------------

class ClosedForm(NamedTuple):
    """A closed-form channel and the bound that certifies it.

    name : short name ("subset-rr", "rr-lip"); channel : d x m; loss_bound : a lower bound on the
    expected Hamming distortion of *every* feasible channel, from Lagrange multipliers built here
    (valid whatever their accuracy, see `_hamming_bound`); citation : where the form comes from;
    details : the form's parameters (e.g. k).

    Attributes
    ----------
    name : str
        The form's short name.
    channel : ndarray, shape (d, m)
        The channel.
    loss_bound : float
        A lower bound on the expected Hamming distortion of every feasible channel.
    citation : str
        Where the form comes from.
    details : dict
        The form's parameters.
    """

    name: str
    channel: np.ndarray
    loss_bound: float
    citation: str
    details: dict


def _hamming_bound(alpha: np.ndarray, C: np.ndarray) -> float:
    """1 - the Lagrangian bound on Pr(Y = X) = sum_x P_x q[x, x].

    For row multipliers alpha and nonnegative constraint multipliers whose reduced costs are C
    (C[x, y] = coefficient of q[x, y] in the Lagrangian), every feasible channel has
    Pr(Y = X) <= sum(alpha) + sum_x max(0, max_y C[x, y]): the rows of q are distributions. With
    C <= 0 (an exact dual solution) this is weak LP duality; round-off only loosens it."""
    return float(1.0 - (alpha.sum() + np.maximum(C.max(axis=1), 0.0).sum()))


def subset_rr(prior, eps: float, m: int | None = None) -> ClosedForm:
    """Subset randomized response (Kalantari, Sankar and Sarwate, IEEE TIFS 2018): the k most
    probable symbols S are reported truthfully with probability e^eps / (e^eps + k - 1) and as
    each other member of S with 1 / (e^eps + k - 1); inputs outside S report a member of S
    (here: uniformly). k maximizes e^eps P(S_k) / (e^eps + k - 1). k = d is GRR.

    Certificate for eps-LDP and Hamming distortion (any prior): with A = e^eps P(S) / (e^eps + k - 1),
    alpha_y = (P_y - A / e^eps) / (1 - e^-eps) on S and 0 off S, and multiplier alpha_x / e^eps on
    each constraint q[y, y] <= e^eps q[x, y], every reduced cost is <= 0 exactly when
    P_(k) >= A / e^eps >= P_(k+1) — which the best k satisfies — and the bound is sum(alpha) = A.

    Parameters
    ----------
    prior : array_like, shape (d,)
        Pr(X = x).
    eps : float
        The budget in nats.
    m : int, optional
        Number of outputs (>= d; extra outputs are never used). Default d.

    Returns
    -------
    ClosedForm
        The channel, k, the chosen subset and the loss bound from the multipliers.
    """
    P = np.asarray(prior, float)
    d = P.size
    m = d if m is None else m
    e = np.exp(eps)
    order = np.argsort(-P, kind="stable")
    ks = np.arange(1, d + 1)
    gain = e * np.cumsum(P[order]) / (e + ks - 1)
    k = int(np.argmax(gain)) + 1
    S = order[:k]
    c = 1.0 / (e + k - 1)
    q = np.zeros((d, m))
    q[:, S] = c
    q[S, S] = e * c
    out = np.setdiff1d(np.arange(d), S)
    q[out[:, None], S[None, :]] = 1.0 / k
    # the multipliers
    A = float(gain[k - 1])
    alpha = np.zeros(d)
    alpha[S] = (P[S] - A / e) / (1.0 - 1.0 / e) if e > 1 else 0.0
    lam = np.maximum(alpha, 0.0) / e                       # lam[x]: on q[y, y] <= e q[x, y], any y
    C = np.empty((d, m))
    C[:, :] = -alpha[:, None]
    C[:, :d] += e * lam[:, None]                           # off-diagonal q[x, y], y < d
    diag = P - alpha - (lam.sum() - lam)                   # q[y, y]: P_y - alpha_y - sum_{x != y} lam_x
    C[np.arange(d), np.arange(d)] = diag
    return ClosedForm("subset-rr", q, _hamming_bound(alpha, C),
                      "Kalantari, Sankar, Sarwate, IEEE TIFS 2018 (subset RR; GRR when k = d)",
                      {"k": k, "subset": S.tolist()})


def rr_lip_hamming(prior, eps: float, m: int | None = None) -> ClosedForm:
    """RR-LIP (`rr_lip`, LIP-TDSC Thm 3) with a certificate of Hamming optimality under eps-LIP
    with G = X. RR-LIP keeps Pr(Y) = P, puts every off-diagonal entry on its lower bound
    q[x, y] = Pr(Y=y) / e^eps, and is feasible iff every P_y >= 1 / (e^eps + 1).

    Multipliers (derived by complementary slackness): A = 1 - (1 - sum P^2) / e^eps on the rows'
    sum, Lambda_y = (A - P_y) / (1 - e^-eps), alpha_y = P_y (1 - Lambda_y / e^eps) and
    lam[y, x] = alpha_x + P_x Lambda_y / e^eps on each constraint Pr(Y=y) / e^eps <= q[x, y],
    x != y. All lam >= 0 iff e^eps - 1 >= P_max - P_min, which feasibility implies; the bound is
    then sum(alpha) = A, the accuracy of RR-LIP itself.

    Parameters
    ----------
    prior : array_like, shape (d,)
        Pr(X = x).
    eps : float
        The budget in nats.
    m : int, optional
        Number of outputs (>= d; extra outputs are never used). Default d.

    Returns
    -------
    ClosedForm
        The RR-LIP channel and the loss bound from the multipliers (valid even where RR-LIP is
        infeasible or not optimal; it certifies it only where it is).
    """
    P = np.asarray(prior, float)
    d = P.size
    m = d if m is None else m
    e = np.exp(eps)
    q = np.zeros((d, m))
    q[:, :d] = rr_lip(P, eps)
    A = 1.0 - (1.0 - P @ P) / e
    Lam = (A - P) / (1.0 - 1.0 / e) if e > 1 else np.zeros(d)
    alpha = P * (1.0 - Lam / e)
    if d > 1 and np.all(alpha + P * _other(Lam, np.min) / e >= 0):
        # no multiplier clipped: C[x, y] = P_x kappa_y off the diagonal (rank one), so each row's
        # largest entry is found in O(d) (dense below; the two agree to round-off, tested)
        Lsum = (alpha.sum() - alpha) + (1.0 - P) * Lam / e  # Lambda_y as the multipliers give it
        kappa = (Lam - Lsum) / e
        top = np.maximum(P * _other(kappa, np.max), P - alpha - P * Lsum / e)   # off the diagonal, on it
        if m > d:
            top = np.maximum(top, -alpha)                  # the outputs no input reports
        return ClosedForm("rr-lip", q, float(1.0 - (alpha.sum() + np.maximum(top, 0.0).sum())),
                          "LIP-TDSC Theorem 3 (RR-LIP)", {})
    lam = np.maximum(alpha[None, :] + P[None, :] * Lam[:, None] / e, 0.0)   # lam[y, x]
    np.fill_diagonal(lam, 0.0)
    lam[:, P <= 0] = 0.0
    Lsum = lam.sum(axis=1)                                 # Lambda_y as the multipliers give it
    C = np.empty((d, m))
    C[:, :] = -alpha[:, None]
    C[:, :d] += -P[:, None] * Lsum[None, :] / e + lam.T    # C[x, y]: -alpha_x - P_x Lambda_y / e + lam[y, x]
    C[np.arange(d), np.arange(d)] += P
    return ClosedForm("rr-lip", q, _hamming_bound(alpha, C), "LIP-TDSC Theorem 3 (RR-LIP)", {})


def _other(v: np.ndarray, pick) -> np.ndarray:
    """For each x, `pick` (np.min or np.max) of v over the entries other than x (d >= 2)."""
    order = np.argsort(v) if pick is np.min else np.argsort(-v)
    out = np.full(v.size, v[order[0]])
    out[order[0]] = v[order[1]]
    return out
